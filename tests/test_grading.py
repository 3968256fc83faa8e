"""The instructor's grader: planted submissions built from the real notebooks, graded once with -j 2.

Every plant starts from chapter 01 (the fastest lab): its solution (all correct) or its student
version (untouched), with cells replaced or added the way a student (or a forger) would.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import inspect
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from devicelab import grading
from devicelab.chapters import exercises_for
from devicelab.messages import text

ROOT = Path(__file__).resolve().parent.parent
LAB = "01-devices"
EXERCISES = [ex.name for ex in exercises_for(LAB)]
# The stopping plants run with `--max-runs 3`: every other plant needs two runs (one death or hang each), one run
# to spare, while the hydra, which dies in every run, reaches the limit.
HYDRA_RUNS = 3
TIMEOUT = 15  # seconds: the grading of the plants that loop (the slowest honest cell takes about 4 s)


def notebook(kind: str, lang: str = "en") -> dict:
    """The real notebook: 'solutions' (all correct) or 'labs' (untouched)."""
    return json.loads((ROOT / kind / lang / f"{LAB}.ipynb").read_text(encoding="utf-8"))


def find(nb: dict, snippet: str) -> int:
    """The index of the first code cell containing `snippet`."""
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and snippet in "".join(cell["source"]):
            return index
    raise AssertionError(f"no cell contains {snippet!r}")


def code(source: str) -> dict:
    """A code cell as a student would add it."""
    return {"cell_type": "code", "execution_count": None, "id": f"planted-{abs(hash(source)) % 10**8}",
            "metadata": {}, "outputs": [], "source": source}


def plant(base: dict, *, replace: dict[str, str] | None = None, after: dict[str, str] | None = None,
          append: list[str] | None = None, prepend: list[str] | None = None) -> dict:
    """A copy of `base` with cells replaced (by a snippet they contain), inserted after a cell, appended or put
    first."""
    nb = copy.deepcopy(base)
    nb["cells"][:0] = [code(source) for source in prepend or []]
    for snippet, source in (replace or {}).items():
        nb["cells"][find(nb, snippet)] = code(source)
    for snippet, source in (after or {}).items():
        nb["cells"].insert(find(nb, snippet) + 1, code(source))
    nb["cells"] += [code(source) for source in append or []]
    return nb


WRONG_TO_DEVICE = '''\
def to_device(model, inputs, labels, device):
    model.to(device)
    inputs.to(device)
    labels.to(device)
    return model, inputs, labels
'''
FORGE_EVALUATE = '''\
import devicelab.checks
devicelab.checks.Exercise.evaluate = lambda self, namespace=None, **given: devicelab.checks.Verdict("correct", "x")
devicelab.checks.CORRECT = "not_attempted"
'''
FORGE_LAB = '''\
class Always:
    def __init__(self, name):
        self.name = name
    def evaluate(self, namespace=None, **given):
        from devicelab.checks import Verdict
        return Verdict("correct", "ch01.ex1.ok")
lab.exercises = [Always(name) for name in ("ex1", "ex2")]
ex1, ex2 = lab.exercises
get_ipython().events.register("post_run_cell", lambda result: print('DEVICELAB-GRADE verdict {"name": "ex2"}'))
'''
FORGE_MARKER = '''\
for name in ("ex1", "ex2"):
    print('DEVICELAB-GRADE ' + '{"%s": "correct"}' % name)
'''
FORGE_TORCH = '''\
import sys, types
import torch
torch.Tensor.to = lambda self, *args, **kwargs: self
sys.modules["devicelab.checks"] = types.SimpleNamespace(CORRECT="correct")
'''
FORGE_HIDDEN = '''\
import importlib
name = "".join(["dev", "ice", "lab", ".", "checks"])
checks = importlib.import_module(name)
code = "checks.Exercise.evaluate = lambda self, *a, **k: checks.Verdict('correct', 'x')"
exec(code)
'''
# Issue-tested forgeries, each aimed at a way the grader used to be fooled.
FORGE_GLOBALS = '''\
import re
marker = "DEVICELAB" + "-GRADE"
def forged(*args, **kwargs):
    for name in ("ex1", "ex2"):
        print(marker, "verdict", '{"name": "%s", "status": "correct"}' % name)
grader = [n for n, v in list(globals().items()) if callable(v) and re.fullmatch(r"_+[0-9a-f]{8,}", n)]
for name in grader:
    globals()[name] = forged
print("grader functions found in globals:", grader)
forged()
'''
FORGE_CALLBACK = '''\
marker = "DEVICELAB" + "-GRADE"
def forged(*args):
    print(marker + "-0123456789abcdef verdict " + '{"name": "ex2", "status": "correct"}')
get_ipython().events.register("pre_run_cell", forged)
'''
FORGE_INSTANCE = '''\
from devicelab.checks import Verdict
always = lambda *args, **kwargs: Verdict("correct", "ch01.ex1.ok")
for exercise in [ex1, ex2, *lab.exercises]:
    vars(exercise)["evaluate"] = always
checks_globals = getattr(getattr(ex1.check, "__func__"), "__glo" + "bals__")
setattr(checks_globals["Exercise"], "evaluate", always)
'''
FORGE_STARTUP = '''\
import os
folder = os.path.join(os.environ["IPYTHONDIR"], "profile_default", "startup")
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "00-lenient.py"), "w") as handle:
    handle.write(
        "import builtins\\n"
        "real = builtins.compile\\n"
        "def lenient(source, filename, *args, **kwargs):\\n"
        "    if str(filename).endswith('checks.py'):\\n"
        "        source = (source.decode() if isinstance(source, bytes) else source) + "
        "'\\\\nExercise.evaluate = lambda self, *a, **k: Verdict(CORRECT, \\"x\\")\\\\n'\\n"
        "    return real(source, filename, *args, **kwargs)\\n"
        "builtins.compile = lenient\\n")
os._exit(0)
'''
FORGE_PRIVATE_COPY = '''\
import os
from pathlib import Path
for checks in Path.cwd().parent.glob("**/devicelab/checks.py"):
    try:
        os.chmod(checks.parent, 0o755)
        os.chmod(checks, 0o644)
        checks.write_text(checks.read_text() + "\\nExercise.evaluate = lambda self, *a, **k: Verdict(CORRECT, 'x')\\n")
        print("rewrote", checks)
    except OSError as error:
        print("could not rewrite", checks, error)
'''
FORGE_HIJACK = '''\
import re
real_exec = exec
def hijacked(code, *args, **kwargs):
    text = repr(getattr(code, "co_consts", code))
    for nonce in set(re.findall(r"[0-9a-f]{32}", text)):
        for name in ("ex1", "ex2"):
            print("DEVICELAB" + "-GRADE-" + nonce + " verdict " + '{"name": "%s", "status": "correct"}' % name)
    return real_exec(code, *args, **kwargs)
globals()["ex" + "ec"] = hijacked
'''
SYNTAX_ERROR_TO_DEVICE = '''\
def to_device(model, inputs, labels, device)
    return model.to(device), inputs.to(device), labels.to(device)
'''
KILLING_TO_DEVICE = '''\
def to_device(model, inputs, labels, device):
    import os
    os._exit(1)
'''
STUBBORN_LOOP = '''\
import time
while True:
    try:
        time.sleep(0.2)
    except KeyboardInterrupt:
        pass
'''


def grade_folder(folder: Path, plants: dict[str, dict], timeout: int, *options: str,
                 first: tuple[str, ...] = (), jobs: int = 2) -> tuple[dict, Path, str]:
    """Write the plants under folder/group/, grade the folder with `jobs` workers; rows, feedback folder, stderr.
    The plants named in `first` go to folder/early/, which the grader reaches first (it takes the folder's
    notebooks in path order): the longest ones, so that the two workers end together."""
    for name, nb in plants.items():
        place = folder / ("early" if name in first else "group")
        place.mkdir(exist_ok=True)
        (place / name).write_text(json.dumps(nb), encoding="utf-8")
    out, feedback = folder.parent / f"{folder.name}.csv", folder.parent / f"{folder.name}-feedback"
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        assert grading.main([str(folder), "--out", str(out), "-j", str(jobs), "--timeout", str(timeout),
                             "--feedback", str(feedback), *options]) == 0
    rows = {Path(r["submission"]).stem: r for r in csv.DictReader(out.open(encoding="utf-8"))}
    return rows, feedback, stderr.getvalue()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Plants that run to the end: graded once, with a timeout no honest cell reaches."""
    solved, untouched = notebook("solutions"), notebook("labs")
    folder = tmp_path_factory.mktemp("submissions")
    (folder / "unreadable.ipynb").write_text("not a notebook", encoding="utf-8")
    return grade_folder(folder, {
        "correct.ipynb": solved,
        "empty-zh.ipynb": notebook("labs", "zh"),
        "partly.ipynb": plant(solved, replace={"def to_device(": WRONG_TO_DEVICE}),
        "crashing.ipynb": plant(solved, after={"answer_1 =": "raise ValueError('boom')"}),
        "forge-evaluate.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_EVALUATE}),
        "forge-lab.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_LAB}),
        "forge-marker.ipynb": plant(untouched, append=[FORGE_MARKER]),
        "forge-torch.ipynb": plant(solved, replace={"def to_device(": WRONG_TO_DEVICE},
                                   after={"ex1, ex2 = lab.exercises": FORGE_TORCH}),
        "forge-hidden.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_HIDDEN}),
        "forge-globals.ipynb": plant(untouched, append=[FORGE_GLOBALS]),
        "forge-callback.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_CALLBACK}),
        "forge-instance.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_INSTANCE}),
        "forge-startup.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_STARTUP}),
        "forge-private-copy.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_PRIVATE_COPY}),
        "forge-hijack.ipynb": plant(untouched, after={"ex1, ex2 = lab.exercises": FORGE_HIJACK}),
        "syntax-error.ipynb": plant(solved, replace={"def to_device(": SYNTAX_ERROR_TO_DEVICE}),
    }, 300)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """Plants that loop or kill their kernel, graded with a short timeout: exercise 1 solved, 2 untouched. Graded as
    an instructor grades in the sandbox where it runs, with warm kernels, so that a warm kernel's death, hang and
    rerun are tested through the grader (test_grading_isolation.py grades with cold kernels in the sandbox, and
    without it)."""
    solved, untouched = notebook("solutions"), notebook("labs")
    answers = "".join(solved["cells"][find(solved, "answer_1 =")]["source"])
    half = plant(untouched, replace={"answer_1 =": answers})
    return grade_folder(tmp_path_factory.mktemp("stopping"), {
        "looping.ipynb": plant(half, after={"answer_1 =": "while True:\n    pass"}),
        "stubborn.ipynb": plant(half, after={"answer_1 =": STUBBORN_LOOP}),
        "dying.ipynb": plant(half, after={"answer_1 =": "import os\nos._exit(1)"}),
        "judge-killer.ipynb": plant(half, replace={"def to_device(": KILLING_TO_DEVICE}),
        # its deaths come first, so that each of its runs is short
        "hydra.ipynb": plant(half, prepend=["import os\nos._exit(1)"] * (HYDRA_RUNS + 1)),
    }, TIMEOUT, "--max-runs", str(HYDRA_RUNS), first=("stubborn.ipynb",), jobs=3)


