"""measure: runs and logs on a CUDA device, shows a GPU's capture (or says there is none) elsewhere, never invents."""

import json

import pytest
import torch

from devicelab import Lab, captures
from devicelab.measure import KIND, Measurement, measure, parse_summary, summary
from devicelab.messages import set_language, text
from devicelab.reproduce import BrokenLabError

LAB = "04-batches"
CPU = torch.device("cpu")
# A torch.device is only a name: the measured functions below never touch the GPU.
GPU = torch.device("cuda")
FIGURES = {"megabytes": 64, "pageable_returns_ms": 9.87654, "pinned_returns_ms": 0.0123}
CAPTURE = {
    "lab": LAB,
    "step": "pinned_vs_pageable",
    "kind": KIND,
    "message": "megabytes=64, pageable_returns_ms=9.88, pinned_returns_ms=0.0123",
    "torch": "2.14.1",
    "gpu": "NVIDIA H200",
    "cuda": "13.0",
    "date": "2025-12-01",
}


def must_not_run():
    raise AssertionError("the measurement ran although there is no CUDA GPU")


@pytest.fixture
def capture_file(monkeypatch, tmp_path):
    """A capture file in tmp_path that measure reads instead of the package's one."""
    path = tmp_path / "gpu_captures.json"
    real_load = captures.load
    monkeypatch.setattr(captures, "load", lambda path=path: real_load(path))
    return path


def test_summary_is_one_line_of_named_figures_and_parses_back():
    line = summary(FIGURES)
    assert line == "megabytes=64, pageable_returns_ms=9.88, pinned_returns_ms=0.0123"
    assert "\n" not in line
    assert parse_summary(line) == {"megabytes": 64.0, "pageable_returns_ms": 9.88, "pinned_returns_ms": 0.0123}


def test_on_a_cuda_device_the_function_runs_at_once_and_its_figures_are_printed(capsys):
    calls = []

    @measure("pinned_vs_pageable", device=GPU, lab=LAB)
    def copy_times():
        calls.append(1)
        return FIGURES

    assert calls == [1]
    assert copy_times == Measurement("measured", "pinned_vs_pageable", summary(FIGURES), "this machine", FIGURES)
    out = capsys.readouterr().out
    assert out.startswith("Measured here (-, torch ")
    assert "    megabytes=64, pageable_returns_ms=9.88, pinned_returns_ms=0.0123" in out


def test_a_measurement_is_logged_to_the_capture_log_like_a_reproduce_step(monkeypatch, tmp_path):
    log = tmp_path / "captures.jsonl"
    monkeypatch.setenv("DEVICELAB_CAPTURE_LOG", str(log))
    measure("pinned_vs_pageable", device=GPU, lab=LAB)(lambda: FIGURES)
    (record,) = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert set(record) == {"lab", "step", "kind", "message", "torch", "gpu", "cuda", "date"}
    assert (record["lab"], record["step"], record["kind"]) == (LAB, "pinned_vs_pageable", "measurement")
    assert record["message"] == summary(FIGURES)
    assert record["torch"] == torch.__version__


@pytest.mark.parametrize("returned", [None, {}, [1, 2], {"ms": "fast"}, {"ok": True}, {1: 2.0}])
def test_a_measurement_that_does_not_return_named_numbers_is_a_broken_lab(returned):
    with pytest.raises(BrokenLabError, match="should return a dict of named numbers"):
        measure("pinned_vs_pageable", device=GPU, lab=LAB)(lambda: returned)


def test_without_cuda_and_without_a_capture_it_says_not_yet_measured(capture_file, capsys):
    outcome = measure("pinned_vs_pageable", device=CPU, lab=LAB)(must_not_run)
    assert outcome == Measurement("missing", "pinned_vs_pageable", "", "none")
    assert capsys.readouterr().out == (
        "This measurement needs a CUDA GPU (device here: cpu); it was not run.\n"
        + text("measure.what.pinned_vs_pageable") + "\n"  # what it would show on one
        + "Not yet measured on a GPU: there is no figure to show.\n"
    )


def test_without_cuda_it_shows_the_captured_figures_with_gpu_torch_and_date(capture_file, capsys):
    captures.save([CAPTURE], capture_file)
    outcome = measure("pinned_vs_pageable", device=CPU, lab=LAB)(must_not_run)
    assert (outcome.status, outcome.source, outcome.message) == ("shown", "captured", CAPTURE["message"])
    assert outcome.figures["pinned_returns_ms"] == 0.0123
    out = capsys.readouterr().out
    assert "Measured on a real GPU (NVIDIA H200, torch 2.14.1, 2025-12-01):" in out
    assert "    " + CAPTURE["message"] in out


def test_on_mps_it_does_not_run_either(capture_file, capsys):
    measure("pinned_vs_pageable", device=torch.device("mps"), lab=LAB)(must_not_run)
    assert capsys.readouterr().out.startswith("This measurement needs a CUDA GPU (device here: mps)")


def test_a_capture_of_another_step_is_not_shown(capture_file, capsys):
    captures.save([{**CAPTURE, "step": "something_else"}], capture_file)
    assert measure("pinned_vs_pageable", device=CPU, lab=LAB)(must_not_run).status == "missing"


def test_strict_mode_without_cuda_is_a_broken_lab(monkeypatch):
    monkeypatch.setenv("DEVICELAB_STRICT", "1")
    with pytest.raises(BrokenLabError, match="needs a CUDA GPU"):
        measure("pinned_vs_pageable", device=CPU, lab=LAB)(must_not_run)


def test_messages_print_in_the_chosen_language(capture_file, capsys):
    set_language("zh")
    measure("pinned_vs_pageable", device=CPU, lab=LAB)(must_not_run)
    assert capsys.readouterr().out == "\n".join(
        [text("measure.no_cuda", device=CPU), text("measure.what.pinned_vs_pageable"), text("measure.not_yet"), ""])


def test_lab_measure_uses_the_labs_device_and_id(capture_file, monkeypatch, tmp_path, capsys):
    log = tmp_path / "captures.jsonl"
    monkeypatch.setenv("DEVICELAB_CAPTURE_LOG", str(log))

    @Lab(LAB, "en", GPU).measure("pinned_vs_pageable")
    def copy_times():
        return FIGURES

    assert copy_times.status == "measured"
    assert json.loads(log.read_text(encoding="utf-8"))["lab"] == LAB
    assert Lab(LAB, "en", CPU).measure("pinned_vs_pageable")(must_not_run).status == "missing"
