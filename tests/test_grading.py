"""The instructor's grader: one command, a gradebook, and no submission can stop the others."""

import csv
import json
import shutil
from pathlib import Path

from devicelab.grading import main

ROOT = Path(__file__).resolve().parent.parent
LAB = "02-dataparallel"


def test_grader_writes_a_gradebook_and_survives_broken_submissions(tmp_path):
    subs = tmp_path / "submissions"
    subs.mkdir()
    shutil.copy(ROOT / "labs" / "en" / f"{LAB}.ipynb", subs / "alice.ipynb")  # handed in untouched
    shutil.copy(ROOT / "solutions" / "zh" / f"{LAB}.ipynb", subs / "bob.ipynb")  # everything solved
    killer = json.loads((ROOT / "labs" / "en" / f"{LAB}.ipynb").read_text(encoding="utf-8"))
    killer["cells"].insert(3, {"cell_type": "code", "execution_count": None, "id": "boom", "metadata": {},
                               "outputs": [], "source": "import os\nos._exit(1)"})
    (subs / "carol.ipynb").write_text(json.dumps(killer), encoding="utf-8")  # kills its kernel
    (subs / "dave.ipynb").write_text("not a notebook", encoding="utf-8")
    out = tmp_path / "gradebook.csv"

    assert main([str(subs), "--out", str(out), "--timeout", "120"]) == 0

    rows = {Path(r["submission"]).stem: r for r in csv.DictReader(out.open(encoding="utf-8"))}
    assert set(rows) == {"alice", "bob", "carol", "dave"}
    exercises = ["ex1", "ex2", "ex3", "ex4"]
    assert [rows["alice"][e] for e in exercises] == ["not_attempted"] * 4
    assert rows["alice"]["correct"] == "0" and rows["alice"]["out_of"] == "4"
    assert [rows["bob"][e] for e in exercises] == ["correct"] * 4 and rows["bob"]["correct"] == "4"
    assert rows["carol"]["lab"] == LAB and rows["carol"]["problem"].startswith("DeadKernelError")
    assert [rows["carol"][e] for e in exercises] == ["not_graded"] * 4
    assert rows["dave"]["problem"].startswith("unreadable notebook")
