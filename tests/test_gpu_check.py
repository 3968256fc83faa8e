"""The GPU check's CPU-side parts: its refusal without CUDA, its bookkeeping, the page stamp."""

import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gpu_check = load("gpu_check", ROOT / "tools" / "gpu_check.py")
hooks = load("mkdocs_hooks", ROOT / "tools" / "mkdocs_hooks.py")

CAPTURE = {
    "lab": "02-dataparallel", "step": "train_unmoved_model", "kind": "conv_input_weight_type",
    "message": "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",
    "torch": "2.11.0+cu130", "gpu": "NVIDIA H200", "cuda": "13.0", "date": "2026-11-29",
}


def test_gpu_check_refuses_to_run_without_cuda():
    if torch.cuda.is_available():
        return
    done = subprocess.run([sys.executable, "tools/gpu_check.py"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert "needs a CUDA GPU" in done.stdout


def test_expected_steps_are_read_from_the_lab_sources():
    steps = gpu_check.expected_steps()
    assert ("02-dataparallel", "train_unmoved_model") in steps
    assert ("02-dataparallel", "weighted_loss_on_cpu") in steps


def test_a_step_that_logged_nothing_is_reported_missing():
    wanted = {("02-dataparallel", "train_unmoved_model"), ("02-dataparallel", "weighted_loss_on_cpu")}
    assert gpu_check.missing_steps([CAPTURE], wanted) == {("02-dataparallel", "weighted_loss_on_cpu")}


def test_four_notebooks_printing_one_step_give_one_capture():
    logged = [dict(CAPTURE) for _ in range(4)]
    assert len(gpu_check.newest_per_step(logged)) == 1


def test_capture_log_is_read_line_by_line(tmp_path):
    log = tmp_path / "captures.jsonl"
    log.write_text('{"lab": "a", "step": "b"}\n\n{"lab": "c", "step": "d"}\n', encoding="utf-8")
    assert [c["lab"] for c in gpu_check.read_log(log)] == ["a", "c"]
    assert gpu_check.read_log(tmp_path / "absent.jsonl") == []


def test_lab_page_stamp_names_gpu_torch_and_date():
    line = hooks.verification_line("02-dataparallel", "en", [CAPTURE])
    assert line == "Last verified on GPU: NVIDIA H200, torch 2.11.0+cu130, 2026-11-29."
    zh = hooks.verification_line("02-dataparallel", "zh", [CAPTURE])
    assert "NVIDIA H200" in zh and "2.11.0+cu130" in zh and "2026-11-29" in zh


def test_lab_page_stamp_says_when_no_gpu_has_verified_it():
    assert "Not yet verified" in hooks.verification_line("02-dataparallel", "en", [])
    assert "尚未" in hooks.verification_line("02-dataparallel", "zh", [])


def test_strict_mode_makes_a_lab_fail_without_an_accelerator(tmp_path):
    if torch.cuda.is_available():
        return
    import os

    # one kernel, started fresh (a warm kernel server would cost more than it saves), stopped at the first failure
    env = {**os.environ, "DEVICELAB_STRICT": "1", "DEVICELAB_CAPTURE_LOG": str(tmp_path / "log.jsonl"),
           "DEVICELAB_FRESH_KERNELS": "1"}
    env.pop("DEVICELAB_DEVICE", None)
    # a run of its own: not a worker of this one, and not written into this run's timeline or CPU records
    for name in ("PYTEST_XDIST_WORKER", "DEVICELAB_CPU", "DEVICELAB_TIMELINE"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env",
         "labs/en/01-devices.ipynb"],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    assert done.returncode != 0
    assert "Strict mode (DEVICELAB_STRICT=1) needs a GPU or MPS" in done.stdout
    assert not (tmp_path / "log.jsonl").exists(), "nothing may be captured without a GPU"


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5">
<testcase classname="tests.claims.test_claims_ch02_dataparallel" name="test_conv_raises" time="0.1" />
<testcase classname="tests.claims.test_claims_ch04_batches" name="test_copy_returns_once_done[pinned]" time="0.2">
  <failure message="AssertionError: assert False&#10;second line">traceback</failure></testcase>
<testcase classname="tests.claims.test_claims_ch02_dataparallel" name="test_on_two_gpus" time="0.0">
  <skipped type="pytest.skip" message="needs 2 or more CUDA GPUs">skip</skipped></testcase>
<testcase classname="tests.claims.test_claims_ch01_devices" name="test_fixture_broke" time="0.0">
  <error message="failed on setup with &quot;RuntimeError: CUDA&quot;">trace</error></testcase>
<testcase classname="tests.claims.test_claims_ch01_devices.TestGroup" name="test_in_a_class" time="0.0" />
</testsuite></testsuites>
"""


def test_claims_outcomes_are_read_from_the_junit_report(tmp_path):
    report = tmp_path / "claims.xml"
    report.write_text(JUNIT, encoding="utf-8")
    assert gpu_check.claims_outcomes(report) == [
        {"test": "tests/claims/test_claims_ch02_dataparallel.py::test_conv_raises", "outcome": "passed", "message": ""},
        {"test": "tests/claims/test_claims_ch04_batches.py::test_copy_returns_once_done[pinned]", "outcome": "failed",
         "message": "AssertionError: assert False second line"},
        {"test": "tests/claims/test_claims_ch02_dataparallel.py::test_on_two_gpus", "outcome": "skipped",
         "message": "needs 2 or more CUDA GPUs"},
        {"test": "tests/claims/test_claims_ch01_devices.py::test_fixture_broke", "outcome": "error",
         "message": 'failed on setup with "RuntimeError: CUDA"'},
        {"test": "tests/claims/test_claims_ch01_devices.py::TestGroup::test_in_a_class", "outcome": "passed",
         "message": ""},
    ]
    assert gpu_check.claims_outcomes(tmp_path / "absent.xml") == []


def test_claims_records_carry_gpu_torch_cuda_and_date():
    outcomes = [{"test": "tests/claims/test_claims_ch02_dataparallel.py::test_conv_raises", "outcome": "passed",
                 "message": ""}]
    (one,) = gpu_check.claims_records(outcomes, "NVIDIA H200", "2.11.0+cu130", "13.0", day="2026-11-29")
    assert one == {**outcomes[0], "gpu": "NVIDIA H200", "torch": "2.11.0+cu130", "cuda": "13.0",
                   "date": "2026-11-29"}
    (today,) = gpu_check.claims_records(outcomes, "NVIDIA H200", "2.11.0+cu130", None)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", today["date"]) and today["cuda"] == ""


def test_a_recorded_gpu_run_reaches_the_chapter_pages_table(tmp_path):
    from devicelab import captures

    report = tmp_path / "claims.xml"
    report.write_text(JUNIT, encoding="utf-8")
    records = gpu_check.claims_records(gpu_check.claims_outcomes(report), "NVIDIA H200", "2.11.0+cu130", "13.0",
                                       day="2026-11-29")
    path = tmp_path / "gpu_captures.json"
    captures.save([CAPTURE], path, claims=captures.merge_claims([], records))
    assert captures.load(path) == [CAPTURE]
    claims_dir = tmp_path / "claims"
    claims_dir.mkdir()
    (claims_dir / "test_claims_ch02_dataparallel.py").write_text(
        "import pytest\n\n\n@pytest.mark.gpu\ndef test_conv_raises(cuda):\n"
        '    """A CPU conv fed a CUDA input raises."""\n',
        encoding="utf-8",
    )
    table = hooks.claims_table("02", "en", claims_dir, records=captures.load_claims(path))
    assert "passed on NVIDIA H200, torch 2.11.0+cu130, 2026-11-29" in table


def test_gpu_check_docstring_names_no_workplace_tool():
    assert "`device` tool" not in (gpu_check.__doc__ or "")
    assert "a CUDA machine without network access" in gpu_check.__doc__


# ------------------------------------------------------------------ the solutions' outputs on the site

def _executed_on(device: str, gpu: str = "") -> dict:
    return {"cells": [], "metadata": {"devicelab_outputs": {
        "code_sha256": "x", "helper_sha256": {},
        "ran_on": {"device": device, "gpu": gpu, "torch": "2.11.0+cu130", "date": "2026-11-29", "seconds": 1.0}}},
        "nbformat": 4, "nbformat_minor": 5}


def test_this_machine_can_store_the_solutions_outputs():
    assert gpu_check.can_store_outputs()


def test_the_gpu_check_stores_each_solution_run_on_the_gpu(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "tools"))
    import execute_solutions

    seen_env = []
    monkeypatch.setattr(execute_solutions, "STORE", tmp_path)
    monkeypatch.setattr(gpu_check, "execute_apart",
                        lambda notebook, env: seen_env.append(env) or _executed_on("cuda", "NVIDIA H200"))
    rows, failures = [], []
    written = gpu_check.store_outputs({"DEVICELAB_STRICT": "1"}, rows, failures, jobs=3)
    notebooks = execute_solutions.solution_notebooks()
    assert failures == [] and len(written) == len(notebooks)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == sorted(
        f"{p.parent.name}/{p.name}" for p in notebooks)
    assert all(env["DEVICELAB_STRICT"] == "1" for env in seen_env), "the solutions run in strict mode"


def test_the_gpu_check_stores_no_run_that_did_not_use_the_gpu(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "tools"))
    import execute_solutions

    monkeypatch.setattr(execute_solutions, "STORE", tmp_path)
    monkeypatch.setattr(gpu_check, "execute_apart", lambda notebook, env: _executed_on("cpu"))
    rows, failures = [], []
    assert gpu_check.store_outputs({}, rows, failures) == []
    assert failures and all("not on the GPU" in f for f in failures)


def test_a_page_shows_the_gpu_that_ran_its_outputs():
    record = _executed_on("cuda", "NVIDIA H200")["metadata"]["devicelab_outputs"]
    assert "ran on NVIDIA H200, torch 2.11.0+cu130, 2026-11-29" in hooks.ran_on_line(record, "en")
    assert "运行于 NVIDIA H200，torch 2.11.0+cu130，2026-11-29" in hooks.ran_on_line(record, "zh")


# ------------------------------------------------------------------ MPS runs, archives and the pages' stamps

MPS_CAPTURE = {**CAPTURE, "device": "mps", "gpu": "Apple MPS (arm64)", "torch": "2.14.1", "cuda": "-",
               "date": "2026-11-30", "message": "Tensor for argument input is on cpu but expected on mps"}


def test_gpu_check_on_mps_refuses_to_run_without_mps():
    if torch.backends.mps.is_available():
        return
    done = subprocess.run([sys.executable, "tools/gpu_check.py", "--device", "mps"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "needs Apple's MPS" in done.stdout


def test_gpu_check_reads_the_device_from_make(monkeypatch):
    monkeypatch.setenv("DEVICE", "mps")
    assert gpu_check.parse_args([]).device == "mps"
    monkeypatch.delenv("DEVICE")
    assert gpu_check.parse_args([]).device == "cuda"
    assert "not on meta" in gpu_check.accelerator_problem("meta")


def test_every_reproduce_step_has_an_expected_wording_for_its_page():
    stamps = load("gpu_stamps", ROOT / "tools" / "gpu_stamps.py")
    for lab, step in gpu_check.expected_steps():
        assert stamps.expected_wordings(lab).get(step), f"{lab}/{step}"


def test_a_lab_page_shows_the_captured_wording_beside_the_expected_one():
    stamps = load("gpu_stamps", ROOT / "tools" / "gpu_stamps.py")
    assert stamps.captured_wording("02-dataparallel", "en", []) == ""
    block = stamps.captured_wording("02-dataparallel", "en", [CAPTURE])
    expected = stamps.expected_wordings("02-dataparallel")["train_unmoved_model"]
    assert f"<code>{expected}</code>" in block
    assert f"<code>{CAPTURE['message']}</code>" in block and "NVIDIA H200, torch 2.11.0+cu130, 2026-11-29" in block
    assert "MPS" not in block
    both = stamps.captured_wording("02-dataparallel", "zh", [CAPTURE, MPS_CAPTURE])
    assert MPS_CAPTURE["message"] in both and "Apple MPS (arm64)，torch 2.14.1，2026-11-30" in both
    same_words = {**MPS_CAPTURE, "message": CAPTURE["message"]}
    assert "Apple MPS" not in stamps.captured_wording("02-dataparallel", "en", [CAPTURE, same_words])


def test_lab_page_stamp_reads_the_committed_record_and_names_mps_apart(tmp_path, monkeypatch):
    from devicelab import captures

    record = tmp_path / "gpu_captures.json"
    captures.save([CAPTURE, MPS_CAPTURE], record, claims=[])
    monkeypatch.setattr(captures, "CAPTURE_FILE", record)
    assert hooks.verification_line("02-dataparallel", "en") == (
        "Last verified on GPU: NVIDIA H200, torch 2.11.0+cu130, 2026-11-29. "
        "On Apple MPS: Apple MPS (arm64), torch 2.14.1, 2026-11-30.")
    only_mps = hooks.verification_line("02-dataparallel", "en", [MPS_CAPTURE])
    assert only_mps.startswith("Not yet verified on a GPU") and "Apple MPS (arm64)" in only_mps


def test_reader_pages_never_tell_readers_to_run_a_maintainer_command():
    for lang in ("en", "zh"):
        for line in (hooks.verification_line("01-devices", lang, []), hooks.ACTION_TEXT[lang]["unverified"]):
            assert "make " not in line and "gpu_check" not in line


def test_a_cuda_run_stays_fresh_when_the_capture_file_changes(tmp_path):
    root = tmp_path / "course"
    (root / "devicelab" / "data").mkdir(parents=True)
    data = root / "devicelab" / "data" / "gpu_captures.json"
    data.write_text("{}", encoding="utf-8")
    store = root / "solutions" / "executed"
    for device in ("cuda", "cpu"):
        entry = store / device / "01-devices.ipynb"
        entry.parent.mkdir(parents=True)
        run = _executed_on(device)
        run["metadata"]["devicelab_outputs"]["helper_sha256"] = {"devicelab/lab.py": "1",
                                                                 "devicelab/data/gpu_captures.json": "old"}
        entry.write_text(json.dumps(run), encoding="utf-8")
    assert gpu_check.rekey_gpu_runs(store, root) == [store / "cuda" / "01-devices.ipynb"]
    keyed = json.loads((store / "cuda" / "01-devices.ipynb").read_text())["metadata"]["devicelab_outputs"]
    assert keyed["helper_sha256"] == {"devicelab/data/gpu_captures.json": hashlib.sha256(b"{}").hexdigest(),
                                      "devicelab/lab.py": "1"}
    cpu = json.loads((store / "cpu" / "01-devices.ipynb").read_text())["metadata"]["devicelab_outputs"]
    assert cpu["helper_sha256"]["devicelab/data/gpu_captures.json"] == "old", "a CPU run prints the captures"
    assert gpu_check.rekey_gpu_runs(store, root) == []


def test_the_archive_holds_a_manifest_and_the_runs_files(tmp_path):
    import zipfile

    path = gpu_check.write_archive(tmp_path / "run.zip", {"commit": "c", "device": "cuda"},
                                   {"captures.json": b"[]", "executed/en/01-devices.ipynb": b"{}"})
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["captures.json", "executed/en/01-devices.ipynb", "manifest.json"]
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest == {"format": gpu_check.ARCHIVE_FORMAT, "commit": "c", "device": "cuda"}
    rows = [("labs/en/01-devices.ipynb", "ok", 12.34), ("solutions/zh/01-devices.ipynb (outputs stored)", "ok", 3.0),
            ("tests/claims tests/unit -m gpu", "3 passed", 9.0)]
    assert gpu_check.notebook_rows(rows) == [
        {"notebook": "labs/en/01-devices.ipynb", "result": "ok", "seconds": 12.3},
        {"notebook": "solutions/zh/01-devices.ipynb", "result": "ok", "seconds": 3.0}]


def test_a_copy_without_git_proves_its_commit_by_its_tree_file(tmp_path):
    """`make gpu-wheels` lists the commit's files; a copy is clean only when each one has those exact bytes."""
    (tmp_path / "a.py").write_text("print(1)\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_bytes(b"two\n")
    os.symlink("a.py", tmp_path / "link")
    commit = "0123456789abcdef0123456789abcdef01234567"
    lines = [commit] + [f"100644 {gpu_check.git_blob((tmp_path / p).read_bytes())} 0\t{p}"
                        for p in ("a.py", "sub/b.txt")]
    lines.append(f"120000 {gpu_check.git_blob(b'a.py')} 0\tlink")
    assert gpu_check.git_state(tmp_path) == ("", False)  # neither git nor a tree file
    (tmp_path / gpu_check.TREE_FILE).write_text("\n".join(lines) + "\n")
    assert gpu_check.git_state(tmp_path) == (commit, True)
    (tmp_path / "sub" / "b.txt").write_bytes(b"changed\n")
    assert gpu_check.git_state(tmp_path) == (commit, False)
    (tmp_path / "sub" / "b.txt").unlink()
    assert gpu_check.git_state(tmp_path) == (commit, False)
    (tmp_path / gpu_check.TREE_FILE).write_text("not a commit\n" + "\n".join(lines[1:]))
    assert gpu_check.git_state(tmp_path) == ("", False)


def test_git_blob_is_gits_object_id():
    # `printf 'hello\n' | git hash-object --stdin`
    assert gpu_check.git_blob(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"
