"""make import-gpu-run: an archive is refused unless it is a real accelerator's run of this checkout's commit."""

import copy
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(ROOT / "tools"))
gpu_check = load("gpu_check", ROOT / "tools" / "gpu_check.py")
importer = load("import_gpu_run", ROOT / "tools" / "import_gpu_run.py")
hooks = load("mkdocs_hooks", ROOT / "tools" / "mkdocs_hooks.py")
import execute_solutions  # noqa: E402

from devicelab import captures  # noqa: E402

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"
T4 = {"device": "cuda", "gpu": "Tesla T4", "torch": "2.14.1+cu126", "cuda": "12.6", "date": "2026-12-02"}
MPS = {"device": "mps", "gpu": "Apple MPS (arm64)", "torch": "2.14.1", "cuda": "", "date": "2026-12-03"}
CLAIMS = ["tests/claims/test_claims_ch02_dataparallel.py::"
          "test_cpu_conv_fed_a_cuda_input_raises_input_type_and_weight_type_should_be_the_same",
          "tests/claims/test_claims_ch04_batches.py::test_non_blocking_copy_from_pageable_memory_gives_the_right_values"]


def junit(cases: list[tuple[str, str]]) -> bytes:
    """A pytest --junitxml report of (test id, outcome) cases."""
    rows = []
    for test, outcome in cases:
        path, _, name = test.partition("::")
        classname = path.removesuffix(".py").replace("/", ".")
        inner = '<failure message="AssertionError">trace</failure>' if outcome == "failed" else ""
        rows.append(f'<testcase classname="{classname}" name="{name}" time="0.1">{inner}</testcase>')
    return ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">'
            + "".join(rows) + "</testsuite></testsuites>").encode()


def executed_solution(notebook: Path, facts: dict) -> dict:
    """What the GPU check stores for one solution notebook run on `facts`' device (outputs left out)."""
    nb = execute_solutions.read_json(notebook)
    nb["metadata"][execute_solutions.META] = {
        "notebook": notebook.relative_to(ROOT).as_posix(),
        "code_sha256": execute_solutions.code_hash(nb),
        "helper_sha256": execute_solutions.helper_files([str(ROOT / "devicelab" / "__init__.py")]),
        "ran_on": {"device": facts["device"], "gpu": facts["gpu"], "torch": facts["torch"],
                   "date": facts["date"], "seconds": 3.0},
    }
    return nb


def parts(facts: dict = T4, commit: str = COMMIT) -> tuple[dict, dict]:
    """The manifest and files of an archive that passes: every lab of this checkout, run on `facts`."""
    manifest = {"commit": commit, "tree_clean": True, **facts, "python": "3.12.0", "platform": "Linux",
                "colab": True, "seconds": 900, "labs": gpu_check.labs(), "claims": {}, "missing_steps": [],
                "failures": 0, "notebooks": []}
    files = {}
    for notebook in gpu_check.notebooks():
        name = notebook.relative_to(ROOT).as_posix()
        manifest["notebooks"].append({"notebook": name, "result": "ok", "seconds": 20.0})
        if name.startswith("labs/"):
            files["junit/" + name.replace("/", "__").removesuffix(".ipynb") + ".xml"] = junit([(name, "passed")])
    new = [{"lab": lab, "step": step, "kind": "same_device", "device": facts["device"], "gpu": facts["gpu"],
            "torch": facts["torch"], "cuda": facts["cuda"], "date": facts["date"],
            "message": f"Expected all tensors to be on the same device ({lab}/{step}) cpu and cuda:0"}
           for lab, step in sorted(gpu_check.expected_steps())]
    claims = []
    if facts["device"] == "cuda":
        outcomes = [{"test": test, "outcome": outcome, "message": "AssertionError" if outcome == "failed" else ""}
                    for test, outcome in zip(CLAIMS, ("passed", "failed"))]
        claims = [{**c, "device": "cuda"} for c in gpu_check.claims_records(
            outcomes, facts["gpu"], facts["torch"], facts["cuda"], day=facts["date"])]
        files["claims.xml"] = junit([(c["test"], c["outcome"]) for c in claims])
        for notebook in execute_solutions.solution_notebooks():
            files[f"executed/{notebook.parent.name}/{notebook.name}"] = executed_solution(notebook, facts)
    files["captures.json"] = new
    files["claims.json"] = claims
    files["gpu_captures.json"] = {"captures": new, "claims": claims}
    return manifest, files


