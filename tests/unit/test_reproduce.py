"""reproduce: raised on an accelerator, broken lab when it does not raise (or raises something else),
shown from a GPU capture (or the expected wording) without one."""

import importlib
import json

import pytest
import torch

from devicelab import captures
from devicelab.errors import KINDS
from devicelab.messages import set_language, text
from devicelab.reproduce import BrokenLabError, Outcome, reproduce

# `devicelab.reproduce` the attribute is the function (re-exported by the package); the module is here.
reproduce_module = importlib.import_module("devicelab.reproduce")

LAB = "02-dataparallel"
CPU = torch.device("cpu")
# A torch.device is only a name: building one needs no GPU, and the snippets below never use it.
GPU = torch.device("cuda")
CAPTURE = {
    "lab": LAB,
    "step": "buggy_training_step",
    "kind": "same_device",
    "message": "Expected all tensors to be on the same device, but got weight is on cpu, different from "
    "other tensors on cuda:0 (when checking argument in method wrapper_CUDA_nll_loss_forward)",
    "torch": "2.14.1",
    "gpu": "NVIDIA H200",
    "cuda": "13.0",
    "date": "2025-11-29",
}


def flat(output: str) -> str:
    """Printed text with its line wrapping undone."""
    return " ".join(output.split())


def must_not_run() -> None:
    raise AssertionError("the snippet ran although no accelerator is here")


@pytest.fixture
def capture_file(monkeypatch, tmp_path):
    """A capture file in tmp_path that reproduce reads instead of the package's one."""
    path = tmp_path / "gpu_captures.json"
    real_load = captures.load
    monkeypatch.setattr(captures, "load", lambda path=path: real_load(path))
    return path


# --- on an accelerator: the snippet runs and must raise the expected error -----------------------


def test_the_expected_error_on_an_accelerator_is_raised_and_printed(capsys, addmm_device_error, real_message):
    @reproduce("same_device", device=GPU, lab=LAB)
    def buggy_training_step():
        addmm_device_error()

    message = real_message(addmm_device_error)
    assert buggy_training_step == Outcome("raised", "same_device", message, "this machine")
    out = capsys.readouterr().out
    assert out.startswith("The expected error happened on cuda (RuntimeError):")
    assert message in flat(out)
    assert "wrapper_CUDA_addmm" in out and "PyTorch checked the devices" in out


def test_an_accelerator_is_whatever_is_accelerator_says(monkeypatch, capsys, nll_loss_device_error):
    monkeypatch.setattr(reproduce_module, "is_accelerator", lambda device: True)
    outcome = reproduce("same_device", device=torch.device("meta"), lab=LAB)(nll_loss_device_error)
    assert outcome.status == "raised"
    assert "The expected error happened on meta" in capsys.readouterr().out


def test_a_snippet_that_raises_nothing_is_a_broken_lab():
    def moved_everything():
        return torch.ones(2) + 1

    with pytest.raises(BrokenLabError, match="step 'moved_everything' was expected to raise same_device"):
        reproduce("same_device", device=GPU, lab=LAB)(moved_everything)


def test_a_broken_lab_fails_like_an_assertion():
    assert issubclass(BrokenLabError, AssertionError)


def test_a_snippet_that_raises_another_error_is_a_broken_lab_naming_both():
    def shape_bug():
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")

    with pytest.raises(BrokenLabError) as broken:
        reproduce("same_device", device=GPU, lab=LAB)(shape_bug)
    report = str(broken.value)
    assert KINDS["same_device"].example in report
    assert "RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)" in report
    assert isinstance(broken.value.__cause__, RuntimeError)


def test_a_device_error_of_another_kind_is_a_broken_lab(addmm_device_error):
    with pytest.raises(BrokenLabError, match="expected to raise conv_input_weight_type"):
        reproduce("conv_input_weight_type", device=GPU, lab=LAB)(addmm_device_error)


def test_a_step_that_needs_no_accelerator_runs_on_the_cpu(capsys, addmm_device_error):
    outcome = reproduce("same_device", device=CPU, lab=LAB, needs_accelerator=False)(addmm_device_error)
    assert (outcome.status, outcome.source) == ("raised", "this machine")
    assert capsys.readouterr().out.startswith("The expected error happened on cpu")


def test_a_step_that_needs_no_accelerator_and_raises_nothing_is_a_broken_lab():
    with pytest.raises(BrokenLabError, match="ran without error"):
        reproduce("same_device", device=CPU, lab=LAB, needs_accelerator=False)(lambda: None)


# --- without an accelerator: the snippet is not run ---------------------------------------------


