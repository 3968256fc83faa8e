"""Chapter 09: a debugging method — find the tensor on the wrong device, then fix it where it is made."""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import warnings

import torch
import torch.nn.functional as F  # noqa: N812 - PyTorch's own convention
from torch import nn

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, correct, incorrect
from ..checks import short_error as _short
from .checkpoints import MetaActsAsAGpu
from .inside import modules_called, probe_on_meta, stray_tensors

# The device that stands in for a GPU: `meta` exists on every machine, `model.to("meta")` really moves
# parameters and buffers there, and a tensor made on the CPU stays on the CPU. Meta tensors hold no values,
# so the checks also run the learner's code on the lab's own device and compare values there.
TARGET = torch.device("meta")
SECONDS = 30.0  # the checks need a second or two; more means the learner's code loops
LR = 3e-3

# The lab's mystery model, exactly as the notebook shows it (a unit test compares the two).
MYSTERY_SOURCE = '''\
VOCAB, DIM, HEADS, LAYERS, MAX_LEN, CLASSES = 16, 32, 4, 2, 16, 2


def sinusoids(length, dim):
    """The classic sine/cosine position table, shape (length, dim)."""
    position = torch.arange(length).unsqueeze(1)
    frequency = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)
    return table


class Embed(nn.Module):
    def __init__(self, vocab, dim, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = sinusoids(max_len, dim)

    def forward(self, ids):
        return self.tok(ids) + self.pos[: ids.shape[1]]


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        batch, steps, dim = x.shape
        q, k, v = self.qkv(x).view(batch, steps, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dim // self.heads)
        mask = torch.ones(steps, steps, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        y = scores.softmax(dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(batch, steps, dim))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class MysteryModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = Embed(VOCAB, DIM, MAX_LEN)
        self.blocks = nn.ModuleList(Block(DIM, HEADS) for _ in range(LAYERS))
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, CLASSES)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, -1]))
'''

# The colleague's resume, as the notebook shows it: the optimizer's state is loaded before the move.
START_TRAINING_SOURCE = '''\
def start_training(path, device):
    """Resume from a checkpoint written on a laptop, then move to the device."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = MysteryModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)
    return model, optimizer
'''

BUILD_MODEL_SOURCE = '''\
def build_model():
    """The mystery model with your two fixed parts in place of the broken ones (same names, same weights)."""
    model = MysteryModel()
    model.embed = FixedEmbed(VOCAB, DIM, MAX_LEN)
    for block in model.blocks:
        block.attn = FixedAttention(DIM, HEADS)
    return model
'''


def mystery_namespace() -> dict[str, object]:
    """The mystery model's classes and sizes, run from the same source the notebook shows."""
    namespace: dict[str, object] = {"math": math, "torch": torch, "nn": nn}
    exec(MYSTERY_SOURCE, namespace)
    return namespace


_MYSTERY = mystery_namespace()
VOCAB, DIM, HEADS, MAX_LEN, CLASSES = (int(_MYSTERY[n]) for n in ("VOCAB", "DIM", "HEADS", "MAX_LEN", "CLASSES"))
Embed, Attention, MysteryModel = _MYSTERY["Embed"], _MYSTERY["Attention"], _MYSTERY["MysteryModel"]
STEPS = 11



def _ids(batch: int, steps: int, device: torch.device, seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, VOCAB, (batch, steps), generator=g).to(device)


def _strangers(model: nn.Module, called: list[nn.Module]) -> str:
    own = {id(m) for m in model.modules()}
    return ", ".join(sorted({type(m).__name__ for m in called if id(m) not in own}))


def _loads_old_weights(module: nn.Module, old: nn.Module) -> str | None:
    """None when `module` loads the old part's state_dict strictly; else PyTorch's complaint, shortened."""
    try:
        module.load_state_dict(old.state_dict())
    except Exception as error:  # noqa: BLE001 - the learner's module may refuse any way
        return " ".join(str(error).split())[:240]
    return None


def _is_module_class(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, nn.Module)


def _moved_inside_a_model(part: nn.Module) -> nn.Module:
    """`part`, moved to meta the way a model moves it: by its parent's `.to()`, which never calls the part's own."""
    parent = nn.Sequential(part)
    parent.to(TARGET)
    return parent[0]


