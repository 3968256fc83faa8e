"""Chapter 01: where a tensor lives, Module.to() versus Tensor.to(), and reading a device error."""

from __future__ import annotations

import types
from dataclasses import dataclass

import torch
from torch import nn

from .. import messages
from ..checks import CORRECT, NOT_ATTEMPTED, Blank, Exercise, Verdict, bounded, correct, incorrect
from ..devices import same_device, tensors_off

WHERE, YES_NO = "where", "yes_no"
WHERE_ANSWERS = ("cpu", "target")
META = torch.device("meta")


def lab_target(device: torch.device | str) -> torch.device:
    """Where the lab moves things: its accelerator, or `meta` standing in for one on a CPU-only machine."""
    device = torch.device(device)
    return META if device.type == "cpu" else device


@dataclass(frozen=True)
class Question:
    """A predict-then-run question: a snippet run with `torch`, `nn` and `target`, and what to predict."""

    code: str
    ask: str  # an expression evaluated after `code`: a tensor (WHERE questions) or a bool (YES_NO)
    kind: str


QUESTIONS = (
    Question("x = torch.zeros(3)", "x", WHERE),
    Question("x = torch.zeros(3)\nx.to(target)", "x", WHERE),
    Question("x = torch.zeros(3)\ny = x.to(target)", "y", WHERE),
    Question("model = nn.Linear(2, 2)\nmodel.to(target)", "model.weight", WHERE),
    Question("model = nn.Linear(2, 2)\nmoved = model.to(target)", "moved is model", YES_NO),
    Question('x = torch.zeros(3)\nsame = x.to("cpu")', "same is x", YES_NO),
)


def _as_device(value: object) -> torch.device | None:
    try:
        return value if isinstance(value, torch.device) else torch.device(str(value))
    except (RuntimeError, TypeError, ValueError):
        return None


def _where(device: torch.device, target: torch.device) -> str:
    if same_device(device, target):
        return "target"
    return "cpu" if device.type == "cpu" else str(device)


def truth(question: Question, target: torch.device) -> object:
    """What PyTorch really does: run the question's snippet with `target` and read the answer."""
    namespace: dict[str, object] = {"torch": torch, "nn": nn, "target": target}
    exec(question.code, namespace)
    value = eval(question.ask, namespace)
    return _where(value.device, target) if question.kind == WHERE else bool(value)


def _prediction(answer: object, kind: str, target: torch.device) -> object | None:
    # The learner's answer in the form truth() returns, or None when it is not a valid answer.
    if kind == YES_NO:
        return answer if isinstance(answer, bool) else None
    if isinstance(answer, str) and answer.strip().lower() in WHERE_ANSWERS:
        return answer.strip().lower()
    if isinstance(answer, (str, torch.device)):  # "cuda" on a GPU, for instance
        device = _as_device(answer)
        if device is not None and device.type in (target.type, "cpu"):
            return _where(device, target)
    return None


class _LabExercise(Exercise):
    """An exercise of this lab: besides the answer, the notebook must still run the proof as written."""

    seconds = 20.0  # the checks run the learner's code on two tiny models: milliseconds when it is right

    def evaluate(self, namespace: dict[str, object] | None = None, **given: object) -> Verdict:
        """The verdict; a right answer also needs the notebook's `device` and the default device untouched."""
        verdict = super().evaluate(namespace, **given)
        if verdict.status != CORRECT:
            return verdict
        default = torch.get_default_device()
        if default.type != "cpu":
            return incorrect("ch01.default_device", got=default)
        notebook_device = (namespace or {}).get("device", self.device)
        found = _as_device(notebook_device) if isinstance(notebook_device, (str, torch.device)) else None
        if found is None or not same_device(found, self.device):
            shown = notebook_device if isinstance(notebook_device, torch.device) else repr(notebook_device)
            return incorrect("ch01.device_rebound", got=shown, device=self.device)
        return verdict


