"""Chapter 08: mixed precision — autocast on the lab's device, dtypes fixed at their source, GradScaler's order."""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from torch import nn

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, correct, incorrect
from ..checks import short_error as _short

# The device that stands in for a GPU: `meta` exists on every machine. Autocast itself has no meta mode
# (`torch.autocast("meta")` raises), so exercise 1 is judged on device *types* instead: the check asks the
# learner's function for the context of cpu, cuda, cuda:0 and mps devices and reads what it would do on each.
TARGET = torch.device("meta")
SECONDS = 20.0  # the checks need well under a second; more means the learner's code loops
LOW_PRECISION = (torch.float16, torch.bfloat16)
PROBES = ("cpu", "cuda", "cuda:0", "mps")  # "cuda:0": a device with an index still has the type "cuda"
IMAGE = (1, 8, 8)  # the lab's images: one channel, 8 x 8 pixels



def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


# --- exercise 1: autocast_for(device) -----------------------------------------------------------------


def _call_quietly(run: Callable[[], object]) -> tuple[object, list[warnings.WarningMessage]]:
    """Run `run`, recording the warnings it emits instead of printing them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run()
    return result, list(caught)


@contextmanager
def _requested() -> Iterator[dict[int, bool]]:
    """Inside: every autocast created, by id, with the `enabled` it was asked for (torch may turn one off itself
    where the device is missing, so the object's own flag cannot tell a learner's `enabled=False` apart)."""
    asked: dict[int, bool] = {}
    original = torch.amp.autocast.__init__
    signature = inspect.signature(original)

    def spy(self: torch.amp.autocast, *args: object, **kwargs: object) -> None:
        try:
            asked[id(self)] = bool(signature.bind(self, *args, **kwargs).arguments.get("enabled", True))
        except TypeError:
            pass
        original(self, *args, **kwargs)

    torch.amp.autocast.__init__ = spy  # restored below
    try:
        yield asked
    finally:
        torch.amp.autocast.__init__ = original


def _autocast_entered(context: object) -> torch.amp.autocast | None:
    """The autocast a context of the learner's own (a `@contextmanager`, a class) enters, or None."""
    if not (hasattr(context, "__enter__") and hasattr(context, "__exit__")):
        return None
    entered: list[torch.amp.autocast] = []
    original = torch.amp.autocast.__enter__

    def spy(self: torch.amp.autocast) -> object:
        entered.append(self)
        return original(self)

    torch.amp.autocast.__enter__ = spy  # restored below, before any learner code runs again
    try:
        with context:  # type: ignore[attr-defined]
            pass
    finally:
        torch.amp.autocast.__enter__ = original
    return entered[0] if entered else None