def verdicts(row: dict) -> list[str]:
    """The row's verdicts, in exercise order."""
    return [row[name] for name in EXERCISES]


def test_paths_are_relative_to_the_folder_given_and_progress_goes_to_stderr(graded):
    rows, _, stderr = graded
    submissions = {r["submission"] for r in rows.values()}
    assert "group/correct.ipynb" in submissions and "unreadable.ipynb" in submissions
    assert f"[{len(rows)}/{len(rows)}]" in stderr
    assert "correct.ipynb 2/2" in stderr


def test_a_solved_notebook_gets_full_marks_and_no_tamper_flag(graded):
    row = graded[0]["correct"]
    assert verdicts(row) == ["correct"] * len(EXERCISES)
    assert row["correct"] == row["out_of"] == str(len(EXERCISES))
    assert row["problem"] == "" and row["tampered"] == ""


def test_an_untouched_notebook_is_not_attempted(graded):
    row = graded[0]["empty-zh"]
    assert verdicts(row) == ["not_attempted"] * len(EXERCISES) and row["tampered"] == ""


def test_one_wrong_answer_costs_one_exercise(graded):
    assert verdicts(graded[0]["partly"]) == ["correct", "incorrect"]


def test_a_raising_cell_is_recorded_and_the_rest_is_graded(graded):
    row = graded[0]["crashing"]
    assert verdicts(row) == ["correct", "correct"] and "ValueError: boom" in row["problem"]


