"""Chapter 02: DataParallel, "Input type ... and weight type ... should be the same", loss and optimizer."""

from __future__ import annotations

import torch
from torch import nn

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, correct, incorrect
from ..devices import same_device, tensors_off
from ..spies import SpyLoss, SpyModel


class MoveWrapAssign(Exercise):
    """Exercise 1: move the model, wrap it in DataParallel, keep the name the loop trains."""

    name = "ex1"
    reads = ("model_ft", "device")
    hints = ("ch02.ex1.hint1", "ch02.ex1.hint2", "ch02.ex1.hint3")
    solution_key = "ch02.ex1.solution"
    not_attempted_key = "ch02.ex1.todo"

    def judge(self, model_ft: object, device: torch.device) -> Verdict:
        if not isinstance(model_ft, nn.Module):
            return incorrect("ch02.ex1.not_module", got=type(model_ft).__name__)
        if not isinstance(model_ft, nn.DataParallel):
            return incorrect("ch02.ex1.not_wrapped")
        if isinstance(model_ft.module, nn.DataParallel):
            return incorrect("ch02.ex1.wrapped_twice")
        off = tensors_off(model_ft.module, device)
        if off:
            total = len([*model_ft.module.parameters(), *model_ft.module.buffers()])
            return incorrect("ch02.ex1.not_moved", n=len(off), total=total, found=off[0].device, device=device)
        return correct("ch02.ex1.ok", device=device)


class WeightedLossOnDevice(Exercise):
    """Exercise 2: a class-weighted CrossEntropyLoss whose weights live where the logits will."""

    name = "ex2"
    reads = ("criterion", "class_weights", "device")
    hints = ("ch02.ex2.hint1", "ch02.ex2.hint2")
    solution_key = "ch02.ex2.solution"
    not_attempted_key = "ch02.ex2.todo"

    def judge(self, criterion: object, class_weights: torch.Tensor, device: torch.device) -> Verdict:
        if not isinstance(criterion, nn.CrossEntropyLoss):
            return incorrect("ch02.ex2.not_ce", got=type(criterion).__name__)
        if criterion.weight is None:
            return incorrect("ch02.ex2.no_weight")
        if not same_device(criterion.weight.device, device):
            return incorrect("ch02.ex2.weight_device", found=criterion.weight.device, device=device)
        if criterion.weight.shape != class_weights.shape or not torch.allclose(
            criterion.weight.detach().cpu(), class_weights.detach().cpu().to(criterion.weight.dtype)
        ):
            return incorrect("ch02.ex2.weight_values")
        return correct("ch02.ex2.ok")


class OptimizerOverFinalModel(Exercise):
    """Exercise 3: an optimizer that holds exactly the parameters of the model being trained."""

    name = "ex3"
    reads = ("optimizer_ft", "model_ft")
    hints = ("ch02.ex3.hint1", "ch02.ex3.hint2")
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
        return correct("ch02.ex3.ok", total=len(wanted))


