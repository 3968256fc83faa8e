"""Chapter 06's exercises: each gives not attempted / incorrect / correct on constructed answers,
and check(), hint() and solution() print what a learner reads."""

import importlib.util
import itertools
import re
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import devicelab
from devicelab.chapters.multigpu import (
    EXERCISES,
    RANK_DEVICE_SOLUTION,
    WRAP_MODEL_SOLUTION,
    RankDevice,
    WrapModel,
    _GpuStandIn,
    as_written,
    pretend_cuda,
)
from devicelab.checks import CORRECT, INCORRECT, NOT_ATTEMPTED
from devicelab.ddp import HEADER
from devicelab.messages import CATALOGUE, text

ROOT = Path(__file__).resolve().parents[2]
CPU = torch.device("cpu")
_COUNTER = itertools.count()


def define(code: str, name: str, tmp_path: Path, header: str = HEADER):
    """`code` as a function in a real file (so that its source can be read, as in a notebook)."""
    path = tmp_path / f"answer_{next(_COUNTER)}.py"
    path.write_text(header + "\n" + code + "\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def verdict_of(exercise, **values):
    verdict = exercise.evaluate(**values)
    return verdict.status, verdict.key


def rank_device(body: str) -> str:
    return "def rank_device(local_rank):\n" + "\n".join("    " + line for line in body.splitlines())


def wrap_model(body: str) -> str:
    return "def wrap_model(model, device):\n" + "\n".join("    " + line for line in body.splitlines())


# --- exercise 1: rank_device ---------------------------------------------------------------------


def test_ex1_not_attempted_when_missing_or_blank(tmp_path):
    assert verdict_of(RankDevice(CPU)) == (NOT_ATTEMPTED, "ch06.ex1.todo")
    assert verdict_of(RankDevice(CPU), rank_device=devicelab.____) == (NOT_ATTEMPTED, "ch06.ex1.todo")
    stub = define(rank_device("return ____"), "rank_device", tmp_path, HEADER + "from devicelab import ____\n")
    assert verdict_of(RankDevice(CPU), rank_device=stub) == (NOT_ATTEMPTED, "ch06.ex1.todo")


def test_ex1_the_solution_is_correct(tmp_path):
    answer = define(RANK_DEVICE_SOLUTION, "rank_device", tmp_path)
    assert verdict_of(RankDevice(CPU), rank_device=answer) == (CORRECT, "ch06.ex1.ok")


@pytest.mark.parametrize("body", [
    'if torch.cuda.is_available():\n    torch.cuda.set_device(local_rank)\n    return torch.device("cuda")\n'
    'return torch.device("cpu")',
    'if not torch.cuda.is_available():\n    return torch.device("cpu")\ntorch.cuda.set_device(local_rank)\n'
    'return torch.device(f"cuda:{local_rank}")',
    'device = torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")\n'
    'if device.type == "cuda":\n    torch.cuda.set_device(device)\nreturn device',
], ids=["bare cuda after set_device", "f-string", "set_device(device)"])
def test_ex1_right_answers_written_differently_are_correct(body, tmp_path):
    answer = define(rank_device(body), "rank_device", tmp_path)
    assert verdict_of(RankDevice(CPU), rank_device=answer) == (CORRECT, "ch06.ex1.ok")


@pytest.mark.parametrize(("body", "key"), [
    ('return torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")',
     "ch06.ex1.no_set_device"),
    ('return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "ch06.ex1.wrong_gpu"),
    ('if torch.cuda.is_available():\n    torch.cuda.set_device(0)\n    return torch.device("cuda", 0)\n'
     'return torch.device("cpu")', "ch06.ex1.wrong_gpu"),
    ('return "cuda:%d" % local_rank if torch.cuda.is_available() else "cpu"', "ch06.ex1.not_device"),
    ('if torch.cuda.is_available():\n    torch.cuda.set_device(local_rank)\nreturn torch.device("cpu")',
     "ch06.ex1.gpus_not_cuda"),
    ('torch.cuda.set_device(local_rank)\nreturn torch.device("cuda", local_rank)', "check.no_cuda_pick"),
    ('raise ValueError("no")', "ch06.ex1.raised"),
], ids=["no set_device", "bare cuda", "always GPU 0", "a string", "cpu with GPUs", "no CUDA test", "raises"])
def test_ex1_wrong_answers_are_incorrect(body, key, tmp_path):
    answer = define(rank_device(body), "rank_device", tmp_path)
    assert verdict_of(RankDevice(CPU), rank_device=answer) == (INCORRECT, key)


def test_ex1_set_device_without_cuda_is_caught_where_it_would_fail(tmp_path):
    answer = define(rank_device(
        'try:\n    torch.cuda.set_device(local_rank)\nexcept Exception:\n    pass\n'
        'return torch.device("cuda", local_rank) if torch.cuda.is_available() else torch.device("cpu")'),
        "rank_device", tmp_path)
    assert verdict_of(RankDevice(CPU), rank_device=answer) == (INCORRECT, "ch06.ex1.set_device_without_cuda")


def test_ex1_the_lab_device_on_a_cpu_machine_is_wrong(tmp_path):
    answer = define(rank_device('return torch.device("mps") if False else torch.device("meta")'), "rank_device",
                    tmp_path)
    assert verdict_of(RankDevice(CPU), rank_device=answer) == (INCORRECT, "ch06.ex1.no_cuda_not_cpu")


def test_ex1_a_function_that_needs_the_notebook_is_refused(tmp_path):
    answer = define(rank_device("return helper(local_rank)"), "rank_device", tmp_path,
                    HEADER + "def helper(r):\n    return torch.device('cpu')\n")
    assert verdict_of(RankDevice(CPU), rank_device=answer) == (INCORRECT, "ch06.no_source")


def test_ex2_a_function_that_needs_the_notebook_is_refused(tmp_path):
    answer = define(wrap_model("return helper(model, device)"), "wrap_model", tmp_path,
                    HEADER + "def helper(m, d):\n    return DDP(m.to(d))\n")
    assert verdict_of(WrapModel(CPU), wrap_model=answer) == (INCORRECT, "ch06.no_source")


def test_ex1_not_a_function():
    assert verdict_of(RankDevice(CPU), rank_device=3) == (INCORRECT, "ch06.ex1.not_function")


def test_ex1_an_endless_loop_is_stopped():
    exercise = RankDevice(CPU)
    exercise.seconds = 1.0

    def forever(local_rank):
        while True:
            pass

    assert verdict_of(exercise, rank_device=forever) == (INCORRECT, "check.too_slow")


def test_pretend_cuda_restores_torch():
    real = (torch.cuda.is_available, torch.cuda.set_device, torch.cuda.device_count)
    with pretend_cuda(_GpuStandIn(True)) as stand_in:
        assert torch.cuda.is_available() and torch.cuda.device_count() == 4
        torch.cuda.set_device(2)
        assert torch.cuda.current_device() == 2 and stand_in.set_calls == [2]
    assert (torch.cuda.is_available, torch.cuda.set_device, torch.cuda.device_count) == real


# --- exercise 2: wrap_model ---------------------------------------------------------------------


def test_ex2_not_attempted_when_missing_or_blank(tmp_path):
    assert verdict_of(WrapModel(CPU)) == (NOT_ATTEMPTED, "ch06.ex2.todo")
    assert verdict_of(WrapModel(CPU), wrap_model=devicelab.____) == (NOT_ATTEMPTED, "ch06.ex2.todo")
    stub = define(wrap_model("return ____"), "wrap_model", tmp_path, HEADER + "from devicelab import ____\n")
    assert verdict_of(WrapModel(CPU), wrap_model=stub) == (NOT_ATTEMPTED, "ch06.ex2.todo")
    assert not dist.is_initialized(), "the check's process group must be gone"


def test_ex2_the_solution_is_correct(tmp_path):
    answer = define(WRAP_MODEL_SOLUTION, "wrap_model", tmp_path)
    assert verdict_of(WrapModel(CPU), wrap_model=answer) == (CORRECT, "ch06.ex2.ok")
    assert not dist.is_initialized()


@pytest.mark.parametrize("body", [
    "return DDP(model.to(device), device_ids=[device] if device.type == 'cuda' else None)",
    "model.to(device)\nreturn DistributedDataParallel(model)",
    "ids = [torch.cuda.current_device()] if device.type == 'cuda' else None\n"
    "return DistributedDataParallel(model.to(device), device_ids=ids, output_device=ids[0] if ids else None)",
], ids=["torch.device in device_ids", "no device_ids at all", "current device and output_device"])
def test_ex2_right_answers_written_differently_are_correct(body, tmp_path):
    answer = define(wrap_model(body), "wrap_model", tmp_path)
    assert verdict_of(WrapModel(CPU), wrap_model=answer) == (CORRECT, "ch06.ex2.ok")


@pytest.mark.parametrize(("body", "key"), [
    ("return DDP(model.to(device), device_ids=[0])", "ch06.ex2.cpu_device_ids"),
    ("return DDP(model.to(device), device_ids=[device.index])", "ch06.ex2.cpu_device_ids"),
    ("return DDP(model.to(device), device_ids=[0] if device.type == 'cuda' else None)", "ch06.ex2.wrong_device_ids"),
    ("return DDP(model).to(device)", "ch06.ex2.moved_after_wrap"),
    ("return DDP(model)", "ch06.ex2.not_moved"),
    ("return DDP(model.to('cuda:0') if device.type == 'cuda' else model)", "ch06.ex2.wrong_gpu"),
    ("return nn.DataParallel(model.to(device))", "ch06.ex2.dataparallel"),
    ("return model.to(device)", "ch06.ex2.not_ddp"),
    ("return DDP(nn.Linear(4, 2).to(device))", "ch06.ex2.other_module"),
    ("raise ValueError('no')", "ch06.ex2.raised"),
], ids=["device_ids [0] everywhere", "device.index on cpu", "GPU 0 on rank 1", "moved after wrapping",
        "never moved", "moved to cuda:0", "DataParallel", "not wrapped", "another model", "raises"])
def test_ex2_wrong_answers_are_incorrect(body, key, tmp_path):
    answer = define(wrap_model(body), "wrap_model", tmp_path)
    assert verdict_of(WrapModel(CPU), wrap_model=answer) == (INCORRECT, key)
    assert "to" not in DistributedDataParallel.__dict__, "the check must put DDP back as it was"


def test_ex2_keeps_a_process_group_the_notebook_made(tmp_path):
    answer = define(WRAP_MODEL_SOLUTION, "wrap_model", tmp_path)
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        assert verdict_of(WrapModel(CPU), wrap_model=answer) == (CORRECT, "ch06.ex2.ok")
        assert dist.is_initialized()
    finally:
        dist.destroy_process_group()


def test_as_written_rebuilds_from_the_source_alone(tmp_path):
    answer = define(RANK_DEVICE_SOLUTION, "rank_device", tmp_path)
    rebuilt = as_written(answer, "rank_device")
    assert rebuilt is not None and rebuilt is not answer and rebuilt(0) == CPU
    assert as_written(len, "len") is None  # a builtin has no source


# --- every exercise: catalogue keys, solutions --------------------------------------------------------


@pytest.mark.parametrize("exercise", [cls(CPU) for cls in EXERCISES], ids=lambda e: e.name)
def test_every_message_an_exercise_names_is_in_the_catalogue(exercise):
    for key in [exercise.not_attempted_key, exercise.solution_key, *exercise.hints]:
        assert key in CATALOGUE, key


def test_every_verdict_key_used_by_the_checks_is_in_the_catalogue():
    source = (ROOT / "devicelab" / "chapters" / "multigpu.py").read_text(encoding="utf-8")
    keys = set(re.findall(r'"(ch06\.[\w.]+)"', source))
    assert keys and all(key in CATALOGUE for key in keys), sorted(k for k in keys if k not in CATALOGUE)


@pytest.mark.parametrize("exercise", [cls(CPU) for cls in EXERCISES], ids=lambda e: e.name)
def test_every_printed_solution_is_the_code_of_the_solved_notebook(exercise):
    source = (ROOT / "solutions" / "source" / "06-multigpu.md").read_text(encoding="utf-8")
    for line in text(exercise.solution_key).splitlines():
        if line.strip() and not line.strip().startswith('"""'):
            assert line.strip() in source, line


def test_check_prints_a_wrong_answer_in_the_chosen_language(capsys, tmp_path):
    answer = define(wrap_model("return DDP(model)"), "wrap_model", tmp_path)
    devicelab.messages.set_language("zh")
    try:
        WrapModel(CPU).check(wrap_model=answer)
    finally:
        devicelab.messages.set_language("en")
    out = capsys.readouterr().out
    assert out.startswith("❌ ex2: 还不对：") and "模型还没移到" in out
