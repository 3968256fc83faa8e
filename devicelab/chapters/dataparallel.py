"""Chapter 02: DataParallel, "Input type ... and weight type ... should be the same", loss and optimizer.

Every check calls the learner's code: on a CPU-only machine "on the device" and "on the CPU" look the
same, so each answer is also run towards `meta`, a second device every machine has, while the notebook's
own device stays where it is.
"""

from __future__ import annotations

import copy
import sys

import torch
from torch import nn

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, correct, incorrect
from ..checks import short_error as _short
from ..devices import same_device, tensors_off
from ..spies import MoveRecorder, SpyLoss, SpyModel, StepCounter, foreign_module

META = torch.device("meta")
ASKED_LR, ASKED_MOMENTUM = 0.05, 0.9  # the optimizer exercise 3 asks for; the proof is measured with it



def _dataparallel_moves_modules() -> bool:
    # With CUDA, nn.DataParallel moves a module given one device id to cuda:0 in its constructor;
    # elsewhere (CPU, MPS) it keeps no device ids and just calls the module.
    return torch.cuda.is_available()


class _PrepareProbe(nn.Module):
    """A small conv model (with BatchNorm buffers) that records who moved it: the learner or DataParallel."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.norm = nn.BatchNorm2d(4)
        self.moves: list[tuple[bool, torch.device]] = []  # (by DataParallel's constructor, where to)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.norm(self.conv(images))

    def _apply(self, fn, recurse=True):  # type: ignore[no-untyped-def]
        result = super()._apply(fn, recurse)
        frame, by_wrapper = sys._getframe(1), False
        for _ in range(6):
            if frame is None:
                break
            if frame.f_code is nn.DataParallel.__init__.__code__:
                by_wrapper = True
            frame = frame.f_back
        self.moves.append((by_wrapper, self.conv.weight.device))
        return result


class PrepareModel(Exercise):
    """Exercise 1: `prepare(model, device)` moves the model, wraps it in DataParallel and returns the wrapper."""

    seconds = 20.0  # a right answer takes well under a second here; an endless one is stopped
    name = "ex1"
    reads = ("prepare",)
    hints = ("ch02.ex1.hint1", "ch02.ex1.hint2", "ch02.ex1.hint3")
    solution_key = "ch02.ex1.solution"
    not_attempted_key = "ch02.ex1.todo"

    def judge(self, prepare: object) -> Verdict:
        if not callable(prepare):
            return incorrect("ch02.ex1.not_function")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            verdict = self._run(prepare, self.device, probe=False)
            if verdict is None and not _dataparallel_moves_modules():
                verdict = self._run(prepare, META, probe=True)
        return verdict or correct("ch02.ex1.ok")

    def _run(self, prepare, device: torch.device, probe: bool) -> Verdict | None:  # type: ignore[no-untyped-def]
        model = _PrepareProbe()
        try:
            result = prepare(model, device)
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            return incorrect("ch02.ex1.raised", error=_short(error))
        if isinstance(result, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        if result is None:
            return incorrect("ch02.ex1.returned_none")
        if not isinstance(result, nn.Module):
            return incorrect("ch02.ex1.not_module", got=type(result).__name__)
        if not isinstance(result, nn.DataParallel):
            return incorrect("ch02.ex1.not_wrapped")
        if isinstance(result.module, nn.DataParallel):
            return incorrect("ch02.ex1.wrapped_twice")
        if result.module is not model:
            return incorrect("ch02.ex1.other_model")
        off = tensors_off(model, device)
        if off:
            total = len([*model.parameters(), *model.buffers()])
            key = "ch02.ex1.probe_not_moved" if probe else "ch02.ex1.not_moved"
            return incorrect(key, n=len(off), total=total, found=off[0].device, device=device)
        if not any(not by_wrapper and same_device(where, device) for by_wrapper, where in model.moves):
            if any(by_wrapper for by_wrapper, _ in model.moves):
                return incorrect("ch02.ex1.wrapper_moved")
        return None


class MakeCriterion(Exercise):
    """Exercise 2: `make_criterion(class_weights, device)` returns a class-weighted cross-entropy on `device`."""

    seconds = 20.0  # a right answer takes well under a second here; an endless one is stopped
    name = "ex2"
    reads = ("make_criterion",)
    hints = ("ch02.ex2.hint1", "ch02.ex2.hint2", "ch02.ex2.hint3")
    solution_key = "ch02.ex2.solution"
    not_attempted_key = "ch02.ex2.todo"

    def judge(self, make_criterion: object) -> Verdict:
        if not callable(make_criterion):
            return incorrect("ch02.ex2.not_function")
        with torch.random.fork_rng(devices=[]):
            return self._judge(make_criterion)

    def _judge(self, make_criterion) -> Verdict:  # type: ignore[no-untyped-def]
        generator = torch.Generator().manual_seed(0)
        weights = torch.tensor([0.5, 1.0, 2.5, 4.0])  # not the notebook's: the function must use its argument
        logits = torch.randn(64, 4, generator=generator).to(self.device)
        labels = torch.randint(0, 4, (64,), generator=generator).to(self.device)
        moves = MoveRecorder()
        try:
            with moves:
                criterion = make_criterion(weights.clone(), self.device)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch02.ex2.raised", error=_short(error))
        if isinstance(criterion, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        if not callable(criterion):
            return incorrect("ch02.ex2.not_loss", got=type(criterion).__name__)
        try:
            loss = criterion(logits, labels)
        except Exception as error:  # noqa: BLE001
            if _copy_not_kept(moves, criterion, self.device):
                return incorrect("ch02.ex2.discarded", device=self.device)
            if "device" in str(error):
                return incorrect("ch02.ex2.weight_device", device=self.device, error=_short(error))
            return incorrect("ch02.ex2.raised", error=_short(error))
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            return incorrect("ch02.ex2.not_loss", got=type(loss).__name__)
        loss = loss.detach().float().cpu().reshape(())
        weighted = nn.functional.cross_entropy(logits.cpu(), labels.cpu(), weight=weights)
        plain = nn.functional.cross_entropy(logits.cpu(), labels.cpu())
        if not torch.allclose(loss, weighted, rtol=1e-4, atol=1e-6):
            if torch.allclose(loss, plain, rtol=1e-4, atol=1e-6):
                return incorrect("ch02.ex2.no_weight")
            return incorrect("ch02.ex2.weight_values")
        return self._probe(make_criterion, weights) or correct("ch02.ex2.ok")

    def _probe(self, make_criterion, weights: torch.Tensor) -> Verdict | None:  # type: ignore[no-untyped-def]
        # The same function asked for `meta`: the loss must run on meta logits and labels.
        moves, criterion = MoveRecorder(), None
        try:
            with moves:
                criterion = make_criterion(weights.clone(), META)
            loss = criterion(torch.randn(8, 4, device=META), torch.zeros(8, dtype=torch.long, device=META))
        except Exception as error:  # noqa: BLE001
            if criterion is not None and _copy_not_kept(moves, criterion, META):
                return incorrect("ch02.ex2.discarded", device=META)
            return incorrect("ch02.ex2.probe_device", error=_short(error))
        if not isinstance(loss, torch.Tensor) or loss.device != META:
            found = loss.device if isinstance(loss, torch.Tensor) else type(loss).__name__
            return incorrect("ch02.ex2.probe_device", error=f"the loss came back on {found}")
        return None


def _copy_not_kept(moves: MoveRecorder, criterion: object, device: torch.device) -> bool:
    """A tensor was copied to `device` while the loss was made, yet the loss holds tensors elsewhere: the copy that
    `Tensor.to()` returned was thrown away (`class_weights.to(device)` on a line of its own)."""
    if not moves.towards(device):
        return False
    return not isinstance(criterion, nn.Module) or bool(tensors_off(criterion, device))


def _asked_optimizer_differs(optimizer: torch.optim.Optimizer) -> Verdict | None:
    """What, in the optimizer's own settings, differs from SGD(lr=ASKED_LR, momentum=ASKED_MOMENTUM)."""
    if not isinstance(optimizer, torch.optim.SGD):
        return incorrect("ch02.ex3.not_sgd", got=type(optimizer).__name__)
    for group in optimizer.param_groups:
        lr = float(group.get("lr", float("nan")))
        if abs(lr - ASKED_LR) > 1e-12:
            return incorrect("ch02.ex3.lr", got=lr, asked=ASKED_LR)
        momentum = float(group.get("momentum", 0.0))
        if abs(momentum - ASKED_MOMENTUM) > 1e-12:
            return incorrect("ch02.ex3.momentum", got=momentum, asked=ASKED_MOMENTUM)
        extras = {k: group.get(k) for k in ("nesterov", "weight_decay", "dampening", "maximize")}
        changed = [f"{k}={v}" for k, v in extras.items() if v not in (None, False, 0, 0.0)]
        if changed:
            return incorrect("ch02.ex3.extra_settings", settings=", ".join(changed))
    return None