def archive(tmp_path: Path, manifest: dict, files: dict, name: str = "run.zip") -> Path:
    """Write an archive the way gpu_check.py --archive does."""
    data = {k: v if isinstance(v, bytes) else json.dumps(v).encode() for k, v in files.items()}
    return gpu_check.write_archive(tmp_path / name, manifest, data)


def refused(path: Path, commit: str = COMMIT) -> str:
    with pytest.raises(importer.Refused) as reason:
        importer.read_archive(path, commit)
    return str(reason.value)


@pytest.fixture
def course(tmp_path):
    """A throwaway copy of what the import writes: the capture file and the store of executed solutions."""
    root = tmp_path / "course"
    (root / "devicelab" / "data").mkdir(parents=True)
    (root / "devicelab" / "data" / "gpu_captures.json").write_bytes(captures.CAPTURE_FILE.read_bytes())
    (root / "solutions" / "executed").mkdir(parents=True)
    return root


def test_an_archive_made_on_this_cpu_with_meta_standing_in_is_refused(tmp_path):
    # What a stand-in run really is: this CPU's facts with `meta` as the device, and a capture whose
    # message PyTorch printed here, with a meta tensor in the GPU tensor's place.
    facts = gpu_check.machine_facts(torch.device("meta"), day="2026-12-02")
    assert facts["device"] == "meta" and facts["gpu"] == ""
    with pytest.raises(RuntimeError) as raised:
        torch.ops.aten.addmm.default.redispatch(torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA),
                                                torch.randn(2), torch.randn(2, 2), torch.randn(2, 2, device="meta"))
    assert "meta" in str(raised.value)
    manifest, files = parts()
    manifest.update(facts)
    files["captures.json"] = [{**c, **facts, "message": str(raised.value)} for c in files["captures.json"]]
    reason = refused(archive(tmp_path, manifest, files))
    assert "`meta` standing in for the GPU" in reason

    # The same captures under a manifest that names a GPU: the messages still give the stand-in away.
    manifest, files = parts()
    files["captures.json"] = [{**c, "message": str(raised.value)} for c in files["captures.json"]]
    assert "`meta` device" in refused(archive(tmp_path, manifest, files, "forged.zip"))


