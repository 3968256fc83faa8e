"""Chapter 03: "Input, output and indices must be on the current device": embedding ids and labels.

The checks call the learner's code with `device=torch.device("meta")`: a device every PyTorch has, whose
tensors hold no data. The stand-in model and loss they hand over really are on `meta` (moved there with
`.to()`, as a notebook moves its model), so a tensor the learner forgot to move stays on the CPU and shows,
on a machine without a GPU too. A second run on the CPU, where tensors hold values, checks what `meta`
cannot show: the values moved, stale gradients cleared, the parameters updated, the loss returned.
"""

from __future__ import annotations

import itertools
import math

import torch
from torch import nn

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, bounded, correct, incorrect
from ..devices import same_device
from ..spies import foreign_module

STAND_IN = torch.device("meta")  # the device the checks ask the learner's code to move things to
HOST = torch.device("cpu")  # where a DataLoader hands out batches
INTEGER_IDS = (torch.int64, torch.int32)  # what nn.Embedding accepts as token ids
LOSS_VALUE = 0.75  # what the stand-in loss returns: a right `train_step` returns exactly this number


_SEEDS = itertools.count(1)  # each check builds models with new weights: old freed memory cannot pass for outputs


def _fresh_weights(module: type[nn.Module], *args: object) -> nn.Module:
    """`module(*args)` with weights drawn from a seed of its own, leaving the notebook's random state alone."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(next(_SEEDS))
        return module(*args)


def _error(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".splitlines()[0][:300]


def _batch(
    n: int = 8, length: int = 6, vocab: int = 20, classes: int = 4, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    token_ids = torch.randint(0, vocab, (n, length), generator=generator, device=HOST)
    labels = torch.randint(0, classes, (n,), generator=generator, device=HOST)
    return token_ids, labels


class _StandInModel(nn.Module):
    """The learner's model as the check sees it: records each input, computes from its own weights only."""

    def __init__(self, classes: int, features: int = 4) -> None:
        super().__init__()
        self.head = nn.Linear(features, classes)
        self.seen: list[tuple[torch.device, torch.dtype, torch.device]] = []  # ids device, ids dtype, weight device
        self.settled = False  # set once the check has put the model where the learner's code finds it
        self.moved = False  # the learner's code tried to move (or convert) the model itself

    def _apply(self, fn: object, recurse: bool = True) -> nn.Module:
        if self.settled:
            self.moved = True
        return super()._apply(fn, recurse)  # type: ignore[arg-type]

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        weight = self.head.weight
        self.seen.append((token_ids.device, token_ids.dtype, weight.device))
        # Outputs live where the weights are, as a real model's do; ids on another device are recorded, not raised.
        return self.head(torch.ones(len(token_ids), self.head.in_features, device=weight.device))


class _LossOnHost(torch.autograd.Function):
    """A loss whose value is LOSS_VALUE on the CPU (so `.item()` works on meta too) and whose gradient flows."""

    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, logits: torch.Tensor) -> torch.Tensor:  # noqa: D102
        ctx.shape, ctx.device, ctx.dtype = logits.shape, logits.device, logits.dtype
        return torch.tensor(LOSS_VALUE)

    @staticmethod
    def backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor) -> torch.Tensor:  # noqa: D102
        return torch.full(ctx.shape, 0.1 * float(grad), device=ctx.device, dtype=ctx.dtype)


class _StandInLoss(nn.Module):
    """The criterion as the check sees it: records the labels and the logits it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[torch.Tensor, torch.Tensor]] = []  # (labels, logits), detached

    def forward(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        self.seen.append((labels.detach(), logits.detach()))
        return _LossOnHost.apply(logits)


class _StandInOptimizer(torch.optim.SGD):
    """A real SGD that also records the gradients it finds when `step()` is called."""

    def __init__(self, params: object) -> None:
        super().__init__(params, lr=0.1)
        self.grads_at_step: list[list[torch.Tensor | None]] = []

    def step(self, closure: object = None) -> object:  # noqa: D102
        params = [p for group in self.param_groups for p in group["params"]]
        self.grads_at_step.append([None if p.grad is None else p.grad.detach().clone() for p in params])
        return super().step(closure)


class _Run:
    """One call of the learner's `train_step` on the stand-ins, on one device."""

    def __init__(self, train_step: object, device: torch.device, calls: int = 1, classes: int = 4) -> None:
        self.model = _fresh_weights(_StandInModel, classes).to(device)  # moved the way a notebook moves its model
        self.model.settled = True
        self.criterion = _StandInLoss()
        self.optimizer = _StandInOptimizer(self.model.parameters())
        self.before = [p.detach().clone() for p in self.model.parameters()]
        self.token_ids, self.labels = _batch(classes=classes)
        self.error: BaseException | None = None
        self.results: list[object] = []
        for _ in range(calls):  # two steps in a row show gradients a step leaves behind for the next
            try:
                self.results.append(
                    train_step(self.model, self.criterion, self.optimizer, self.token_ids, self.labels, device)  # type: ignore[operator]
                )
            except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
                self.error = error
                return