def test_without_an_accelerator_the_gpu_capture_is_shown(capsys, capture_file):
    captures.save([CAPTURE], capture_file)

    @reproduce("same_device", device=CPU, lab=LAB)
    def buggy_training_step():
        must_not_run()

    assert buggy_training_step == Outcome("shown", "same_device", CAPTURE["message"], "captured")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == text("reproduce.no_accelerator", device="cpu")
    assert lines[1] == "Captured on a real GPU (NVIDIA H200, torch 2.14.1, 2025-11-29):"
    assert CAPTURE["message"] in flat("\n".join(lines))
    assert not any("Expected wording" in line for line in lines)


def test_without_an_accelerator_and_no_capture_the_wording_is_labelled_expected(capsys, capture_file):
    captures.save([{**CAPTURE, "step": "another_step"}, {**CAPTURE, "lab": "03-other"}], capture_file)

    @reproduce("same_device", device=CPU, lab=LAB)
    def buggy_training_step():
        must_not_run()

    example = KINDS["same_device"].example
    assert buggy_training_step == Outcome("shown", "same_device", example, "expected")
    out = capsys.readouterr().out
    assert out.splitlines()[1] == text("reproduce.expected_only")
    assert example in flat(out)
    assert "Captured on a real GPU" not in out


def test_without_an_accelerator_and_no_capture_file_the_expected_wording_is_shown(capsys, capture_file):
    outcome = reproduce("dataparallel_module_device", device=CPU, lab=LAB)(must_not_run)
    assert (outcome.status, outcome.source) == ("shown", "expected")
    assert "DataParallel copies the module" in capsys.readouterr().out


def test_the_notice_is_printed_in_the_chosen_language(capsys, capture_file):
    set_language("zh")
    reproduce("same_device", device=CPU, lab=LAB)(must_not_run)
    assert capsys.readouterr().out.startswith("这里没有 GPU（设备：cpu）")


def test_strict_mode_without_an_accelerator_is_a_broken_lab(monkeypatch, capture_file):
    monkeypatch.setenv("DEVICELAB_STRICT", "1")
    with pytest.raises(BrokenLabError, match="Strict mode"):
        reproduce("same_device", device=CPU, lab=LAB)(must_not_run)


def test_strict_mode_still_runs_a_step_that_needs_no_accelerator(monkeypatch, addmm_device_error):
    monkeypatch.setenv("DEVICELAB_STRICT", "1")
    outcome = reproduce("same_device", device=CPU, lab=LAB, needs_accelerator=False)(addmm_device_error)
    assert outcome.status == "raised"


# --- the capture log ----------------------------------------------------------------------------


def test_each_raised_step_adds_one_json_line_to_the_capture_log(
    monkeypatch, tmp_path, addmm_device_error, nll_loss_device_error, real_message
):
    log = tmp_path / "captures.jsonl"
    monkeypatch.setenv("DEVICELAB_CAPTURE_LOG", str(log))

    @reproduce("same_device", device=GPU, lab=LAB)
    def first_step():
        addmm_device_error()

    @reproduce("same_device", device=GPU, lab=LAB)
    def second_step():
        nll_loss_device_error()

    reproduce("same_device", device=CPU, lab=LAB)(must_not_run)  # shown, not raised: not logged

    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [r["step"] for r in records] == ["first_step", "second_step"]
    first = records[0]
    assert set(first) == {"lab", "step", "kind", "message", "torch", "gpu", "cuda", "date"}
    assert (first["lab"], first["kind"], first["torch"]) == (LAB, "same_device", torch.__version__)
    assert first["message"] == real_message(addmm_device_error)


def test_without_the_env_var_nothing_is_logged(tmp_path, monkeypatch, addmm_device_error):
    monkeypatch.chdir(tmp_path)
    reproduce("same_device", device=GPU, lab=LAB)(addmm_device_error)
    assert list(tmp_path.iterdir()) == []


ADDMM_EXAMPLE = (
    "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors "
    "on cuda:0 (when checking argument in method wrapper_CUDA_addmm)"
)


def test_a_step_can_name_its_own_expected_wording(capsys, capture_file):
    captures.save([], capture_file)

    @reproduce("same_device", device=CPU, lab=LAB, example=ADDMM_EXAMPLE)
    def never_captured_step():
        must_not_run()

    assert never_captured_step == Outcome("shown", "same_device", ADDMM_EXAMPLE, "expected")
    out = flat(capsys.readouterr().out)
    assert ADDMM_EXAMPLE in out and "nll_loss" not in out


def test_an_expected_wording_of_another_kind_is_refused():
    with pytest.raises(ValueError, match="does not match the same_device wordings"):
        reproduce("same_device", device=CPU, lab=LAB, example="Input type (a) and weight type (b) should be the same")