class AutocastFor(Exercise):
    """Exercise 1: autocast_for(device) — the autocast context for that device's type, in lower precision."""

    name = "ex1"
    reads = ("autocast_for",)
    hints = ("ch08.ex1.hint1", "ch08.ex1.hint2", "ch08.ex1.hint3")
    solution_key = "ch08.ex1.solution"
    not_attempted_key = "ch08.ex1.todo"
    seconds = SECONDS

    def judge(self, autocast_for: object) -> Verdict:
        if not callable(autocast_for):
            return incorrect("ch08.ex1.not_function")
        devices = list(dict.fromkeys([self.device] + [torch.device(p) for p in PROBES]))
        for device in devices:
            try:
                with _requested() as asked:
                    context, caught = _call_quietly(lambda device=device: autocast_for(device))
                    if not isinstance(context, (Blank, torch.amp.autocast)) and hasattr(context, "__enter__"):
                        entered, more = _call_quietly(lambda context=context: _autocast_entered(context))
                        context, caught = (entered if entered is not None else context), caught + more
            except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
                return incorrect("ch08.ex1.raised", device=device, error=_short(error))
            if isinstance(context, Blank):
                return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
            if any(issubclass(w.category, FutureWarning) for w in caught):
                return incorrect("ch08.ex1.deprecated")
            if not isinstance(context, torch.amp.autocast):
                return incorrect("ch08.ex1.not_autocast", got=type(context).__name__)
            if not asked.get(id(context), True):  # asked for a disabled context on this device
                return incorrect("ch08.ex1.disabled", device=device, dtype="float32")
            if context.device != device.type:
                return incorrect("ch08.ex1.device_type", device=device, got=context.device, want=device.type)
            if context.fast_dtype not in LOW_PRECISION:
                return incorrect("ch08.ex1.precision", dtype=_dtype_name(context.fast_dtype))
        # Where autocast can really run (the CPU and the lab's device): enter it and see a layer run in it.
        for device in dict.fromkeys([torch.device("cpu"), self.device]):
            try:
                context, _ = _call_quietly(lambda device=device: autocast_for(device))
                layer = nn.Linear(4, 2).to(device)
                with context:
                    enabled = torch.is_autocast_enabled(device.type)
                    out = layer(torch.ones(3, 4, device=device))
            except Exception as error:  # noqa: BLE001
                return incorrect("ch08.ex1.raised", device=device, error=_short(error))
            if not enabled or out.dtype not in LOW_PRECISION:
                return incorrect("ch08.ex1.disabled", device=device, dtype=_dtype_name(out.dtype))
        return correct("ch08.ex1.ok")


# --- exercise 2: prepare(images, labels, device) --------------------------------------------------------


def probe_batch(n: int = 6, seed: int = 3, top: int = 256) -> tuple[torch.Tensor, torch.Tensor]:
    """Raw data as a data set hands it over: uint8 pixels (below `top`) and int32 labels, on the CPU."""
    g = torch.Generator().manual_seed(seed)
    images = torch.randint(0, top, (n, *IMAGE), generator=g, dtype=torch.uint8)
    labels = torch.randint(0, 2, (n,), generator=g, dtype=torch.int32)
    return images, labels


class Prepare(Exercise):
    """Exercise 2: prepare(images, labels, device) — float32 pixels in [0, 1] and int64 labels, on `device`."""

    name = "ex2"
    reads = ("prepare",)
    hints = ("ch08.ex2.hint1", "ch08.ex2.hint2", "ch08.ex2.hint3")
    solution_key = "ch08.ex2.solution"
    not_attempted_key = "ch08.ex2.todo"
    seconds = SECONDS

    def judge(self, prepare: object) -> Verdict:
        if not callable(prepare):
            return incorrect("ch08.ex2.not_function")
        # A dark batch too (brightest pixel 99): pixels are scaled by the format's 255, not by the batch.
        for device, top in ((TARGET, 256), (self.device, 256), (self.device, 100)):
            images, labels = probe_batch(top=top)
            kept = (images.clone(), labels.clone())
            try:
                result = prepare(images, labels, device)
            except Exception as error:  # noqa: BLE001
                return incorrect("ch08.ex2.raised", error=_short(error))
            if isinstance(result, Blank) or (isinstance(result, (tuple, list)) and
                                             any(isinstance(r, Blank) for r in result)):
                return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
            if not (isinstance(result, (tuple, list)) and len(result) == 2
                    and all(isinstance(t, torch.Tensor) for t in result)):
                return incorrect("ch08.ex2.not_pair", got=type(result).__name__)
            x, y = result
            for what, tensor in (("images", x), ("labels", y)):
                if tensor.device != device:
                    return incorrect(f"ch08.ex2.device_{what}", found=tensor.device, want=device)
            if x.dtype in LOW_PRECISION:
                return incorrect("ch08.ex2.hand_cast", dtype=_dtype_name(x.dtype))
            if x.dtype == torch.float64:
                return incorrect("ch08.ex2.double")
            if x.dtype != torch.float32:
                return incorrect("ch08.ex2.images_dtype", dtype=_dtype_name(x.dtype))
            if y.dtype != torch.int64:
                return incorrect("ch08.ex2.labels_dtype", dtype=_dtype_name(y.dtype))
            if tuple(x.shape) != tuple(images.shape) or tuple(y.shape) != tuple(labels.shape):
                return incorrect("ch08.ex2.shape", got=tuple(x.shape), want=tuple(images.shape))
            if not (torch.equal(images, kept[0]) and torch.equal(labels, kept[1])):
                return incorrect("ch08.ex2.changed_input")
            if device.type == "meta":
                continue
            if not torch.allclose(x.detach().cpu(), kept[0].float() / 255, atol=1e-6):
                return incorrect("ch08.ex2.scale")
            if not torch.equal(y.cpu(), kept[1].long()):
                return incorrect("ch08.ex2.label_values")
        return correct("ch08.ex2.ok")