def test_an_endless_loop_is_interrupted_and_the_rest_is_graded(stopped):
    row = stopped[0]["looping"]
    assert verdicts(row) == ["correct", "not_attempted"] and f"ran past {TIMEOUT} s" in row["problem"]


def test_a_loop_that_ignores_interrupts_is_skipped_on_a_second_run(stopped):
    row = stopped[0]["stubborn"]
    assert verdicts(row) == ["correct", "not_attempted"] and "would not stop" in row["problem"]


def test_a_cell_that_kills_the_kernel_is_skipped_on_a_second_run(stopped):
    row = stopped[0]["dying"]
    assert verdicts(row) == ["correct", "not_attempted"] and "DeadKernelError" in row["problem"]


def test_an_answer_that_kills_the_kernel_while_judged_costs_only_its_exercise(stopped):
    row = stopped[0]["judge-killer"]
    assert verdicts(row) == ["correct", "incorrect"] and "judging ex2 stopped the kernel" in row["problem"]


def test_an_unreadable_file_is_one_row(graded):
    row = graded[0]["unreadable"]
    assert row["problem"].startswith("unreadable notebook") and row["lab"] == "?"


FORGERIES = [  # plant, then what must be in its full findings (the JSON beside the feedback)
    ("forge-evaluate", ["devicelab.checks.Exercise.evaluate", "devicelab.checks.CORRECT"]),
    ("forge-lab", ["`lab.exercises` was replaced", "post_run_cell", "assigns lab.exercises"]),
    ("forge-marker", ["grade marker"]),
    ("forge-torch", ["torch.Tensor.to", "sys.modules"]),
    ("forge-hidden", ["calls exec()", "changed: devicelab.checks.Exercise.evaluate"]),
    ("forge-globals", ["namespace hijack"]),
    ("forge-callback", ["pre_run_cell callback defined in the notebook", "without the grader's nonce"]),
    ("forge-instance", ["attributes set on `ex1`: evaluate", "attributes set on `lab.exercises`",
                        "changed: devicelab.checks.Exercise.evaluate"]),
    ("forge-startup", ["start-up location"]),
    ("forge-private-copy", []),
    ("forge-hijack", ["rebinds `exec`", "namespace hijack"]),
]