def _labels_fit(labels: torch.Tensor, logits: torch.Tensor) -> bool:
    """Class indices (int64, one per row), or class probabilities shaped like the logits."""
    if labels.dtype == torch.int64:
        return labels.dim() == 1 and len(labels) == len(logits)
    return labels.is_floating_point() and labels.shape == logits.shape


class MoveInTheLoop(Exercise):
    """Exercise 1: a training step that moves the token ids and the labels before using them."""

    seconds = 30.0  # a right answer takes a few seconds at most (the first optimizer step); an endless one is stopped
    name = "ex1"
    reads = ("train_step",)
    hints = ("ch03.ex1.hint1", "ch03.ex1.hint2", "ch03.ex1.hint3")
    solution_key = "ch03.ex1.solution"
    not_attempted_key = "ch03.ex1.todo"

    def judge(self, train_step: object) -> Verdict:
        if not callable(train_step):
            return incorrect("ch03.ex1.not_function")
        # 1. Devices: everything the step is given sits on the CPU, the model really is on the stand-in device.
        probe = _Run(train_step, STAND_IN)
        if any(isinstance(result, Blank) for result in probe.results):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        verdict = self._devices(probe)
        if verdict is not None:
            return verdict
        # 2. Values, on the CPU, over two steps in a row.
        values = _Run(train_step, HOST, calls=2)
        return self._values(values) or correct("ch03.ex1.ok", device=STAND_IN)

    def _devices(self, run: _Run) -> Verdict | None:
        if run.error is not None and run.model.moved:  # e.g. model.cpu(): meta tensors cannot be copied out
            return incorrect("ch03.ex1.moves_model", device=STAND_IN)
        if not run.model.seen or not run.criterion.seen:
            if run.error is not None:
                other = foreign_module(run.error, run.model, run.criterion)
                if other is not None:  # a notebook variable (`model`) ran instead of the model handed in
                    return incorrect("ch03.ex1.other_model", got=type(other).__name__)
                return incorrect("ch03.ex1.raised", error=_error(run.error))
            return incorrect("ch03.ex1.not_called")
        ids_device, ids_dtype, weight_device = run.model.seen[0]
        if not same_device(weight_device, STAND_IN):
            return incorrect("ch03.ex1.model_moved", found=weight_device, device=STAND_IN)
        if not same_device(ids_device, STAND_IN):
            return incorrect("ch03.ex1.ids", found=ids_device, device=STAND_IN)
        if ids_dtype not in INTEGER_IDS:
            return incorrect("ch03.ex1.ids_dtype", dtype=ids_dtype)
        labels, logits = run.criterion.seen[0]
        if not same_device(labels.device, STAND_IN):
            return incorrect("ch03.ex1.labels", found=labels.device, device=STAND_IN)
        if not _labels_fit(labels, logits):
            return incorrect("ch03.ex1.labels_dtype", dtype=labels.dtype)
        if run.error is not None:
            return incorrect("ch03.ex1.raised", error=_error(run.error))
        return None

    def _values(self, run: _Run) -> Verdict | None:
        if run.error is not None:
            return incorrect("ch03.ex1.raised", error=_error(run.error))
        if not run.model.seen or not run.criterion.seen:
            return incorrect("ch03.ex1.not_called")
        labels, _ = run.criterion.seen[0]
        if labels.is_floating_point():  # probabilities: only one-hot rows say the same as the class indices
            one_hot = nn.functional.one_hot(run.labels, labels.shape[-1]).to(labels.dtype)
            if not torch.equal(labels, one_hot):
                return incorrect("ch03.ex1.labels_dtype", dtype=labels.dtype)
        elif not torch.equal(labels, run.labels):
            return incorrect("ch03.ex1.labels_changed")
        steps = run.optimizer.grads_at_step
        if len(steps) < 2:
            return incorrect("ch03.ex1.no_update")
        for grads in steps:
            if any(g is None for g in grads) or all(not g.any() for g in grads if g is not None):
                return incorrect("ch03.ex1.no_grad")
        # Each step's loss gives the same gradient: a second step that finds more kept the first step's.
        if not all(torch.allclose(a, b) for a, b in zip(steps[0], steps[-1])):  # type: ignore[arg-type]
            return incorrect("ch03.ex1.stale_grads")
        if all(torch.equal(a, p.detach()) for a, p in zip(run.before, run.model.parameters())):
            return incorrect("ch03.ex1.no_update")
        for result in run.results:
            if isinstance(result, bool) or not isinstance(result, (float, int)):
                return incorrect("ch03.ex1.result", got=type(result).__name__)
            if not math.isclose(result, LOSS_VALUE, rel_tol=1e-6):
                return incorrect("ch03.ex1.result_value", got=result)
        return None


