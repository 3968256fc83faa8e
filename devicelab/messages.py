"""The one bilingual message catalogue: every sentence the helper prints, in English and Chinese."""

from __future__ import annotations

LANGUAGES = ("en", "zh")
_state = {"lang": "en"}


def set_language(lang: str) -> None:
    """Choose the language of every message printed from now on ('en' or 'zh')."""
    if lang not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {lang!r}")
    _state["lang"] = lang


def get_language() -> str:
    """The language chosen with set_language (English by default)."""
    return _state["lang"]


def add(entries: dict[str, dict[str, str]]) -> None:
    """Add a chapter's messages to the catalogue; a key may be defined only once."""
    for key, entry in entries.items():
        if key in CATALOGUE:
            raise KeyError(f"message {key!r} is defined twice")
        CATALOGUE[key] = entry


def text(key: str, lang: str | None = None, /, **params: object) -> str:
    """The message `key` in the chosen language, with `params` filled in."""
    entry = CATALOGUE[key]
    return entry[lang or _state["lang"]].format(**params)


CATALOGUE: dict[str, dict[str, str]] = {
    # --- verdicts -------------------------------------------------------------------
    "verdict.not_attempted": {
        "en": "Not attempted yet: {reason}",
        "zh": "还没有作答：{reason}",
    },
    "verdict.incorrect": {"en": "Not yet: {reason}", "zh": "还不对：{reason}"},
    "verdict.correct": {"en": "Correct! {reason}", "zh": "正确！{reason}"},
    "hint.header": {"en": "Hint {level}/{total}:", "zh": "提示 {level}/{total}："},
    "hint.no_more": {
        "en": "That was the last hint. `{name}.solution()` shows one answer.",
        "zh": "提示已经用完。`{name}.solution()` 会给出一种答案。",
    },
    "solution.header": {"en": "One solution:", "zh": "一种解法："},
    "check.untrusted": {
        "en": "the check cannot trust what your code returns: {what}. The checks read PyTorch's own tensors, modules "
        "and optimizers; a class that answers `.device` or `.parameters()` in its own way is not what was asked. "
        "Remove it (restart the kernel and run the notebook again) and answer with PyTorch's own types.",
        "zh": "检查无法信任你的代码返回的东西：{what}。检查读取的是 PyTorch 自己的张量、模块和优化器；"
        "自己定义 `.device` 或 `.parameters()` 返回什么的类，并不是题目要的东西。请去掉它（重启内核，再把笔记本从头运行"
        "一遍），"
        "用 PyTorch 自己的类型作答。",
    },
    "check.crashed": {
        "en": "the check could not use your answer: {error}",
        "zh": "检查无法使用你的答案：{error}",
    },
    "check.no_cuda": {
        "en": "your code asks for a CUDA GPU by name (`.cuda()` or \"cuda\"), and this machine has none (this lab "
        "runs on {device}). Code that names a device runs only where that device exists; this exercise's code is "
        "given the device it should use (an argument, or the device of the tensors it receives).",
        "zh": "你的代码点名要用 CUDA GPU（`.cuda()` 或 \"cuda\"），而这台机器上没有（本实验运行在 {device} 上）。"
        "点名某个设备的代码，只能在有这个设备的机器上运行；这道练习的代码会拿到它该用的设备"
        "（一个参数，或者它收到的张量所在的设备）。",
    },
    "check.no_cuda_pick": {
        "en": "your code uses a CUDA GPU without first asking whether there is one, and this machine has none (this "
        "lab runs on {device}), so PyTorch stopped it. Code that picks a device must also run where there is no GPU.",
        "zh": "你的代码没有先问一声有没有 CUDA GPU 就直接用上了，而这台机器上没有（本实验运行在 {device} 上），"
        "所以 PyTorch 让它停了下来。负责挑选设备的代码，在没有 GPU 的机器上也必须能运行。",
    },
    "check.meta_note": {
        "en": "(`meta` is the check's stand-in for your GPU: every machine has this other device, so the check "
        "runs your code towards it to catch what stays on the CPU. Where it says `meta`, a GPU would say `cuda:0`.)",
        "zh": "（`meta` 是检查用来代替你的 GPU 的设备：每台机器都有这个“另一个设备”，检查把你的代码往它上面跑，"
        "就能发现留在 CPU 上的东西。这里写 `meta` 的地方，在 GPU 上会写成 `cuda:0`。）",
    },
    "check.too_slow": {
        "en": "your code was still running after {seconds} s of checking (an endless loop?).",
        "zh": "检查运行了 {seconds} 秒，你的代码仍未结束（是不是死循环？）。",
    },
    "proof.locked": {
        "en": "The training run waits for your fixes: still open: {open}. "
        "Run the check cells above, fix what they report, then run this cell again.",
        "zh": "训练要等你的修复完成：还没通过的练习：{open}。"
        "先运行上面的检查单元，按提示修正后再运行本单元。",
    },
    "blank.used": {
        "en": "`____` has no `{name}`: a TODO above is not filled in yet. Complete that exercise (its check says "
        "what is missing), then run this cell again.",
        "zh": "`____` 没有 `{name}`：上面还有一个 TODO 没有填写。先完成那道练习（它的检查会说还缺什么），"
        "再重新运行这个单元。",
    },
    "proof.trained_already": {
        "en": "This model has been trained by this cell already, so a second run would show nothing new. To train "
        "a fresh one, run the cell `{cell}` and every cell below it again.",
        "zh": "这个模型已经被这个单元训练过了，再运行一次不会显示任何新东西。要训练一个新模型，请重新运行 `{cell}` "
        "这个单元以及它下面的每个单元。",
    },
    "proof.unit_epoch": {"en": "epoch", "zh": "轮"},
    "proof.unit_step": {"en": "step", "zh": "步"},
    "proof.caption": {
        "en": "The plot shows this run's loss per {unit} (the blue line): from {first} to {last}",
        "zh": "图中是这次训练每{unit}的损失（蓝线）：从 {first} 变为 {last}",
    },
    "proof.caption_two_axes": {
        "en": "The plot shows this run's loss per {unit} (blue, left axis): from {first} to {last}",
        "zh": "图中是这次训练每{unit}的损失（蓝线，左轴）：从 {first} 变为 {last}",
    },
    "proof.caption_resumed": {
        "en": "; the dashed grey line after {unit} {n} marks where training resumed from the checkpoint",
        "zh": "；第 {n} {unit}之后的灰色虚线，标出了从检查点恢复训练的位置",
    },
    "proof.caption_accuracy": {
        "en": "; and its accuracy (red, right axis): from {first} to {last}",
        "zh": "；以及准确率（红线，右轴）：从 {first} 变为 {last}",
    },
    "proof.learns": {"en": ". The falling loss is the model learning.", "zh": "。损失在下降，说明模型在学习。"},
    "proof.flat": {
        "en": ". The loss did not fall: the model is not learning.",
        "zh": "。损失没有下降：模型没有在学习。",
    },
    # --- cells that show nothing useful without a GPU -----------------------------------------
    "gpu_note.line": {
        "en": "(No GPU here, device: {device}.) On a GPU {what}",
        "zh": "（这里没有 GPU，设备是 {device}。）在 GPU 上，{what}",
    },
    "gpu_note.line_cuda": {
        "en": "(No CUDA GPU here, device: {device}.) On a CUDA GPU {what}",
        "zh": "（这里没有 CUDA GPU，设备是 {device}。）在 CUDA GPU 上，{what}",
    },
    "gpu_note.expected": {
        "en": "Expected on a CUDA GPU (not run here):",
        "zh": "在 CUDA GPU 上预期的输出（这里没有运行）：",
    },
    "gpu_note.ch01.devices": {
        "en": "this line shows two devices: the model moved to the GPU, the input stayed on the CPU.",
        "zh": "这一行会显示两个不同的设备：模型移到了 GPU 上，输入还留在 CPU 上。",
    },
    "gpu_note.ch03.devices": {
        "en": "this line shows the model on the GPU and the batch from the DataLoader on the CPU.",
        "zh": "这一行会显示模型在 GPU 上，而 DataLoader 给出的批次在 CPU 上。",
    },
    "gpu_note.ch04.devices": {
        "en": "this line shows the label (top level) moved to the GPU and the features (one level down) left on "
        "the CPU.",
        "zh": "这一行会显示标签（在最外层）移到了 GPU 上，而特征（在下一层）留在了 CPU 上。",
    },
    "gpu_note.ch05.devices": {
        "en": "this line shows the GRU on the GPU and the plain attribute `mean` still on the CPU.",
        "zh": "这一行会显示 GRU 在 GPU 上，而普通属性 `mean` 仍在 CPU 上。",
    },
    "gpu_note.ch08.half_conv": {
        "en": "this cell runs the `.half()` batch through the GPU's convolution, whose dtype error uses the legacy "
        "CUDA type names.",
        "zh": "这个单元会让 `.half()` 批次经过 GPU 上的卷积，它的 dtype 报错用的是旧式的 CUDA 类型名。",
    },
    "measure.what.autocast_step": {
        "en": "On a CUDA GPU it times one training step of a 4096-wide network in float32 and under float16 "
        "autocast, and shows each one's step time (`*_step_ms`) and peak memory (`*_peak_mib`).",
        "zh": "在 CUDA GPU 上，它会为一个 4096 宽的网络分别在 float32 和 float16 autocast 下的一次训练步骤计时，"
        "并给出各自的步骤耗时（`*_step_ms`）和显存峰值（`*_peak_mib`）。",
    },
    "measure.what.pinned_vs_pageable": {
        "en": "On a CUDA GPU it copies 64 MB from pageable and from pinned memory, and shows when each call "
        "returns (`*_returns_ms`) and when each copy is done (`*_done_ms`).",
        "zh": "在 CUDA GPU 上，它会分别从可分页内存和锁页内存复制 64 MB，并给出每次调用返回的时刻"
        "（`*_returns_ms`）和每次复制完成的时刻（`*_done_ms`）。",
    },
    # --- reproduce ------------------------------------------------------------------
    "reproduce.raised": {
        "en": "The expected error happened on {device} ({kind}):",
        "zh": "预期的错误在 {device} 上出现了（{kind}）：",
    },
    "reproduce.no_accelerator": {
        "en": "No GPU here (device: {device}), so this step cannot fail the way it does on a GPU; "
        "the code was not run.",
        "zh": "这里没有 GPU（设备：{device}），这一步无法像在 GPU 上那样出错；代码没有运行。",
    },
    "reproduce.captured": {
        "en": "Captured on a real GPU ({gpu}, torch {torch}, {date}):",
        "zh": "在真实 GPU 上捕获的输出（{gpu}，torch {torch}，{date}）：",
    },
    "reproduce.expected_only": {
        "en": "Expected wording, as current PyTorch prints it (not yet captured on a GPU for this lab):",
        "zh": "预期的报错文字，即当前 PyTorch 的措辞（本实验尚未在 GPU 上捕获）：",
    },
    "reproduce.did_not_raise": {
        "en": "Broken lab: step '{key}' was expected to raise {kind} on {device}, but it ran without error.",
        "zh": "实验有误：步骤“{key}”本应在 {device} 上引发 {kind}，却没有报错。",
    },
    "reproduce.wrong_error": {
        "en": "Broken lab: step '{key}' was expected to raise {kind}, but it raised something else.\n"
        "expected (any wording of): {expected}\ngot: {got}",
        "zh": "实验有误：步骤“{key}”本应引发 {kind}，却引发了别的错误。\n"
        "预期（任一措辞）：{expected}\n实际：{got}",
    },
    "reproduce.strict_no_accelerator": {
        "en": "Strict mode ({env}=1) needs a GPU or MPS, but the device is {device}.",
        "zh": "严格模式（{env}=1）需要 GPU 或 MPS，但当前设备是 {device}。",
    },
    # --- setup ----------------------------------------------------------------------
    "setup.ready": {"en": "Lab {lab} ready.", "zh": "实验 {lab} 已就绪。"},
    "setup.cpu_note": {
        "en": "No GPU: every cell still runs. A step that needs a GPU says so and shows the error as "
        "captured on a GPU or, until a GPU has verified this lab, the expected wording, labelled as such.",
        "zh": "没有 GPU：所有单元照样可以运行。需要 GPU 的步骤会说明这一点，并展示在 GPU 上捕获的报错；"
        "本实验尚未在 GPU 上验证时，则展示预期的报错文字，并注明这一点。",
    },
}