def findings(feedback: Path, name: str) -> list[str]:
    """Every tamper finding of a plant, from the JSON written beside its feedback."""
    return json.loads((feedback / "group" / f"{name}.json").read_text(encoding="utf-8"))["tampered"]


@pytest.mark.parametrize(("name", "evidence"), FORGERIES)
def test_a_forging_submission_gets_no_forged_grade_and_is_marked(graded, name, evidence):
    row = graded[0][name]
    assert "correct" not in verdicts(row)[1:], row  # ex2 is never solved in a forging plant
    if name != "forge-torch":
        assert verdicts(row) == ["not_attempted"] * len(EXERCISES), row
    every = findings(graded[1], name)
    for piece in evidence:
        assert any(piece in f for f in every), (piece, every)
    assert row["tampered"] or name in ("forge-private-copy",), row  # read-only in the sandbox: nothing happened


def test_no_grader_function_is_found_in_the_notebook_namespace(graded):
    nb = json.loads((graded[1] / "group" / "forge-globals.json").read_text(encoding="utf-8"))
    assert nb["verdicts"] == {name: "not_attempted" for name in EXERCISES}


def test_a_startup_file_dies_with_its_world(graded):
    row = graded[0]["forge-startup"]
    assert "DeadKernelError: the kernel died in cell" in row["problem"]
    assert graded[0]["correct"]["tampered"] == "" and verdicts(graded[0]["correct"]) == ["correct"] * 2


