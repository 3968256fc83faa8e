"""Chapter 06: several GPUs — DataParallel's rules, and DistributedDataParallel's device per rank."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from .. import messages
from ..checks import NOT_ATTEMPTED, Blank, Exercise, Verdict, correct, incorrect
from ..checks import short_error as _short
from ..ddp import HEADER, module_source

SECONDS = 20.0  # the checks need well under a second; more means the learner's code loops
PRETEND_GPUS = 4  # how many GPUs the checks pretend a machine has
CPU_DEVICE_IDS = "device_ids and output_device arguments only work with"



def as_written(function: object, name: str) -> Callable[..., object] | None:
    """`function` rebuilt from its source the way the proof's ranks import it (devicelab.ddp.HEADER first).

    A rank is a fresh Python process: it sees the function's text and HEADER's imports, not the notebook's
    other variables. Judging this rebuilt function makes a check fail exactly when the torchrun job would.
    """
    try:
        source = module_source(function)
    except (OSError, TypeError):
        return None
    namespace: dict[str, object] = {"__name__": "ddp_answers"}
    try:
        exec(compile(source, "<ddp_answers>", "exec"), namespace)  # noqa: S102 - the learner's own code
    except Exception:  # noqa: BLE001 - the text alone does not run (it needed the notebook around it)
        return None
    rebuilt = namespace.get(name)
    return rebuilt if callable(rebuilt) else None


class _GpuStandIn:
    """What the checks pretend about CUDA: available or not, how many GPUs, and which one is current."""

    def __init__(self, available: bool, count: int = PRETEND_GPUS, current: int = 0) -> None:
        self.available, self.count, self.current = available, count, current
        self.set_calls: list[int] = []

    def set_device(self, device: object) -> None:
        index = device if isinstance(device, int) else torch.device(device).index  # type: ignore[arg-type]
        self.set_calls.append(-1 if index is None else int(index))
        if index is not None:
            self.current = int(index)

    def resolve(self, device: torch.device) -> int | None:
        """The GPU number a device means here: its index, or the current GPU for a bare "cuda"."""
        if device.type != "cuda":
            return None
        return self.current if device.index is None else device.index


@contextmanager
def pretend_cuda(stand_in: _GpuStandIn) -> Iterator[_GpuStandIn]:
    """Make torch.cuda (and torch.accelerator) answer as `stand_in` says, for the code inside only."""
    accelerator = getattr(torch, "accelerator", None)
    patches: list[tuple[object, str, object]] = [
        (torch.cuda, "is_available", lambda: stand_in.available),
        (torch.cuda, "device_count", lambda: stand_in.count if stand_in.available else 0),
        (torch.cuda, "set_device", stand_in.set_device),
        (torch.cuda, "current_device", lambda: stand_in.current),
    ]
    if accelerator is not None:
        cuda = torch.device("cuda") if stand_in.available else None
        for name, value in (
            ("is_available", lambda: stand_in.available),
            ("device_count", lambda: stand_in.count if stand_in.available else 0),
            ("current_accelerator", lambda check_available=False: cuda),
            ("set_device_index", stand_in.set_device),
            ("set_device_idx", stand_in.set_device),
            ("current_device_index", lambda: stand_in.current),
            ("current_device_idx", lambda: stand_in.current),
        ):
            if hasattr(accelerator, name):
                patches.append((accelerator, name, value))
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, value in patches:
            setattr(owner, name, value)
        yield stand_in
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


# --- exercise 1: rank_device ------------------------------------------------------------------------------


class RankDevice(Exercise):
    """Exercise 1: rank_device(local_rank) — GPU number local_rank, made current; the CPU without CUDA."""

    name = "ex1"
    reads = ("rank_device",)
    picks_device = True  # it chooses the device of its rank: nobody hands it one
    hints = ("ch06.ex1.hint1", "ch06.ex1.hint2", "ch06.ex1.hint3")
    solution_key = "ch06.ex1.solution"
    not_attempted_key = "ch06.ex1.todo"
    seconds = SECONDS

    def judge(self, rank_device: object) -> Verdict:
        if not callable(rank_device):
            return incorrect("ch06.ex1.not_function")
        # This machine, as it is: what rank 0 of the proof's job will get.
        try:
            here = rank_device(0)
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            return incorrect("ch06.ex1.raised", error=_short(error))
        if isinstance(here, Blank):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        rebuilt = as_written(rank_device, "rank_device")
        if rebuilt is None:
            return incorrect("ch06.no_source", name="rank_device")
        # A machine without CUDA (a laptop, a Mac: gloo runs on the CPU), then one with 4 GPUs.
        for available, ranks in ((False, (0, 1)), (True, (1, 3, 0))):
            for local_rank in ranks:
                stand_in = _GpuStandIn(available)
                try:
                    with pretend_cuda(stand_in):
                        got = rebuilt(local_rank)
                except NameError:  # it uses something the notebook defined: a rank would not have it
                    return incorrect("ch06.no_source", name="rank_device")
                except Exception as error:  # noqa: BLE001
                    return incorrect("ch06.ex1.raised", error=_short(error))
                if not isinstance(got, torch.device):
                    return incorrect("ch06.ex1.not_device", got=type(got).__name__)
                if not available:
                    if got.type != "cpu":
                        return incorrect("ch06.ex1.no_cuda_not_cpu", got=got)
                    if stand_in.set_calls:
                        return incorrect("ch06.ex1.set_device_without_cuda")
                    continue
                if got.type != "cuda":
                    return incorrect("ch06.ex1.gpus_not_cuda", got=got, rank=local_rank)
                index = stand_in.resolve(got)
                if index != local_rank:
                    return incorrect("ch06.ex1.wrong_gpu", rank=local_rank, got=f"cuda:{index}")
                if local_rank not in stand_in.set_calls:
                    return incorrect("ch06.ex1.no_set_device", rank=local_rank)
        want = "cuda" if torch.cuda.is_available() else "cpu"
        if not isinstance(here, torch.device) or here.type != want:
            return incorrect("ch06.ex1.not_device", got=type(here).__name__)
        return correct("ch06.ex1.ok")


# --- exercise 2: wrap_model -------------------------------------------------------------------------------


class _SpyNet(nn.Module):
    """Stands in for a model on a machine with GPUs: records where `.to()` / `.cuda()` send it, stays put."""

    def __init__(self, log: list[tuple[str, object]]) -> None:
        super().__init__()
        self.body = nn.Linear(4, 2)
        self.log = log

    def to(self, *args: object, **kwargs: object) -> _SpyNet:  # type: ignore[override]
        device = torch._C._nn._parse_to(*args, **kwargs)[0]
        if device is not None:
            self.log.append(("move", torch.device(device)))
        return self

    def cuda(self, device: object = None) -> _SpyNet:  # type: ignore[override]
        self.log.append(("move", torch.device("cuda") if device is None else _cuda(device)))
        return self


def _cuda(device: object) -> torch.device:
    return torch.device("cuda", device) if isinstance(device, int) else torch.device(device)  # type: ignore[arg-type]


@contextmanager
def recording_ddp(log: list[tuple[str, object]]) -> Iterator[None]:
    """DistributedDataParallel(...) records its module, device_ids and output_device instead of starting up."""
    own = {name: DistributedDataParallel.__dict__.get(name) for name in ("__init__", "to", "cuda")}

    def fake_init(self: DistributedDataParallel, module: nn.Module, device_ids: object = None,
                  output_device: object = None, *args: object, **kwargs: object) -> None:
        nn.Module.__init__(self)
        self.module = module
        log.append(("ddp", (module, device_ids, output_device)))

    def fake_to(self: DistributedDataParallel, *args: object, **kwargs: object) -> DistributedDataParallel:
        device = torch._C._nn._parse_to(*args, **kwargs)[0]
        if device is not None:
            log.append(("move", torch.device(device)))
        return self

    def fake_cuda(self: DistributedDataParallel, device: object = None) -> DistributedDataParallel:
        log.append(("move", torch.device("cuda") if device is None else _cuda(device)))
        return self

    # The wrapper's own .to()/.cuda() (a move after wrapping) are recorded too, instead of reaching for a GPU.
    DistributedDataParallel.__init__ = fake_init  # type: ignore[method-assign]
    DistributedDataParallel.to = fake_to  # type: ignore[method-assign,assignment]
    DistributedDataParallel.cuda = fake_cuda  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        for name, value in own.items():
            if value is None:
                delattr(DistributedDataParallel, name)
            else:
                setattr(DistributedDataParallel, name, value)


@contextmanager
def process_group() -> Iterator[None]:
    """A one-process gloo group for the code inside, unless the notebook already has a group."""
    created = False
    if not dist.is_initialized():
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        created = True
    try:
        yield
    finally:
        if created and dist.is_initialized():
            dist.destroy_process_group()


def _gpu_number(value: object, stand_in: _GpuStandIn) -> int | None:
    try:
        return stand_in.resolve(_cuda(value))
    except (RuntimeError, TypeError, ValueError):
        return None


class WrapModel(Exercise):
    """Exercise 2: wrap_model(model, device) — move the model to the rank's device, then wrap it in DDP."""

    name = "ex2"
    reads = ("wrap_model",)
    hints = ("ch06.ex2.hint1", "ch06.ex2.hint2", "ch06.ex2.hint3")
    solution_key = "ch06.ex2.solution"
    not_attempted_key = "ch06.ex2.todo"
    seconds = SECONDS

    def judge(self, wrap_model: object) -> Verdict:
        if not callable(wrap_model):
            return incorrect("ch06.ex2.not_function")
        # A real DistributedDataParallel on the CPU, in a one-process gloo group: what the proof's ranks do here.
        torch.manual_seed(0)
        model = nn.Linear(4, 2)
        try:
            with process_group():
                wrapped = wrap_model(model, torch.device("cpu"))
                if isinstance(wrapped, Blank):
                    return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
                if isinstance(wrapped, nn.DataParallel):
                    return incorrect("ch06.ex2.dataparallel")
                if not isinstance(wrapped, DistributedDataParallel):
                    return incorrect("ch06.ex2.not_ddp", got=type(wrapped).__name__)
                if wrapped.module is not model:
                    return incorrect("ch06.ex2.other_module")
                out = wrapped(torch.ones(3, 4))
        except Exception as error:  # noqa: BLE001 - the learner's code may fail any way
            if CPU_DEVICE_IDS in str(error):
                return incorrect("ch06.ex2.cpu_device_ids", error=str(error)[:300])
            return incorrect("ch06.ex2.raised", error=_short(error))
        if not isinstance(out, torch.Tensor) or tuple(out.shape) != (3, 2):
            return incorrect("ch06.ex2.not_ddp", got=type(wrapped).__name__)
        rebuilt = as_written(wrap_model, "wrap_model")
        if rebuilt is None:
            return incorrect("ch06.no_source", name="wrap_model")
        # A rank on a machine with GPUs: local rank 1, its GPU already made current (exercise 1).
        log: list[tuple[str, object]] = []
        stand_in = _GpuStandIn(True, current=1)
        spy = _SpyNet(log)
        try:
            with pretend_cuda(stand_in), recording_ddp(log):
                wrapped = rebuilt(spy, torch.device("cuda", 1))
        except NameError:  # it uses something the notebook defined: a rank would not have it
            return incorrect("ch06.no_source", name="wrap_model")
        except Exception as error:  # noqa: BLE001
            return incorrect("ch06.ex2.raised", error=_short(error))
        wraps = [entry for kind, entry in log if kind == "ddp"]
        if not wraps or not isinstance(wrapped, DistributedDataParallel):
            return incorrect("ch06.ex2.not_ddp", got=type(wrapped).__name__)
        first_wrap = next(i for i, (kind, _) in enumerate(log) if kind == "ddp")
        moves = [device for kind, device in log[:first_wrap] if kind == "move"]
        if not moves:
            late = any(kind == "move" for kind, _ in log[first_wrap:])
            return incorrect("ch06.ex2.moved_after_wrap" if late else "ch06.ex2.not_moved")
        where = stand_in.resolve(moves[-1])  # type: ignore[arg-type]
        if where != 1:
            return incorrect("ch06.ex2.wrong_gpu", got="cpu" if where is None else f"cuda:{where}")
        module, device_ids, output_device = wraps[0]  # type: ignore[misc]
        if module is not spy:
            return incorrect("ch06.ex2.other_module")
        if device_ids:
            ids = list(device_ids) if isinstance(device_ids, (list, tuple)) else [device_ids]
            if len(ids) != 1 or _gpu_number(ids[0], stand_in) != 1:
                return incorrect("ch06.ex2.wrong_device_ids", got=device_ids)
        if output_device is not None and _gpu_number(output_device, stand_in) != 1:
            return incorrect("ch06.ex2.wrong_device_ids", got=f"output_device={output_device}")
        return correct("ch06.ex2.ok")