def _stray_said(name: str) -> str:
    return f"`{name}` is a plain tensor attribute, which `.to()` does not move (a copy in forward hides it)"


# --- exercise 1: FixedEmbed -----------------------------------------------------------------------------


class FixedEmbedPart(Exercise):
    """Exercise 1: the position table moves with the model and stays out of the state_dict."""

    name = "ex1"
    reads = ("FixedEmbed",)
    hints = ("ch09.ex1.hint1", "ch09.ex1.hint2", "ch09.ex1.hint3")
    solution_key = "ch09.ex1.solution"
    not_attempted_key = "ch09.ex1.todo"
    seconds = SECONDS

    def judge(self, FixedEmbed: object) -> Verdict:  # noqa: N803 - the notebook's name for it
        if not _is_module_class(FixedEmbed):
            return incorrect("ch09.ex1.not_module")
        torch.manual_seed(0)
        old = Embed(VOCAB, DIM, MAX_LEN)
        try:
            new = FixedEmbed(VOCAB, DIM, MAX_LEN)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch09.ex1.raised", error=_short(error))
        if not isinstance(new, nn.Module):
            return incorrect("ch09.ex1.not_module")
        refused = _loads_old_weights(new, old)
        if refused is not None:
            return incorrect("ch09.ex1.old_checkpoint", error=refused)
        # On the lab's device: the same numbers as the old part, for every length up to max_len.
        try:
            here = new.to(self.device)
            for steps in (STEPS, 3, MAX_LEN):
                ids = _ids(4, steps, self.device)
                with modules_called() as called:
                    got = here(ids)
                if isinstance(got, Blank):
                    return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
                strangers = _strangers(here, called)
                if strangers:
                    return incorrect("ch09.ex1.layer_in_forward", names=strangers)
                want = old(ids.cpu())
                if not isinstance(got, torch.Tensor) or got.shape != want.shape:
                    shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
                    return incorrect("ch09.ex1.shape", got=shape, want=tuple(want.shape))
                if not torch.allclose(got.detach().cpu(), want.detach(), atol=1e-5):
                    return incorrect("ch09.ex1.values")
        except Exception as error:  # noqa: BLE001
            return incorrect("ch09.ex1.raised", error=_short(error))
        # Towards meta, the stand-in for a GPU, moved as a part of a model (a parent's .to() never calls the
        # part's own .to()): everything the part holds or makes must follow the model.
        try:
            on_meta = _moved_inside_a_model(FixedEmbed(VOCAB, DIM, MAX_LEN))
        except Exception as error:  # noqa: BLE001
            return incorrect("ch09.ex1.raised", error=_short(error))
        strays = stray_tensors(on_meta, off=TARGET)
        if strays:
            return incorrect("ch09.ex1.left_on_cpu", error=_stray_said(strays[0]))
        ids = _ids(4, STEPS, TARGET)  # made outside the probe, which watches only the learner's code
        key, params = probe_on_meta(lambda: on_meta(ids))
        if key is not None:
            return incorrect(f"ch09.ex1.{key}", **params)
        return correct("ch09.ex1.ok")


# --- exercise 2: FixedAttention -------------------------------------------------------------------------