def test_the_tampered_column_is_short_and_the_json_has_every_finding(graded):
    row = graded[0]["forge-instance"]
    every = findings(graded[1], "forge-instance")
    assert len(every) > grading.SHORT_FINDINGS and row["tampered"].endswith(f"+{len(every) - 2} more")
    assert row["tampered"].split(" | ")[:2] == [f[:160] for f in every[:2]]
    assert not every[0].startswith("code "), every  # what ran outranks what the code looks like


def test_a_syntax_error_is_told_as_a_cell_that_does_not_run(graded):
    rows, feedback, _ = graded
    assert verdicts(rows["syntax-error"]) == ["correct", "incorrect"]
    said = (feedback / "group" / "syntax-error.md").read_text(encoding="utf-8")
    assert "does not run: SyntaxError" in said and "____" not in said.split("## ex2")[1].split(">")[0]


def test_the_sandbox_is_on_where_bubblewrap_runs_and_says_so_once(graded):
    _, _, stderr = graded
    problem = grading.worlds.sandbox_problem()
    assert stderr.count("sandbox") == (1 if problem is None else 2)
    assert ("sandbox: on (bubblewrap)" in stderr) == (problem is None)
    # warm kernels (the default) in the sandbox: each a fork of one server, inside its own sandbox (warm.py), unless
    # this machine refuses to let a process join a sandbox's namespaces (then the grader says so and runs cold)
    refused = "kernels: cold (could not enter the sandbox" in stderr and "Operation not permitted" in stderr
    assert ("kernels: warm" in stderr) == (problem is None and not refused)
    assert "kernels: cold" not in stderr or refused


def test_a_grader_that_gives_up_says_so(stopped):
    row = stopped[0]["hydra"]
    assert verdicts(row) == ["not_graded"] * len(EXERCISES)
    assert row["problem"].startswith(f"gave up after {HYDRA_RUNS} kernel deaths")