def _pair(result: object) -> list[torch.Tensor] | None:
    """The two tensors of a (token_ids, labels) pair, or None when `result` does not unpack into two tensors."""
    if isinstance(result, (torch.Tensor, str, bytes, dict)):
        return None
    try:
        items = bounded(result, 3)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - not iterable, or its __iter__ fails
        return None
    if len(items) != 2 or not all(isinstance(t, torch.Tensor) for t in items):
        return None
    return items  # type: ignore[return-value]


class BatchMover(Exercise):
    """Exercise 2: one function that moves a whole [token_ids, labels] batch."""

    seconds = 20.0  # a right answer takes well under a second here; an endless one is stopped
    name = "ex2"
    reads = ("move_batch",)
    hints = ("ch03.ex2.hint1", "ch03.ex2.hint2", "ch03.ex2.hint3")
    solution_key = "ch03.ex2.solution"
    not_attempted_key = "ch03.ex2.todo"

    def judge(self, move_batch: object) -> Verdict:
        if not callable(move_batch):
            return incorrect("ch03.ex2.not_function")
        for seed, device in enumerate((STAND_IN, HOST)):  # meta shows where tensors went; the CPU their values
            # Each run its own values, so that memory freed by an earlier run cannot pass for the batch's values.
            token_ids, labels = _batch(seed=seed + 1)
            originals = (token_ids.clone(), labels.clone())
            try:
                result = move_batch([token_ids, labels], device)  # a DataLoader yields a list  # type: ignore[operator]
            except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
                return incorrect("ch03.ex2.raised", error=_error(error))
            if isinstance(result, Blank):
                return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
            pair = _pair(result)
            if pair is None:
                return incorrect("ch03.ex2.not_pair", got=type(result).__name__)
            for name, moved, original in zip(("token_ids", "labels"), pair, originals):
                if not same_device(moved.device, device):
                    return incorrect("ch03.ex2.not_moved", what=name, found=moved.device, device=STAND_IN)
                if moved.shape != original.shape or moved.dtype != original.dtype:
                    return incorrect("ch03.ex2.changed", what=name)
                if device == HOST and not torch.equal(moved, original):
                    return incorrect("ch03.ex2.values", what=name)
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

    seconds = 20.0  # a right answer takes well under a second here; an endless one is stopped
    name = "ex3"
    reads = ("AutoMoveClassifier", "TextClassifier")
    hints = ("ch03.ex3.hint1", "ch03.ex3.hint2", "ch03.ex3.hint3")
    solution_key = "ch03.ex3.solution"
    not_attempted_key = "ch03.ex3.todo"
    sizes = (20, 8, 4)  # vocab_size, embed_dim, num_classes of the models the check builds

    def judge(self, AutoMoveClassifier: object, TextClassifier: object) -> Verdict:  # noqa: N803 - notebook names
        if not (isinstance(AutoMoveClassifier, type) and isinstance(TextClassifier, type)):
            return incorrect("ch03.ex3.not_class")
        if not issubclass(AutoMoveClassifier, TextClassifier):
            return incorrect("ch03.ex3.not_subclass")
        vocab, _, classes = self.sizes
        token_ids, _ = _batch(vocab=vocab, classes=classes)
        devices = [HOST] + ([self.device] if not same_device(self.device, HOST) else []) + [STAND_IN]
        for device in devices:  # the model really is on each device: its parameters were moved with .to()
            try:
                model = _fresh_weights(AutoMoveClassifier, *self.sizes).to(device)
            except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
                return incorrect("ch03.ex3.raised", device=device, error=_error(error))
            seen = _record_inputs(model)
            try:
                with torch.no_grad():
                    logits = model(token_ids)  # CPU ids, straight from a DataLoader
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
            if (
                not isinstance(logits, torch.Tensor)
                or not same_device(logits.device, device)
                or logits.shape != (len(token_ids), classes)
            ):
                return incorrect("ch03.ex3.output", device=device)
            if device == HOST:  # values exist on the CPU: the answer must compute what the parent computes
                with torch.no_grad():
                    plain = TextClassifier.forward(model, token_ids)
                same = isinstance(plain, torch.Tensor) and plain.shape == logits.shape
                if not (same and torch.allclose(plain, logits)):
                    return incorrect("ch03.ex3.changed")
        return correct("ch03.ex3.ok", device=STAND_IN)


