"""The catalogue of `devicelab lint`'s rules: each has a code, a one-line message in both languages, a summary and
its chapter. The rules themselves are in rules/, one module each."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One mistake the linter recognises, and the chapter that teaches its fix."""

    code: str
    chapter: str
    message: dict[str, str]
    fixable: bool = False
    summary: dict[str, str] | None = None  # what it finds, without the finding's own words (SARIF, --list-rules)
    # a preview rule runs only when selected by its full code (`--select DL506`): what it finds is often real, but
    # on the projects it was measured on it also flags too much that is not (tests/lint/realworld/README.md)
    preview: bool = False


# DL000's reasons: why a file (or a notebook cell) was not checked. Each finding names one, with its words.
REASONS: dict[str, dict[str, str]] = {
    "open": {"en": "the file cannot be opened ({error})", "zh": "无法打开这个文件（{error}）"},
    "encoding": {"en": "it is not text in the encoding it declares ({error})",
                 "zh": "它不是按其声明的编码保存的文本（{error}）"},
    "syntax": {"en": "it does not parse as Python ({error})", "zh": "它不能按 Python 语法解析（{error}）"},
    "nesting": {"en": "an expression is nested too deeply to be read", "zh": "其中有表达式嵌套太深，无法读取"},
    "json": {"en": "it is not a notebook: not valid JSON ({error})", "zh": "它不是笔记本：不是合法的 JSON（{error}）"},
    "no_cells": {"en": "a notebook without a list of cells (its cells are a JSON {kind})",
                 "zh": "笔记本里没有单元格列表（它的 cells 是 JSON {kind}）"},
    "bad_cell": {"en": "cell {cell} is not a notebook cell (a JSON {kind}); the other cells were checked",
                 "zh": "第 {cell} 个单元格不是笔记本单元格（而是 JSON {kind}）；其余单元格已检查"},
    "bad_source": {"en": "the source of cell {cell} is neither text nor a list of lines; the other cells were checked",
                   "zh": "第 {cell} 个单元格的源码既不是文本，也不是由行组成的列表；其余单元格已检查"},
}

# The variants of one rule's message: a finding's "variant" names one, filled into the message's {variant}.
VARIANTS: dict[str, dict[str, dict[str, str]]] = {
    "DL505": {
        "meets": {"en": "which then meets `{other}` (`{how}`), where the model is",
                  "zh": "随后却与模型所在设备上的 `{other}` 一起运算（`{how}`）"},
        "returned": {"en": "which is filled from the model's tensors and then returned",
                     "zh": "它由模型的张量填充，然后被返回"},
    },
    "DL506": {
        "meets": {"en": "which then meets `{other}`, one of the tensors this function is given (`{how}`)",
                  "zh": "随后却与本函数收到的张量 `{other}` 一起运算（`{how}`）"},
        "returned": {"en": "which is filled from the tensors this function is given and then returned",
                     "zh": "它由本函数收到的张量填充，然后被返回"},
    },
    "DL106": {
        "current_gpu": {
            "en": "{call}(...).cuda() under `if ....is_cuda:` goes to the current GPU (cuda:0 unless "
                  "torch.cuda.set_device says otherwise), not to the GPU `{other}` is on",
            "zh": "`if ....is_cuda:` 之下的 {call}(...).cuda() 去的是当前 GPU（除非 torch.cuda.set_device "
                  "另有指定，否则就是 cuda:0），而不是 `{other}` 所在的那块 GPU"},
        "named": {
            "en": "{call}(...) is sent to CUDA by name, while `{other}`, one of the tensors this function is given "
                  "(`{how}`), is wherever its caller put it: on the CPU (no GPU, or a model kept on the CPU) or on "
                  "another GPU (one process per GPU)",
            "zh": "{call}(...) 按名字被送到了 CUDA 上，而本函数收到的张量 `{other}`（`{how}`）在调用者放的地方："
                  "可能在 CPU 上（没有 GPU，或者模型留在 CPU 上），也可能在另一块 GPU 上（每个进程一块 GPU）"},
    },
}

RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule("DL000", "tools", {
            "en": "not checked: {reason}",
            "zh": "未检查：{reason}",
        }, summary={"en": "a file (or a notebook cell) that cannot be read or parsed, so it was not checked",
                    "zh": "无法读取或解析、因而没有检查的文件（或笔记本单元格）"}),
        Rule("DL101", "01-devices", {
            "en": "the tensor returned by .{method}() is thrown away: Tensor.{method}() moves nothing in place, "
                  "assign it ({name} = {name}.{method}(...))",
            "zh": ".{method}() 返回的张量被丢掉了：Tensor.{method}() 不会原地移动，请把结果赋回去"
                  "（{name} = {name}.{method}(...)）",
        },
            summary={"en": "`x.to(device)` / `x.cuda()` on a tensor, the result thrown away",
                     "zh": "对张量调用 `x.to(device)` / `x.cuda()`，结果却被丢掉"}),
        Rule("DL102", "01-devices", {
            "en": "{call} on a tensor that may live on the GPU: NumPy and Matplotlib read CPU memory only; "
                  "call .cpu() first (.detach().cpu().numpy())",
            "zh": "对可能在 GPU 上的张量调用了 {call}：NumPy 和 Matplotlib 只能读取 CPU 内存；"
                  "先调用 .cpu()（.detach().cpu().numpy()）",
        },
            summary={"en": "a tensor on the device handed to NumPy or Matplotlib (`.numpy()`, `np.array(t)`, "
                           "`plt.plot(t)`) without `.cpu()`",
                     "zh": "把设备上的张量交给 NumPy 或 Matplotlib（`.numpy()`、`np.array(t)`、`plt.plot(t)`），"
                           "却没有先 `.cpu()`"}),
        Rule("DL103", "01-devices", {
            "en": "{call} needs CUDA, and this script never checks that there is one: on a laptop, a CPU runtime "
                  "or a Mac it stops here; pick the device "
                  "(device = \"cuda\" if torch.cuda.is_available() else \"cpu\") and use .to(device)",
            "zh": "{call} 需要 CUDA，而这个脚本从不检查有没有 CUDA：在笔记本电脑、CPU 运行时或 Mac 上会在这里停下；"
                  "请先选择设备（device = \"cuda\" if torch.cuda.is_available() else \"cpu\"），再用 .to(device)",
        },
            summary={"en": "`.cuda()` or `map_location=\"cuda\"` in a script that never checks whether CUDA is "
                           "available",
                     "zh": "从不检查 CUDA 是否可用的脚本里出现 `.cuda()` 或 `map_location=\"cuda\"`"}),
        Rule("DL301", "03-embedding", {
            "en": "`{name}` is still on the CPU here, while the model (or the other tensor) is on the device: "
                  "move inputs and labels with the model ({name} = {name}.to(device))",
            "zh": "`{name}` 此处仍在 CPU 上，而模型（或另一个张量）在设备上：输入和标签都要随模型移动"
                  "（{name} = {name}.to(device)）",
        },
            summary={"en": "a batch left on the CPU fed to a moved model, or to a loss with tensors on the device",
                     "zh": "留在 CPU 上的批次被送进已移动的模型，或与设备上的张量一起送进损失函数"}),
        Rule("DL104", "01-devices", {
            "en": "{call} runs whatever the device: the move just above it is guarded (if {test}:), this one is "
                  "not, so without CUDA it stops here, or it puts this tensor somewhere else than the other one; "
                  "move it under the same condition, or pick the device once and use .to(device)",
            "zh": "{call} 不管有没有设备都会执行：上一行的移动有条件保护（if {test}:），这一行却没有，所以没有 CUDA 时"
                  "程序会在这里停下，或者把这个张量放到与另一个张量不同的地方；请把它放进同一个条件里，"
                  "或者先选定设备，再用 .to(device)",
        },
            summary={"en": "a `.cuda(...)` move right after an `if` about the device that guards the same move of "
                           "another tensor",
                     "zh": "紧跟在一个关于设备的 `if` 之后、却没有同样受它保护的 `.cuda(...)` 移动"}),
        Rule("DL105", "01-devices", {
            "en": "this branch of the device choice moves {moved} but not {missing}, which another branch moves: "
                  "here {missing} stays where it was and meets tensors on another device; move the same tensors "
                  "in every branch, or pick the device in the if and move them all after it with .to(device)",
            "zh": "设备选择的这个分支移动了 {moved}，却没有移动 {missing}，而别的分支会移动它：在这里 {missing} "
                  "留在原处，会与另一设备上的张量相遇；请在每个分支里移动同样的张量，或者在 if 里只选定设备，"
                  "之后再用 .to(device) 统一移动",
        },
            summary={"en": "the branches of an `if` / `elif` about the device move different tensors",
                     "zh": "关于设备的 `if` / `elif` 的各个分支移动了不同的张量"}),
        Rule("DL106", "05-inside", {
            "en": "{variant}; the two meet on different devices: make it where the inputs are "
                  "(device={other}.device, or .to({other}.device))",
            "zh": "{variant}；两者会在不同设备上相遇：请在输入所在的设备上创建它"
                  "（device={other}.device，或 .to({other}.device)）",
        },
            summary={"en": "a tensor sent to a device named in the code (`.cuda()`, `device=\"cuda\"`, under "
                           "`if x.is_cuda:`) that meets the tensors a function is given",
                     "zh": "按代码里写死的设备（`.cuda()`、`device=\"cuda\"`、`if x.is_cuda:` 之下）创建的张量，"
                           "与函数收到的张量相遇"}, preview=True),
        Rule("DL201", "02-dataparallel", {
            "en": "nn.DataParallel wraps `{name}`, which is never moved to the GPU: with two GPUs or more its weights "
                  "stay on the CPU; move it first ({name}.to(device)), then wrap",
            "zh": "nn.DataParallel 包装的 `{name}` 从未移到 GPU 上：有两块及以上 GPU 时它的权重留在 CPU 上；"
                  "先移动（{name}.to(device)），再包装",
        },
            summary={"en": "`nn.DataParallel(model)` around a model that is never moved to the GPU",
                     "zh": "`nn.DataParallel(model)` 包装了一个从未移到 GPU 的模型"}),
        Rule("DL501", "05-inside", {
            "en": "{call}(...) in forward without device=: born on the CPU when the model is on the GPU; "
                  "pass device=x.device, or make it from the input (x.new_zeros(...), torch.zeros_like(x))",
            "zh": "forward 里的 {call}(...) 没有 device=：模型在 GPU 上时它仍创建在 CPU 上；"
                  "请传入 device=x.device，或者从输入构造（x.new_zeros(...)、torch.zeros_like(x)）",
        }, fixable=True,
            summary={"en": "a tensor factory in `forward` (or a method it calls) without `device=`",
                     "zh": "`forward`（或它调用的方法）里没有 `device=` 的张量工厂函数"}),
        Rule("DL502", "05-inside", {
            "en": "self.{name} is a plain tensor attribute used in forward: model.to() does not move it; "
                  "use self.register_buffer(\"{name}\", ...) (or nn.Parameter if it is trained)",
            "zh": "self.{name} 是 forward 里用到的普通张量属性：model.to() 不会移动它；"
                  "请用 self.register_buffer(\"{name}\", ...)（要训练的话用 nn.Parameter）",
        },
            summary={"en": "a tensor kept as a plain attribute in `__init__` and used in `forward`",
                     "zh": "在 `__init__` 里存成普通属性、又在 `forward` 里使用的张量"}),
        Rule("DL503", "05-inside", {
            "en": "{call}(...) is built inside forward: its weights are born on the CPU at every call and never "
                  "trained; build it once in __init__",
            "zh": "{call}(...) 是在 forward 里构造的：每次调用它的权重都重新创建在 CPU 上，而且从不被训练；"
                  "请在 __init__ 里构造一次",
        },
            summary={"en": "a layer with parameters or buffers built inside `forward`",
                     "zh": "在 `forward` 里构造的带参数或缓冲区的层"}),
        Rule("DL504", "05-inside", {
            "en": "{call}(...) without device= makes a CPU tensor, which then meets `{other}` on the device; "
                  "make it there (device={other}.device), or from it ({other}.new_zeros(...), torch.zeros_like)",
            "zh": "没有 device= 的 {call}(...) 创建的是 CPU 张量，随后却与设备上的 `{other}` 一起运算；"
                  "请直接在那里创建（device={other}.device），或从它构造（{other}.new_zeros(...)、torch.zeros_like）",
        }, fixable=True,
            summary={"en": "a tensor factory without `device=` in a function (a loss, a metric, NMS, validation) "
                           "whose result meets a tensor on the device",
                     "zh": "函数（损失、指标、NMS、验证）里没有 `device=` 的张量工厂函数，"
                           "其结果与设备上的张量一起运算"}),
        Rule("DL505", "05-inside", {
            "en": "{call}(...) without device= makes a CPU tensor, {variant}: this method works only while the "
                  "model stays on the CPU; make it where they are (device={other}.device, "
                  "{other}.new_zeros(...), torch.zeros_like({other}))",
            "zh": "没有 device= 的 {call}(...) 创建的是 CPU 张量，{variant}：只有模型留在 CPU 上时，"
                  "这个方法才能正常工作；请在它们所在的设备上创建（device={other}.device、"
                  "{other}.new_zeros(...)、torch.zeros_like({other})）",
        }, fixable=True,
            summary={"en": "a tensor factory without `device=` in a method of a model or an optimizer whose result "
                           "meets the model's tensors or its inputs",
                     "zh": "模型或优化器的方法里没有 `device=` 的张量工厂函数，其结果与模型自己的张量或它的输入相遇"}),
        Rule("DL506", "05-inside", {
            "en": "{call}(...) without device= makes a CPU tensor, {variant}: this library function works only "
                  "while its callers keep their tensors on the CPU; make it where they are (device={other}.device, "
                  "{other}.new_zeros(...), torch.zeros_like({other}))",
            "zh": "没有 device= 的 {call}(...) 创建的是 CPU 张量，{variant}：只有调用者把张量留在 CPU 上时，"
                  "这个库函数才能正常工作；请在它们所在的设备上创建（device={other}.device、"
                  "{other}.new_zeros(...)、torch.zeros_like({other})）",
        }, fixable=True, preview=True,
            summary={"en": "a tensor factory without `device=` in a function of a library module (not a model's or "
                           "an optimizer's method) whose result meets the tensors it is given",
                     "zh": "库模块的函数（不是模型或优化器的方法）里没有 `device=` 的张量工厂函数，"
                           "其结果与它收到的张量相遇"}),
        Rule("DL601", "06-multigpu", {
            "en": "DistributedDataParallel(..., device_ids={ids}) wraps `{name}`, which is still on the CPU: DDP "
                  "raises; put each process's model on its own GPU first (torch.cuda.set_device(local_rank); "
                  "{name}.to(local_rank)), then wrap",
            "zh": "DistributedDataParallel(..., device_ids={ids}) 包装的 `{name}` 仍在 CPU 上：DDP 会直接报错；"
                  "请先把每个进程的模型放到它自己的 GPU 上"
                  "（torch.cuda.set_device(local_rank)；{name}.to(local_rank)），再包装",
        },
            summary={"en": "`DistributedDataParallel(model, device_ids=[...])` around a model still on the CPU",
                     "zh": "`DistributedDataParallel(model, device_ids=[...])` 包装了仍在 CPU 上的模型"}),
        Rule("DL602", "06-multigpu", {
            "en": "`{name}` was moved with a bare .cuda() / \"cuda\", the current GPU: cuda:0 in every process, "
                  "since this script never calls torch.cuda.set_device(...); device_ids={ids} names another one. "
                  "Call torch.cuda.set_device(local_rank) first, or move it with {name}.to(local_rank)",
            "zh": "`{name}` 是用不带参数的 .cuda() / \"cuda\" 移动的，也就是当前 GPU：这个脚本从不调用 "
                  "torch.cuda.set_device(...)，所以每个进程都是 cuda:0；而 device_ids={ids} 指的是另一块。"
                  "请先调用 torch.cuda.set_device(local_rank)，或者用 {name}.to(local_rank) 移动",
        },
            summary={"en": "a DDP model moved to the current GPU (`.cuda()`) in a script that never calls "
                           "`torch.cuda.set_device(local_rank)`",
                     "zh": "在从不调用 `torch.cuda.set_device(local_rank)` 的脚本里，"
                           "DDP 模型被移到当前 GPU（`.cuda()`）"}),
        Rule("DL603", "06-multigpu", {
            "en": "`{name}` is on the CPU, and {call} under the NCCL backend takes GPU tensors only: make it on "
                  "the process's GPU (device=...) or move it ({name}.to(device)) first",
            "zh": "`{name}` 在 CPU 上，而 NCCL 后端下的 {call} 只接受 GPU 张量：请在本进程的 GPU 上创建它"
                  "（device=...），或者先移动它（{name}.to(device)）",
        },
            summary={"en": "a CPU tensor handed to a collective (`dist.all_reduce`, `broadcast`, `all_gather`) "
                           "under the NCCL backend",
                     "zh": "在 NCCL 后端下把 CPU 张量交给集合通信（`dist.all_reduce`、`broadcast`、`all_gather`）"}),
        Rule("DL604", "06-multigpu", {
            "en": "the NCCL process group starts, and this program never picks each process's GPU: the current GPU "
                  "of every process is cuda:0, so NCCL's communicators and barriers (and any bare .cuda()) land on "
                  "GPU 0 too, which fills it or hangs; call torch.cuda.set_device(local_rank) first, or pass "
                  "device_id=torch.device(\"cuda\", local_rank)",
            "zh": "NCCL 进程组已经启动，而这个程序从不为每个进程指定它自己的 GPU：每个进程的当前 GPU 都是 cuda:0，"
                  "NCCL 的通信器、barrier（以及任何不带参数的 .cuda()）也都落在 GPU 0 上，可能把它占满或让程序卡住；"
                  "请先调用 torch.cuda.set_device(local_rank)，或者传入 device_id=torch.device(\"cuda\", local_rank)",
        },
            summary={"en": "`init_process_group(\"nccl\")` in a program that never calls `torch.cuda.set_device` for "
                           "each process",
                     "zh": "从不为各进程调用 `torch.cuda.set_device` 的程序里出现 `init_process_group(\"nccl\")`"}),
        Rule("DL701", "07-checkpoints", {
            "en": "torch.load without map_location: a checkpoint saved on a GPU fails to load on a machine "
                  "without one; pass map_location (\"cpu\" or your device)",
            "zh": "torch.load 没有 map_location：在 GPU 上保存的检查点，到了没有 GPU 的机器上就加载失败；"
                  "请传入 map_location（\"cpu\" 或你的设备）",
        }, fixable=True,
            summary={"en": "`torch.load` without `map_location`",
                     "zh": "没有 `map_location` 的 `torch.load`"}),
        Rule("DL702", "07-checkpoints", {
            "en": "{optimizer}.load_state_dict(...) before {model}.to(...): the optimizer state is put on the "
                  "parameters' device at load time and stays behind; move the model, build the optimizer, then load",
            "zh": "{optimizer}.load_state_dict(...) 在 {model}.to(...) 之前：优化器状态在加载时放到参数所在的设备上，"
                  "之后会被落下；先移动模型、再构造优化器，最后加载",
        },
            summary={"en": "`optimizer.load_state_dict(...)` before `model.to(device)`",
                     "zh": "`optimizer.load_state_dict(...)` 在 `model.to(device)` 之前"}),
        Rule("DL801", "08-amp", {
            "en": "{call} is deprecated (FutureWarning since PyTorch 2.4): use {new}",
            "zh": "{call} 已弃用（PyTorch 2.4 起发出 FutureWarning）：请改用 {new}",
        }, fixable=True,
            summary={"en": "`torch.cuda.amp.autocast` / `GradScaler` (deprecated spellings)",
                     "zh": "`torch.cuda.amp.autocast` / `GradScaler`（已弃用的写法）"}),
    )
}