class FixedAttentionPart(Exercise):
    """Exercise 2: the causal mask is made where the scores are."""

    name = "ex2"
    reads = ("FixedAttention",)
    hints = ("ch09.ex2.hint1", "ch09.ex2.hint2", "ch09.ex2.hint3")
    solution_key = "ch09.ex2.solution"
    not_attempted_key = "ch09.ex2.todo"
    seconds = SECONDS

    def judge(self, FixedAttention: object) -> Verdict:  # noqa: N803 - the notebook's name for it
        if not _is_module_class(FixedAttention):
            return incorrect("ch09.ex2.not_module")
        torch.manual_seed(0)
        old = Attention(DIM, HEADS)
        try:
            new = FixedAttention(DIM, HEADS)
        except Exception as error:  # noqa: BLE001
            return incorrect("ch09.ex2.raised", error=_short(error))
        if not isinstance(new, nn.Module):
            return incorrect("ch09.ex2.not_module")
        refused = _loads_old_weights(new, old)
        if refused is not None:
            return incorrect("ch09.ex2.old_checkpoint", error=refused)
        try:
            here = new.to(self.device)
            here.eval()
            for steps in (STEPS, 4):
                x = torch.randn(3, steps, DIM, generator=torch.Generator().manual_seed(steps))
                with modules_called() as called:
                    got = here(x.to(self.device))
                if isinstance(got, Blank):
                    return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
                strangers = _strangers(here, called)
                if strangers:
                    return incorrect("ch09.ex2.layer_in_forward", names=strangers)
                with torch.no_grad():
                    want = old(x)
                if not isinstance(got, torch.Tensor) or got.shape != want.shape:
                    shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
                    return incorrect("ch09.ex2.shape", got=shape, want=tuple(want.shape))
                if not torch.allclose(got.detach().cpu(), want, atol=1e-5):
                    return incorrect("ch09.ex2.values")
        except Exception as error:  # noqa: BLE001
            return incorrect("ch09.ex2.raised", error=_short(error))
        try:
            on_meta = _moved_inside_a_model(FixedAttention(DIM, HEADS))
        except Exception as error:  # noqa: BLE001
            return incorrect("ch09.ex2.raised", error=_short(error))
        strays = stray_tensors(on_meta, off=TARGET)
        if strays:
            return incorrect("ch09.ex2.left_on_cpu", error=_stray_said(strays[0]))
        x = torch.zeros(3, STEPS, DIM, device=TARGET)
        key, params = probe_on_meta(lambda: on_meta(x))
        if key is not None:
            return incorrect(f"ch09.ex2.{key}", **params)
        return correct("ch09.ex2.ok")


# --- exercise 3: resume ---------------------------------------------------------------------------------


def _laptop_checkpoint(path: str) -> tuple[dict[str, torch.Tensor], dict[str, object]]:
    """A checkpoint as the colleague's laptop wrote it: the mystery model and Adam after two steps, on the CPU."""
    torch.manual_seed(5)
    model = MysteryModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    for seed in (2, 3):
        optimizer.zero_grad()
        F.cross_entropy(model(_ids(8, STEPS, torch.device("cpu"), seed)), torch.arange(8) % CLASSES).backward()
        optimizer.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
    return model.state_dict(), optimizer.state_dict()


def _train_step(model: nn.Module, optimizer: torch.optim.Optimizer, batch: tuple[torch.Tensor, torch.Tensor],
                step: bool = True) -> None:
    optimizer.zero_grad()
    ids, labels = batch
    F.cross_entropy(model(ids), labels).backward()
    if step:  # not on meta: Adam reads its step count with .item(), and a checkpoint mapped to meta has no values
        optimizer.step()


