"""Chapter 03's exercises: each gives not attempted / incorrect / correct on constructed answers, on a machine
without a GPU, and check(), hint() and solution() print what a learner reads."""

import re
import textwrap
from pathlib import Path

import pytest
import torch
from torch import nn

import devicelab
from devicelab.chapters.embedding import (
    EXERCISES,
    STAND_IN,
    BatchMover,
    MoveInsideForward,
    MoveInTheLoop,
)
from devicelab.checks import CORRECT, INCORRECT, NOT_ATTEMPTED
from devicelab.messages import CATALOGUE, set_language, text

SOURCE = Path(__file__).resolve().parents[2] / "solutions" / "source" / "03-embedding.md"
CPU = torch.device("cpu")
META = torch.device("meta")
NOTEBOOK_DEVICE = CPU  # what `device` is in a notebook on this machine


def verdict_of(exercise, **values):
    verdict = exercise.evaluate(**values)
    return verdict.status, verdict.key


class TextClassifier(nn.Module):
    """The lab's model."""

    def __init__(self, vocab_size, embed_dim, num_classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.fc = nn.Linear(embed_dim, num_classes)

    def forward(self, token_ids):
        return self.fc(self.embedding(token_ids).mean(dim=1))


def test_the_checks_ask_for_a_move_to_meta_a_device_every_machine_has():
    assert STAND_IN == META
    assert torch.zeros(2).to(STAND_IN).device == META


# --- exercise 1: move the token ids and the labels in the training step ---------------------------


def correct_step(model, criterion, optimizer, token_ids, labels, device):
    token_ids, labels = token_ids.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def non_blocking_step(model, criterion, optimizer, token_ids, labels, device):
    token_ids = token_ids.to(device, non_blocking=True)
    labels = labels.to(device, non_blocking=True)
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def forgets_labels(model, criterion, optimizer, token_ids, labels, device):
    token_ids = token_ids.to(device)
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def discards_the_moved_labels(model, criterion, optimizer, token_ids, labels, device):
    token_ids = token_ids.to(device)
    labels.to(device)  # returns a moved copy, which is thrown away
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def discards_both_moves(model, criterion, optimizer, token_ids, labels, device):
    token_ids.to(device)
    labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def forgets_token_ids(model, criterion, optimizer, token_ids, labels, device):
    labels = labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def moves_to_the_notebook_device(model, criterion, optimizer, token_ids, labels, device):
    token_ids, labels = token_ids.to(NOTEBOOK_DEVICE), labels.to(NOTEBOOK_DEVICE)
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def casts_ids_to_float(model, criterion, optimizer, token_ids, labels, device):
    token_ids, labels = token_ids.to(device, torch.float32), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def casts_labels_to_float(model, criterion, optimizer, token_ids, labels, device):
    token_ids, labels = token_ids.to(device), labels.to(device).float()
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss.item()


def forgets_the_step(model, criterion, optimizer, token_ids, labels, device):
    token_ids, labels = token_ids.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    return loss.item()


def returns_the_tensor(model, criterion, optimizer, token_ids, labels, device):
    token_ids, labels = token_ids.to(device), labels.to(device)
    optimizer.zero_grad()
    loss = criterion(model(token_ids), labels)
    loss.backward()
    optimizer.step()
    return loss


def never_calls_the_model(model, criterion, optimizer, token_ids, labels, device):
    return 0.0


def still_a_stub(model, criterion, optimizer, token_ids, labels, device):
    return devicelab.____


def reads_the_meta_values(model, criterion, optimizer, token_ids, labels, device):
    token_ids = token_ids.to(device)
    return float(token_ids.sum())


@pytest.mark.parametrize(
    ("step", "key", "found"),
    [
        (forgets_labels, "ch03.ex1.labels", CPU),
        (discards_the_moved_labels, "ch03.ex1.labels", CPU),
        (discards_both_moves, "ch03.ex1.ids", CPU),
        (forgets_token_ids, "ch03.ex1.ids", CPU),
        (moves_to_the_notebook_device, "ch03.ex1.ids", CPU),
    ],
)
def test_ex1_a_tensor_left_on_the_cpu_is_incorrect_on_a_machine_without_gpu(step, key, found):
    # On this CPU-only machine `device` is cpu, yet the check still sees the forgotten move.
    verdict = MoveInTheLoop(CPU).evaluate(train_step=step)
    assert (verdict.status, verdict.key) == (INCORRECT, key)
    assert verdict.params == {"found": found, "device": META}


def test_ex1_ids_cast_to_float_are_incorrect():
    verdict = MoveInTheLoop(CPU).evaluate(train_step=casts_ids_to_float)
    assert (verdict.key, verdict.params) == ("ch03.ex1.ids_dtype", {"dtype": torch.float32})


def test_ex1_labels_cast_to_float_are_incorrect():
    verdict = MoveInTheLoop(CPU).evaluate(train_step=casts_labels_to_float)
    assert (verdict.key, verdict.params) == ("ch03.ex1.labels_dtype", {"dtype": torch.float32})


def test_ex1_a_step_without_optimizer_step_is_incorrect():
    assert verdict_of(MoveInTheLoop(CPU), train_step=forgets_the_step) == (INCORRECT, "ch03.ex1.no_update")


def test_ex1_a_step_that_returns_the_loss_tensor_is_incorrect():
    verdict = MoveInTheLoop(CPU).evaluate(train_step=returns_the_tensor)
    assert (verdict.key, verdict.params) == ("ch03.ex1.result", {"got": "Tensor"})


def test_ex1_a_step_that_never_calls_the_model_is_incorrect():
    assert verdict_of(MoveInTheLoop(CPU), train_step=never_calls_the_model) == (INCORRECT, "ch03.ex1.not_called")


def test_ex1_a_step_that_raises_is_incorrect_and_shows_the_error():
    verdict = MoveInTheLoop(CPU).evaluate(train_step=reads_the_meta_values)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch03.ex1.raised")
    assert verdict.params["error"].startswith("RuntimeError:")


def test_ex1_something_that_is_not_a_function_is_incorrect():
    assert verdict_of(MoveInTheLoop(CPU), train_step=0.5) == (INCORRECT, "ch03.ex1.not_function")


def test_ex1_not_attempted_when_train_step_is_missing_blank_or_a_stub():
    ex = MoveInTheLoop(CPU)
    assert verdict_of(ex) == (NOT_ATTEMPTED, "ch03.ex1.todo")
    assert verdict_of(ex, train_step=devicelab.____) == (NOT_ATTEMPTED, "ch03.ex1.todo")
    assert verdict_of(ex, train_step=still_a_stub) == (NOT_ATTEMPTED, "ch03.ex1.todo")


@pytest.mark.parametrize("step", [correct_step, non_blocking_step])
def test_ex1_a_step_that_moves_ids_and_labels_and_updates_is_correct(step):
    assert verdict_of(MoveInTheLoop(CPU), train_step=step) == (CORRECT, "ch03.ex1.ok")


def labels_to_the_logits_device(model, criterion, optimizer, token_ids, labels, device):
    optimizer.zero_grad()
    logits = model(token_ids.to(device))
    loss = criterion(logits, labels.to(logits.device))
    loss.backward()
    optimizer.step()
    return loss.item()


def everything_to_the_parameters_device(model, criterion, optimizer, token_ids, labels, device):
    where = next(model.parameters()).device
    optimizer.zero_grad()
    loss = criterion(model(token_ids.to(where)), labels.to(where))
    loss.backward()
    optimizer.step()
    return loss.item()


def zero_grad_at_the_end(model, criterion, optimizer, token_ids, labels, device):
    loss = criterion(model(token_ids.to(device)), labels.to(device))
    loss.backward()
    optimizer.step()
    model.zero_grad()
    return float(loss.detach())


def one_hot_probabilities(model, criterion, optimizer, token_ids, labels, device):
    optimizer.zero_grad()
    logits = model(token_ids.to(device))
    loss = criterion(logits, nn.functional.one_hot(labels, logits.shape[1]).float().to(device))
    loss.backward()
    optimizer.step()
    return loss.item()


def also_moves_the_model_to_the_device(model, criterion, optimizer, token_ids, labels, device):
    model.to(device).train()  # harmless: the model is already there
    return correct_step(model, criterion, optimizer, token_ids, labels, device)


def never_zeroes_the_gradients(model, criterion, optimizer, token_ids, labels, device):
    loss = criterion(model(token_ids.to(device)), labels.to(device))
    loss.backward()
    optimizer.step()
    return loss.item()


def zeroes_between_backward_and_step(model, criterion, optimizer, token_ids, labels, device):
    loss = criterion(model(token_ids.to(device)), labels.to(device))
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def moves_the_model_back_to_the_cpu(model, criterion, optimizer, token_ids, labels, device):
    model.cpu()
    optimizer.zero_grad()
    loss = criterion(model(token_ids.to(device)), labels.to(device))
    loss.backward()
    optimizer.step()
    return loss.item()


def returns_a_made_up_number(model, criterion, optimizer, token_ids, labels, device):
    correct_step(model, criterion, optimizer, token_ids, labels, device)
    return 0.5


def shuffles_the_labels(model, criterion, optimizer, token_ids, labels, device):
    return correct_step(model, criterion, optimizer, token_ids, labels.flip(0), device)


@pytest.mark.parametrize(
    "step", [labels_to_the_logits_device, everything_to_the_parameters_device, zero_grad_at_the_end,
             one_hot_probabilities, also_moves_the_model_to_the_device]
)
def test_ex1_right_answers_written_differently_are_correct(step):
    # The stand-in model really is on meta, so moving to where the model or its outputs are is right too.
    assert verdict_of(MoveInTheLoop(CPU), train_step=step) == (CORRECT, "ch03.ex1.ok")


@pytest.mark.parametrize(
    ("step", "key"),
    [
        (never_zeroes_the_gradients, "ch03.ex1.stale_grads"),
        (zeroes_between_backward_and_step, "ch03.ex1.no_grad"),
        (moves_the_model_back_to_the_cpu, "ch03.ex1.moves_model"),
        (returns_a_made_up_number, "ch03.ex1.result_value"),
        (shuffles_the_labels, "ch03.ex1.labels_changed"),
    ],
)
def test_ex1_steps_that_would_not_train_are_incorrect(step, key):
    assert verdict_of(MoveInTheLoop(CPU), train_step=step) == (INCORRECT, key)


def test_ex1_an_endless_step_is_stopped_and_incorrect():
    def endless(model, criterion, optimizer, token_ids, labels, device):
        while True:
            pass

    exercise = MoveInTheLoop(CPU)
    exercise.seconds = 1.0
    assert verdict_of(exercise, train_step=endless) == (INCORRECT, "check.too_slow")


# --- exercise 2: a batch mover ----------------------------------------------------------------------


def move_batch(batch, device):
    token_ids, labels = batch
    return token_ids.to(device), labels.to(device)


def move_batch_as_list(batch, device):
    return [t.to(device) for t in batch]


def discards_the_moves(batch, device):
    token_ids, labels = batch
    token_ids.to(device)
    labels.to(device)
    return token_ids, labels


def moves_only_the_ids(batch, device):
    token_ids, labels = batch
    return token_ids.to(device), labels


def returns_the_ids_only(batch, device):
    return batch[0].to(device)


def returns_a_dict(batch, device):
    return {"token_ids": batch[0].to(device), "labels": batch[1].to(device)}


def changes_the_dtype(batch, device):
    token_ids, labels = batch
    return token_ids.to(device), labels.to(device, torch.float32)


def unpacks_three(batch, device):
    token_ids, labels, lengths = batch
    return token_ids.to(device), labels.to(device)


def a_blank_mover(batch, device):
    return devicelab.____


@pytest.mark.parametrize(
    ("mover", "what"), [(discards_the_moves, "token_ids"), (moves_only_the_ids, "labels")]
)
def test_ex2_a_tensor_left_on_the_cpu_is_incorrect(mover, what):
    verdict = BatchMover(CPU).evaluate(move_batch=mover)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch03.ex2.not_moved")
    assert verdict.params == {"what": what, "found": CPU, "device": META}


@pytest.mark.parametrize(("mover", "got"), [(returns_the_ids_only, "Tensor"), (returns_a_dict, "dict")])
def test_ex2_something_other_than_a_pair_is_incorrect(mover, got):
    verdict = BatchMover(CPU).evaluate(move_batch=mover)
    assert (verdict.key, verdict.params) == ("ch03.ex2.not_pair", {"got": got})


def test_ex2_a_changed_dtype_is_incorrect():
    verdict = BatchMover(CPU).evaluate(move_batch=changes_the_dtype)
    assert (verdict.key, verdict.params) == ("ch03.ex2.changed", {"what": "labels"})


def test_ex2_a_mover_that_raises_is_incorrect_and_shows_the_error():
    verdict = BatchMover(CPU).evaluate(move_batch=unpacks_three)
    assert verdict.key == "ch03.ex2.raised" and verdict.params["error"].startswith("ValueError:")


def test_ex2_not_attempted_and_not_a_function():
    assert verdict_of(BatchMover(CPU)) == (NOT_ATTEMPTED, "ch03.ex2.todo")
    assert verdict_of(BatchMover(CPU), move_batch=a_blank_mover) == (NOT_ATTEMPTED, "ch03.ex2.todo")
    assert verdict_of(BatchMover(CPU), move_batch="move") == (INCORRECT, "ch03.ex2.not_function")


def new_tensors_shaped_like_the_batch(batch, device):
    return torch.empty_like(batch[0], device=device), torch.zeros_like(batch[1], device=device)


def a_generator_of_moved_tensors(batch, device):
    return (t.to(device) for t in batch)


def moves_in_place_and_returns_the_list(batch, device):
    for i, t in enumerate(batch):
        batch[i] = t.to(device)
    return batch


class Endless:
    def __iter__(self):
        while True:
            yield torch.zeros(1)


def test_ex2_new_tensors_of_the_right_shape_are_incorrect():
    verdict = BatchMover(CPU).evaluate(move_batch=new_tensors_shaped_like_the_batch)
    assert (verdict.key, verdict.params) == ("ch03.ex2.values", {"what": "token_ids"})


def test_ex2_an_endless_iterable_does_not_hang_the_check():
    verdict = BatchMover(CPU).evaluate(move_batch=lambda batch, device: Endless())
    assert (verdict.status, verdict.key) == (INCORRECT, "ch03.ex2.not_pair")


@pytest.mark.parametrize(
    "mover", [move_batch, move_batch_as_list, a_generator_of_moved_tensors, moves_in_place_and_returns_the_list]
)
def test_ex2_a_mover_that_moves_both_is_correct(mover):
    assert verdict_of(BatchMover(CPU), move_batch=mover) == (CORRECT, "ch03.ex2.ok")


# --- exercise 3: move the ids inside forward ---------------------------------------------------------


class ToParameters(TextClassifier):
    def forward(self, token_ids):
        token_ids = token_ids.to(next(self.parameters()).device)
        return super().forward(token_ids)


class ToEmbeddingWeight(TextClassifier):
    def forward(self, token_ids):
        return super().forward(token_ids.to(self.embedding.weight.device))


class ToHardCodedCuda(TextClassifier):
    def forward(self, token_ids):
        return super().forward(token_ids.to("cuda"))


class ToNotebookDevice(TextClassifier):
    def forward(self, token_ids):
        return super().forward(token_ids.to(NOTEBOOK_DEVICE))


class DiscardsTheMove(TextClassifier):
    def forward(self, token_ids):
        token_ids.to(next(self.parameters()).device)
        return super().forward(token_ids)


class NoMove(TextClassifier):
    pass


class MovesTheModel(TextClassifier):
    def forward(self, token_ids):
        self.to(token_ids.device)
        return super().forward(token_ids)


class ChangesTheResult(TextClassifier):
    def forward(self, token_ids):
        return 2 * super().forward(token_ids.to(next(self.parameters()).device))


class ReturnsATuple(TextClassifier):
    def forward(self, token_ids):
        return (super().forward(token_ids.to(next(self.parameters()).device)),)


class StillAStub(TextClassifier):
    def forward(self, token_ids):
        return devicelab.____


class Unrelated(nn.Module):
    def forward(self, token_ids):
        return token_ids


def judge_forward(cls):
    return MoveInsideForward(CPU).evaluate(AutoMoveClassifier=cls, TextClassifier=TextClassifier)


def test_ex3_a_hard_coded_cuda_is_incorrect_and_does_not_crash():
    verdict = judge_forward(ToHardCodedCuda)
    assert verdict.status == INCORRECT
    if torch.cuda.device_count() == 0:  # no GPU: moving to "cuda" raises, on the CPU model already
        assert verdict.key == "check.no_cuda" and verdict.params["device"] == CPU
    else:  # a GPU: the ids reach the CPU model's layers on cuda
        assert verdict.key == "ch03.ex3.moved_elsewhere" and verdict.params["found"].type == "cuda"


def test_ex3_the_notebook_device_is_not_the_model_device():
    verdict = judge_forward(ToNotebookDevice)
    assert (verdict.status, verdict.key) == (INCORRECT, "ch03.ex3.not_moved")
    assert verdict.params == {"device": META, "found": CPU}


@pytest.mark.parametrize("cls", [DiscardsTheMove, NoMove])
def test_ex3_ids_left_where_they_came_from_are_incorrect(cls):
    verdict = judge_forward(cls)
    assert (verdict.key, verdict.params) == ("ch03.ex3.not_moved", {"device": META, "found": CPU})


def test_ex3_moving_the_model_instead_is_incorrect():
    verdict = judge_forward(MovesTheModel)
    assert (verdict.key, verdict.params["device"]) == ("ch03.ex3.raised", META)


def test_ex3_a_forward_that_changes_the_result_is_incorrect():
    assert verdict_of(
        MoveInsideForward(CPU), AutoMoveClassifier=ChangesTheResult, TextClassifier=TextClassifier
    ) == (INCORRECT, "ch03.ex3.changed")


def test_ex3_a_forward_that_returns_no_tensor_is_incorrect():
    verdict = judge_forward(ReturnsATuple)
    assert (verdict.key, verdict.params) == ("ch03.ex3.output", {"device": CPU})


def test_ex3_classes_that_do_not_fit_are_incorrect():
    ex = MoveInsideForward(CPU)
    assert verdict_of(ex, AutoMoveClassifier=Unrelated, TextClassifier=TextClassifier) == (
        INCORRECT,
        "ch03.ex3.not_subclass",
    )
    assert verdict_of(ex, AutoMoveClassifier=ToParameters(20, 8, 4), TextClassifier=TextClassifier) == (
        INCORRECT,
        "ch03.ex3.not_class",
    )


def test_ex3_not_attempted_while_forward_returns_the_blank():
    ex = MoveInsideForward(CPU)
    assert verdict_of(ex, AutoMoveClassifier=StillAStub, TextClassifier=TextClassifier) == (
        NOT_ATTEMPTED,
        "ch03.ex3.todo",
    )
    assert verdict_of(ex, TextClassifier=TextClassifier) == (NOT_ATTEMPTED, "ch03.ex3.todo")


@pytest.mark.parametrize("cls", [ToParameters, ToEmbeddingWeight])
def test_ex3_a_forward_that_follows_the_parameters_is_correct(cls):
    verdict = judge_forward(cls)
    assert (verdict.status, verdict.key, verdict.params) == (CORRECT, "ch03.ex3.ok", {"device": META})


# --- every exercise: catalogue keys, solutions -----------------------------------------------------


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda cls: cls.name)
def test_every_message_an_exercise_names_is_in_the_catalogue(exercise):
    keys = [exercise.not_attempted_key, exercise.solution_key, *exercise.hints]
    assert all(key in CATALOGUE for key in keys)
    assert len(exercise.hints) >= 2