# --- exercise 3: amp_step(model, optimizer, scaler, loss, max_norm) ----------------------------------------

LR, MAX_NORM, INIT_SCALE = 0.1, 1.0, 1024.0
W0 = (1.0, -2.0, 0.5)
STEP_INPUTS = ((3.0, 4.0, 0.0), (0.0, 0.3, 0.4))  # gradient norms 5 (clipped to 1) and 0.5 (not clipped)
INF_INPUT = (float("inf"), 1.0, 1.0)


def _clipped(g: torch.Tensor, max_norm: float) -> torch.Tensor:
    return g * min(1.0, max_norm / (float(g.norm()) + 1e-6))


def step_outcomes(g: torch.Tensor) -> list[tuple[str, torch.Tensor]]:
    """The change of the weights one step makes, for the right order and for each common wrong one."""
    s = INIT_SCALE
    return [
        ("ok", -LR * _clipped(g, MAX_NORM)),
        ("not_clipped", -LR * g),  # no clipping, or clipping after step()
        ("clip_before_unscale", -LR * _clipped(g * s, MAX_NORM) / s),  # clipped the scaled gradients
        ("scaled_step", -LR * g * s),  # optimizer.step() on the scaled gradients
        ("scaled_step", -LR * _clipped(g * s, MAX_NORM)),  # the same, clipped first
        ("not_scaled", -LR * _clipped(g / s, MAX_NORM)),  # loss.backward() without scaler.scale(loss)
    ]