def _steps_like_asked(optimizer: torch.optim.Optimizer) -> bool:
    """Two steps with known gradients move the parameters exactly as the asked SGD would; then undo them."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    saved = [p.detach().clone() for p in params]
    saved_grads = [p.grad for p in params]
    state = copy.deepcopy(optimizer.state_dict())
    copies = [p.detach().clone().requires_grad_(True) for p in params]
    reference = torch.optim.SGD(copies, lr=ASKED_LR, momentum=ASKED_MOMENTUM)
    generator = torch.Generator().manual_seed(0)
    try:
        optimizer.load_state_dict({"state": {}, "param_groups": state["param_groups"]})  # start afresh
        for _ in range(2):
            for p, c in zip(params, copies):
                grad = torch.randn(p.shape, generator=generator).to(p.device, p.dtype)
                p.grad, c.grad = grad.clone(), grad.clone()
            optimizer.step()
            reference.step()
        return all(torch.allclose(p.detach(), c.detach(), rtol=1e-5, atol=1e-7) for p, c in zip(params, copies))
    finally:
        with torch.no_grad():
            for p, before, grad in zip(params, saved, saved_grads):
                p.copy_(before)
                p.grad = grad
        optimizer.load_state_dict(state)


class OptimizerOverFinalModel(Exercise):
    """Exercise 3: SGD (lr=0.05, momentum=0.9) holding exactly the parameters of the model being trained."""

    seconds = 20.0  # a right answer takes well under a second here; an endless one is stopped
    name = "ex3"
    reads = ("optimizer_ft", "model_ft")
    hints = ("ch02.ex3.hint1", "ch02.ex3.hint2", "ch02.ex3.hint3")
    solution_key = "ch02.ex3.solution"
    not_attempted_key = "ch02.ex3.todo"

    def judge(self, optimizer_ft: object, model_ft: object) -> Verdict:
        if not isinstance(optimizer_ft, torch.optim.Optimizer):
            return incorrect("ch02.ex3.not_optimizer", got=type(optimizer_ft).__name__)
        if not isinstance(model_ft, nn.Module):
            return incorrect("ch02.ex3.no_model")
        held = {id(p) for group in optimizer_ft.param_groups for p in group["params"]}
        wanted = {id(p) for p in model_ft.parameters() if p.requires_grad}
        shared = held & wanted
        if not shared:
            return incorrect("ch02.ex3.other_model", held=len(held))
        if shared != wanted:
            return incorrect("ch02.ex3.some_missing", n=len(wanted - shared), total=len(wanted))
        if held != wanted:
            return incorrect("ch02.ex3.extra", n=len(held - wanted))
        differs = _asked_optimizer_differs(optimizer_ft)
        if differs is not None:
            return differs
        try:
            steps_right = _steps_like_asked(optimizer_ft)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch02.ex3.step_raised", error=_short(error))
        if not steps_right:
            return incorrect("ch02.ex3.step_differs")
        return correct("ch02.ex3.ok", total=len(wanted))


def _reference_steps(model: nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]], device: torch.device,
                     zero_grad: bool) -> list[torch.Tensor]:
    """The parameters after one SGD step per batch, with or without zeroing the gradients in between."""
    model = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = SpyLoss()
    for inputs, labels in batches:
        if zero_grad:
            optimizer.zero_grad()
        criterion(model(inputs.to(device)), labels.to(device)).backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


class TrainStep(Exercise):
    """Exercise 4: a training step that moves the batch (inputs and labels) before using it."""

    seconds = 20.0  # a right answer takes well under a second here; an endless one is stopped
    name = "ex4"
    reads = ("train_step",)
    hints = ("ch02.ex4.hint1", "ch02.ex4.hint2", "ch02.ex4.hint3")
    solution_key = "ch02.ex4.solution"
    not_attempted_key = "ch02.ex4.todo"
    host = torch.device("cpu")  # where a DataLoader hands out batches

    def judge(self, train_step: object) -> Verdict:
        if not callable(train_step):
            return incorrect("ch02.ex4.not_function")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            return self._judge(train_step)

    def _judge(self, train_step) -> Verdict:  # type: ignore[no-untyped-def]
        device = self.device
        model = SpyModel(4).to(device)
        criterion = SpyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        start = [p.detach().clone() for p in model.parameters()]
        generator = torch.Generator().manual_seed(0)
        batches = [
            (torch.randn(8, 12, generator=generator), torch.randint(0, 4, (8,), generator=generator))
            for _ in range(2)
        ]
        results = []
        for number, (inputs, labels) in enumerate(batches):
            try:
                with StepCounter(optimizer) as steps:
                    result = train_step(model, criterion, optimizer, inputs, labels, device)
            except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
                other = foreign_module(error, model, criterion)
                if other is not None:  # a notebook variable (`model_ft`) ran instead of the model handed in
                    return incorrect("ch02.ex4.other_model", got=type(other).__name__)
                return incorrect("ch02.ex4.raised", error=_short(error))
            if isinstance(result, Blank):
                return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
            results.append(result)
            if number == 0:
                if not model.seen or not criterion.seen:
                    return incorrect("ch02.ex4.not_called")
                if not same_device(model.seen[0][0], device):
                    return incorrect("ch02.ex4.inputs", found=model.seen[0][0], device=device)
                if not same_device(criterion.seen[0][0], device):
                    return incorrect("ch02.ex4.labels", found=criterion.seen[0][0], device=device)
                # The proof's CrossEntropyLoss wants int64 class indices, its model float32 inputs.
                for what, (_, got), want in (("labels", criterion.seen[0], labels.dtype),
                                             ("inputs", model.seen[0], inputs.dtype)):
                    if got != want:
                        return incorrect("ch02.ex4.dtype", what=what, got=str(got).replace("torch.", ""),
                                         want=str(want).replace("torch.", ""))
                if all(torch.equal(a, p.detach()) for a, p in zip(start, model.parameters())):
                    if not steps.own and steps.others:  # `optimizer_ft.step()`: another optimizer stepped
                        return incorrect("ch02.ex4.other_optimizer")
                    return incorrect("ch02.ex4.no_update")
        if not all(isinstance(r, float) for r in results):
            wrong = next(r for r in results if not isinstance(r, float))
            return incorrect("ch02.ex4.result", got=type(wrong).__name__)
        start_model = SpyModel(4).to(device)
        with torch.no_grad():
            for p, a in zip(start_model.parameters(), start):
                p.copy_(a)
        now = [p.detach() for p in model.parameters()]
        expected = _reference_steps(start_model, batches, device, zero_grad=True)
        if not all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(now, expected)):
            piled_up = _reference_steps(start_model, batches, device, zero_grad=False)
            if all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(now, piled_up)):
                return incorrect("ch02.ex4.no_zero_grad")
            return incorrect("ch02.ex4.step_differs")
        return self._probe_second_device(train_step) or correct("ch02.ex4.ok")

    def _probe_second_device(self, train_step) -> Verdict | None:  # type: ignore[no-untyped-def]
        # On a CPU-only machine every tensor is already "on the device", so a step that forgets
        # to move the labels would pass. Run it once more towards `meta`, a second device every
        # machine has, and look at where the batch arrived (errors after that are expected:
        # meta tensors have no values, so `.item()` fails).
        model = SpyModel(4).to(META)
        criterion = SpyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        inputs = torch.randn(8, 12, device=self.host)
        labels = torch.randint(0, 4, (8,), device=self.host)
        try:
            train_step(model, criterion, optimizer, inputs, labels, META)
        except Exception:  # noqa: BLE001, S110 - only the recorded devices matter here
            pass
        if not model.seen or not criterion.seen:
            return incorrect("ch02.ex4.probe_not_called")
        if not same_device(model.seen[0][0], META):
            return incorrect("ch02.ex4.probe_inputs", found=model.seen[0][0])
        if not same_device(criterion.seen[0][0], META):
            return incorrect("ch02.ex4.probe_labels", found=criterion.seen[0][0])
        return None


EXERCISES = [PrepareModel, MakeCriterion, OptimizerOverFinalModel, TrainStep]

# The start of every message about the `meta` probe (a function called once more with a second device).
PROBE_EN = (
    "on this machine the {what} looks right, but called with `device=torch.device('meta')` "
    "(every machine has this other device; the check uses it as a stand-in for your GPU) "
)
PROBE_ZH = (
    "在这台机器上{what}看起来没问题，但传入 `device=torch.device('meta')`"
    "（每台机器都有的另一个设备，检查用它代替你的 GPU）再调用一次时，"
)

messages.add(
    {
        # exercise 1
        "ch02.ex1.todo": {
            "en": "fill in `prepare` (it still returns `____`).",
            "zh": "补全 `prepare`（它现在还返回 `____`）。",
        },
        "ch02.ex1.not_function": {
            "en": "`prepare` should be a function `prepare(model, device)`.",
            "zh": "`prepare` 应该是一个函数 `prepare(model, device)`。",
        },
        "ch02.ex1.raised": {
            "en": "`prepare` raised an error on a small test model: {error}",
            "zh": "`prepare` 处理一个小测试模型时抛出了错误：{error}",
        },
        "ch02.ex1.not_module": {
            "en": "`prepare` should return a model (an nn.Module), but it returned a {got}.",
            "zh": "`prepare` 应该返回一个模型（nn.Module），但它返回的是 {got}。",
        },
        "ch02.ex1.returned_none": {
            "en": "`prepare` returned nothing (None): is there a `return` at its end?",
            "zh": "`prepare` 什么也没有返回（None）：函数末尾写了 `return` 吗？",
        },
        "ch02.ex1.not_wrapped": {
            "en": "`prepare` returns a model that is not wrapped in DataParallel. If you wrapped it under another "
            "name (like the blog post's `net`), that wrapper is what the loop must train: return it.",
            "zh": "`prepare` 返回的模型没有用 DataParallel 包装。如果你把包装结果赋给了另一个变量"
            "（就像那篇博客里的 `net`），训练循环要训练的正是这个包装后的模型：应该返回它。",
        },
        "ch02.ex1.wrapped_twice": {
            "en": "`prepare` returns a model wrapped in DataParallel twice: wrap it once.",
            "zh": "`prepare` 返回的模型被 DataParallel 包装了两次：只包装一次就够了。",
        },
        "ch02.ex1.other_model": {
            "en": "the DataParallel that `prepare` returns wraps another model, not the `model` it was given.",
            "zh": "`prepare` 返回的 DataParallel 包装的是另一个模型，而不是传给它的 `model`。",
        },
        "ch02.ex1.not_moved": {
            "en": "{n} of the {total} parameters and buffers of the wrapped model are on {found}, but `device` "
            "is {device}.",
            "zh": "被包装模型的 {total} 个参数和缓冲区中，有 {n} 个在 {found} 上，而 `device` 是 {device}。",
        },
        "ch02.ex1.probe_not_moved": {
            "en": PROBE_EN.format(what="model")
            + "{n} of its {total} parameters and buffers stayed on {found}: is it the `device` argument "
            "you move to?",
            "zh": PROBE_ZH.format(what="模型")
            + "它的 {total} 个参数和缓冲区中仍有 {n} 个留在 {found} 上：你移动的目标是参数 `device` 吗？",
        },
        "ch02.ex1.wrapper_moved": {
            "en": "only DataParallel moved the model (it does so on a single GPU); on two or more GPUs it "
            "would stay on the CPU. Move it to `device` yourself.",
            "zh": "模型只是被 DataParallel 移动了（单 GPU 时它会这样做）；有两块或更多 GPU 时模型会留在 CPU 上。"
            "请自己把它移到 `device`。",
        },
        "ch02.ex1.ok": {
            "en": "`prepare` moves the model to the device it is given and returns it wrapped in DataParallel.",
            "zh": "`prepare` 把模型移到传入的设备上，并返回用 DataParallel 包装后的模型。",
        },
        "ch02.ex1.hint1": {
            "en": "Three things, in this order: move the model, wrap it, return the wrapped model.",
            "zh": "三件事，按顺序：移动模型、包装模型、返回包装后的模型。",
        },
        "ch02.ex1.hint2": {
            "en": "`Module.to(device)` moves the model in place and returns it; "
            "`nn.DataParallel(...)` returns a new module: that one is what the loop must train.",
            "zh": "`Module.to(device)` 原地移动模型并返回它本身；`nn.DataParallel(...)` 返回一个新模块，"
            "训练循环要训练的就是这个新模块。",
        },
        "ch02.ex1.hint3": {
            "en": "With the function's own `device`: `model = model.to(____)`, then `model = "
            "nn.DataParallel(____)`, and return the wrapped model.",
            "zh": "用函数自己的参数 `device`：`model = model.to(____)`，然后 `model = "
            "nn.DataParallel(____)`，返回包装后的模型。",
        },
        "ch02.ex1.solution": {
            "en": "def prepare(model, device):\n    model = model.to(device)\n    model = nn.DataParallel(model)\n"
            "    return model",
            "zh": "def prepare(model, device):\n    model = model.to(device)\n    model = nn.DataParallel(model)\n"
            "    return model",
        },
        # exercise 2
        "ch02.ex2.todo": {
            "en": "fill in `make_criterion` (it still returns `____`).",
            "zh": "补全 `make_criterion`（它现在还返回 `____`）。",
        },
        "ch02.ex2.not_function": {
            "en": "`make_criterion` should be a function `make_criterion(class_weights, device)`.",
            "zh": "`make_criterion` 应该是一个函数 `make_criterion(class_weights, device)`。",
        },
        "ch02.ex2.raised": {
            "en": "`make_criterion` or the loss it returns raised an error: {error}",
            "zh": "`make_criterion` 或它返回的损失函数抛出了错误：{error}",
        },
        "ch02.ex2.not_loss": {
            "en": "`make_criterion` should return a loss that turns logits and labels into one number, but "
            "got a {got}.",
            "zh": "`make_criterion` 应该返回一个损失函数，把 logits 和标签算成一个数，但得到的是 {got}。",
        },
        "ch02.ex2.no_weight": {
            "en": "the loss ignores the class weights: the rare classes would count as little as before.",
            "zh": "这个损失函数没有用上类别权重：少数类别的分量会和之前一样小。",
        },
        "ch02.ex2.weight_values": {
            "en": "the loss is not a cross-entropy weighted by the `class_weights` the function is given.",
            "zh": "这个损失函数不是按传入的 `class_weights` 加权的交叉熵。",
        },
        "ch02.ex2.weight_device": {
            "en": "with logits and labels on {device}, the loss raised a device error: are its class weights "
            "on `device`? ({error})",
            "zh": "logits 和标签都在 {device} 上时，损失函数报了设备错误：它的类别权重在 `device` 上吗？（{error}）",
        },
        "ch02.ex2.discarded": {
            "en": "the class weights were copied to {device}, but the loss still holds the ones on the CPU: "
            "`Tensor.to()` returns a new tensor and leaves the one it is called on where it was, so a copy that "
            "is not kept is lost.",
            "zh": "类别权重被复制到了 {device} 上，但损失函数持有的仍是 CPU 上的那一份：`Tensor.to()` "
            "返回一个新张量，调用它的那个张量留在原处，所以没有保存下来的副本就丢掉了。",
        },
        "ch02.ex2.probe_device": {
            "en": PROBE_EN.format(what="loss")
            + "the loss did not run on logits and labels on `meta` ({error}): are the weights moved to the "
            "`device` argument?",
            "zh": PROBE_ZH.format(what="损失函数")
            + "它无法处理 `meta` 上的 logits 和标签（{error}）：权重移到了参数 `device` 上吗？",
        },
        "ch02.ex2.ok": {
            "en": "The loss weighs the classes by the weights it is given, on the device of the logits.",
            "zh": "损失函数按传入的权重给各类别加权，并且和 logits 在同一设备上。",
        },
        "ch02.ex2.hint1": {
            "en": "A loss that holds a tensor is a module with a buffer: what moves a module's buffers?",
            "zh": "持有张量的损失函数就是一个带缓冲区的模块：什么操作会移动模块的缓冲区？",
        },
        "ch02.ex2.hint2": {
            "en": "Build `nn.CrossEntropyLoss(weight=...)` from the function's `class_weights`, then move it "
            "(or its weights) to the function's `device`.",
            "zh": "用函数的参数 `class_weights` 构造 `nn.CrossEntropyLoss(weight=...)`，再把它（或它的权重）"
            "移到函数的参数 `device` 上。",
        },
        "ch02.ex2.hint3": {
            "en": "`return nn.CrossEntropyLoss(weight=____).to(____)`: `Module.to()` moves the loss's weight "
            "buffer and returns the loss itself.",
            "zh": "`return nn.CrossEntropyLoss(weight=____).to(____)`：`Module.to()` 会移动损失里的 weight "
            "缓冲区，并返回这个损失本身。",
        },
        "ch02.ex2.solution": {
            "en": "def make_criterion(class_weights, device):\n"
            "    return nn.CrossEntropyLoss(weight=class_weights).to(device)",
            "zh": "def make_criterion(class_weights, device):\n"
            "    return nn.CrossEntropyLoss(weight=class_weights).to(device)",
        },
        # exercise 3
        "ch02.ex3.todo": {
            "en": "replace `optimizer_ft = ____` with an optimizer.",
            "zh": "把 `optimizer_ft = ____` 换成一个优化器。",
        },
        "ch02.ex3.not_optimizer": {
            "en": "`optimizer_ft` should be a torch.optim optimizer, but it is a {got}.",
            "zh": "`optimizer_ft` 应该是 torch.optim 中的优化器，但它是 {got}。",
        },
        "ch02.ex3.no_model": {
            "en": "`model_ft` is not a model yet: solve exercise 1 and run the cell that builds `model_ft`.",
            "zh": "`model_ft` 还不是模型：请先完成练习 1，并运行创建 `model_ft` 的那个单元。",
        },
        "ch02.ex3.other_model": {
            "en": "the optimizer holds {held} tensors, and none of them is a parameter of `model_ft`: "
            "it was built from another model, so `step()` would never change the one you train.",
            "zh": "优化器持有 {held} 个张量，但没有一个是 `model_ft` 的参数：它是用另一个模型创建的，"
            "`step()` 永远不会改动你训练的那个模型。",
        },
        "ch02.ex3.some_missing": {
            "en": "{n} of the {total} parameters of `model_ft` are missing from the optimizer.",
            "zh": "`model_ft` 的 {total} 个参数中有 {n} 个不在优化器里。",
        },
        "ch02.ex3.extra": {
            "en": "the optimizer also holds {n} tensors that are not parameters of `model_ft`.",
            "zh": "优化器还持有 {n} 个不属于 `model_ft` 的张量。",
        },
        "ch02.ex3.not_sgd": {
            "en": "the exercise asks for SGD, but `optimizer_ft` is {got}: the training below is measured "
            "with SGD.",
            "zh": "练习要求用 SGD，而 `optimizer_ft` 是 {got}：下面的训练是用 SGD 验证过的。",
        },
        "ch02.ex3.lr": {
            "en": "the learning rate is {got}; the exercise asks for {asked}.",
            "zh": "学习率是 {got}；练习要求的是 {asked}。",
        },
        "ch02.ex3.momentum": {
            "en": "the momentum is {got}; the exercise asks for {asked}.",
            "zh": "动量是 {got}；练习要求的是 {asked}。",
        },
        "ch02.ex3.extra_settings": {
            "en": "the optimizer has settings the exercise does not ask for: {settings}.",
            "zh": "优化器带有练习没有要求的设置：{settings}。",
        },
        "ch02.ex3.step_raised": {
            "en": "`optimizer_ft.step()` raised an error on test gradients: {error}",
            "zh": "用测试梯度调用 `optimizer_ft.step()` 时抛出了错误：{error}",
        },
        "ch02.ex3.step_differs": {
            "en": "`optimizer_ft.step()` does not change the parameters the way SGD with these settings does.",
            "zh": "`optimizer_ft.step()` 更新参数的方式与这些设置下的 SGD 不同。",
        },
        "ch02.ex3.ok": {
            "en": "The optimizer is the asked SGD and holds exactly the {total} parameters of the model you "
            "train.",
            "zh": "优化器是练习要求的 SGD，并且恰好持有你所训练模型的全部 {total} 个参数。",
        },
        "ch02.ex3.hint1": {
            "en": "An optimizer updates the parameters it was given when it was built. Which model does the "
            "training loop call: the one from before exercise 1, or `model_ft`?",
            "zh": "优化器只更新创建时交给它的那些参数。训练循环调用的是哪个模型：练习 1 之前的那个，还是 "
            "`model_ft`？",
        },
        "ch02.ex3.hint2": {
            "en": "`optim.SGD(params, lr=..., momentum=...)` takes a model's `.parameters()`. The blog post "
            "used lr=0.001 and momentum=0.9; here use lr=0.05 (it learns faster).",
            "zh": "`optim.SGD(params, lr=..., momentum=...)` 接收模型的 `.parameters()`。那篇博客用的是 "
            "lr=0.001、momentum=0.9；这里用 lr=0.05（学得更快）。",
        },
        "ch02.ex3.hint3": {
            "en": "`optimizer_ft = optim.SGD(____.parameters(), lr=0.05, momentum=0.9)`.",
            "zh": "`optimizer_ft = optim.SGD(____.parameters(), lr=0.05, momentum=0.9)`。",
        },
        "ch02.ex3.solution": {
            "en": "optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.05, momentum=0.9)",
            "zh": "optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.05, momentum=0.9)",
        },
        # exercise 4
        "ch02.ex4.todo": {
            "en": "fill in `train_step` (it still returns `____`).",
            "zh": "补全 `train_step`（它现在还返回 `____`）。",
        },
        "ch02.ex4.not_function": {
            "en": "`train_step` should be a function.",
            "zh": "`train_step` 应该是一个函数。",
        },
        "ch02.ex4.raised": {
            "en": "`train_step` raised an error on a test batch: {error}",
            "zh": "`train_step` 处理测试批次时抛出了错误：{error}",
        },
        "ch02.ex4.not_called": {
            "en": "`train_step` must call the `model` it is given on the inputs, and the `criterion` it is "
            "given on the outputs and labels.",
            "zh": "`train_step` 需要用传入的 `model` 处理输入，再用传入的 `criterion` 计算输出和标签的损失。",
        },
        "ch02.ex4.inputs": {
            "en": "the model received inputs on {found}, but it lives on {device}.",
            "zh": "模型收到的输入在 {found} 上，而模型在 {device} 上。",
        },
        "ch02.ex4.dtype": {
            "en": "the {what} arrive as {got}, not as the {want} the data set gives: move them without changing "
            "their dtype (`cross_entropy` wants int64 class indices, the model float32 inputs).",
            "zh": "{what} 到达时的 dtype 是 {got}，而不是数据集给出的 {want}：移动时不要改变 dtype"
            "（`cross_entropy` 要的是 int64 类别索引，模型要的是 float32 输入）。",
        },
        "ch02.ex4.labels": {
            "en": "the inputs reach the model on the right device, but the labels reach the loss on "
            "{found} while the logits are on {device}.",
            "zh": "输入到达模型时设备是对的，但标签到达损失函数时在 {found} 上，而 logits 在 {device} 上。",
        },
        "ch02.ex4.probe_not_called": {
            "en": PROBE_EN.format(what="step")
            + "it did not call the model and the loss: does it use its own arguments?",
            "zh": PROBE_ZH.format(what="这个训练步骤")
            + "它没有调用模型和损失函数：它用的是自己的参数吗？",
        },
        "ch02.ex4.probe_inputs": {
            "en": PROBE_EN.format(what="step")
            + "the inputs still reached the model on {found}: is the result of `.to(device)` kept, and is "
            "it the `device` argument you move to?",
            "zh": PROBE_ZH.format(what="这个训练步骤")
            + "输入进入模型时仍在 {found} 上：`.to(device)` 的结果保存下来了吗？移动的目标是参数 `device` 吗？",
        },
        "ch02.ex4.probe_labels": {
            "en": PROBE_EN.format(what="step")
            + "the labels still reached the loss on {found}: on a GPU the loss would raise a device error.",
            "zh": PROBE_ZH.format(what="这个训练步骤")
            + "标签进入损失函数时仍在 {found} 上：在 GPU 上损失函数会报设备错误。",
        },
        "ch02.ex4.other_model": {
            "en": "`train_step` ran another model (a {got}) instead of the `model` it is given, and that model failed "
            "on the check's test batch: the check calls `train_step` with a model, a loss and an optimizer of its "
            "own, and a notebook variable such as `model_ft` is none of them.",
            "zh": "`train_step` 运行的是另一个模型（一个 {got}），而不是传给它的 `model`，"
            "那个模型在检查的测试批次上出错了："
            "检查调用 `train_step` 时传入的是它自己的模型、损失函数和优化器，像 `model_ft` 这样的笔记本变量"
            "不是其中任何一个。",
        },
        "ch02.ex4.other_optimizer": {
            "en": "the parameters of the `model` given to `train_step` did not change: another optimizer took the "
            "step, not the `optimizer` it is given (the check hands in an optimizer of its own, so a notebook "
            "variable such as `optimizer_ft` updates another model).",
            "zh": "传给 `train_step` 的 `model` 参数没有变化：执行更新的是另一个优化器，而不是传给它的 "
            "`optimizer`（检查传入的是它自己的优化器，所以像 `optimizer_ft` 这样的笔记本变量更新的是另一个模型）。",
        },
        "ch02.ex4.no_update": {
            "en": "the model's parameters did not change: is `optimizer.step()` called after `backward()`?",
            "zh": "模型参数没有变化：`backward()` 之后调用 `optimizer.step()` 了吗？",
        },
        "ch02.ex4.no_zero_grad": {
            "en": "after two calls the gradients of the first batch were added to those of the second: the "
            "gradients are never reset. Where does `optimizer.zero_grad()` go?",
            "zh": "调用两次之后，第一个批次的梯度累加到了第二个批次的梯度上：梯度从未清零。"
            "`optimizer.zero_grad()` 应该放在哪里？",
        },
        "ch02.ex4.step_differs": {
            "en": "after two calls the parameters are not where one `zero_grad()`, one `backward()` and one "
            "`step()` per batch would put them.",
            "zh": "调用两次之后，参数的取值与每个批次各做一次 `zero_grad()`、`backward()` 和 `step()` 的结果不一致。",
        },
        "ch02.ex4.result": {
            "en": "`train_step` should return the loss as a Python number (`loss.item()`), not a {got}.",
            "zh": "`train_step` 应该以 Python 数值返回损失（`loss.item()`），而不是 {got}。",
        },
        "ch02.ex4.ok": {
            "en": "Inputs and labels are moved, one step per batch updates the model, the loss comes back as a "
            "number.",
            "zh": "输入和标签都移动了，每个批次更新一次模型，损失以数值返回。",
        },
        "ch02.ex4.hint1": {
            "en": "A DataLoader hands out CPU tensors: both the inputs and the labels need a move.",
            "zh": "DataLoader 给出的是 CPU 张量：输入和标签都需要移动。",
        },
        "ch02.ex4.hint2": {
            "en": "`Tensor.to()` returns a new tensor: assign it (`inputs = inputs.to(device)`).",
            "zh": "`Tensor.to()` 返回一个新张量：要把它赋值回去（`inputs = inputs.to(device)`）。",
        },
        "ch02.ex4.hint3": {
            "en": "`inputs, labels = ____, ____` first; then `optimizer.zero_grad()`, the forward pass and the "
            "loss, `loss.backward()`, `optimizer.step()`, and `return loss.item()`.",
            "zh": "先写 `inputs, labels = ____, ____`；然后 "
            "`optimizer.zero_grad()`、前向计算和损失、`loss.backward()`、`optimizer.step()`，最后 `return "
            "loss.item()`。",
        },
        "ch02.ex4.solution": {
            "en": "inputs, labels = inputs.to(device), labels.to(device)\noptimizer.zero_grad()\n"
            "loss = criterion(model(inputs), labels)\nloss.backward()\noptimizer.step()\nreturn loss.item()",
            "zh": "inputs, labels = inputs.to(device), labels.to(device)\noptimizer.zero_grad()\n"
            "loss = criterion(model(inputs), labels)\nloss.backward()\noptimizer.step()\nreturn loss.item()",
        },
    }
)
