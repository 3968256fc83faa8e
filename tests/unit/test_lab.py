"""Lab: start_lab's setup output, all_correct over the notebook's globals, and Lab.reproduce."""

import pytest
import torch
from torch import nn, optim

from devicelab import Lab, start_lab
from devicelab.messages import get_language, text

LAB = "01-devices"

# The two answers of chapter 01, as a learner types them into the notebook.
FIX_EX1 = (
    'answer_1 = "cpu"\nanswer_2 = "cpu"\nanswer_3 = "target"\nanswer_4 = "target"\n'
    "answer_5 = True\nanswer_6 = True\n"
)
FIX_EX2 = """
def to_device(model, inputs, labels, device):
    model.to(device)
    return model, inputs.to(device), labels.to(device)
"""
WRONG_EX2 = """
def to_device(model, inputs, labels, device):
    model.to(device)
    inputs.to(device)
    labels.to(device)
    return model, inputs, labels
"""


def notebook(lab: Lab) -> dict[str, object]:
    """The globals of a chapter 01 notebook after its setup cell."""
    return {"lab": lab, "nn": nn, "optim": optim, "torch": torch, "device": lab.device}


@pytest.fixture
def lab() -> Lab:
    return Lab(LAB, "en", torch.device("cpu"))


def test_a_lab_has_its_chapters_exercises_in_order(lab):
    assert [ex.name for ex in lab.exercises] == ["ex1", "ex2"]
    assert [ex.name for ex in Lab("02-dataparallel", "en", torch.device("cpu")).exercises][0] == "ex1"


def test_all_correct_is_false_and_names_every_open_exercise_when_nothing_is_solved(lab, capsys):
    namespace = notebook(lab)
    exec("solved = lab.all_correct()\n", namespace)
    assert namespace["solved"] is False
    assert capsys.readouterr().out == text("proof.locked", open="ex1, ex2") + "\n"


def test_all_correct_names_only_the_exercises_still_open(lab, capsys):
    namespace = notebook(lab)
    exec(FIX_EX1 + "solved = lab.all_correct()\n", namespace)
    assert namespace["solved"] is False
    assert "still open: ex2." in capsys.readouterr().out


def test_all_correct_is_true_and_silent_when_every_exercise_is_solved(lab, capsys):
    namespace = notebook(lab)
    exec(FIX_EX1 + FIX_EX2 + "solved = lab.all_correct()\n", namespace)
    assert namespace["solved"] is True
    assert capsys.readouterr().out == ""


def test_all_correct_sees_the_result_thrown_away(lab, capsys):
    namespace = notebook(lab)
    exec(FIX_EX1 + WRONG_EX2 + "solved = lab.all_correct()\n", namespace)
    assert namespace["solved"] is False
    assert "still open: ex2." in capsys.readouterr().out


def test_lab_reproduce_without_an_accelerator_shows_the_expected_error(lab, capsys):
    @lab.reproduce("same_device")
    def buggy_training_step():
        raise AssertionError("not run without an accelerator")

    assert (buggy_training_step.status, buggy_training_step.source) in {
        ("shown", "expected"),
        ("shown", "captured"),
    }
    assert capsys.readouterr().out.startswith("No GPU here (device: cpu)")


def test_start_lab_sets_the_language_and_prints_the_environment(capsys):
    started = start_lab(LAB, "zh")
    out = capsys.readouterr().out
    assert (started.id, started.lang, started.device) == (LAB, "zh", torch.device("cpu"))
    assert get_language() == "zh"
    assert f"  torch: {torch.__version__}" in out
    assert " device: cpu" in out
    assert text("setup.ready", lab=LAB) in out
    assert text("setup.cpu_note") in out


def test_start_lab_uses_the_forced_device(monkeypatch, capsys):
    monkeypatch.setenv("DEVICELAB_DEVICE", "cuda")
    started = start_lab(LAB)
    assert started.device == torch.device("cuda")
    assert text("setup.cpu_note") not in capsys.readouterr().out


def test_start_lab_rejects_an_unknown_language():
    with pytest.raises(ValueError):
        start_lab(LAB, "fr")


def test_an_unknown_lab_has_no_exercises_to_find():
    with pytest.raises(KeyError):
        Lab("99-nothing", "en", torch.device("cpu"))