def test_the_command_refuses_a_stand_in_archive_with_its_reason(tmp_path):
    manifest, files = parts()
    manifest.update(device="cpu", gpu="")
    done = subprocess.run([sys.executable, "tools/import_gpu_run.py", str(archive(tmp_path, manifest, files))],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1
    assert "REFUSED" in done.stdout and "not a GPU" in done.stdout
    not_zip = tmp_path / "notes.zip"
    not_zip.write_text("not a zip", encoding="utf-8")
    done = subprocess.run([sys.executable, "tools/import_gpu_run.py", str(not_zip)], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 1 and "not a readable zip archive" in done.stdout


def test_a_cuda_archive_of_this_commit_is_accepted_and_written(tmp_path, course):
    run = importer.read_archive(archive(tmp_path, *parts()), COMMIT)
    assert run.device == "cuda" and len(run.executed) == len(execute_solutions.solution_notebooks())
    written = importer.write(run, course)
    record = course / "devicelab" / "data" / "gpu_captures.json"
    assert record in written
    saved = captures.load(record)
    assert {(c["lab"], c["step"]) for c in saved} == gpu_check.expected_steps()
    assert all(c["device"] == "cuda" and c["gpu"] == "Tesla T4" for c in saved)
    assert [c["outcome"] for c in captures.load_claims(record)] == ["passed", "failed"]
    # The executed solutions are keyed to the capture file as written, so the store stays fresh.
    digest = execute_solutions.sha256(record.read_bytes())
    for name in run.executed:
        stored = json.loads((course / "solutions" / "executed" / name).read_text(encoding="utf-8"))
        assert stored["metadata"][execute_solutions.META]["helper_sha256"]["devicelab/data/gpu_captures.json"] \
            == digest
    # The lab pages' stamp and the chapters' claims table read the record.
    assert hooks.verification_line("02-dataparallel", "en", saved) == \
        "Last verified on GPU: Tesla T4, torch 2.14.1+cu126, 2026-12-02."
    table = hooks.claims_table("04", "en", records=captures.load_claims(record))
    assert "FAILED on Tesla T4, torch 2.14.1+cu126, 2026-12-02" in table


def _tamper(manifest: dict, files: dict, how: str) -> None:
    first = next(iter(sorted(k for k in files if k.startswith("executed/"))))
    if how == "commit":
        manifest["commit"] = OTHER
    elif how == "no commit":
        manifest["commit"] = ""
    elif how == "dirty":
        manifest["tree_clean"] = False
    elif how == "cpu":
        manifest.update(device="cpu", gpu="")
    elif how == "no name":
        manifest["gpu"] = "-"
    elif how == "capture gpu":
        files["captures.json"][0]["gpu"] = "NVIDIA A100"
    elif how == "capture torch":
        files["captures.json"][-1]["torch"] = "2.13.0+cu126"
    elif how == "capture day":
        files["captures.json"][0]["date"] = "2026-11-20"
    elif how == "claims gpu":
        files["claims.json"][0]["gpu"] = "NVIDIA A100"
    elif how == "claims vs junit":
        files["claims.json"][1]["outcome"] = "passed"
    elif how == "claims missing":
        files["claims.json"] = []
    elif how == "claims test":
        files["claims.json"][0]["test"] = "tests/claims/test_claims_ch99_nothing.py::test_x"
    elif how == "executed on cpu":
        files[first]["metadata"]["devicelab_outputs"]["ran_on"]["device"] = "cpu"
    elif how == "executed other code":
        files[first]["metadata"]["devicelab_outputs"]["code_sha256"] = "0" * 64
    elif how == "executed other helper":
        files[first]["metadata"]["devicelab_outputs"]["helper_sha256"]["devicelab/__init__.py"] = "0" * 64
    elif how == "executed missing":
        del files[first]
    elif how == "notebook failed":
        manifest["notebooks"][0]["result"] = "FAILED"
    elif how == "notebook missing":
        manifest["notebooks"].pop()
    elif how == "junit failure":
        key = next(k for k in files if k.startswith("junit/"))
        files[key] = junit([("labs/en/x.ipynb::Cell 3", "failed")])
    elif how == "junit garbage":
        key = next(k for k in files if k.startswith("junit/"))
        files[key] = b"<testsuites><testcase"
    elif how == "step missing":
        files["captures.json"].pop()
    elif how == "lab list":
        manifest["labs"] = manifest["labs"][:-1]
    elif how == "format":
        manifest["format"] = "something-else/1"
    elif how == "captures garbage":
        files["captures.json"] = b"{not json"


TAMPERED = {
    "commit": "made at commit fedcba987654", "no commit": "names no commit", "dirty": "local changes",
    "cpu": "not a GPU", "no name": "names no real device", "capture gpu": "mixes runs",
    "capture torch": "mixes runs", "capture day": "mixes runs", "claims gpu": "mixes runs",
    "claims vs junit": "JUnit report", "claims missing": "claims tests did not run",
    "claims test": "names no test of this checkout", "executed on cpu": "mixes runs",
    "executed other code": "its code changed", "executed other helper": "devicelab/__init__.py changed",
    "executed missing": "no executed solution", "notebook failed": "did not pass on the GPU",
    "notebook missing": "is not in the run", "junit failure": "has failures", "junit garbage": "does not parse",
    "step missing": "no capture of", "lab list": "are not this checkout's", "format": "format",
    "captures garbage": "does not parse",
}


@pytest.mark.parametrize("how", sorted(TAMPERED))
def test_an_archive_is_accepted_only_when_every_field_matches_the_commit(tmp_path, how):
    manifest, files = parts()
    files = copy.deepcopy(files)
    _tamper(manifest, files, how)
    if how == "format":
        path = tmp_path / "run.zip"
        import zipfile

        with zipfile.ZipFile(path, "w") as z:
            z.writestr("manifest.json", json.dumps(manifest))
    else:
        path = archive(tmp_path, manifest, files)
    assert TAMPERED[how] in refused(path)


def test_an_mps_run_is_recorded_beside_the_cuda_run(tmp_path, course):
    importer.write(importer.read_archive(archive(tmp_path, *parts()), COMMIT), course)
    manifest, files = parts(MPS)
    mps_step = files["captures.json"][0]
    mps_step["message"] = "Tensor for argument input is on cpu but expected on mps"
    run = importer.read_archive(archive(tmp_path, manifest, files, "mps.zip"), COMMIT)
    assert run.device == "mps" and run.executed == {} and run.claims == []
    importer.write(run, course)
    saved = captures.load(course / "devicelab" / "data" / "gpu_captures.json")
    assert sorted({c["device"] for c in saved}) == ["cuda", "mps"]
    assert len(saved) == 2 * len(gpu_check.expected_steps())
    assert len(captures.load_claims(course / "devicelab" / "data" / "gpu_captures.json")) == len(CLAIMS)
    lab = mps_step["lab"]
    line = hooks.verification_line(lab, "en", saved)
    assert line == ("Last verified on GPU: Tesla T4, torch 2.14.1+cu126, 2026-12-02. "
                    "On Apple MPS: Apple MPS (arm64), torch 2.14.1, 2026-12-03.")
    assert "Apple MPS (arm64)" in hooks.verification_line(lab, "zh", saved)
    # The labs' CPU path keeps showing the CUDA wording; MPS is asked for by name.
    assert captures.latest(lab, mps_step["step"], saved)["device"] == "cuda"
    assert captures.latest(lab, mps_step["step"], saved, device="mps")["message"] == mps_step["message"]
    # The stored CUDA runs stay fresh: their key follows the capture file, which the MPS run changed.
    record = course / "devicelab" / "data" / "gpu_captures.json"
    entry = next((course / "solutions" / "executed").glob("*/*.ipynb"))
    keyed = json.loads(entry.read_text(encoding="utf-8"))["metadata"]["devicelab_outputs"]["helper_sha256"]
    assert keyed["devicelab/data/gpu_captures.json"] == execute_solutions.sha256(record.read_bytes())


def test_an_mps_archive_with_claims_records_is_refused(tmp_path):
    manifest, files = parts(MPS)
    files["claims.json"] = [{"test": CLAIMS[0], "outcome": "skipped", "message": "needs a CUDA GPU", **MPS}]
    assert "claims tests need CUDA" in refused(archive(tmp_path, manifest, files))


def test_an_archive_of_an_earlier_commit_is_accepted_while_nothing_it_ran_has_changed(tmp_path):
    repo = tmp_path / "repo"
    (repo / "labs" / "en").mkdir(parents=True)

    def git(*args: str) -> str:
        done = importer.git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", *args)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def commit(path: str, text: str) -> str:
        (repo / path).write_text(text, encoding="utf-8")
        git("add", path)
        git("commit", "-q", "-m", path)
        return git("rev-parse", "HEAD")

    git("init", "-q")
    made_at = commit("labs/en/01-devices.ipynb", "{}")
    commit("README.md", "the run does not depend on this")
    assert importer.commit_to_check(made_at, repo) == made_at
    assert importer.commit_to_check(git("rev-parse", "HEAD"), repo) == git("rev-parse", "HEAD")
    with pytest.raises(importer.Refused, match="not in this checkout's history"):
        importer.commit_to_check(OTHER, repo)
    (repo / "labs" / "en" / "01-devices.ipynb").write_text('{"changed": 1}', encoding="utf-8")
    with pytest.raises(importer.Refused, match="local changes"):
        importer.commit_to_check(made_at, repo)
    commit("labs/en/01-devices.ipynb", '{"changed": 1}')
    with pytest.raises(importer.Refused, match="1 files it depends on changed"):
        importer.commit_to_check(made_at, repo)


MAINTAINER_COMMAND = re.compile(r"make (?:gpu-check|import-gpu-run|outputs)|gpu_check\.py|import_gpu_run")


def test_reader_facing_pages_and_labs_never_ask_for_a_maintainer_command():
    # The "help verify" path is for instructors and contributors: README and the instructors' page.
    pages = [p for p in sorted((ROOT / "docs").glob("*/*.md")) if p.name != "instructors.md"]
    notebooks = sorted((ROOT / "labs").glob("*/*.ipynb")) + execute_solutions.solution_notebooks()
    for path in pages + notebooks + [ROOT / "devicelab" / "messages.py"]:
        found = MAINTAINER_COMMAND.search(path.read_text(encoding="utf-8"))
        assert found is None, f"{path.relative_to(ROOT)} asks readers to run {found.group(0)}"
    said = [hooks.ACTION_TEXT, hooks.CLAIMS_TEXT, load("gpu_stamps", ROOT / "tools" / "gpu_stamps.py").TEXT]
    assert MAINTAINER_COMMAND.search(json.dumps(said, ensure_ascii=False)) is None
    for lang in ("en", "zh"):
        assert "verify_on_gpu.ipynb" in (ROOT / "docs" / lang / "instructors.md").read_text(encoding="utf-8")
    assert "make import-gpu-run ARCHIVE=" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_archive_the_gpu_check_writes_is_one_the_import_accepts(tmp_path, monkeypatch, capsys):
    """gpu_check.py --archive end to end, with the GPU's work faked: notebooks, claims and solutions 'run'."""
    monkeypatch.setattr(captures, "CAPTURE_FILE", tmp_path / "gpu_captures.json")
    monkeypatch.setattr(execute_solutions, "STORE", tmp_path / "executed")
    monkeypatch.setattr(gpu_check, "accelerator_problem", lambda device: None)
    monkeypatch.setattr(gpu_check, "machine_facts", lambda device, day=None: {
        **T4, "python": "3.12.0", "platform": "Linux", "colab": True})
    monkeypatch.setattr(gpu_check, "git_state", lambda root=ROOT: (COMMIT, True))
    steps = sorted(gpu_check.expected_steps())

    def fake_run(args, env, timeout=None):
        report = Path(next(a for a in args if a.startswith("--junitxml=")).split("=", 1)[1])
        if "--nbval-lax" in args:
            report.write_bytes(junit([(args[-1], "passed")]))
            lab = Path(args[-1]).stem
            with open(env["DEVICELAB_CAPTURE_LOG"], "a", encoding="utf-8") as log:
                for step in (s for owner, s in steps if owner == lab):
                    log.write(json.dumps({"lab": lab, "step": step, "kind": "same_device", "message": "on cuda:0",
                                          "torch": T4["torch"], "gpu": T4["gpu"], "cuda": T4["cuda"],
                                          "date": T4["date"]}) + "\n")
            return 0, 1.0, "1 passed"
        report.write_bytes(junit([(CLAIMS[0], "passed")]))
        return 0, 2.0, "1 passed"

    monkeypatch.setattr(gpu_check, "run", fake_run)
    monkeypatch.setattr(gpu_check, "execute_apart", lambda notebook, env: executed_solution(notebook, T4))
    path = tmp_path / "run.zip"
    assert gpu_check.main(["--device", "cuda", "--archive", str(path), "--jobs", "4"]) == 0
    assert "gpu-check passed" in capsys.readouterr().out
    run = importer.read_archive(path, COMMIT)
    assert run.manifest["gpu"] == "Tesla T4" and run.manifest["claims"]["passed"] == 1
    assert len(run.captures) == len(steps) and all(c["device"] == "cuda" for c in run.captures)
    assert len(run.executed) == len(execute_solutions.solution_notebooks())