EXERCISES = [MoveInTheLoop, BatchMover, MoveInsideForward]

_STAND_IN_NOTE = {
    "en": " (the check calls your code with device=meta, standing in for a GPU)",
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
        "ch03.ex1.other_model": {
            "en": "`train_step` ran another model (a {got}) instead of the `model` it is given, and that model failed "
            "on the check's test batch: the check calls `train_step` with a model, a loss and an optimizer of its "
            "own, and a notebook variable such as `model` is none of them.",
            "zh": "`train_step` 运行的是另一个模型（一个 {got}），而不是传给它的 `model`，"
            "那个模型在检查的测试批次上出错了：检查调用 `train_step` 时传入的是它自己的模型、损失函数和优化器，"
            "像 `model` 这样的笔记本变量不是其中任何一个。",
        },
        "ch03.ex1.not_called": {
            "en": "`train_step` must call the `model` it is given on the token ids, and the `criterion` it is "
            "given on the logits and the labels.",
            "zh": "`train_step` 要用传进来的 `model` 处理 token id，"
            "再用传进来的 `criterion` 根据 logits 和标签计算损失。",
        },
        "ch03.ex1.model_moved": {
            "en": "the model was on {device} when `train_step` got it, but on {found} when it ran: leave the "
            "model where it is and move the batch to it" + _STAND_IN_NOTE["en"] + ".",
            "zh": "`train_step` 拿到模型时它在 {device} 上，运行时却到了 {found} 上：模型不用动，"
            "要移动的是批次" + _STAND_IN_NOTE["zh"] + "。",
        },
        "ch03.ex1.moves_model": {
            "en": "`train_step` tried to move the model. The model is already where it should be (the check "
            "hands it over on {device}, standing in for a GPU); move the token ids and the labels to it instead.",
            "zh": "`train_step` 试图移动模型。模型已经在它该在的设备上了（检查把它放在 {device} 上交给你，"
            "meta 在这里代替 GPU）；要移动的是 token id 和标签。",
        },
        "ch03.ex1.ids": {
            "en": "the model received the token ids on {found}, not on {device}"
            + _STAND_IN_NOTE["en"]
            + ". `token_ids.to(device)` on its own line changes nothing: keep what it returns.",
            "zh": "模型收到的 token id 在 {found} 上，而不是 {device} 上"
            + _STAND_IN_NOTE["zh"]
            + "。单独一行 `token_ids.to(device)` 不起任何作用：要保留它的返回值。",
        },
        "ch03.ex1.ids_dtype": {
            "en": "the token ids reached the model as {dtype}: an embedding looks rows up by integer ids "
            "(int64 or int32), so move them without changing their dtype.",
            "zh": "token id 以 {dtype} 类型传进了模型：Embedding 按整数 id（int64 或 int32）查表，"
            "移动时不要改变它们的 dtype（数据类型）。",
        },
        "ch03.ex1.labels": {
            "en": "the token ids reach the model on the right device, but the labels reach the loss on "
            "{found} instead of {device}" + _STAND_IN_NOTE["en"] + ". On a GPU, that is the `target` error.",
            "zh": "token id 已经在正确的设备上传给了模型，但标签传给损失函数时在 {found} 上，而不是 {device} 上"
            + _STAND_IN_NOTE["zh"]
            + "。在 GPU 上，这就是那条点名 `target` 的报错。",
        },
        "ch03.ex1.labels_dtype": {
            "en": "the labels reached the loss as {dtype}: CrossEntropyLoss reads int64 labels as class "
            "indices, and floating-point ones as class probabilities (one row per text), which these are "
            "not. Move them without changing their dtype.",
            "zh": "标签以 {dtype} 类型传给了损失函数：CrossEntropyLoss 把 int64 标签当作类别索引，"
            "把浮点标签当作类别概率（每条文本一行），而这里的标签并不是概率。移动时不要改变它们的 dtype（数据类型）。",
        },
        "ch03.ex1.labels_changed": {
            "en": "the loss received other labels than the batch's: move them, do not change them.",
            "zh": "损失函数收到的标签和批次里的不一样：只移动，不要修改。",
        },
        "ch03.ex1.no_grad": {
            "en": "when `optimizer.step()` ran, the parameters had no gradient: `backward()` comes before "
            "`step()`, and `zero_grad()` before `backward()`.",
            "zh": "`optimizer.step()` 执行时，参数上没有梯度：`backward()` 要在 `step()` 之前，"
            "`zero_grad()` 要在 `backward()` 之前。",
        },
        "ch03.ex1.stale_grads": {
            "en": "called twice in a row, the second step found the first step's gradients still added to its "
            "own: gradients accumulate until something clears them.",
            "zh": "连续调用两次时，第二步的梯度里还叠加着第一步的梯度：梯度会一直累加，直到有人把它清零。",
        },
        "ch03.ex1.no_update": {
            "en": "the model's parameters did not change: is `optimizer.step()` called after `backward()`?",
            "zh": "模型参数没有变化：`backward()` 之后调用 `optimizer.step()` 了吗？",
        },
        "ch03.ex1.result": {
            "en": "`train_step` should return the loss as a Python number (`loss.item()`), not a {got}.",
            "zh": "`train_step` 应该以 Python 数值返回损失（`loss.item()`），而不是 {got}。",
        },
        "ch03.ex1.result_value": {
            "en": "`train_step` returned {got}, which is not the value of the loss the criterion computed.",
            "zh": "`train_step` 返回了 {got}，这不是损失函数算出的损失值。",
        },
        "ch03.ex1.ok": {
            "en": "The token ids and the labels both reached {device}, the device they were asked to go to, "
            "and each step updates the model with fresh gradients.",
            "zh": "token id 和标签都到了指定的设备 {device} 上，而且每一步都用新算出的梯度更新模型。",
        },
        "ch03.ex1.hint1": {
            "en": "Two tensors come out of the DataLoader, and both are on the CPU. Which ones do the "
            "two error messages above name?",
            "zh": "DataLoader 给出两个张量，都在 CPU 上。上面两条报错分别点了哪个参数的名？",
        },
        "ch03.ex1.hint2": {
            "en": "`Tensor.to(device)` returns a moved copy and leaves the original where it was: assign it "
            "back to the same name.",
            "zh": "`Tensor.to(device)` 返回移动后的副本，原张量留在原处：要把结果赋值回同一个变量名。",
        },
        "ch03.ex1.hint3": {
            "en": "`token_ids, labels = token_ids.to(____), labels.to(____)` before the forward pass; then "
            "zero_grad, loss, backward, step, `return loss.item()`.",
            "zh": "前向计算之前：`token_ids, labels = token_ids.to(____), labels.to(____)`；然后 "
            "zero_grad、损失、backward、step，最后 `return loss.item()`。",
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
            "en": "`move_batch` should return the two tensors (token_ids, labels), but what it returned "
            "({got}) does not unpack into two tensors.",
            "zh": "`move_batch` 应该返回 (token_ids, labels) 两个张量，但它返回的东西（{got}）拆不成两个张量。",
        },
        "ch03.ex2.not_moved": {
            "en": "`move_batch` returned {what} on {found}, not on {device}" + _STAND_IN_NOTE["en"] + ".",
            "zh": "`move_batch` 返回的 {what} 在 {found} 上，而不是 {device} 上" + _STAND_IN_NOTE["zh"] + "。",
        },
        "ch03.ex2.changed": {
            "en": "`move_batch` changed the shape or the dtype of {what}: it should only move it.",
            "zh": "`move_batch` 改变了 {what} 的形状或 dtype（数据类型）：它只应负责移动。",
        },
        "ch03.ex2.values": {
            "en": "`move_batch` returned a {what} tensor of the right shape but with other values: return "
            "the batch's own tensors, moved, not new ones.",
            "zh": "`move_batch` 返回的 {what} 形状没错，数值却变了：要返回批次里原来的张量（移动之后的），"
            "而不是新建的张量。",
        },
        "ch03.ex2.ok": {
            "en": "Both tensors of the batch arrive on {device}, unchanged otherwise.",
            "zh": "批次里的两个张量都到了 {device} 上，其他方面原封不动。",
        },
        "ch03.ex2.hint1": {
            "en": "A batch from this DataLoader is a list of two tensors: unpack it, move each one.",
            "zh": "这个 DataLoader 给出的批次是由两个张量组成的列表：先拆开，再逐个移动。",
        },
        "ch03.ex2.hint2": {
            "en": "`Tensor.to(device)` returns a moved copy: return the two copies as a pair, token ids first.",
            "zh": "`Tensor.to(device)` 返回移动后的副本：把两个副本作为一对返回，token id 在前。",
        },
        "ch03.ex2.hint3": {
            "en": "`token_ids, labels = batch`, then `return token_ids.to(____), ____`.",
            "zh": "先 `token_ids, labels = batch`，再 `return token_ids.to(____), ____`。",
        },
        "ch03.ex2.solution": {
            "en": "token_ids, labels = batch\nreturn token_ids.to(device), labels.to(device)",
            "zh": "token_ids, labels = batch\nreturn token_ids.to(device), labels.to(device)",
        },
        # exercise 3: move the ids inside forward
        "ch03.ex3.todo": {
            "en": "fill in `AutoMoveClassifier.forward` (it still returns `____`).",
            "zh": "补全 `AutoMoveClassifier.forward`（它现在还返回 `____`）。",
        },
        "ch03.ex3.not_class": {
            "en": "`AutoMoveClassifier` and `TextClassifier` should be classes: run the cells that define them.",
            "zh": "`AutoMoveClassifier` 和 `TextClassifier` 应该是类：请运行定义它们的单元格。",
        },
        "ch03.ex3.not_subclass": {
            "en": "`AutoMoveClassifier` should be a subclass of `TextClassifier`, so that it keeps its layers.",
            "zh": "`AutoMoveClassifier` 应该继承 `TextClassifier`，这样才能沿用它的各层。",
        },
        "ch03.ex3.raised": {
            "en": "with the model on {device}, building or calling it raised an error: {error}. `forward` must "
            "work wherever the model is.",
            "zh": "模型在 {device} 上时，创建或调用它抛出了错误：{error}。"
            "无论模型在哪个设备上，`forward` 都必须能正常运行。",
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
            "zh": "模型在 {device} 上时，它的层收到的 token id 却在 {found} 上。写死的设备（\"cuda\"，"
            "或笔记本里的 `device`）不一定是模型所在的设备。",
        },
        "ch03.ex3.output": {
            "en": "with the model on {device}, `forward` did not return one row of logits per text on {device}.",
            "zh": "模型在 {device} 上时，`forward` 没有在 {device} 上返回每条文本一行的 logits。",
        },
        "ch03.ex3.changed": {
            "en": "`forward` no longer computes what `TextClassifier.forward` computes: move the ids, then "
            "let the parent class do the rest.",
            "zh": "`forward` 的计算结果和 `TextClassifier.forward` 不一样了：先移动 id，其余交给父类。",
        },
        "ch03.ex3.ok": {
            "en": "The token ids follow the parameters (tested with the model on cpu and on {device}). "
            "The labels never pass through `forward`: they are still yours to move.",
            "zh": "token id 会跟着参数走（分别用 cpu 和 {device} 上的模型测试过）。标签从不经过 `forward`："
            "它们仍然得由你来移动。",
        },
        "ch03.ex3.hint1": {
            "en": "A model knows where it lives: ask one of its parameters for its `.device`.",
            "zh": "模型知道自己在哪个设备上：随便取一个参数，看它的 `.device`。",
        },
        "ch03.ex3.hint2": {
            "en": "`self.parameters()` iterates over the model's parameters; `next(...)` gives the first one, "
            "and its `.device` says where the model is. The parent class's `forward` does the rest: "
            "`super().forward(...)`.",
            "zh": "`self.parameters()` 逐个给出模型的参数；`next(...)` 取第一个，它的 `.device` "
            "就是模型所在的设备。剩下的交给父类的 `forward`：`super().forward(...)`。",
        },
        "ch03.ex3.hint3": {
            "en": "`token_ids = token_ids.to(next(self.parameters()).____)`, then `return "
            "super().forward(____)`.",
            "zh": "`token_ids = token_ids.to(next(self.parameters()).____)`，然后 `return "
            "super().forward(____)`。",
        },
        "ch03.ex3.solution": {
            "en": "token_ids = token_ids.to(next(self.parameters()).device)\nreturn super().forward(token_ids)",
            "zh": "token_ids = token_ids.to(next(self.parameters()).device)\nreturn super().forward(token_ids)",
        },
    }
)