# --- the prose of the solutions `exN.solution()` prints, in Chinese: docstrings and comments only ----
# (the code is the English solution's, token for token; tests/learner/test_rules.py compares them)
CODE_PROSE_ZH: dict[str, str] = {
    "TextClassifier that moves its input to wherever its parameters are.":
        "会把输入移到自己参数所在设备上的 TextClassifier。",
    "The blog post's model: embed each token, average over the text, classify.":
        "博客里的模型：嵌入每个 token，在整段文本上取平均，再分类。",
    "The share of texts whose class the model gets right.":
        "模型分对类别的文本所占的比例。",
    "n texts of filler tokens, each with one keyword at a random place; the label says which keyword.":
        "n 段由填充 token 组成的文本，每段在随机位置有一个关键词；标签表示是哪个关键词。",
    "Copy 64 MB to the GPU from pageable and from pinned memory; time when the call returns and when it is done.":
        "分别从可分页内存和锁页内存向 GPU 复制 64 MB；记录调用返回的时刻和复制完成的时刻。",
    "Move each tensor of a nested batch to `device`; keep container types.":
        "把嵌套批次里的每个张量移到 `device`；容器类型不变。",
    "Moves the tensors at the top of the batch, and nothing inside its containers.":
        "只移动批次最外层的张量，容器里面的一概不动。",
    "Synthetic samples shaped like real ones: a dict with a namedtuple of tensors, a label and a name.":
        "结构和真实数据一样的合成样本：一个字典，里面有由张量组成的命名元组、一个标签和一个名字。",
    "The blog post's helper, as published.":
        "博客里的辅助函数，原样照录。",
    "Wrap a DataLoader: every batch comes out already on `device`.":
        "包装一个 DataLoader：取出的每个批次都已经在 `device` 上。",
    "(x - mean) / std, with mean and std as buffers: moved by .to(), saved in the state_dict, not trained.":
        "(x - mean) / std，mean 和 std 是缓冲区：会随 .to() 移动，保存在 state_dict 里，不参与训练。",
    "A GRU's initial hidden state: zeros of shape (1, batch, hidden_size), on x's device, with x's dtype.":
        "GRU 的初始隐藏状态：形状为 (1, batch, hidden_size) 的全零张量，设备和 dtype 都与 x 相同。",
    "Synthetic sequences: class 1 when the first reading rises over the sequence.":
        "合成序列：第一个读数在整个序列中上升时，类别为 1。",
    "Move the model to this rank's device, then wrap it in DistributedDataParallel.":
        "把模型移到这个 rank 的设备上，再用 DistributedDataParallel 包装它。",
    "The device of this rank: GPU number local_rank (made the current GPU), or the CPU without CUDA.":
        "这个 rank 的设备：编号为 local_rank 的 GPU（并设为当前 GPU）；没有 CUDA 时是 CPU。",
    "A state_dict from `path`, every tensor on `device`, whatever device saved it; no code from the file runs.":
        "从 `path` 读出的 state_dict：不管保存时在哪个设备上，每个张量都在 `device` 上；文件里的代码一行也不执行。",
    "Model, optimizer and epoch from a checkpoint, in the order that puts everything on `device`.":
        "从检查点恢复模型、优化器和轮次，按能让一切都落在 `device` 上的顺序。",
    "The state_dict of a DataParallel/DDP model, with the leading \"module.\" of its keys removed.":
        "DataParallel/DDP 模型的 state_dict，去掉各个键开头的 \"module.\"。",
    "Train on the synthetic data; return the mean loss of each epoch.":
        "在合成数据上训练；返回每一轮的平均损失。",
    "One optimizer step with a GradScaler: scale, backward, unscale_, clip, step, update.":
        "用 GradScaler 做一次优化器更新：scale、backward、unscale_、裁剪、step、update。",
    "Run `run`, which must fail; print its error as PyTorch words it and return the message.":
        "运行必定出错的 `run`；按 PyTorch 的原话打印报错，并返回报错信息。",
    "Synthetic 8x8 images as uint8 pixels, and int32 labels: 1 when the bright spot is in the left half.":
        "合成的 8x8 图像（uint8 像素）和 int32 标签：亮斑在左半边时标签为 1。",
    "The autocast context for `device`: its type (\"cuda\", \"cpu\", \"mps\"), in that type's lower precision.":
        "`device` 对应的 autocast 上下文：按它的类型（\"cuda\"、\"cpu\"、\"mps\"），使用该类型的低精度。",
    "Time one training step of a 4096-wide MLP in float32 and under float16 autocast; record peak memory.":
        "分别以 float32 和 float16 autocast 为一个 4096 宽的 MLP 的一次训练步骤计时；记录显存峰值。",
    "uint8 images and integer labels -> float32 pixels in [0, 1] and int64 labels, on `device`.":
        "uint8 图像和整数标签 -> [0, 1] 之间的 float32 像素和 int64 标签，都在 `device` 上。",
    "Resume from a checkpoint written on a laptop, then move to the device.":
        "从笔记本电脑上写出的检查点恢复训练，然后移到设备上。",
    "Run `run`, which this lab expects to fail; print PyTorch's message and return it.":
        "运行本实验预期会出错的 `run`；打印 PyTorch 的报错信息并返回它。",
    "The classic sine/cosine position table, shape (length, dim).":
        "经典的正弦/余弦位置编码表，形状为 (length, dim)。",
    "The fixed model and its Adam optimizer from a checkpoint, everything on `device`.":
        "从检查点恢复修好的模型和它的 Adam 优化器，一切都在 `device` 上。",
    "The mystery model with your two fixed parts in place of the broken ones (same names, same weights).":
        "那个神秘模型，两个坏掉的部件换成了你修好的（名字相同，权重相同）。",
    "Token sequences; class 1 when most tokens come from the lower half of the vocabulary.":
        "token 序列；大多数 token 来自词表前一半时，类别为 1。",
    "Move the model to this rank's device, then wrap it; device_ids only for a model on one GPU.":
        "把模型移到这个 rank 的设备上，再包装它；只有模型在单块 GPU 上时才传 device_ids。",
    "# a namedtuple":
        "# 命名元组",
    "# numbers, strings, None: nothing to move":
        "# 数字、字符串、None：没有什么可移动的",
    "# built once, here: moved by .to(), trained":
        "# 只在这里构造一次：会随 .to() 移动，也会被训练",
    "# born where x is":
        "# 在 x 所在的设备上创建",
    "# \"cuda\" now means this GPU in this process":
        "# 在这个进程里，\"cuda\" 从此就指这块 GPU",
    "# a CPU model: no device_ids":
        "# CPU 上的模型：不传 device_ids",
    "# 1. move the model":
        "# 1. 移动模型",
    "# 2. build the optimizer on its parameters":
        "# 2. 用它的参数构造优化器",
    "# 3. load both states":
        "# 3. 加载两者的状态",
    "# its state follows each parameter's device":
        "# 优化器的状态跟随各参数所在的设备",
    "# float32: autocast picks each op's precision":
        "# float32：每个运算的精度交给 autocast 决定",
    "# cross_entropy wants int64 class indices":
        "# cross_entropy 要求 int64 的类别索引",
    "# the true gradients, so that max_norm means what it says":
        "# 还原出真实梯度，max_norm 才名副其实",
    "# skipped when a gradient holds inf or NaN":
        "# 梯度含有 inf 或 NaN 时会跳过",
    "# lowers the scale after a skipped step, raises it after enough clean ones":
        "# 跳过一步后降低缩放因子，连续足够多的正常步骤后提高它",
    "# a buffer moves with .to(); persistent=False keeps it out of the state_dict, as before":
        "# 缓冲区会随 .to() 移动；persistent=False 让它像以前一样不进入 state_dict",
}


def code_in_language(code: str, lang: str | None = None) -> str:
    """A solution's code with its docstrings and comments in the chosen language (the code itself unchanged)."""
    if (lang or _state["lang"]) != "zh":
        return code
    for english, chinese in CODE_PROSE_ZH.items():
        code = code.replace(english, chinese)
    return code