class PredictThenRun(_LabExercise):
    """Exercise 1: predict where tensors and models end up; the check runs each snippet to know."""

    name = "ex1"
    reads = tuple(f"answer_{i}" for i in range(1, len(QUESTIONS) + 1))
    hints = ("ch01.ex1.hint1", "ch01.ex1.hint2", "ch01.ex1.hint3")
    solution_key = "ch01.ex1.solution"
    not_attempted_key = "ch01.ex1.todo"

    def judge(self, **answers: object) -> Verdict:
        target = lab_target(self.device)  # the lab's own, never the notebook's `target` variable
        wrong = []
        for number, question in enumerate(QUESTIONS, 1):
            name = f"answer_{number}"
            predicted = _prediction(answers[name], question.kind, target)
            if predicted is None:
                key = "ch01.ex1.bad_where" if question.kind == WHERE else "ch01.ex1.bad_yes_no"
                return incorrect(key, name=name, got=repr(answers[name]))
            with torch.device("cpu"):  # the questions ask about tensors created without device=
                real = truth(question, target)
            if predicted != real:
                wrong.append(number)
        if wrong:
            return incorrect(
                "ch01.ex1.wrong", n=len(wrong), total=len(QUESTIONS), which=", ".join(map(str, wrong)), target=target
            )
        return correct("ch01.ex1.ok", total=len(QUESTIONS), target=target)


