"""The GPU check's CPU-side parts: its refusal without CUDA, its bookkeeping, the page stamp."""

import importlib.util
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

    env = {**os.environ, "DEVICELAB_STRICT": "1", "DEVICELAB_CAPTURE_LOG": str(tmp_path / "log.jsonl")}
    env.pop("DEVICELAB_DEVICE", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env",
         "labs/en/02-dataparallel.ipynb"],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    assert done.returncode != 0
    assert "Strict mode (DEVICELAB_STRICT=1) needs a GPU or MPS" in done.stdout
    assert not (tmp_path / "log.jsonl").exists(), "nothing may be captured without a GPU"