EXERCISES = [RankDevice, WrapModel]

RANK_DEVICE_SOLUTION = '''\
def rank_device(local_rank):
    """The device of this rank: GPU number local_rank (made the current GPU), or the CPU without CUDA."""
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)  # "cuda" now means this GPU in this process
        return torch.device("cuda", local_rank)
    return torch.device("cpu")'''

WRAP_MODEL_SOLUTION = '''\
def wrap_model(model, device):
    """Move the model to this rank's device, then wrap it; device_ids only for a model on one GPU."""
    model = model.to(device)
    if device.type == "cuda":
        return DistributedDataParallel(model, device_ids=[device.index])
    return DistributedDataParallel(model)  # a CPU model: no device_ids'''

# What the proof's ranks see before the learner's functions (kept in step with devicelab.ddp).
assert "DistributedDataParallel" in HEADER


def _both(code: str) -> dict[str, str]:
    escaped = code.replace("{", "{{").replace("}", "}}")
    return {"en": escaped, "zh": escaped}


messages.add(
    {
        "ch06.no_source": {
            "en": "`{name}` works here, but not on its own: each rank of the torchrun job is a new Python process "
            "that gets only the text of `{name}` (after `import torch`, `from torch import nn`, "
            "`from torch.nn.parallel import DistributedDataParallel`). Write it as a `def` in its cell, using "
            "nothing else from the notebook.",
            "zh": "`{name}` 在笔记本里能用，但离开笔记本就不行了：torchrun 作业的每个 rank 都是一个新的 Python 进程，"
            "只拿到 `{name}` 的源代码（前面加上 `import torch`、`from torch import nn`、"
            "`from torch.nn.parallel import DistributedDataParallel`）。请在它的单元里用 `def` 定义它，"
            "不要用到笔记本里的其他变量。",
        },
        # exercise 1
        "ch06.ex1.todo": {
            "en": "fill in `rank_device` (it still returns `____`).",
            "zh": "请补全 `rank_device`（它现在还返回 `____`）。",
        },
        "ch06.ex1.not_function": {
            "en": "`rank_device` should be a function `rank_device(local_rank)` that returns a `torch.device`.",
            "zh": "`rank_device` 应该是一个函数 `rank_device(local_rank)`，返回一个 `torch.device`。",
        },
        "ch06.ex1.raised": {
            "en": "`rank_device(local_rank)` raised an error: {error}",
            "zh": "`rank_device(local_rank)` 报错：{error}",
        },
        "ch06.ex1.not_device": {
            "en": "`rank_device` returned a {got}; return a `torch.device` (the script reads its `.type` and "
            "`.index`).",
            "zh": "`rank_device` 返回的是 {got}；请返回一个 `torch.device`（脚本会读取它的 `.type` 和 `.index`）。",
        },
        "ch06.ex1.no_cuda_not_cpu": {
            "en": "on a machine without CUDA, `rank_device` returned {got}. There the job runs its ranks on the CPU "
            "with the gloo backend (on a Mac too): return the CPU.",
            "zh": "在没有 CUDA 的机器上，`rank_device` 返回了 {got}。这时作业的各个 rank 用 gloo 后端在 CPU 上运行"
            "（Mac 上也一样）：请返回 CPU。",
        },
        "ch06.ex1.set_device_without_cuda": {
            "en": "on a machine without CUDA, `rank_device` calls `torch.cuda.set_device`, which fails there: call "
            "it only when CUDA is available.",
            "zh": "在没有 CUDA 的机器上，`rank_device` 调用了 `torch.cuda.set_device`，而它在那里会出错："
            "只在 CUDA 可用时才调用它。",
        },
        "ch06.ex1.gpus_not_cuda": {
            "en": "on a machine with GPUs, local rank {rank} got {got}: with CUDA available, each rank should use "
            "a GPU.",
            "zh": "在有 GPU 的机器上，local rank {rank} 得到的是 {got}：CUDA 可用时，每个 rank 都应当使用一块 GPU。",
        },
        "ch06.ex1.wrong_gpu": {
            "en": "on a machine with 4 GPUs, local rank {rank} got {got}. Each process of the job must use its own "
            "GPU, the one numbered by its local rank; otherwise the ranks pile up on the same GPU.",
            "zh": "在有 4 块 GPU 的机器上，local rank {rank} 得到的是 {got}。作业的每个进程都必须使用自己的 GPU，"
            "也就是编号等于其 local rank 的那块；否则各个 rank 会挤在同一块 GPU 上。",
        },
        "ch06.ex1.no_set_device": {
            "en": "for local rank {rank} the device is right, but the current GPU was never set. Without "
            "`torch.cuda.set_device`, every bare `\"cuda\"` and `.cuda()` in this process still means cuda:0.",
            "zh": "local rank {rank} 的设备对了，但从没设置当前 GPU。不调用 `torch.cuda.set_device` 的话，"
            "这个进程里所有不带编号的 `\"cuda\"` 和 `.cuda()` 指的仍然是 cuda:0。",
        },
        "ch06.ex1.ok": {
            "en": "Each rank gets the GPU of its local rank, made current, and the CPU where there is no CUDA.",
            "zh": "每个 rank 都拿到编号等于其 local rank 的 GPU，并把它设为当前 GPU；没有 CUDA 时则用 CPU。",
        },
        "ch06.ex1.hint1": {
            "en": "torchrun starts one process per GPU and gives each its number on this machine in the "
            "`LOCAL_RANK` environment variable; `rank_device` receives it as `local_rank`.",
            "zh": "torchrun 为每块 GPU 启动一个进程，并通过环境变量 `LOCAL_RANK` 告诉每个进程它在本机上的编号；"
            "`rank_device` 通过参数 `local_rank` 拿到它。",
        },
        "ch06.ex1.hint2": {
            "en": "`torch.device(\"cuda\", local_rank)` is GPU number `local_rank`; "
            "`torch.cuda.set_device(local_rank)` makes it the GPU that a bare `\"cuda\"` means in this process.",
            "zh": "`torch.device(\"cuda\", local_rank)` 就是编号为 `local_rank` 的 GPU；"
            "`torch.cuda.set_device(local_rank)` 让这个进程里不带编号的 `\"cuda\"` 指向它。",
        },
        "ch06.ex1.hint3": {
            "en": "`if torch.cuda.is_available():` then `torch.cuda.set_device(____)` and `return "
            "torch.device(\"cuda\", ____)`; otherwise `return torch.device(____)`, calling nothing from "
            "`torch.cuda`.",
            "zh": "`if torch.cuda.is_available():` 分支里 `torch.cuda.set_device(____)`，再 `return "
            "torch.device(\"cuda\", ____)`；否则 `return torch.device(____)`，不调用 `torch.cuda` "
            "里的任何东西。",
        },
        "ch06.ex1.solution": _both(RANK_DEVICE_SOLUTION),
        # exercise 2
        "ch06.ex2.todo": {
            "en": "fill in `wrap_model` (it still returns `____`).",
            "zh": "请补全 `wrap_model`（它现在还返回 `____`）。",
        },
        "ch06.ex2.not_function": {
            "en": "`wrap_model` should be a function `wrap_model(model, device)`.",
            "zh": "`wrap_model` 应该是一个函数 `wrap_model(model, device)`。",
        },
        "ch06.ex2.raised": {
            "en": "`wrap_model(model, device)` raised an error: {error}",
            "zh": "`wrap_model(model, device)` 报错：{error}",
        },
        "ch06.ex2.cpu_device_ids": {
            "en": "for a model on the CPU, DistributedDataParallel refused the arguments: {error} Give "
            "`device_ids` only when the model is on a GPU.",
            "zh": "对于 CPU 上的模型，DistributedDataParallel 拒绝了这些参数：{error} "
            "只有模型在 GPU 上时才传 `device_ids`。",
        },
        "ch06.ex2.dataparallel": {
            "en": "`wrap_model` returned an `nn.DataParallel`: each rank of a torchrun job is its own process with "
            "its own device; wrap the model in `DistributedDataParallel`.",
            "zh": "`wrap_model` 返回的是 `nn.DataParallel`：torchrun 作业的每个 rank 都是独立的进程，"
            "有自己的设备；请用 `DistributedDataParallel` 包装模型。",
        },
        "ch06.ex2.not_ddp": {
            "en": "`wrap_model` returned a {got}; it should return the model wrapped in `DistributedDataParallel`.",
            "zh": "`wrap_model` 返回的是 {got}；它应当返回用 `DistributedDataParallel` 包装好的模型。",
        },
        "ch06.ex2.not_moved": {
            "en": "on a rank with a GPU, the model was wrapped without being moved to the rank's device: it "
            "stays on the CPU.",
            "zh": "在有 GPU 的 rank 上，模型还没移到该 rank 的设备就被包装了：它仍然留在 CPU 上。",
        },
        "ch06.ex2.moved_after_wrap": {
            "en": "on a rank with a GPU, the model is moved after it was wrapped. DistributedDataParallel "
            "sets itself up for the devices the parameters are on when it is built: move first, then wrap.",
            "zh": "在有 GPU 的 rank 上，模型是在包装之后才移动的。DistributedDataParallel 在构造时就按参数所在的设备"
            "完成了设置：请先移动，再包装。",
        },
        "ch06.ex2.wrong_gpu": {
            "en": "on local rank 1 (device cuda:1), the model was moved to {got}: move it to the `device` given.",
            "zh": "在 local rank 1 上（设备 cuda:1），模型被移到了 {got}：请把它移到传入的 `device` 上。",
        },
        "ch06.ex2.other_module": {
            "en": "the model that was wrapped is not the model given to `wrap_model`.",
            "zh": "被包装的不是传给 `wrap_model` 的那个模型。",
        },
        "ch06.ex2.wrong_device_ids": {
            "en": "on local rank 1 (device cuda:1), DistributedDataParallel got {got}: `device_ids` must name "
            "the one GPU the model is on, or be left out.",
            "zh": "在 local rank 1 上（设备 cuda:1），DistributedDataParallel 收到的是 {got}：`device_ids` "
            "必须只写模型所在的那一块 GPU，或者干脆不传。",
        },
        "ch06.ex2.ok": {
            "en": "The model is moved to the rank's device first, then wrapped, with device_ids only on a GPU.",
            "zh": "模型先移到该 rank 的设备上，再被包装；只有在 GPU 上才传 device_ids。",
        },
        "ch06.ex2.hint1": {
            "en": "Two steps, in this order: move the model to `device`, then wrap it in "
            "`DistributedDataParallel`.",
            "zh": "分两步，顺序不能乱：先把模型移到 `device`，再用 `DistributedDataParallel` 包装它。",
        },
        "ch06.ex2.hint2": {
            "en": "`device_ids=[...]` is for a model on one GPU; for a model on the CPU, DistributedDataParallel "
            "raises if you give it. Look at `device.type`.",
            "zh": "`device_ids=[...]` 是给单块 GPU 上的模型用的；模型在 CPU 上时传了它，"
            "DistributedDataParallel 会报错。看看 `device.type`。",
        },
        "ch06.ex2.hint3": {
            "en": "`model = model.to(device)`; then `if device.type == \"cuda\": return "
            "DistributedDataParallel(model, device_ids=[____])`, and otherwise `return "
            "DistributedDataParallel(____)`.",
            "zh": "`model = model.to(device)`；然后 `if device.type == \"cuda\": return "
            "DistributedDataParallel(model, device_ids=[____])`，否则 `return DistributedDataParallel(____)`。",
        },
        "ch06.ex2.solution": _both(WRAP_MODEL_SOLUTION),
    }
)