def _check_model() -> nn.Module:
    # A fresh CPU model with parameters and buffers, like the ones a learner moves.
    return nn.Sequential(nn.Linear(2, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


def _three(result: object) -> list[object] | None:
    # What `model, inputs, labels = result` would unpack, read without running an endless iterator.
    if isinstance(result, (tuple, list)):
        return list(result)
    if isinstance(result, types.GeneratorType):
        return bounded(result, 4)
    return None


class MoveEverything(_LabExercise):
    """Exercise 2: a `to_device` that keeps what `.to()` returns, for the model and the batch.

    The check calls the learner's function as the proof does, on a fresh CPU model and batch, once for
    each probe device: `meta` (a second device on every machine) and the lab's device. A function that
    moves to a notebook variable instead of its `device` argument fails one of the two probes.
    """

    name = "ex2"
    reads = ("to_device",)
    hints = ("ch01.ex2.hint1", "ch01.ex2.hint2", "ch01.ex2.hint3")
    solution_key = "ch01.ex2.solution"
    not_attempted_key = "ch01.ex2.todo"
    host = torch.device("cpu")  # where a DataLoader hands out batches and where models are built

    def probes(self) -> list[torch.device]:
        """The devices the function is asked to move to: the lab's target, then the others."""
        found: list[torch.device] = []
        for device in (lab_target(self.device), META, self.device):
            if not any(same_device(device, other) for other in found):
                found.append(device)
        return found

    def judge(self, to_device: object) -> Verdict:
        if not callable(to_device):
            return incorrect("ch01.ex2.not_function")
        for device in self.probes():
            verdict = self._probe(to_device, device)
            if verdict is not None:
                return verdict
        return correct("ch01.ex2.ok")

    def _probe(self, to_device: object, device: torch.device) -> Verdict | None:
        # None when `to_device(model, inputs, labels, device)` behaves as the proof needs.
        torch.manual_seed(0)
        with torch.device(self.host):
            model = _check_model()
            inputs = torch.randn(5, 2)
            labels = torch.randint(0, 2, (5,))
        params = list(model.parameters())
        before = [(p.dtype, p.detach().clone()) for p in params]
        given = (inputs.clone(), labels.clone())
        default = torch.get_default_device()
        try:
            result = to_device(model, inputs, labels, device)
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            return incorrect("ch01.ex2.raised", device=device, error=f"{type(error).__name__}: {error}"[:300])
        finally:
            changed = torch.get_default_device()
            if changed != default:  # the check leaves the notebook as it found it
                torch.set_default_device(None if default.type == "cpu" else default)
        if changed != default:
            return incorrect("ch01.ex2.default_changed", got=changed)
        if isinstance(result, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        three = _three(result)
        if three is None or len(three) != 3:
            return incorrect("ch01.ex2.not_three", got=type(result).__name__)
        got_model, got_inputs, got_labels = three
        if not (
            isinstance(got_model, nn.Module)
            and isinstance(got_inputs, torch.Tensor)
            and isinstance(got_labels, torch.Tensor)
        ):
            return incorrect("ch01.ex2.order", got=", ".join(type(r).__name__ for r in three))
        off = tensors_off(got_model, device)
        if off:
            total = len([*got_model.parameters(), *got_model.buffers()])
            return incorrect("ch01.ex2.model", n=len(off), total=total, found=off[0].device, device=device)
        # The optimizer is built from the model passed in: that model must be the one that moved and trains.
        # Module.to() keeps the Parameter objects when the two devices' tensors are compatible (CPU, CUDA,
        # MPS…); towards meta it swaps in new ones, which is what the optimizer would then miss.
        now = list(model.parameters())
        swaps = not torch._has_compatible_shallow_copy_type(torch.empty(0), torch.empty(0, device=device))
        kept = swaps or [id(p) for p in now] == [id(p) for p in params]
        if tensors_off(model, device) or {id(p) for p in got_model.parameters()} != {id(p) for p in now} or not kept:
            return incorrect("ch01.ex2.copy")
        for param, (dtype, values) in zip(now, before):
            if param.dtype != dtype or (device.type != "meta" and not torch.equal(param.detach().cpu(), values)):
                return incorrect("ch01.ex2.model_changed")
        for what, got, original in (("inputs", got_inputs, given[0]), ("labels", got_labels, given[1])):
            if not same_device(got.device, device):
                return incorrect("ch01.ex2.left_behind", what=what, found=got.device, device=device)
            if got.shape != original.shape or got.dtype != original.dtype:
                return incorrect("ch01.ex2.changed", what=what)
            if got.device.type != "meta" and not torch.equal(got.detach().cpu(), original):
                return incorrect("ch01.ex2.changed", what=what)
        return None


def addmm_check_message(model_device: str = "meta", input_device: str = "cpu") -> str | None:
    """The installed torch's wording of addmm's CUDA device check, raised on any machine (None if unsupported).

    Called directly, the CUDA kernel of addmm first checks that its tensors share a device. A `meta`
    tensor stands in for the GPU: the message says `meta` where a GPU says `cuda:0`, and it is raised
    before anything needs a GPU. The arguments are those nn.Linear passes: bias, input (mat1), weight.t().
    By default the layer is "on the GPU" and its input on the CPU; swap the devices for a layer left on
    the CPU fed an input "on the GPU".
    """
    try:
        cuda_kernel = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
        torch.ops.aten.addmm.default.redispatch(
            cuda_kernel,
            torch.zeros(2, device=model_device),  # the layer's bias
            torch.zeros(4, 2, device=input_device),  # the layer's input: mat1
            torch.zeros(2, 2, device=model_device),  # the layer's weight.t(): mat2
        )
    except RuntimeError as error:
        return str(error)
    except (AttributeError, TypeError):  # a torch without this dispatcher API
        return None
    return None


EXERCISES = [PredictThenRun, MoveEverything]

messages.add(
    {
        # both exercises
        "ch01.default_device": {
            "en": "your answer is right, but the notebook's default device is now {got}: the training cell "
            "builds its data without `device=` and needs it to be the CPU. Undo `torch.set_default_device`.",
            "zh": "答案本身没错，但笔记本的默认设备现在是 {got}：训练单元创建数据时没有传 `device=`，"
            "需要默认设备是 CPU。"
            "请撤销 `torch.set_default_device` 的改动。",
        },
        "ch01.device_rebound": {
            "en": "your answer is right, but the notebook's `device` is now {got} instead of the lab's {device}, "
            "and the training cell uses it. Leave `device` as the setup cell set it (run that cell again).",
            "zh": "答案本身没错，但笔记本里的 `device` 现在是 {got}，不再是本实验选定的 {device}，而训练单元要用它。"
            "请保持 setup 单元设定的 `device`（重新运行那个单元即可）。",
        },
        # exercise 1
        "ch01.ex1.todo": {
            "en": "replace each `____` in `answer_1` … `answer_6` with your prediction.",
            "zh": "把 `answer_1` … `answer_6` 中的每个 `____` 换成你的预测。",
        },
        "ch01.ex1.bad_where": {
            "en": '`{name}` should be "cpu" or "target", not {got}.',
            "zh": '`{name}` 应该是 "cpu" 或 "target"，而不是 {got}。',
        },
        "ch01.ex1.bad_yes_no": {
            "en": "`{name}` should be True or False (without quotes), not {got}.",
            "zh": "`{name}` 应该是 True 或 False（不加引号），而不是 {got}。",
        },
        "ch01.ex1.wrong": {
            "en": "with `target` = {target}, PyTorch does not do what you predicted in {n} of the {total} "
            "questions (number {which}). Run the cell below the check to see what happens.",
            "zh": "`target` = {target} 时，{total} 道题里有 {n} 道的预测和 PyTorch 的实际结果不符（第 {which} 题）。"
            "运行检查单元下面那个单元，看看实际发生了什么。",
        },
        "ch01.ex1.ok": {
            "en": "All {total} predictions match what PyTorch does with `target` = {target}.",
            "zh": "{total} 个预测全部和 PyTorch 在 `target` = {target} 时的实际结果一致。",
        },
        "ch01.ex1.hint1": {
            "en": "`Tensor.to()` and `Module.to()` differ in one thing: one changes the object you call "
            "it on, the other hands you a new object and leaves the old one as it was.",
            "zh": "`Tensor.to()` 和 `Module.to()` 有一处关键区别：一个直接修改调用它的对象，另一个返回一个新对象，"
            "原对象保持不变。",
        },
        "ch01.ex1.hint2": {
            "en": "`Module.to()` moves the parameters and buffers in place and returns the module itself. "
            "`Tensor.to()` returns a moved copy; the tensor you called it on stays where it was.",
            "zh": "`Module.to()` 就地移动参数和缓冲区，并返回模块本身。`Tensor.to()` 返回移动后的副本；"
            "调用它的那个张量还在原来的设备上。",
        },
        "ch01.ex1.hint3": {
            "en": "Fill in the blanks, then run one snippet to see: after `y = x.to(target)`, `x` is on ____ "
            "and `y` on ____; `model.to(target)` returns ____ (the module itself, or a copy?); and "
            "`x.to(\"cpu\")` on a CPU tensor has nothing to copy, so it returns ____.",
            "zh": "先填空，再挑一个片段运行看看：执行 `y = x.to(target)` 之后，`x` 在 ____，`y` 在 "
            "____；`model.to(target)` 返回的是 ____（模块本身，还是一份副本？）；对 CPU 张量调用 "
            "`x.to(\"cpu\")` 没有东西可复制，所以它返回 ____。",
        },
        "ch01.ex1.solution": {
            "en": 'answer_1 = "cpu"\nanswer_2 = "cpu"\nanswer_3 = "target"\nanswer_4 = "target"\n'
            "answer_5 = True\nanswer_6 = True",
            "zh": 'answer_1 = "cpu"\nanswer_2 = "cpu"\nanswer_3 = "target"\nanswer_4 = "target"\n'
            "answer_5 = True\nanswer_6 = True",
        },
        # exercise 2
        "ch01.ex2.todo": {
            "en": "fix `to_device` (it still returns `____`).",
            "zh": "修好 `to_device`（它现在还返回 `____`）。",
        },
        "ch01.ex2.not_function": {
            "en": "`to_device` should be a function.",
            "zh": "`to_device` 应该是一个函数。",
        },
        "ch01.ex2.raised": {
            "en": "called with a test model and batch and device={device}, `to_device` raised an error: {error}",
            "zh": "用一个测试模型、一个批次和 device={device} 调用 `to_device` 时，它报错了：{error}",
        },
        "ch01.ex2.not_three": {
            "en": "`to_device` should return three things (the model, the inputs, the labels), "
            "but it returned a {got}.",
            "zh": "`to_device` 应该返回三样东西（模型、输入、标签），但它返回的是 {got}。",
        },
        "ch01.ex2.order": {
            "en": "`to_device` should return the model, the inputs and the labels, in this order; "
            "it returned: {got}.",
            "zh": "`to_device` 应该按模型、输入、标签的顺序返回；它返回的是：{got}。",
        },
        "ch01.ex2.model": {
            "en": "called with device={device}, `to_device` returns a model with {n} of its {total} parameters "
            "and buffers on {found}.",
            "zh": "以 device={device} 调用时，`to_device` 返回的模型有 {total} 个参数和缓冲区，"
            "其中 {n} 个在 {found} 上。",
        },
        "ch01.ex2.copy": {
            "en": "the model `to_device` returns is not the one it was given (its parameters are other "
            "objects). The training cell builds its optimizer before the loop, from the model it passes "
            "in: that optimizer would update parameters the returned model does not use, and nothing "
            "would learn.",
            "zh": "`to_device` 返回的模型不是传进去的那个（参数是另外一批对象）。训练单元在循环开始前就用传入的模型"
            "创建了优化器：优化器更新的参数，返回的模型根本不用，模型什么也学不到。",
        },
        "ch01.ex2.model_changed": {
            "en": "the model comes back with other weights or another dtype: only its device should change.",
            "zh": "返回的模型权重或 dtype（数据类型）变了：应该只改变它所在的设备。",
        },
        "ch01.ex2.left_behind": {
            "en": "called with device={device}, `to_device` returns the `{what}` on {found}.",
            "zh": "以 device={device} 调用时，`to_device` 返回的 `{what}` 在 {found} 上。",
        },
        "ch01.ex2.default_changed": {
            "en": "`to_device` changes PyTorch's default device (to {got}). The training cell creates its data "
            "without `device=` and needs the default to stay the CPU: move only what the function is given.",
            "zh": "`to_device` 改动了 PyTorch 的默认设备（改成了 {got}）。训练单元创建数据时没有传 `device=`，"
            "需要默认设备保持为 CPU：只移动传给函数的那几样东西。",
        },
        "ch01.ex2.changed": {
            "en": "the `{what}` come back changed (shape, dtype or values): only their device should change.",
            "zh": "返回的 `{what}` 被改动了（形状、dtype 或数值）：应该只改变它们所在的设备。",
        },
        "ch01.ex2.ok": {
            "en": "Whatever device `to_device` is given, the model (the same object, so an optimizer built from "
            "it still trains it), the inputs and the labels all come back on that device.",
            "zh": "无论传给 `to_device` 的是哪个设备，模型（还是原来那个对象，之前创建的优化器照样能训练它）、"
            "输入和标签都会回到那个设备上。",
        },
        "ch01.ex2.hint1": {
            "en": "One of the blog post's three lines works as it is; the other two throw away their result.",
            "zh": "博客里的三行代码，有一行照原样就能生效；另外两行把结果丢掉了。",
        },
        "ch01.ex2.hint2": {
            "en": "`Tensor.to()` returns a moved copy and leaves the tensor you called it on where it was; "
            "`Module.to()` moves the module in place. Move to the function's own `device` argument, whatever "
            "the notebook's variables say.",
            "zh": "`Tensor.to()` 返回移动后的副本，原来的张量留在原地；`Module.to()` "
            "则原地移动模块。要移到函数自己的参数 `device` 上，不要用笔记本里的同名变量。",
        },
        "ch01.ex2.hint3": {
            "en": "Keep what `.to()` returns: `inputs = ____`, `labels = ____`; `model.to(device)` can stay as "
            "it is. Then `return model, inputs, labels`.",
            "zh": "接住 `.to()` 的返回值：`inputs = ____`，`labels = ____`；`model.to(device)` "
            "保持原样即可。最后 `return model, inputs, labels`。",
        },
        "ch01.ex2.solution": {
            "en": "model.to(device)\ninputs = inputs.to(device)\nlabels = labels.to(device)\n"
            "return model, inputs, labels",
            "zh": "model.to(device)\ninputs = inputs.to(device)\nlabels = labels.to(device)\n"
            "return model, inputs, labels",
        },
    }
)