def test_the_kernel_starts_from_the_interpreter_s_path_in_a_world_of_its_own(tmp_path):
    world = grading.worlds.World(tmp_path / "world")
    argv = grading.worlds.kernel_argv(world, sandbox=False)
    assert argv[0] == str(Path(sys.executable).absolute()) and "ipykernel_launcher" in argv
    env = world.env()
    for name in ("HOME", "IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "TMPDIR"):
        assert env[name].startswith(str(world.root)), name
    assert grading.worlds.kernel_manager(world, sandbox=False).kernel_spec.argv == argv


def test_feedback_is_in_the_notebook_language_with_first_hints_and_no_solution(graded):
    rows, feedback, _ = graded
    assert sorted(p.relative_to(feedback).as_posix() for p in feedback.rglob("*.md")) == sorted(
        Path(r["submission"]).with_suffix(".md").as_posix() for r in rows.values())
    zh = (feedback / "group" / "empty-zh.md").read_text(encoding="utf-8")
    en = (feedback / "group" / "partly.md").read_text(encoding="utf-8")
    for exercise in exercises_for(LAB):
        assert text(exercise.hints[0], "zh") in zh
        assert text(exercise.hints[1], "zh") not in zh
        assert text(exercise.solution_key, "zh") not in zh and text(exercise.solution_key, "en") not in en
    assert "未作答" in zh and "not yet" in en
    assert text(exercises_for(LAB)[1].hints[0], "en") in en and text(exercises_for(LAB)[0].hints[0], "en") not in en


COURSE_NOTEBOOKS = sorted((ROOT / "solutions").glob("*/*.ipynb")) + sorted((ROOT / "labs").glob("*/*.ipynb"))


@pytest.mark.parametrize("path", COURSE_NOTEBOOKS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}")
def test_the_static_scan_finds_nothing_in_the_course_notebooks(path):
    assert grading.static_findings(nbformat.read(path, as_version=4), path.stem) == []


# Code that passes a check by telling the check's stand-in device apart from a real run (chapter 05, ex3).
META_SPECIAL_CASE = """\
def forward(self, x):
    where = x.device if x.is_meta else "cpu"
    if str(x.device) == "meta" or x.device.type == "meta":
        pass
    return self.head(torch.zeros(x.shape[0], 16, device=where))
"""


def test_the_static_scan_reports_code_that_tells_the_meta_stand_in_from_a_gpu():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(META_SPECIAL_CASE)])
    found = grading.static_findings(nb, "05-inside")
    assert sum("tests for the meta device" in f for f in found) == 3, found  # .is_meta and two comparisons
    assert grading.static_findings(nb, "07-checkpoints") == []  # meta tensors are chapter 07's subject
    moving = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('model.to("meta")\nx = y.to(device)')])
    assert grading.static_findings(moving, "05-inside") == []  # moving to meta tests nothing


def test_the_static_scan_reads_forging_code():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in (
        FORGE_EVALUATE, FORGE_LAB, FORGE_MARKER, FORGE_TORCH, FORGE_HIDDEN,
        "import torch\ntorch.backends.cudnn.benchmark = True\nimport sys\nsys.path.insert(0, '.')",
        "from devicelab.checks import Exercise\nsetattr(Exercise, 'evaluate', None)",
        "import gc\nobjects = gc.get_objects()\n!pip list",
        FORGE_GLOBALS, FORGE_INSTANCE, FORGE_STARTUP, FORGE_HIJACK,
        "get_ipython().run_cell = print\nexec = print\nf = ex1.check.__closure__[0].cell_contents",
        "from jupyter_client.kernelspec import KernelSpecManager\nKernelSpecManager().install_kernel_spec('.')",
    )])
    found = grading.static_findings(nb)
    for piece in ("rebinds `exec`", "assigns globals()[name] (a namespace hijack)", "__closure__", "cell_contents",
                  "run_cell", "start-up location ('profile_default')", "KernelSpecManager"):
        assert any(piece in f for f in found), (piece, found)
    assert "assigns devicelab.checks.Exercise.evaluate" in found
    assert "assigns torch.Tensor.to" in found
    assert any("sys.modules" in f for f in found)
    assert "calls setattr()" in found and "calls gc.get_objects()" in found
    assert not any("backends" in f or "sys.path" in f for f in found)


def test_honest_notebooks_of_every_lab_raise_no_tamper_flag(tmp_path):
    """Every lab's solution (zh) and untouched student version (en): full marks or not attempted, never 'tampered',
    and no cell that raises. This is also the run check of `labs/en/` and `solutions/zh/`: nbval does not run those
    notebooks a second time (pyproject.toml's testpaths), so a notebook whose cell raises fails here, naming it.

    (Chapter 07 pickles tensors for real: copyreg then caches `__slotnames__` on torch's classes.)
    """
    plants = {}
    for source in sorted((ROOT / "solutions" / "source").glob("*.md")):
        lab = source.stem
        plants[f"{lab}-solved.ipynb"] = json.loads((ROOT / "solutions" / "zh" / f"{lab}.ipynb").read_text("utf-8"))
        plants[f"{lab}-untouched.ipynb"] = json.loads((ROOT / "labs" / "en" / f"{lab}.ipynb").read_text("utf-8"))
    (tmp_path / "honest").mkdir()
    rows, _, _ = grade_folder(tmp_path / "honest", plants, timeout=300)
    for name, row in rows.items():
        assert row["tampered"] == "", (name, row["tampered"])
        assert row["problem"] == "", f"{name}: a cell raised or the kernel stopped: {row['problem']}"
        wanted = "correct" if name.endswith("-solved") else "not_attempted"
        statuses = [row[k] for k in row if re.fullmatch(r"ex\d+", k) and row[k] != "-"]
        assert statuses and set(statuses) == {wanted}, (name, statuses)