def solution_regions() -> list[str]:
    """The answers of the solved notebook, in order: each BEGIN/END SOLUTION region without its student lines."""
    cells = re.split(r"^(%% .*)$", SOURCE.read_text(encoding="utf-8"), flags=re.M)
    english = "".join(body for marker, body in zip(cells[1::2], cells[2::2]) if marker.strip() == "%% code")
    regions = re.findall(r"### BEGIN SOLUTION\n(.*?)\n\s*### END SOLUTION", english, re.S)
    return [textwrap.dedent("\n".join(line for line in r.splitlines() if not line.strip().startswith("#>")))
            for r in regions]


def test_every_printed_solution_is_the_answer_of_the_solved_notebook():
    assert solution_regions() == [text(exercise.solution_key) for exercise in EXERCISES]


def test_the_printed_solutions_pass_their_checks():
    namespace = {"torch": torch, "nn": nn, "TextClassifier": TextClassifier}

    def define(header: str, key: str) -> None:
        exec(f"{header}\n{textwrap.indent(text(key), '    ')}\n", namespace)

    define("def train_step(model, criterion, optimizer, token_ids, labels, device):", "ch03.ex1.solution")
    define("def move_batch(batch, device):", "ch03.ex2.solution")
    exec(
        "class AutoMoveClassifier(TextClassifier):\n    def forward(self, token_ids):\n"
        f"{textwrap.indent(text('ch03.ex3.solution'), '        ')}\n",
        namespace,
    )
    for exercise in EXERCISES:
        assert exercise(CPU).evaluate(namespace).status == CORRECT, exercise.name