class AmpStep(Exercise):
    """Exercise 3: amp_step — scale, backward, unscale_, clip, step, update, in that order, grads cleared."""

    name = "ex3"
    reads = ("amp_step",)
    hints = ("ch08.ex3.hint1", "ch08.ex3.hint2", "ch08.ex3.hint3")
    solution_key = "ch08.ex3.solution"
    not_attempted_key = "ch08.ex3.todo"
    seconds = SECONDS

    def judge(self, amp_step: object) -> Verdict:
        if not callable(amp_step):
            return incorrect("ch08.ex3.not_function")
        devices = [torch.device("cpu")] + ([self.device] if self.device.type == "cuda" else [])
        for device in devices:
            verdict = self._scenario(amp_step, device)
            if verdict is not None:
                return verdict
        return correct("ch08.ex3.ok")

    def _scenario(self, amp_step: Callable[..., object], device: torch.device) -> Verdict | None:
        model = nn.Linear(3, 1, bias=False).to(device)
        with torch.no_grad():
            model.weight.copy_(torch.tensor([W0]))
        optimizer = torch.optim.SGD(model.parameters(), lr=LR)
        scaler = torch.amp.GradScaler(device.type, init_scale=INIT_SCALE, growth_interval=1)
        scales = [INIT_SCALE * 2, INIT_SCALE * 4]  # one clean step with growth_interval=1 doubles the scale
        for number, inputs in enumerate(STEP_INPUTS):
            before = model.weight.detach().clone()
            loss = model(torch.tensor([inputs], device=device)).sum()
            try:
                returned = amp_step(model, optimizer, scaler, loss, MAX_NORM)
            except Exception as error:  # noqa: BLE001
                return self._raised(error)
            if isinstance(returned, Blank):
                return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
            change = (model.weight.detach() - before).cpu()[0]
            g = torch.tensor(inputs)
            outcomes = step_outcomes(g)
            right = outcomes[0][1]
            if not torch.isfinite(change).all():
                return incorrect("ch08.ex3.not_finite")
            if not torch.allclose(change, right, atol=1e-5):
                left = [p.grad for p in model.parameters() if p.grad is not None and bool(p.grad.any())]
                if number == 1 and left:  # step 1 was right, and gradients outlive the step: they pile up
                    return incorrect("ch08.ex3.accumulates")
                if torch.equal(change, torch.zeros(3)):
                    return incorrect("ch08.ex3.no_change")
                for key, want in outcomes[1:]:
                    if torch.allclose(change, want, rtol=1e-3, atol=1e-7):
                        return incorrect(f"ch08.ex3.{key}")
                return incorrect("ch08.ex3.wrong_change", got=_rounded(change), want=_rounded(right))
            if scaler.get_scale() != scales[number]:
                return incorrect("ch08.ex3.no_update", got=scaler.get_scale(), want=scales[number])
        # A step whose gradients hold inf must be skipped, and the scale lowered.
        before = model.weight.detach().clone()
        loss = model(torch.tensor([INF_INPUT], device=device)).sum()
        try:
            amp_step(model, optimizer, scaler, loss, MAX_NORM)
        except Exception as error:  # noqa: BLE001
            return self._raised(error)
        if not torch.equal(model.weight.detach(), before):
            return incorrect("ch08.ex3.inf_not_skipped")
        if scaler.get_scale() != scales[-1] / 2:
            return incorrect("ch08.ex3.no_update", got=scaler.get_scale(), want=scales[-1] / 2)
        return None

    def _raised(self, error: BaseException) -> Verdict:
        message = str(error)
        if "_scale is None" in message:  # unscale_ or step without scaler.scale(loss) first
            return incorrect("ch08.ex3.not_scaled")
        if "already been called" in message or "No inf checks were recorded" in message:
            return incorrect("ch08.ex3.order", error=_short(error))
        return incorrect("ch08.ex3.raised", error=_short(error))


def _rounded(t: torch.Tensor) -> list[float]:
    return [round(float(v), 6) if math.isfinite(float(v)) else float(v) for v in t]


EXERCISES = [AutocastFor, Prepare, AmpStep]

AUTOCAST_FOR_SOLUTION = '''\
def autocast_for(device):
    """The autocast context for `device`: its type ("cuda", "cpu", "mps"), in that type's lower precision."""
    return torch.autocast(device_type=device.type)'''

PREPARE_SOLUTION = '''\
def prepare(images, labels, device):
    """uint8 images and integer labels -> float32 pixels in [0, 1] and int64 labels, on `device`."""
    x = images.to(device, non_blocking=True).float() / 255  # float32: autocast picks each op's precision
    y = labels.to(device, non_blocking=True).long()  # cross_entropy wants int64 class indices
    return x, y'''

AMP_STEP_SOLUTION = '''\
def amp_step(model, optimizer, scaler, loss, max_norm):
    """One optimizer step with a GradScaler: scale, backward, unscale_, clip, step, update."""
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)  # the true gradients, so that max_norm means what it says
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)  # skipped when a gradient holds inf or NaN
    scaler.update()  # lowers the scale after a skipped step, raises it after enough clean ones
    optimizer.zero_grad(set_to_none=True)'''


def _both(code: str) -> dict[str, str]:
    escaped = code.replace("{", "{{").replace("}", "}}")
    return {"en": escaped, "zh": escaped}