def test_the_graders_statuses_are_the_checks_and_its_workers_import_no_torch():
    """The grader writes the checks' three statuses itself: devicelab.checks imports torch, and a worker process (a
    fresh interpreter per job, `-j N`) drives kernels without it. The names of each lab's exercises come from the
    process that started the workers."""
    from devicelab import checks

    assert (grading.CORRECT, grading.INCORRECT, grading.NOT_ATTEMPTED) == (
        checks.CORRECT, checks.INCORRECT, checks.NOT_ATTEMPTED)
    assert grading.exercise_names()["01-devices"] == ["ex1", "ex2"]
    probe = ("import sys, devicelab.grading, devicelab.chapters\n"
             "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_fingerprints_are_compared_outside_the_kernel():
    from devicelab.grading.kernel import compare

    before = {"torch directory": [0, 0, 0, 0, 0, "/torch"], "torch.nn.Module#to": [1, 2, 3, 4, 0, "/torch/m.py"],
              "torch.optim.SGD#step": [5, 6, 0, 0, 0, "/torch/o.py"], "builtins.exec": [7, 0, 0, 0, 0, ""],
              "sys.modules['a']": [8, 0, 0, 0, 0, ""], "sys.modules['b']": [9, 0, 0, 0, 0, ""]}
    after = {**before, "torch.nn.Module#to": [1, 22, 3, 4, 0, "/torch/m.py"],  # code swapped in place
             "torch.optim.SGD#step": [10, 11, 0, 0, 5, "/torch/o.py"],  # torch's own wrapper: not a finding
             "torch.nn.Module#evaluate": [12, 13, 0, 0, 0, "<ipython>"],
             "torch.nn.Module#__slotnames__": [14] + [0] * 5,
             "sys.modules['a']": [15, 0, 0, 0, 0, ""], "sys.modules['b']": [16, 0, 0, 0, 0, ""]}
    del after["builtins.exec"]
    assert compare(before, after) == ["changed: torch.nn.Module.to", "deleted: builtins.exec",
                                      "changed: sys.modules['a'] and 1 more sys.modules entries",
                                      "added: torch.nn.Module.evaluate"]
    assert compare(before, dict(before)) == []


def test_the_tampered_cell_keeps_the_most_serious_first():
    findings = [f"code finding {n}" for n in range(5)]
    assert grading.summary(findings) == "code finding 0 | code finding 1 | +3 more"
    assert grading.summary([]) == "" and grading.summary(findings[:2]) == "code finding 0 | code finding 1"
    ordered = sorted(["code assigns torch.Tensor.to", "run changed: torch.Tensor.to",
                      "run the grader's judging cell did not run to the end", "run attributes set on `ex1`: evaluate"],
                     key=grading._severity)
    assert ordered[0].startswith("run the grader") and ordered[-1].startswith("code ")


def test_the_journal_names_the_exercise_whose_judging_killed_the_kernel_when_stdout_was_lost(tmp_path):
    # A kernel killed while an exercise is judged may die before its last stdout message leaves it. The grader
    # must still know which exercise was being judged (else the exercise stays "not graded" and nothing reruns).
    nonce, setup_nonce = "n" * 32, "s" * 32
    first, second = EXERCISES[0], EXERCISES[1]
    verdict = {"name": first, "status": "correct", "key": "", "params": {}}

    def text_of(nonce_: str, *lines: tuple[str, object]) -> str:
        return "".join(f"{grading.MARKER}-{nonce_} {kind} {json.dumps(data)}\n" for kind, data in lines)

    def cell(text_: str) -> nbformat.NotebookNode:
        return nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output("stream", name="stdout", text=text_)])

    def read(stdout: str, journal_text: str | None) -> grading._Run:
        journal = tmp_path / "journal"
        journal.unlink(missing_ok=True)
        if journal_text is not None:
            journal.write_text(journal_text, encoding="utf-8")
        run = grading._Run(died=True)
        grading._read_run(run, cell(text_of(setup_nonce, ("fingerprint", {}))), cell(stdout), setup_nonce, nonce,
                          True, journal)
        return run

    # stdout got ex1's verdict but not "start ex2": the journal names ex2
    run = read(text_of(nonce, ("fingerprint", {}), ("start", first), ("verdict", verdict)),
               text_of(nonce, ("start", first), ("start", second)))
    assert run.started == second and run.records[first]["status"] == "correct"
    # stdout lost ex1's verdict as well: ex2 is named, ex1 stays ungraded (judged again), never taken from the journal
    run = read(text_of(nonce, ("fingerprint", {})), text_of(nonce, ("start", first), ("verdict", verdict),
                                                             ("start", second)))
    assert run.started == second and first not in run.records
    assert read(text_of(nonce, ("fingerprint", {})), None).started is None  # no journal: nothing to go on
    # lines without this run's nonce are not read
    assert read(text_of(nonce, ("fingerprint", {})), text_of("f" * 32, ("start", second))).started is None
    # stdout shows "start ex1" but not its verdict nor "start ex2": the journal, written first, knows better
    run = read(text_of(nonce, ("fingerprint", {}), ("start", first)),
               text_of(nonce, ("start", first), ("start", second)))
    assert run.started == second and first not in run.records
    # the last exercise started has its verdict on stdout: the kernel died after judging it, not while
    run = read(text_of(nonce, ("fingerprint", {}), ("start", first), ("verdict", verdict)),
               text_of(nonce, ("start", first)))
    assert run.started is None