# --- check(), hint(), solution() -----------------------------------------------------------------


def test_check_prints_a_wrong_answer_and_does_not_raise(capsys):
    MoveInTheLoop(CPU).check(train_step=forgets_labels)
    out = capsys.readouterr().out
    assert out.startswith("❌ ex1: Not yet: the token ids reach the model on the right device, but the labels")
    assert "device=meta" in out


def test_check_prints_in_the_chosen_language(capsys):
    set_language("zh")
    BatchMover(CPU).check(move_batch=moves_only_the_ids)
    assert capsys.readouterr().out.startswith("❌ ex2: 还不对：`move_batch` 返回的 labels 在 cpu 上")


def test_check_without_arguments_reads_the_notebook_globals(capsys):
    notebook = {"ex3": MoveInsideForward(CPU), "TextClassifier": TextClassifier, "ToParameters": ToParameters}
    exec("AutoMoveClassifier = ToParameters\nex3.check()\n", notebook)
    assert capsys.readouterr().out.startswith("✅ ex3: Correct!")


def test_ex1_a_step_that_runs_a_notebook_model_which_fails_is_told_so_not_shown_its_error():
    notebook_model = nn.Sequential(nn.Conv1d(6, 4, 3))  # a model the check's token ids do not fit

    def uses_the_notebooks_model(model, criterion, optimizer, token_ids, labels, device):
        token_ids, labels = token_ids.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = criterion(notebook_model(token_ids), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    verdict = MoveInTheLoop().evaluate(train_step=uses_the_notebooks_model)
    assert (verdict.status, verdict.key, verdict.params) == (INCORRECT, "ch03.ex1.other_model", {"got": "Sequential"})