messages.add(
    {
        # exercise 1
        "ch08.ex1.todo": {
            "en": "fill in `autocast_for` (it still returns `____`).",
            "zh": "请补全 `autocast_for`（它现在还返回 `____`）。",
        },
        "ch08.ex1.not_function": {
            "en": "`autocast_for` should be a function `autocast_for(device)` that returns an autocast context.",
            "zh": "`autocast_for` 应该是一个函数 `autocast_for(device)`，返回一个 autocast 上下文。",
        },
        "ch08.ex1.raised": {
            "en": "`autocast_for({device})` raised an error: {error}",
            "zh": "`autocast_for({device})` 报错：{error}",
        },
        "ch08.ex1.deprecated": {
            "en": "your function uses a deprecated API (it emitted a FutureWarning): `torch.cuda.amp.autocast` and "
            "`torch.cpu.amp.autocast` are replaced by one device-agnostic API.",
            "zh": "你的函数用了已弃用的 API（它发出了 FutureWarning）：`torch.cuda.amp.autocast` 和 "
            "`torch.cpu.amp.autocast` 已被一个与设备无关的 API 取代。",
        },
        "ch08.ex1.not_autocast": {
            "en": "`autocast_for` returned a {got}; it should return the autocast context itself, for use as "
            "`with autocast_for(device):`.",
            "zh": "`autocast_for` 返回的是 {got}；它应当返回 autocast 上下文本身，以便这样使用："
            "`with autocast_for(device):`。",
        },
        "ch08.ex1.device_type": {
            "en": "given {device}, your context autocasts `{got}` operations, but a model on {device} runs `{want}` "
            "operations: autocast only changes operations on the device type it is given, and leaves every other "
            "device alone. Derive the type from the device.",
            "zh": "传入 {device} 时，你的上下文只对 `{got}` 上的运算做自动类型转换，可模型的运算在 `{want}` 上："
            "autocast 只改变它所指定设备类型上的运算，别的设备一概不管。请从 device 推出设备类型。",
        },
        "ch08.ex1.precision": {
            "en": "your context runs operations in {dtype}: mixed precision means a lower precision, float16 or "
            "bfloat16 (leave `dtype=` out to get the device's default).",
            "zh": "你的上下文让运算以 {dtype} 运行：混合精度指的是更低的精度，即 float16 或 bfloat16"
            "（不写 `dtype=`，就会使用该设备的默认精度）。",
        },
        "ch08.ex1.disabled": {
            "en": "inside your context a linear layer on {device} still computed in {dtype}: autocast is not on "
            "there (`enabled=False`, or a condition that turns it off).",
            "zh": "在你的上下文里，{device} 上的线性层仍以 {dtype} 计算：autocast 在那里没有生效"
            "（`enabled=False`，或者某个条件把它关掉了）。",
        },
        "ch08.ex1.ok": {
            "en": "Your context autocasts the operations of the device it is given — CPU, CUDA or MPS — in lower "
            "precision.",
            "zh": "你的上下文会对给定设备（CPU、CUDA 或 MPS）上的运算做自动类型转换，以更低的精度运行。",
        },
        "ch08.ex1.hint1": {
            "en": "`torch.autocast(\"cuda\")` changes only CUDA operations. On a machine without CUDA it turns "
            "itself off with a warning, and a CPU model runs in float32 as if it were not there.",
            "zh": "`torch.autocast(\"cuda\")` 只改变 CUDA 上的运算。在没有 CUDA 的机器上它会发出警告并自行关闭，"
            "CPU 上的模型就像没有它一样以 float32 运行。",
        },
        "ch08.ex1.hint2": {
            "en": "`torch.autocast` wants the device *type* as a string: `\"cuda\"`, `\"cpu\"`, `\"mps\"`. "
            "A `torch.device` has it as `.type`.",
            "zh": "`torch.autocast` 要的是字符串形式的设备*类型*：`\"cuda\"`、`\"cpu\"`、`\"mps\"`。"
            "`torch.device` 的 `.type` 就是它。",
        },
        "ch08.ex1.hint3": {
            "en": "`return torch.autocast(device_type=____)`: leave `dtype=` out, and each device type gets "
            "its own lower precision.",
            "zh": "`return torch.autocast(device_type=____)`：不写 "
            "`dtype=`，每种设备类型就会用它自己默认的低精度。",
        },
        "ch08.ex1.solution": _both(AUTOCAST_FOR_SOLUTION),
        # exercise 2
        "ch08.ex2.todo": {
            "en": "fill in `prepare` (it still returns `____`).",
            "zh": "请补全 `prepare`（它现在还返回 `____`）。",
        },
        "ch08.ex2.not_function": {
            "en": "`prepare` should be a function `prepare(images, labels, device)` returning `(x, y)`.",
            "zh": "`prepare` 应该是一个函数 `prepare(images, labels, device)`，返回 `(x, y)`。",
        },
        "ch08.ex2.raised": {
            "en": "`prepare(images, labels, device)` raised an error: {error}",
            "zh": "`prepare(images, labels, device)` 报错：{error}",
        },
        "ch08.ex2.not_pair": {
            "en": "`prepare` returned a {got}; it should return two tensors, `(x, y)`.",
            "zh": "`prepare` 返回的是 {got}；它应当返回两个张量 `(x, y)`。",
        },
        "ch08.ex2.device_images": {
            "en": "asked for {want}, `prepare` put the images on {found}. Move them to the `device` it is given "
            "(the check also asks for `meta`, which stands in for a GPU).",
            "zh": "要求的是 {want}，`prepare` 却把图像放在了 {found} 上。请把它们移到传入的 `device` 上"
            "（检查还会传入 `meta`，在这里代替 GPU）。",
        },
        "ch08.ex2.device_labels": {
            "en": "asked for {want}, `prepare` put the labels on {found}. Move them to the `device` it is given "
            "(the check also asks for `meta`, which stands in for a GPU).",
            "zh": "要求的是 {want}，`prepare` 却把标签放在了 {found} 上。请把它们移到传入的 `device` 上"
            "（检查还会传入 `meta`，在这里代替 GPU）。",
        },
        "ch08.ex2.hand_cast": {
            "en": "the images come out as {dtype}. Outside autocast (evaluation, or a machine where it is off) a "
            "{dtype} batch meets float32 weights and fails with a dtype error; inside autocast it is not needed, "
            "since autocast casts each operation's inputs itself. Keep the data in float32.",
            "zh": "输出的图像是 {dtype}。在 autocast 之外（评估时，或者 autocast 没有开启的机器上），{dtype} "
            "批次碰上 float32 权重就会报 dtype 错误；在 autocast 之内又没有必要，因为 autocast 会自己转换每个运算的"
            "输入。数据请保持 float32。",
        },
        "ch08.ex2.double": {
            "en": "the images come out as float64. The model's weights are float32, and autocast does not cast "
            "float64 inputs: the first layer fails with a dtype error, inside autocast or not.",
            "zh": "输出的图像是 float64。模型的权重是 float32，而 autocast 不会转换 float64 输入："
            "无论在不在 autocast 之内，第一层都会报 dtype 错误。",
        },
        "ch08.ex2.images_dtype": {
            "en": "the images come out as {dtype}; a convolution with float32 weights wants float32 input.",
            "zh": "输出的图像是 {dtype}；权重为 float32 的卷积需要 float32 输入。",
        },
        "ch08.ex2.labels_dtype": {
            "en": "the labels come out as {dtype}; `cross_entropy` wants class indices as int64 (`.long()`).",
            "zh": "输出的标签是 {dtype}；`cross_entropy` 要求类别索引是 int64（`.long()`）。",
        },
        "ch08.ex2.shape": {
            "en": "the images came back with shape {got} instead of {want}: convert them, do not reshape them.",
            "zh": "图像返回时的形状是 {got}，而不是 {want}：只需转换类型，不要改变形状。",
        },
        "ch08.ex2.changed_input": {
            "en": "`prepare` changed the tensors it was given; return new ones and leave the data set's own alone.",
            "zh": "`prepare` 改动了传给它的张量；请返回新的张量，不要改动数据集自己的张量。",
        },
        "ch08.ex2.scale": {
            "en": "the pixels should be scaled from 0…255 to 0…1 (divide by 255).",
            "zh": "像素值应当从 0…255 缩放到 0…1（除以 255）。",
        },
        "ch08.ex2.label_values": {
            "en": "the labels' values changed; only their dtype and device should.",
            "zh": "标签的数值变了；应该改变的只有它们的 dtype 和设备。",
        },
        "ch08.ex2.ok": {
            "en": "The pixels are float32 and the labels int64, on the device asked for: the model runs with or "
            "without autocast.",
            "zh": "float32 的像素和 int64 的标签，都在要求的设备上：模型开不开 autocast 都能运行。",
        },
        "ch08.ex2.hint1": {
            "en": "Two dtypes are wrong at the source: the pixels are uint8, the labels int32. Fix them here, once, "
            "rather than casting the model.",
            "zh": "数据源头有两个 dtype 不对：像素是 uint8，标签是 int32。在这里一次性改好，而不是去转换模型。",
        },
        "ch08.ex2.hint2": {
            "en": "Do not cast the images to half yourself: autocast decides each operation's precision. "
            "`images.float() / 255` gives float32 in [0, 1].",
            "zh": "不要自己把图像转成 half：每个运算用什么精度由 autocast 决定。`images.float() / 255` 得到 "
            "[0, 1] 之间的 float32。",
        },
        "ch08.ex2.hint3": {
            "en": "`x = images.to(device).____ / 255` and `y = labels.to(device).____`; the cell already "
            "returns `x, y`.",
            "zh": "`x = images.to(device).____ / 255`，`y = labels.to(device).____`；单元里已经写好了 `return "
            "x, y`。",
        },
        "ch08.ex2.solution": _both(PREPARE_SOLUTION),
        # exercise 3
        "ch08.ex3.todo": {
            "en": "fill in `amp_step` (it still returns `____`).",
            "zh": "请补全 `amp_step`（它现在还返回 `____`）。",
        },
        "ch08.ex3.not_function": {
            "en": "`amp_step` should be a function `amp_step(model, optimizer, scaler, loss, max_norm)`.",
            "zh": "`amp_step` 应该是一个函数 `amp_step(model, optimizer, scaler, loss, max_norm)`。",
        },
        "ch08.ex3.raised": {
            "en": "`amp_step(...)` raised an error: {error}",
            "zh": "`amp_step(...)` 报错：{error}",
        },
        "ch08.ex3.order": {
            "en": "the GradScaler refused the order of your calls ({error}). Each step needs, once each and in "
            "order: scale(loss).backward(), unscale_, step, update.",
            "zh": "GradScaler 不接受你的调用顺序（{error}）。每一步都需要按顺序各调用一次："
            "scale(loss).backward()、unscale_、step、update。",
        },
        "ch08.ex3.no_change": {
            "en": "the weights did not change: the step never reached the optimizer.",
            "zh": "权重没有变化：优化器根本没有执行这一步更新。",
        },
        "ch08.ex3.not_finite": {
            "en": "after a normal step the weights hold inf or NaN.",
            "zh": "一个普通的步骤之后，权重里出现了 inf 或 NaN。",
        },
        "ch08.ex3.not_clipped": {
            "en": "the step used the gradient without clipping it to `max_norm` (or clipped it after the "
            "optimizer had already stepped).",
            "zh": "这一步用的梯度没有裁剪到 `max_norm`（或者是在优化器更新之后才裁剪）。",
        },
        "ch08.ex3.clip_before_unscale": {
            "en": "the gradients were clipped while still multiplied by the scale, so the step came out about "
            "scale times too small. Unscale them first.",
            "zh": "梯度在仍然乘着缩放因子的时候就被裁剪了，所以这一步只有应有大小的约 1/缩放因子。请先把梯度还原（"
            "unscale）。",
        },
        "ch08.ex3.scaled_step": {
            "en": "the optimizer stepped with the scaled gradients — scale times too large. Let the scaler do the "
            "step, and unscale before clipping.",
            "zh": "优化器用缩放后的梯度做了更新，大了“缩放因子”倍。请让梯度缩放器（`scaler.step`）来执行这一步，并在裁"
            "剪之前先还原梯度。",
        },
        "ch08.ex3.not_scaled": {
            "en": "the loss was not scaled before backward, yet the gradients were divided by the scale: the step "
            "came out scale times too small.",
            "zh": "backward 之前没有缩放损失，梯度却被除以了缩放因子：这一步只有应有大小的 1/缩放因子。",
        },
        "ch08.ex3.accumulates": {
            "en": "the second step used the first step's gradient too: the gradients are never cleared.",
            "zh": "第二步把第一步的梯度也算进去了：梯度从来没有被清零。",
        },
        "ch08.ex3.wrong_change": {
            "en": "the step changed the weights by {got}; the clipped, unscaled gradient gives {want}.",
            "zh": "这一步让权重改变了 {got}；按裁剪并还原后的梯度，应当改变 {want}。",
        },
        "ch08.ex3.no_update": {
            "en": "the scale is {got} after the step, {want} was expected: the scaler never adjusted it.",
            "zh": "这一步之后缩放因子是 {got}，预期是 {want}：梯度缩放器没有调整它（`scaler.update()`）。",
        },
        "ch08.ex3.inf_not_skipped": {
            "en": "a step whose gradients held inf changed the weights. Only the scaler's own step skips such a "
            "step.",
            "zh": "一个梯度里含有 inf 的步骤改变了权重。只有梯度缩放器自己的 `scaler.step` 才会跳过这样的步骤。",
        },
        "ch08.ex3.ok": {
            "en": "Scaled backward, `unscale_`, clip, step, update, gradients cleared: clean steps train, a step "
            "with inf is skipped and the scale lowered.",
            "zh": "缩放后 backward、unscale_、裁剪、step、update，再清零梯度：正常的步骤照常训练，含 inf 的步骤被跳过，"
            "缩放因子随之降低。",
        },
        "ch08.ex3.hint1": {
            "en": "The scaler multiplies the loss, so every gradient is multiplied too. Anything that reads the "
            "gradients (clipping) must come after `scaler.unscale_(optimizer)`.",
            "zh": "梯度缩放器把损失乘上了缩放因子，所以每个梯度也都乘上了。凡是要读取梯度的操作（比如裁剪），"
            "都必须放在 `scaler.unscale_(optimizer)` 之后。",
        },
        "ch08.ex3.hint2": {
            "en": "Call `scaler.step(optimizer)`, not `optimizer.step()`: it skips the step when a gradient holds "
            "inf or NaN. Then `scaler.update()` adjusts the scale.",
            "zh": "调用 `scaler.step(optimizer)`，而不是 `optimizer.step()`：梯度含有 inf 或 NaN 时它会跳过这一步。"
            "然后用 `scaler.update()` 调整缩放因子。",
        },
        "ch08.ex3.hint3": {
            "en": "In this order: `scaler.scale(loss).____()`, `scaler.unscale_(optimizer)`, "
            "`torch.nn.utils.clip_grad_norm_(model.parameters(), ____)`, `scaler.____(optimizer)`, "
            "`scaler.update()`, `optimizer.zero_grad()`.",
            "zh": "按这个顺序：`scaler.scale(loss).____()`、`scale"
            "r.unscale_(optimizer)`、`torch.nn.utils.clip_grad_norm_(model.parameters(), "
            "____)`、`scaler.____(optimizer)`、`scaler.update()`、`optimizer.zero_grad()`。",
        },
        "ch08.ex3.solution": _both(AMP_STEP_SOLUTION),
    }
)
