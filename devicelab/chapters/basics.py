"""Chapter 01: where a tensor lives, Module.to() versus Tensor.to(), and reading a device error."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, correct, incorrect
from ..devices import same_device, tensors_off

WHERE, YES_NO = "where", "yes_no"
WHERE_ANSWERS = ("cpu", "target")


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


def _target_problem(target: object) -> tuple[torch.device | None, Verdict | None]:
    # `target` is where the lab moves things: the GPU, or `meta` standing in for one. On the CPU
    # itself a move changes nothing, and no question could tell "cpu" from "target".
    device = _as_device(target)
    if device is None:
        return None, incorrect("ch01.target_not_device", got=repr(target))
    if device.type == "cpu":
        return None, incorrect("ch01.target_cpu")
    return device, None


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


class PredictThenRun(Exercise):
    """Exercise 1: predict where tensors and models end up; the check runs each snippet to know."""

    name = "ex1"
    reads = (*(f"answer_{i}" for i in range(1, len(QUESTIONS) + 1)), "target")
    hints = ("ch01.ex1.hint1", "ch01.ex1.hint2", "ch01.ex1.hint3")
    solution_key = "ch01.ex1.solution"
    not_attempted_key = "ch01.ex1.todo"

    def judge(self, target: object, **answers: object) -> Verdict:
        device, problem = _target_problem(target)
        if problem is not None:
            return problem
        wrong = []
        for number, question in enumerate(QUESTIONS, 1):
            name = f"answer_{number}"
            predicted = _prediction(answers[name], question.kind, device)
            if predicted is None:
                key = "ch01.ex1.bad_where" if question.kind == WHERE else "ch01.ex1.bad_yes_no"
                return incorrect(key, name=name, got=repr(answers[name]))
            try:
                real = truth(question, device)
            except Exception as error:  # noqa: BLE001 - a broken target fails any way
                return incorrect("ch01.target_broken", target=device, error=f"{type(error).__name__}: {error}")
            if predicted != real:
                wrong.append(number)
        if wrong:
            return incorrect(
                "ch01.ex1.wrong",
                n=len(wrong),
                total=len(QUESTIONS),
                which=", ".join(map(str, wrong)),
                target=device,
            )
        return correct("ch01.ex1.ok", total=len(QUESTIONS), target=device)


def _check_model() -> nn.Module:
    # A fresh CPU model with parameters and buffers, like the ones a learner moves.
    return nn.Sequential(nn.Linear(2, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


class MoveEverything(Exercise):
    """Exercise 2: a `to_device` that keeps what `.to()` returns, for the model and the batch."""

    name = "ex2"
    reads = ("to_device", "target")
    hints = ("ch01.ex2.hint1", "ch01.ex2.hint2", "ch01.ex2.hint3")
    solution_key = "ch01.ex2.solution"
    not_attempted_key = "ch01.ex2.todo"
    host = torch.device("cpu")  # where a DataLoader hands out batches and where models are built

    def judge(self, to_device: object, target: object) -> Verdict:
        if not callable(to_device):
            return incorrect("ch01.ex2.not_function")
        device, problem = _target_problem(target)
        if problem is not None:
            return problem
        torch.manual_seed(0)
        model = _check_model()
        inputs = torch.randn(5, 2, device=self.host)
        labels = torch.randint(0, 2, (5,), device=self.host)
        given = (inputs.clone(), labels.clone())
        try:
            result = to_device(model, inputs, labels, device)
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            return incorrect("ch01.ex2.raised", error=f"{type(error).__name__}: {error}")
        if isinstance(result, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        if not isinstance(result, (tuple, list)) or len(result) != 3:
            return incorrect("ch01.ex2.not_three", got=type(result).__name__)
        got_model, got_inputs, got_labels = result
        if not (
            isinstance(got_model, nn.Module)
            and isinstance(got_inputs, torch.Tensor)
            and isinstance(got_labels, torch.Tensor)
        ):
            return incorrect("ch01.ex2.order", got=", ".join(type(r).__name__ for r in result))
        off = tensors_off(got_model, device)
        if off:
            total = len([*got_model.parameters(), *got_model.buffers()])
            return incorrect("ch01.ex2.model", n=len(off), total=total, found=off[0].device, device=device)
        for what, got, original in (("inputs", got_inputs, given[0]), ("labels", got_labels, given[1])):
            if not same_device(got.device, device):
                return incorrect("ch01.ex2.left_behind", what=what, found=got.device, device=device)
            if got.shape != original.shape or got.dtype != original.dtype:
                return incorrect("ch01.ex2.changed", what=what)
            if got.device.type != "meta" and not torch.equal(got.cpu(), original):
                return incorrect("ch01.ex2.changed", what=what)
        return correct("ch01.ex2.ok", device=device)


def addmm_check_message() -> str | None:
    """The installed torch's wording of addmm's CUDA device check, raised on any machine (None if unsupported).

    Called directly, the CUDA kernel of addmm first checks that its tensors share a device. A `meta`
    tensor stands in for the GPU: the message says `meta` where a GPU says `cuda:0`, and it is raised
    before anything needs a GPU. The arguments are those nn.Linear passes: bias, input (mat1), weight.t().
    """
    try:
        cuda_kernel = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
        torch.ops.aten.addmm.default.redispatch(
            cuda_kernel,
            torch.zeros(2, device="meta"),  # bias, "on the GPU"
            torch.zeros(4, 2),  # the input, left on the CPU
            torch.zeros(2, 2, device="meta"),  # weight.t(), "on the GPU"
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
        "ch01.target_cpu": {
            "en": "`target` is the CPU, where a move changes nothing. Run the cell that defines "
            "`target` again: it is your GPU, or the `meta` device without one.",
            "zh": "`target` 是 CPU，移动到那里什么也不会改变。请重新运行定义 `target` 的单元：有 GPU 时它是 GPU，"
            "没有 GPU 时是 `meta` 设备。",
        },
        "ch01.target_not_device": {
            "en": "`target` should be a device, but it is {got}. Run the cell that defines it again.",
            "zh": "`target` 应该是一个设备，但它是 {got}。请重新运行定义它的单元。",
        },
        "ch01.target_broken": {
            "en": "the snippets could not run with `target` = {target}: {error}. Run the cell that "
            "defines `target` again.",
            "zh": "`target` = {target} 时这些代码片段无法运行：{error}。请重新运行定义 `target` 的单元。",
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
            "zh": "`{name}` 应该是 True 或 False（不带引号），而不是 {got}。",
        },
        "ch01.ex1.wrong": {
            "en": "{n} of the {total} predictions do not match what PyTorch does with `target` = "
            "{target}: question {which}. Run the cell below the check to see what happens.",
            "zh": "{total} 个预测中有 {n} 个与 PyTorch 在 `target` = {target} 时的实际行为不符：第 {which} 题。"
            "运行检查单元下面的那个单元，看看实际发生了什么。",
        },
        "ch01.ex1.ok": {
            "en": "all {total} predictions match what PyTorch does with `target` = {target}.",
            "zh": "{total} 个预测全部与 PyTorch 在 `target` = {target} 时的实际行为一致。",
        },
        "ch01.ex1.hint1": {
            "en": "`Tensor.to()` and `Module.to()` differ in one thing: one changes the object you call "
            "it on, the other hands you a new object and leaves the old one as it was.",
            "zh": "`Tensor.to()` 和 `Module.to()` 有一点不同：一个改变你调用它的那个对象，另一个交给你一个新对象，"
            "原来的对象保持不变。",
        },
        "ch01.ex1.hint2": {
            "en": "`Module.to()` moves the parameters and buffers in place and returns the module itself. "
            "`Tensor.to()` returns a moved copy; the tensor you called it on stays where it was.",
            "zh": "`Module.to()` 原地移动参数和缓冲区，并返回模块本身。`Tensor.to()` 返回一个移动后的副本；"
            "你调用它的那个张量留在原处。",
        },
        "ch01.ex1.hint3": {
            "en": "A tensor created without `device=` is on the CPU. When a tensor already has the device "
            "(and dtype) you ask for, `Tensor.to()` has nothing to copy: what does it return then?",
            "zh": "创建时没有指定 `device=` 的张量在 CPU 上。当张量已经在你要求的设备上（数据类型也相同）时，"
            "`Tensor.to()` 没有东西要复制：那它返回什么？",
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
            "zh": "修复 `to_device`（它现在还返回 `____`）。",
        },
        "ch01.ex2.not_function": {
            "en": "`to_device` should be a function.",
            "zh": "`to_device` 应该是一个函数。",
        },
        "ch01.ex2.raised": {
            "en": "`to_device` raised an error on a test model and batch: {error}",
            "zh": "`to_device` 在测试用的模型和批次上抛出了错误：{error}",
        },
        "ch01.ex2.not_three": {
            "en": "`to_device` should return three things (the model, the inputs, the labels), "
            "but it returned a {got}.",
            "zh": "`to_device` 应该返回三样东西（模型、输入、标签），但它返回的是 {got}。",
        },
        "ch01.ex2.order": {
            "en": "`to_device` should return the model, the inputs and the labels, in this order; "
            "it returned: {got}.",
            "zh": "`to_device` 应该按顺序返回模型、输入和标签；它返回的是：{got}。",
        },
        "ch01.ex2.model": {
            "en": "{n} of the {total} parameters and buffers of the returned model are on {found}, "
            "not on {device}.",
            "zh": "返回的模型的 {total} 个参数和缓冲区中，有 {n} 个在 {found} 上，而不是在 {device} 上。",
        },
        "ch01.ex2.left_behind": {
            "en": "the `{what}` come back on {found}, not on {device}.",
            "zh": "返回的 `{what}` 在 {found} 上，而不是在 {device} 上。",
        },
        "ch01.ex2.changed": {
            "en": "the `{what}` come back changed (shape, dtype or values): only their device should change.",
            "zh": "返回的 `{what}` 被改变了（形状、数据类型或数值）：只应该改变它们所在的设备。",
        },
        "ch01.ex2.ok": {
            "en": "the model, the inputs and the labels all come back on {device}.",
            "zh": "模型、输入和标签返回时都在 {device} 上。",
        },
        "ch01.ex2.hint1": {
            "en": "One of the seed's three lines works as it is; the other two throw away their result.",
            "zh": "原文的三行代码里有一行本身就能起作用；另外两行把结果扔掉了。",
        },
        "ch01.ex2.hint2": {
            "en": "`Tensor.to()` returns a new tensor: keep it under the same name "
            "(`inputs = inputs.to(device)`).",
            "zh": "`Tensor.to()` 返回一个新张量：用同一个名字把它保存下来（`inputs = inputs.to(device)`）。",
        },
        "ch01.ex2.hint3": {
            "en": "Then return the three of them: `return model, inputs, labels`.",
            "zh": "然后把三者一起返回：`return model, inputs, labels`。",
        },
        "ch01.ex2.solution": {
            "en": "model.to(device)\ninputs = inputs.to(device)\nlabels = labels.to(device)\n"
            "return model, inputs, labels",
            "zh": "model.to(device)\ninputs = inputs.to(device)\nlabels = labels.to(device)\n"
            "return model, inputs, labels",
        },
    }
)