class TrainStep(Exercise):
    """Exercise 4: a training step that moves the batch (inputs and labels) before using it."""

    name = "ex4"
    reads = ("train_step", "device")
    hints = ("ch02.ex4.hint1", "ch02.ex4.hint2")
    solution_key = "ch02.ex4.solution"
    not_attempted_key = "ch02.ex4.todo"
    host = torch.device("cpu")  # where a DataLoader hands out batches

    def judge(self, train_step: object, device: torch.device) -> Verdict:
        if not callable(train_step):
            return incorrect("ch02.ex4.not_function")
        torch.manual_seed(0)
        model = SpyModel(4).to(device)
        criterion = SpyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        before = model.head.weight.detach().clone()
        inputs = torch.randn(8, 12, device=self.host)
        labels = torch.randint(0, 4, (8,), device=self.host)
        try:
            result = train_step(model, criterion, optimizer, inputs, labels, device)
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            return incorrect("ch02.ex4.raised", error=f"{type(error).__name__}: {error}")
        if isinstance(result, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        if not model.seen or not criterion.seen:
            return incorrect("ch02.ex4.not_called")
        if not same_device(model.seen[0][0], device):
            return incorrect("ch02.ex4.inputs", found=model.seen[0][0], device=device)
        if not same_device(criterion.seen[0][0], device):
            return incorrect("ch02.ex4.labels", found=criterion.seen[0][0], device=device)
        if torch.equal(before, model.head.weight.detach()):
            return incorrect("ch02.ex4.no_update")
        if not isinstance(result, float):
            return incorrect("ch02.ex4.result", got=type(result).__name__)
        if device.type == "cpu":
            return self._probe_second_device(train_step) or correct("ch02.ex4.ok")
        return correct("ch02.ex4.ok")

    def _probe_second_device(self, train_step) -> Verdict | None:
        # On a CPU-only machine every tensor is already "on the device", so a step that forgets
        # to move the labels would pass. Run it once more towards `meta`, a second device every
        # machine has, and look at where the batch arrived (errors after that are expected:
        # meta tensors have no values).
        probe = torch.device("meta")
        model = SpyModel(4).to(probe)
        criterion = SpyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        inputs = torch.randn(8, 12, device=self.host)
        labels = torch.randint(0, 4, (8,), device=self.host)
        try:
            train_step(model, criterion, optimizer, inputs, labels, probe)
        except Exception:  # noqa: BLE001, S110 - only the recorded devices matter here
            pass
        if model.seen and not same_device(model.seen[0][0], probe):
            return incorrect("ch02.ex4.probe_inputs", found=model.seen[0][0])
        if criterion.seen and not same_device(criterion.seen[0][0], probe):
            return incorrect("ch02.ex4.probe_labels", found=criterion.seen[0][0])
        return None


EXERCISES = [MoveWrapAssign, WeightedLossOnDevice, OptimizerOverFinalModel, TrainStep]

messages.add(
    {
        # exercise 1
        "ch02.ex1.todo": {
            "en": "replace `model_ft = ____` with your fix.",
            "zh": "把 `model_ft = ____` 换成你的修复代码。",
        },
        "ch02.ex1.not_module": {
            "en": "`model_ft` should be a model (an nn.Module), but it is a {got}.",
            "zh": "`model_ft` 应该是一个模型（nn.Module），但它是 {got}。",
        },
        "ch02.ex1.not_wrapped": {
            "en": "`model_ft` is not wrapped in DataParallel. If you wrapped it under another name "
            "(like the seed's `net`), the name the loop trains is still the unwrapped model.",
            "zh": "`model_ft` 没有被 DataParallel 包装。如果你用另一个名字包装了它（比如原文里的 `net`），"
            "训练循环用的这个名字仍然是未包装的模型。",
        },
        "ch02.ex1.wrapped_twice": {
            "en": "`model_ft` is wrapped in DataParallel twice. Run the cells from the one that builds "
            "the model again, so that it is wrapped once.",
            "zh": "`model_ft` 被 DataParallel 包装了两次。从创建模型的那个单元重新运行，让它只被包装一次。",
        },
        "ch02.ex1.not_moved": {
            "en": "{n} of the {total} parameters and buffers of the wrapped model are on {found}, but the "
            "inputs will be on {device}.",
            "zh": "被包装模型的 {total} 个参数和缓冲区中，有 {n} 个在 {found} 上，而输入会在 {device} 上。",
        },
        "ch02.ex1.ok": {
            "en": "`model_ft` is the wrapped model and all of it is on {device}.",
            "zh": "`model_ft` 就是包装后的模型，而且它整体都在 {device} 上。",
        },
        "ch02.ex1.hint1": {
            "en": "Three things, in this order: move, wrap, assign back to the same name.",
            "zh": "三件事，按顺序：移动、包装、赋值回同一个名字。",
        },
        "ch02.ex1.hint2": {
            "en": "`Module.to(device)` moves the model in place and returns it; "
            "`nn.DataParallel(...)` returns a new module that you must keep.",
            "zh": "`Module.to(device)` 原地移动模型并返回它本身；`nn.DataParallel(...)` 返回一个新模块，"
            "你必须保存它。",
        },
        "ch02.ex1.hint3": {
            "en": "The loop below trains whatever the name `model_ft` refers to when it runs.",
            "zh": "下面的循环训练的是运行时 `model_ft` 这个名字所指向的对象。",
        },
        "ch02.ex1.solution": {
            "en": "model_ft = model_ft.to(device)\nmodel_ft = nn.DataParallel(model_ft)",
            "zh": "model_ft = model_ft.to(device)\nmodel_ft = nn.DataParallel(model_ft)",
        },
        # exercise 2
        "ch02.ex2.todo": {
            "en": "replace `criterion = ____` with a weighted loss.",
            "zh": "把 `criterion = ____` 换成带类别权重的损失函数。",
        },
        "ch02.ex2.not_ce": {
            "en": "`criterion` should be an nn.CrossEntropyLoss, but it is a {got}.",
            "zh": "`criterion` 应该是 nn.CrossEntropyLoss，但它是 {got}。",
        },
        "ch02.ex2.no_weight": {
            "en": "`criterion` has no class weights: the rare classes would count as little as before.",
            "zh": "`criterion` 没有类别权重：少数类别的分量会和之前一样小。",
        },
        "ch02.ex2.weight_device": {
            "en": "the class weights are on {found}, but the logits will be on {device}; the loss "
            "would raise a device error at its first call.",
            "zh": "类别权重在 {found} 上，而 logits 会在 {device} 上；损失函数第一次调用时就会报设备错误。",
        },
        "ch02.ex2.weight_values": {
            "en": "the loss's class weights are not the values of `class_weights`.",
            "zh": "损失函数里的类别权重与 `class_weights` 的数值不同。",
        },
        "ch02.ex2.ok": {
            "en": "the class weights are in the loss, on the device of the logits.",
            "zh": "类别权重在损失函数里，并且和 logits 在同一设备上。",
        },
        "ch02.ex2.hint1": {
            "en": "A loss that holds a tensor is a module with a buffer: what moves a module's buffers?",
            "zh": "持有张量的损失函数就是一个带缓冲区的模块：什么操作会移动模块的缓冲区？",
        },
        "ch02.ex2.hint2": {
            "en": "Build `nn.CrossEntropyLoss(weight=...)`, then move it (or its weights) to `device`.",
            "zh": "先构造 `nn.CrossEntropyLoss(weight=...)`，再把它（或它的权重）移动到 `device`。",
        },
        "ch02.ex2.solution": {
            "en": "criterion = nn.CrossEntropyLoss(weight=class_weights).to(device)",
            "zh": "criterion = nn.CrossEntropyLoss(weight=class_weights).to(device)",
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
            "en": "`model_ft` is not a model yet: solve exercise 1 first.",
            "zh": "`model_ft` 还不是模型：请先完成练习 1。",
        },
        "ch02.ex3.other_model": {
            "en": "the optimizer holds {held} tensors, and none of them is a parameter of `model_ft`: "
            "it was built from another model, so `step()` would never change the one you train.",
            "zh": "优化器持有 {held} 个张量，但没有一个是 `model_ft` 的参数：它是用另一个模型创建的，"
            "`step()` 永远不会改变你训练的那个模型。",
        },
        "ch02.ex3.some_missing": {
            "en": "{n} of the {total} parameters of `model_ft` are missing from the optimizer.",
            "zh": "`model_ft` 的 {total} 个参数中有 {n} 个不在优化器里。",
        },
        "ch02.ex3.extra": {
            "en": "the optimizer also holds {n} tensors that are not parameters of `model_ft`.",
            "zh": "优化器还持有 {n} 个不属于 `model_ft` 的张量。",
        },
        "ch02.ex3.ok": {
            "en": "the optimizer holds exactly the {total} parameters of the model you train.",
            "zh": "优化器恰好持有你所训练模型的全部 {total} 个参数。",
        },
        "ch02.ex3.hint1": {
            "en": "Build the optimizer from the model the loop trains, after the fix of exercise 1.",
            "zh": "用训练循环实际训练的那个模型创建优化器，并放在练习 1 的修复之后。",
        },
        "ch02.ex3.hint2": {
            "en": "The seed uses SGD with lr=0.001 and momentum=0.9; here lr=0.05 learns faster.",
            "zh": "原文用的是 lr=0.001、momentum=0.9 的 SGD；这里用 lr=0.05 学得更快。",
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
            "zh": "`train_step` 在测试批次上抛出了错误：{error}",
        },
        "ch02.ex4.not_called": {
            "en": "`train_step` must call the model on the inputs and the criterion on the outputs and labels.",
            "zh": "`train_step` 需要用输入调用模型，再用输出和标签调用损失函数。",
        },
        "ch02.ex4.inputs": {
            "en": "the model received inputs on {found}, but it lives on {device}.",
            "zh": "模型收到的输入在 {found} 上，而模型在 {device} 上。",
        },
        "ch02.ex4.labels": {
            "en": "the inputs reach the model on the right device, but the labels reach the loss on "
            "{found} while the logits are on {device}.",
            "zh": "输入已经以正确的设备进入模型，但标签进入损失函数时在 {found} 上，而 logits 在 {device} 上。",
        },
        "ch02.ex4.probe_inputs": {
            "en": "on this CPU-only machine the step looks fine, but run with `device=torch.device('meta')` "
            "(a second device every machine has) the inputs still reached the model on {found}: is the "
            "result of `.to(device)` kept, and is it the `device` argument you move to?",
            "zh": "在这台只有 CPU 的机器上这个步骤看起来没问题，但用 `device=torch.device('meta')`"
            "（每台机器都有的第二个设备）再运行一次时，输入进入模型时仍在 {found} 上："
            "`.to(device)` 的结果保存下来了吗？"
            "移动的目标是参数 `device` 吗？",
        },
        "ch02.ex4.probe_labels": {
            "en": "on this CPU-only machine the step looks fine, but run with `device=torch.device('meta')` "
            "(a second device every machine has) the labels still reached the loss on {found}: on a GPU the "
            "loss would raise a device error.",
            "zh": "在这台只有 CPU 的机器上这个步骤看起来没问题，但用 `device=torch.device('meta')`"
            "（每台机器都有的第二个设备）再运行一次时，标签进入损失函数时仍在 {found} 上："
            "在 GPU 上损失函数会报设备错误。",
        },
        "ch02.ex4.no_update": {
            "en": "the model's parameters did not change: is `optimizer.step()` called after `backward()`?",
            "zh": "模型参数没有变化：`backward()` 之后调用 `optimizer.step()` 了吗？",
        },
        "ch02.ex4.result": {
            "en": "`train_step` should return the loss as a Python number (`loss.item()`), not a {got}.",
            "zh": "`train_step` 应该以 Python 数字返回损失（`loss.item()`），而不是 {got}。",
        },
        "ch02.ex4.ok": {
            "en": "inputs and labels are moved, the model learns, the loss comes back as a number.",
            "zh": "输入和标签都移动了，模型在学习，损失以数字返回。",
        },
        "ch02.ex4.hint1": {
            "en": "A DataLoader hands out CPU tensors: both the inputs and the labels need a move.",
            "zh": "DataLoader 给出的是 CPU 张量：输入和标签都需要移动。",
        },
        "ch02.ex4.hint2": {
            "en": "`Tensor.to()` returns a new tensor: assign it (`inputs = inputs.to(device)`).",
            "zh": "`Tensor.to()` 返回一个新张量：要把它赋值回去（`inputs = inputs.to(device)`）。",
        },
        "ch02.ex4.solution": {
            "en": "inputs, labels = inputs.to(device), labels.to(device)\noptimizer.zero_grad()\n"
            "loss = criterion(model(inputs), labels)\nloss.backward()\noptimizer.step()\nreturn loss.item()",
            "zh": "inputs, labels = inputs.to(device), labels.to(device)\noptimizer.zero_grad()\n"
            "loss = criterion(model(inputs), labels)\nloss.backward()\noptimizer.step()\nreturn loss.item()",
        },
    }
)
