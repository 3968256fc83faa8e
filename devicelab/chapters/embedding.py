"""Chapter 03: "Input, output and indices must be on the current device": embedding ids and labels.

The checks call the learner's code with `device=torch.device("meta")`: a device every PyTorch has, whose
tensors hold no data. A tensor the learner forgot to move stays on the CPU, so the mistake shows on a
machine without a GPU too, and the check never needs one.
"""

from __future__ import annotations

import torch
from torch import nn

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, correct, incorrect
from ..devices import same_device
from ..spies import SpyLoss, SpyModel

STAND_IN = torch.device("meta")  # the device the checks ask the learner's code to move things to
HOST = torch.device("cpu")  # where a DataLoader hands out batches
INTEGER_IDS = (torch.int64, torch.int32)  # what nn.Embedding accepts as token ids


def _error(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _batch(n: int = 8, length: int = 6, vocab: int = 20, classes: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    token_ids = torch.randint(0, vocab, (n, length), generator=generator, device=HOST)
    labels = torch.randint(0, classes, (n,), generator=generator, device=HOST)
    return token_ids, labels


class MoveInTheLoop(Exercise):
    """Exercise 1: a training step that moves the token ids and the labels before using them."""

    name = "ex1"
    reads = ("train_step",)
    hints = ("ch03.ex1.hint1", "ch03.ex1.hint2", "ch03.ex1.hint3")
    solution_key = "ch03.ex1.solution"
    not_attempted_key = "ch03.ex1.todo"

    def judge(self, train_step: object) -> Verdict:
        if not callable(train_step):
            return incorrect("ch03.ex1.not_function")
        torch.manual_seed(0)
        model, criterion = SpyModel(4), SpyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        before = model.head.weight.detach().clone()
        token_ids, labels = _batch()
        try:
            result = train_step(model, criterion, optimizer, token_ids, labels, STAND_IN)
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            return incorrect("ch03.ex1.raised", error=_error(error))
        if isinstance(result, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        if not model.seen or not criterion.seen:
            return incorrect("ch03.ex1.not_called")
        (ids_device, ids_dtype), (labels_device, labels_dtype) = model.seen[0], criterion.seen[0]
        if not same_device(ids_device, STAND_IN):
            return incorrect("ch03.ex1.ids", found=ids_device, device=STAND_IN)
        if ids_dtype not in INTEGER_IDS:
            return incorrect("ch03.ex1.ids_dtype", dtype=ids_dtype)
        if not same_device(labels_device, STAND_IN):
            return incorrect("ch03.ex1.labels", found=labels_device, device=STAND_IN)
        if labels_dtype != torch.int64:
            return incorrect("ch03.ex1.labels_dtype", dtype=labels_dtype)
        if torch.equal(before, model.head.weight.detach()):
            return incorrect("ch03.ex1.no_update")
        if not isinstance(result, float):
            return incorrect("ch03.ex1.result", got=type(result).__name__)
        return correct("ch03.ex1.ok", device=STAND_IN)


class BatchMover(Exercise):
    """Exercise 2: one function that moves a whole (token_ids, labels) batch."""

    name = "ex2"
    reads = ("move_batch",)
    hints = ("ch03.ex2.hint1", "ch03.ex2.hint2")
    solution_key = "ch03.ex2.solution"
    not_attempted_key = "ch03.ex2.todo"

    def judge(self, move_batch: object) -> Verdict:
        if not callable(move_batch):
            return incorrect("ch03.ex2.not_function")
        token_ids, labels = _batch()
        try:
            result = move_batch([token_ids, labels], STAND_IN)  # a DataLoader yields a list
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            return incorrect("ch03.ex2.raised", error=_error(error))
        if isinstance(result, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        if (
            not isinstance(result, (tuple, list))
            or len(result) != 2
            or not all(isinstance(t, torch.Tensor) for t in result)
        ):
            return incorrect("ch03.ex2.not_pair", got=type(result).__name__)
        for (name, moved), original in zip((("token_ids", result[0]), ("labels", result[1])), (token_ids, labels)):
            if not same_device(moved.device, STAND_IN):
                return incorrect("ch03.ex2.not_moved", what=name, found=moved.device, device=STAND_IN)
            if moved.shape != original.shape or moved.dtype != original.dtype:
                return incorrect("ch03.ex2.changed", what=name)
        return correct("ch03.ex2.ok", device=STAND_IN)


def _record_inputs(model: nn.Module) -> list[tuple[str, torch.device, torch.device]]:
    # For every layer with its own parameters: (layer, device of its parameters, device of its input).
    seen: list[tuple[str, torch.device, torch.device]] = []
    for layer_name, layer in model.named_modules():
        own = next(layer.parameters(recurse=False), None)
        if own is None:
            continue

        def hook(module: nn.Module, args: tuple, layer_name: str = layer_name) -> None:
            weight = next(module.parameters(recurse=False))
            for arg in args:
                if isinstance(arg, torch.Tensor):
                    seen.append((layer_name, weight.device, arg.device))

        layer.register_forward_pre_hook(hook)
    return seen


class MoveInsideForward(Exercise):
    """Exercise 3: a forward that moves the token ids to wherever the model's parameters are."""

    name = "ex3"
    reads = ("AutoMoveClassifier", "TextClassifier")
    hints = ("ch03.ex3.hint1", "ch03.ex3.hint2")
    solution_key = "ch03.ex3.solution"
    not_attempted_key = "ch03.ex3.todo"
    sizes = (20, 8, 4)  # vocab_size, embed_dim, num_classes of the models the check builds

    def judge(self, AutoMoveClassifier: object, TextClassifier: object) -> Verdict:  # noqa: N803 - notebook names
        if not (isinstance(AutoMoveClassifier, type) and isinstance(TextClassifier, type)):
            return incorrect("ch03.ex3.not_class")
        if not issubclass(AutoMoveClassifier, TextClassifier):
            return incorrect("ch03.ex3.not_subclass")
        token_ids, _ = _batch(vocab=self.sizes[0], classes=self.sizes[2])
        for device in (HOST, STAND_IN):
            torch.manual_seed(0)
            try:
                model = AutoMoveClassifier(*self.sizes).to(device)
            except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
                return incorrect("ch03.ex3.raised", device=device, error=_error(error))
            seen = _record_inputs(model)
            try:
                with torch.no_grad():
                    logits = model(token_ids)
            except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
                logits = error
            if isinstance(logits, Blank):
                return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
            elsewhere = [(name, found) for name, where, found in seen if not same_device(found, where)]
            if elsewhere and same_device(elsewhere[0][1], token_ids.device):
                return incorrect("ch03.ex3.not_moved", device=device, found=elsewhere[0][1])
            if elsewhere:
                return incorrect("ch03.ex3.moved_elsewhere", device=device, found=elsewhere[0][1])
            if isinstance(logits, BaseException):
                return incorrect("ch03.ex3.raised", device=device, error=_error(logits))
            if not isinstance(logits, torch.Tensor) or not same_device(logits.device, device):
                return incorrect("ch03.ex3.output", device=device)
            if device == HOST:
                with torch.no_grad():
                    plain = TextClassifier.forward(model, token_ids)
                same = isinstance(plain, torch.Tensor) and plain.shape == logits.shape
                if not (same and torch.allclose(plain, logits)):
                    return incorrect("ch03.ex3.changed")
        return correct("ch03.ex3.ok", device=STAND_IN)


EXERCISES = [MoveInTheLoop, BatchMover, MoveInsideForward]

_STAND_IN_NOTE = {
    "en": " (the check calls your code with device=meta, a stand-in for a GPU)",
    "zh": "（检查用 device=meta 调用你的代码，meta 在这里代替 GPU）",
}

messages.add(
    {
        # exercise 1: move the token ids and the labels in the training step
        "ch03.ex1.todo": {
            "en": "fill in `train_step` (it still returns `____`).",
            "zh": "补全 `train_step`（它现在还返回 `____`）。",
        },
        "ch03.ex1.not_function": {
            "en": "`train_step` should be a function.",
            "zh": "`train_step` 应该是一个函数。",
        },
        "ch03.ex1.raised": {
            "en": "`train_step` raised an error on a test batch: {error}",
            "zh": "`train_step` 在测试批次上抛出了错误：{error}",
        },
        "ch03.ex1.not_called": {
            "en": "`train_step` must call the model on the token ids and the criterion on the logits and labels.",
            "zh": "`train_step` 需要用 token id 调用模型，再用 logits 和标签调用损失函数。",
        },
        "ch03.ex1.ids": {
            "en": "the model received the token ids on {found}, not on {device}"
            + _STAND_IN_NOTE["en"]
            + ". `token_ids.to(device)` on its own line changes nothing: keep what it returns.",
            "zh": "模型收到的 token id 在 {found} 上，而不是 {device} 上"
            + _STAND_IN_NOTE["zh"]
            + "。单独一行 `token_ids.to(device)` 什么也不会改变：要保留它的返回值。",
        },
        "ch03.ex1.ids_dtype": {
            "en": "the token ids reached the model as {dtype}: an embedding looks rows up by integer ids "
            "(int64 or int32), so move them without changing their dtype.",
            "zh": "token id 以 {dtype} 类型进入了模型：Embedding 按整数 id（int64 或 int32）查表，"
            "移动时不要改变它们的数据类型。",
        },
        "ch03.ex1.labels": {
            "en": "the token ids reach the model on the right device, but the labels reach the loss on "
            "{found} instead of {device}" + _STAND_IN_NOTE["en"] + ". On a GPU, that is the `target` error.",
            "zh": "token id 已经以正确的设备进入模型，但标签进入损失函数时在 {found} 上，而不是 {device} 上"
            + _STAND_IN_NOTE["zh"]
            + "。在 GPU 上，这正是那条 `target` 报错。",
        },
        "ch03.ex1.labels_dtype": {
            "en": "the labels reached the loss as {dtype}: CrossEntropyLoss wants class indices (int64), "
            "so move them without changing their dtype.",
            "zh": "标签以 {dtype} 类型进入了损失函数：CrossEntropyLoss 需要类别索引（int64），"
            "移动时不要改变它们的数据类型。",
        },
        "ch03.ex1.no_update": {
            "en": "the model's parameters did not change: is `optimizer.step()` called after `backward()`?",
            "zh": "模型参数没有变化：`backward()` 之后调用 `optimizer.step()` 了吗？",
        },
        "ch03.ex1.result": {
            "en": "`train_step` should return the loss as a Python number (`loss.item()`), not a {got}.",
            "zh": "`train_step` 应该以 Python 数字返回损失（`loss.item()`），而不是 {got}。",
        },
        "ch03.ex1.ok": {
            "en": "the token ids and the labels both reached {device}, the device they were asked to go to, "
            "and the model learns.",
            "zh": "token id 和标签都到了要求的设备 {device} 上，模型也在学习。",
        },
        "ch03.ex1.hint1": {
            "en": "Two tensors come out of the DataLoader, and both are on the CPU. Which ones does the "
            "error message of section 3 name?",
            "zh": "DataLoader 给出两个张量，都在 CPU 上。第 3 节的两条报错分别点了谁的名？",
        },
        "ch03.ex1.hint2": {
            "en": "`Tensor.to(device)` returns a moved copy and leaves the original where it was: assign it "
            "back to the same name.",
            "zh": "`Tensor.to(device)` 返回一个移动后的副本，原张量留在原处：要把它赋值回同一个名字。",
        },
        "ch03.ex1.hint3": {
            "en": "Move both before the forward pass, then: zero_grad, loss, backward, step, return loss.item().",
            "zh": "在前向传播之前把两者都移动好，然后：zero_grad、计算损失、backward、step，返回 loss.item()。",
        },
        "ch03.ex1.solution": {
            "en": "token_ids, labels = token_ids.to(device), labels.to(device)\noptimizer.zero_grad()\n"
            "loss = criterion(model(token_ids), labels)\nloss.backward()\noptimizer.step()\nreturn loss.item()",
            "zh": "token_ids, labels = token_ids.to(device), labels.to(device)\noptimizer.zero_grad()\n"
            "loss = criterion(model(token_ids), labels)\nloss.backward()\noptimizer.step()\nreturn loss.item()",
        },
        # exercise 2: a batch mover
        "ch03.ex2.todo": {
            "en": "fill in `move_batch` (it still returns `____`).",
            "zh": "补全 `move_batch`（它现在还返回 `____`）。",
        },
        "ch03.ex2.not_function": {
            "en": "`move_batch` should be a function.",
            "zh": "`move_batch` 应该是一个函数。",
        },
        "ch03.ex2.raised": {
            "en": "`move_batch` raised an error on a test batch: {error}",
            "zh": "`move_batch` 在测试批次上抛出了错误：{error}",
        },
        "ch03.ex2.not_pair": {
            "en": "`move_batch` should return the pair (token_ids, labels), but it returned a {got}.",
            "zh": "`move_batch` 应该返回 (token_ids, labels) 这一对张量，但它返回的是 {got}。",
        },
        "ch03.ex2.not_moved": {
            "en": "`move_batch` returned {what} on {found}, not on {device}" + _STAND_IN_NOTE["en"] + ".",
            "zh": "`move_batch` 返回的 {what} 在 {found} 上，而不是 {device} 上" + _STAND_IN_NOTE["zh"] + "。",
        },
        "ch03.ex2.changed": {
            "en": "`move_batch` changed the shape or the dtype of {what}: it should only move it.",
            "zh": "`move_batch` 改变了 {what} 的形状或数据类型：它应该只负责移动。",
        },
        "ch03.ex2.ok": {
            "en": "both tensors of the batch arrive on {device}, unchanged otherwise.",
            "zh": "批次中的两个张量都到了 {device} 上，其余保持不变。",
        },
        "ch03.ex2.hint1": {
            "en": "A batch from this DataLoader is a list of two tensors: unpack it, move each one.",
            "zh": "这个 DataLoader 给出的批次是两个张量组成的列表：先拆开，再分别移动。",
        },
        "ch03.ex2.hint2": {
            "en": "Return the two moved tensors, token ids first: `return a.to(device), b.to(device)`.",
            "zh": "返回两个移动后的张量，token id 在前：`return a.to(device), b.to(device)`。",
        },
        "ch03.ex2.solution": {
            "en": "token_ids, labels = batch\nreturn token_ids.to(device), labels.to(device)",
            "zh": "token_ids, labels = batch\nreturn token_ids.to(device), labels.to(device)",
        },
        # exercise 3: move the token ids inside forward
        "ch03.ex3.todo": {
            "en": "fill in `AutoMoveClassifier.forward` (it still returns `____`).",
            "zh": "补全 `AutoMoveClassifier.forward`（它现在还返回 `____`）。",
        },
        "ch03.ex3.not_class": {
            "en": "`AutoMoveClassifier` and `TextClassifier` should be classes: run the cells that define them.",
            "zh": "`AutoMoveClassifier` 和 `TextClassifier` 应该是类：请运行定义它们的单元。",
        },
        "ch03.ex3.not_subclass": {
            "en": "`AutoMoveClassifier` should be a subclass of `TextClassifier`, so that it keeps its layers.",
            "zh": "`AutoMoveClassifier` 应该是 `TextClassifier` 的子类，这样才能保留它的各层。",
        },
        "ch03.ex3.raised": {
            "en": "with the model on {device}, building or calling it raised an error: {error}. `forward` must "
            "work wherever the model is.",
            "zh": "模型在 {device} 上时，创建或调用它抛出了错误：{error}。"
            "`forward` 必须在模型所在的任何设备上都能工作。",
        },
        "ch03.ex3.not_moved": {
            "en": "with the model on {device}, its layers received the token ids still on {found}, where they "
            "came from: `forward` did not move them to where the parameters are.",
            "zh": "模型在 {device} 上时，它的层收到的 token id 仍在原来的 {found} 上："
            "`forward` 没有把它们移到参数所在的设备。",
        },
        "ch03.ex3.moved_elsewhere": {
            "en": "with the model on {device}, its layers received the token ids on {found}. A fixed device "
            "(\"cuda\", or the notebook's `device`) is not where every model lives.",
            "zh": "模型在 {device} 上时，它的层收到的 token id 却在 {found} 上。固定的设备（\"cuda\"，或笔记本里的 "
            "`device`）并不是每个模型所在的地方。",
        },
        "ch03.ex3.output": {
            "en": "with the model on {device}, `forward` did not return logits on {device}.",
            "zh": "模型在 {device} 上时，`forward` 没有返回位于 {device} 上的 logits。",
        },
        "ch03.ex3.changed": {
            "en": "`forward` no longer computes what `TextClassifier.forward` computes: move the ids, then "
            "let the parent class do the rest.",
            "zh": "`forward` 算出的结果和 `TextClassifier.forward` 不一样了：先移动 id，剩下的交给父类。",
        },
        "ch03.ex3.ok": {
            "en": "the token ids follow the parameters (tested with the model on cpu and on {device}). "
            "The labels never pass through `forward`: they are still yours to move.",
            "zh": "token id 会跟着参数走（在 cpu 和 {device} 上的模型都测试过）。标签从不经过 `forward`："
            "它们仍然要由你来移动。",
        },
        "ch03.ex3.hint1": {
            "en": "A model knows where it lives: ask one of its parameters for its `.device`.",
            "zh": "模型知道自己在哪里：问它的任意一个参数的 `.device`。",
        },
        "ch03.ex3.hint2": {
            "en": "`next(self.parameters()).device` is the device of the first parameter; move the ids there, "
            "then `return super().forward(token_ids)`.",
            "zh": "`next(self.parameters()).device` 是第一个参数所在的设备；把 id 移过去，然后 "
            "`return super().forward(token_ids)`。",
        },
        "ch03.ex3.solution": {
            "en": "token_ids = token_ids.to(next(self.parameters()).device)\nreturn super().forward(token_ids)",
            "zh": "token_ids = token_ids.to(next(self.parameters()).device)\nreturn super().forward(token_ids)",
        },
    }
)