class Resume(Exercise):
    """Exercise 3: resume(path, device) — move the fixed model, build Adam on it, then load both states."""

    name = "ex3"
    reads = ("resume",)
    hints = ("ch09.ex3.hint1", "ch09.ex3.hint2", "ch09.ex3.hint3")
    solution_key = "ch09.ex3.solution"
    not_attempted_key = "ch09.ex3.todo"
    seconds = SECONDS

    def judge(self, resume: object) -> Verdict:
        if not callable(resume):
            return incorrect("ch09.ex3.not_function")
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "laptop.pt")
            weights, optimizer_state = _laptop_checkpoint(path)
            for device in (TARGET, self.device):
                verdict = self._judge_on(resume, path, device, weights, optimizer_state)
                if verdict is not None:
                    return verdict
        return correct("ch09.ex3.ok")

    def _judge_on(self, resume: object, path: str, device: torch.device, weights: dict[str, torch.Tensor],
                  optimizer_state: dict[str, object]) -> Verdict | None:
        try:
            with MetaActsAsAGpu() if device.type == "meta" else contextlib.nullcontext(), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")  # loading into meta parameters warns that it is a no-op
                got = resume(path, device)  # type: ignore[operator]
        except Exception as error:  # noqa: BLE001
            return incorrect("ch09.ex3.raised", device=device, error=_short(error))
        if isinstance(got, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        if not (isinstance(got, tuple) and len(got) == 2):
            return incorrect("ch09.ex3.not_pair")
        model, optimizer = got
        if not isinstance(model, nn.Module) or not isinstance(optimizer, torch.optim.Optimizer):
            return incorrect("ch09.ex3.not_pair")
        if not isinstance(optimizer, torch.optim.Adam):
            return incorrect("ch09.ex3.not_adam", got=type(optimizer).__name__)
        params = list(model.parameters())
        in_optimizer = [p for group in optimizer.param_groups for p in group["params"]]
        if len(in_optimizer) != len(params) or any(a is not b for a, b in zip(in_optimizer, params)):
            return incorrect("ch09.ex3.other_parameters")
        misplaced = [name for name, p in model.named_parameters() if p.device != device]
        if misplaced:
            return incorrect("ch09.ex3.model_device", name=misplaced[0], device=device)
        names = {id(p): name for name, p in model.named_parameters()}
        state = [(names[id(p)], key, t) for p in params for key, t in optimizer.state.get(p, {}).items()
                 if isinstance(t, torch.Tensor) and key != "step"]
        if len(state) != 2 * len(params):
            return incorrect("ch09.ex3.no_state")
        left = [(name, key, t) for name, key, t in state if t.device != device]
        if left:
            name, key, t = left[0]
            return incorrect("ch09.ex3.state_device", name=name, key=key, found=t.device, device=device)
        strays = stray_tensors(model, off=device)
        if strays:  # a plain tensor attribute (moved in forward at every call, or not at all)
            return incorrect("ch09.ex3.left_on_cpu", error=_stray_said(strays[0]))
        if device.type == "meta":
            # The model resume builds must be the fixed one: forward and backward on meta, nothing left on the CPU.
            batch = _ids(4, STEPS, device, seed=9), torch.arange(4, device=device) % CLASSES
            key, params_ = probe_on_meta(lambda: _train_step(model, optimizer, batch, step=False))
            if key is not None:
                return incorrect(f"ch09.ex3.{key}", **params_)
            return None
        current = model.state_dict()
        if not all(k in current and torch.equal(current[k].cpu(), v) for k, v in weights.items()):
            return incorrect("ch09.ex3.weights")
        saved = optimizer_state["state"][0]["exp_avg"]  # type: ignore[index]
        if not torch.equal(optimizer.state[params[0]]["exp_avg"].detach().cpu(), saved):
            return incorrect("ch09.ex3.no_state")
        before = [p.detach().clone() for p in params]
        _train_step(model, optimizer, (_ids(4, STEPS, device, seed=9), torch.arange(4, device=device) % CLASSES))
        if all(torch.equal(a, p.detach()) for a, p in zip(before, params)):
            return incorrect("ch09.ex3.no_step")
        return None


EXERCISES = [FixedEmbedPart, FixedAttentionPart, Resume]

FIXED_EMBED_SOLUTION = '''\
class FixedEmbed(nn.Module):
    def __init__(self, vocab, dim, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        # a buffer moves with .to(); persistent=False keeps it out of the state_dict, as before
        self.register_buffer("pos", sinusoids(max_len, dim), persistent=False)

    def forward(self, ids):
        return self.tok(ids) + self.pos[: ids.shape[1]]'''

FIXED_ATTENTION_SOLUTION = '''\
class FixedAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        batch, steps, dim = x.shape
        q, k, v = self.qkv(x).view(batch, steps, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(dim // self.heads)
        mask = torch.ones(steps, steps, dtype=torch.bool, device=x.device).triu(1)  # born where x is
        scores = scores.masked_fill(mask, float("-inf"))
        y = scores.softmax(dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(batch, steps, dim))'''

RESUME_SOLUTION = '''\
def resume(path, device):
    """The fixed model and its Adam optimizer from a checkpoint, everything on `device`."""
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model = build_model().to(device)  # 1. move the model
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)  # 2. build the optimizer on its parameters
    model.load_state_dict(checkpoint["model"])  # 3. load both states
    optimizer.load_state_dict(checkpoint["optimizer"])  # its state follows each parameter's device
    return model, optimizer'''


def _both(code: str) -> dict[str, str]:
    escaped = code.replace("{", "{{").replace("}", "}}")
    return {"en": escaped, "zh": escaped}


_PROBE = {
    "left_on_cpu": {
        "en": "with the model moved to `meta` (the stand-in for a GPU that every machine has), a tensor stayed on "
        "the CPU: {error}. Something inside is not moved by `.to()`, or is made without a device.",
        "zh": "把模型移到 `meta`（每台机器都有的设备，在这里代替 GPU）之后，有一个张量留在了 CPU 上：{error}。"
        "里面有东西不会随 `.to()` 移动，或者创建时没有指定设备。",
    },
    "hidden_cpu": {
        "en": "with the model on `meta` (standing in for a GPU), a recurrent layer got a hidden state on the CPU: "
        "{error}.",
        "zh": "模型在 `meta` 上（代替 GPU）时，循环层收到的隐藏状态在 CPU 上：{error}。",
    },
    "output_on_cpu": {
        "en": "with the model and the input on `meta` (standing in for a GPU), forward sends a tensor to the CPU "
        "(`.cpu()`, `.to(\"cpu\")`, `.item()`, `.tolist()`…): keep it where the input is.",
        "zh": "模型和输入都在 `meta` 上（代替 GPU）时，forward 把某个张量送回了 CPU"
        "（`.cpu()`、`.to(\"cpu\")`、`.item()`、`.tolist()`……）：请让它留在输入所在的设备上。",
    },
    "meta_raised": {
        "en": "with the model and the input on `meta` (standing in for a GPU), your code raised: {error}",
        "zh": "模型和输入都在 `meta` 上（代替 GPU）时，你的代码报错：{error}",
    },
}

for _exercise in ("ex1", "ex2", "ex3"):
    messages.add({f"ch09.{_exercise}.{key}": entry for key, entry in _PROBE.items()})


def _part_messages(exercise: str, cls: str, old: str, args: str) -> dict[str, dict[str, str]]:
    """The messages exercises 1 and 2 share, for the class `cls` that replaces the mystery model's `old`."""
    return {
        f"ch09.{exercise}.todo": {
            "en": f"replace `{cls} = ____` with your fixed class.",
            "zh": f"请把 `{cls} = ____` 换成你修好的类。",
        },
        f"ch09.{exercise}.not_module": {
            "en": f"`{cls}` should be an `nn.Module` class, used as `{cls}({args})`.",
            "zh": f"`{cls}` 应该是一个 `nn.Module` 子类，用法是 `{cls}({args})`。",
        },
        f"ch09.{exercise}.raised": {
            "en": f"building or running `{cls}({args})` raised an error: {{error}}",
            "zh": f"构造或运行 `{cls}({args})` 时报错：{{error}}",
        },
        f"ch09.{exercise}.old_checkpoint": {
            "en": f"`{cls}` does not load the weights of the old `{old}` (the checkpoint you will resume from has "
            f"them): {{error}}. Keep the names of its layers, and keep anything you can recompute out of the "
            "state_dict.",
            "zh": f"`{cls}` 加载不了旧 `{old}` 的权重（你要恢复的检查点里存的就是它们）：{{error}}。"
            "请保留各层的名字；能重新算出来的东西不要放进 state_dict。",
        },
        f"ch09.{exercise}.layer_in_forward": {
            "en": "forward runs a layer that is not part of the module ({names}): it is born on the CPU with new "
            "random weights at every call, `.to()` never moves it and no optimizer trains it. Build it in "
            "`__init__`.",
            "zh": "forward 里运行了一个不属于该模块的层（{names}）：它每次调用都会在 CPU 上以新的随机权重重新创建，"
            "`.to()` 不会移动它，任何优化器也不会训练它。请在 `__init__` 里构造它。",
        },
        f"ch09.{exercise}.shape": {
            "en": "the output has shape {got}; the old part gives {want}.",
            "zh": "输出的形状是 {got}；原来的模块给出的是 {want}。",
        },
        f"ch09.{exercise}.values": {
            "en": f"with the old `{old}`'s weights loaded, `{cls}` gives other numbers than `{old}`: fix the device, "
            "not what the part computes.",
            "zh": f"加载了旧 `{old}` 的权重之后，`{cls}` 算出的数和 `{old}` 不一样：要修的是设备，"
            "不是这个模块的计算。",
        },
    }


messages.add(_part_messages("ex1", "FixedEmbed", "Embed", "vocab, dim, max_len"))
messages.add(_part_messages("ex2", "FixedAttention", "Attention", "dim, heads"))

messages.add(
    {
        # exercise 1
        "ch09.ex1.ok": {
            "en": "The position table moves with the model, stays out of the state_dict, and the old weights load.",
            "zh": "位置表会随模型移动，不进入 state_dict，旧权重也能照常加载。",
        },
        "ch09.ex1.hint1": {
            "en": "The locator named `embed`: `self.pos` is a plain tensor attribute, and `model.to(device)` moves "
            "only parameters and buffers.",
            "zh": "定位器点名的是 `embed`：`self.pos` 是普通张量属性，而 `model.to(device)` 只移动参数和缓冲区。",
        },
        "ch09.ex1.hint2": {
            "en": "A buffer moves with the model: `self.register_buffer(name, tensor)`. The checkpoint has no "
            "`embed.pos` key, so a buffer saved in the state_dict would make `load_state_dict` fail.",
            "zh": "缓冲区会随模型移动：`self.register_buffer(name, tensor)`。检查点里没有 `embed.pos` 这个键，"
            "所以一个会存进 state_dict 的缓冲区会让 `load_state_dict` 失败。",
        },
        "ch09.ex1.hint3": {
            "en": "`self.register_buffer(\"pos\", sinusoids(max_len, dim), persistent=____)`: should the table "
            "be saved in the state_dict, when the checkpoint was made without it?",
            "zh": "`self.register_buffer(\"pos\", sinusoids(max_len, dim), "
            "persistent=____)`：检查点里本来就没有这张表，它还应该存进 state_dict 吗？",
        },
        "ch09.ex1.solution": _both(FIXED_EMBED_SOLUTION),
        # exercise 2
        "ch09.ex2.ok": {
            "en": "The mask is born where the scores are, whatever that device is, and the old weights load.",
            "zh": "掩码创建在分数所在的设备上，无论那是哪个设备；旧权重也能照常加载。",
        },
        "ch09.ex2.hint1": {
            "en": "The locator reported a tensor made inside `forward`: which line of `Attention.forward` makes a "
            "tensor without saying where?",
            "zh": "定位器报告了一个在 `forward` 里创建的张量：`Attention.forward` 的哪一行创建张量时没有说放在哪里？",
        },
        "ch09.ex2.hint2": {
            "en": "`torch.ones(steps, steps, dtype=torch.bool)` is born on the CPU whatever device the model is on. "
            "Decide which device you meant: the scores'.",
            "zh": "`torch.ones(steps, steps, dtype=torch.bool)` 无论模型在哪个设备上，都会创建在 CPU 上。"
            "先想清楚你要的是哪个设备：分数所在的那个。",
        },
        "ch09.ex2.hint3": {
            "en": "`mask = torch.ones(steps, steps, dtype=torch.bool, device=____).triu(1)`.",
            "zh": "`mask = torch.ones(steps, steps, dtype=torch.bool, device=____).triu(1)`。",
        },
        "ch09.ex2.solution": _both(FIXED_ATTENTION_SOLUTION),
        # exercise 3
        "ch09.ex3.todo": {
            "en": "fill in `resume` (it still returns `____`).",
            "zh": "请补全 `resume`（它现在还返回 `____`）。",
        },
        "ch09.ex3.not_function": {
            "en": "`resume` should be a function `resume(path, device)`.",
            "zh": "`resume` 应该是一个函数：`resume(path, device)`。",
        },
        "ch09.ex3.raised": {
            "en": "`resume(path, {device})` raised an error: {error}",
            "zh": "`resume(path, {device})` 报错：{error}",
        },
        "ch09.ex3.not_pair": {
            "en": "`resume` should return `(model, optimizer)`.",
            "zh": "`resume` 应当返回 `(model, optimizer)`。",
        },
        "ch09.ex3.not_adam": {
            "en": "the optimizer is a {got}; the checkpoint holds Adam's state: resume with the optimizer that "
            "wrote it.",
            "zh": "优化器是 {got}；检查点里存的是 Adam 的状态：请用写下它的那个优化器来恢复。",
        },
        "ch09.ex3.other_parameters": {
            "en": "the optimizer does not hold the returned model's parameters, so it would update other tensors. "
            "Moving a model can replace its parameter objects (it does for `meta`, which stands in for a GPU "
            "here, and on every device with `torch.__future__.set_overwrite_module_params_on_conversion(True)`): "
            "build the optimizer after `model.to(device)`.",
            "zh": "优化器持有的不是返回的这个模型的参数，所以它更新的会是别的张量。移动模型可能会换掉参数对象"
            "（移到这里代替 GPU 的 `meta` 时就会换掉；开启 "
            "`torch.__future__.set_overwrite_module_params_on_conversion(True)` 后在任何设备上都会）："
            "请在 `model.to(device)` 之后再构造优化器。",
        },
        "ch09.ex3.model_device": {
            "en": "for `resume(path, {device})` the parameter `{name}` is not on {device}.",
            "zh": "调用 `resume(path, {device})` 后，参数 `{name}` 不在 {device} 上。",
        },
        "ch09.ex3.no_state": {
            "en": "the optimizer's saved state (Adam's running averages) was not loaded.",
            "zh": "优化器保存的状态（Adam 的滑动平均）没有加载进来。",
        },
        "ch09.ex3.state_device": {
            "en": "`optimizer.state[{name}][\"{key}\"]` is on {found}, not on {device}: Adam's next `step()` would "
            "fail there. What decides where `load_state_dict` puts the state?",
            "zh": "`optimizer.state[{name}][\"{key}\"]` 在 {found} 上，而不在 {device} 上：Adam 的下一次 `step()` "
            "会在那里出错。`load_state_dict` 是根据什么决定把状态放在哪里的？",
        },
        "ch09.ex3.weights": {
            "en": "the model's weights are not the checkpoint's.",
            "zh": "模型的权重不是检查点里的那些。",
        },
        "ch09.ex3.no_step": {
            "en": "one training step with the returned optimizer changed no parameter.",
            "zh": "用返回的优化器训练一步之后，没有任何参数发生变化。",
        },
        "ch09.ex3.ok": {
            "en": "The fixed model, its parameters and Adam's state all land on the device you ask for, and a step "
            "trains it.",
            "zh": "修好的模型、它的参数和 Adam 的状态都落在你指定的设备上，训练一步也确实在更新它。",
        },
        "ch09.ex3.hint1": {
            "en": "The audit listed optimizer state on the CPU. `Optimizer.load_state_dict` puts each state tensor "
            "on its parameter's device at the moment you call it; `model.to()` later does not move it.",
            "zh": "审计列出了留在 CPU 上的优化器状态。`Optimizer.load_state_dict` 在你调用它的那一刻，"
            "把每个状态张量放到对应参数所在的设备上；之后的 `model.to()` 不会再移动它。",
        },
        "ch09.ex3.hint2": {
            "en": "Fix the order, not the symptom: move the model first, then build the optimizer on its parameters, "
            "then load both states. Use `build_model()`, which has your two fixed parts.",
            "zh": "修的是顺序，不是症状：先移动模型，再用它的参数构造优化器，最后加载两份状态。"
            "模型请用 `build_model()`，里面是你修好的两个部件。",
        },
        "ch09.ex3.hint3": {
            "en": "`model = build_model().to(____)`; `optimizer = torch.optim.Adam(____, lr=3e-3)`; then "
            "`model.load_state_dict(...)` and `optimizer.load_state_dict(...)`; return `model, optimizer`.",
            "zh": "`model = build_model().to(____)`；`optimizer = torch.optim.Adam(____, lr=3e-3)`；然后 "
            "`model.load_state_dict(...)` 和 `optimizer.load_state_dict(...)`；返回 `model, optimizer`。",
        },
        "ch09.ex3.solution": _both(RESUME_SOLUTION),
    }
)