def test_max_runs_is_six_unless_the_instructor_says_otherwise_and_at_least_one(tmp_path, capsys):
    assert grading.MAX_RUNS == 6
    assert inspect.signature(grading.grade).parameters["max_runs"].default == grading.MAX_RUNS
    for wrong, said in (("0", "must be 1 or more"), ("-2", "must be 1 or more"), ("two", "a whole number")):
        with pytest.raises(SystemExit) as stopped_early:
            grading.main([str(tmp_path), "--out", str(tmp_path / "g.csv"), "--max-runs", wrong])
        assert stopped_early.value.code == 2 and said in capsys.readouterr().err
    assert not (tmp_path / "g.csv").exists()


def test_warm_kernels_are_asked_for_or_refused_in_a_line_of_their_own(tmp_path, monkeypatch):
    """Warm kernels with the sandbox, by default or when asked for; none with `--no-warm-kernels`; without the
    sandbox they are refused in words. (Unreadable files: no kernel starts at all.)"""
    started = []
    monkeypatch.setattr(grading, "_warm_server", lambda files: started.append(files))
    for name in ("a.ipynb", "b.ipynb"):
        (tmp_path / name).write_text("not a notebook", encoding="utf-8")

    def said(*options: str) -> str:
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            assert grading.main([str(tmp_path), "--out", str(tmp_path.parent / "g.csv"), *options]) == 0
        return stderr.getvalue()

    said("--sandbox", "--no-warm-kernels")
    assert "kernels" not in said("--no-sandbox", "--no-warm-kernels")
    assert started == []
    said("--sandbox")
    said("--sandbox", "--warm-kernels")
    assert len(started) == (2 if grading.worlds.sandbox_problem() is None else 0)
    assert "kernels: cold (warm kernels need the sandbox)" in said("--no-sandbox")
    assert "kernels: cold (warm kernels need the sandbox)" in said("--no-sandbox", "--warm-kernels")
