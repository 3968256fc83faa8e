"""The error index: every wording PyTorch has used for a device error, and the chapter that explains it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .messages import get_language


@dataclass(frozen=True)
class ErrorKind:
    """One kind of device error: its wordings (old and new), its chapter and how to read it."""

    name: str
    chapter: str
    patterns: tuple[str, ...]
    example: str
    reading: dict[str, str] = field(default_factory=dict)
    # How to read a wording that names no operation (the short "... cuda:0 and cpu!" form), if it differs.
    reading_without_op: dict[str, str] = field(default_factory=dict)
    # (field, regex, chapter): the first rule whose field matches sends the message to that chapter
    routes: tuple[tuple[str, str, str], ...] = ()

    def chapter_for(self, fields: dict[str, str]) -> str:
        """The chapter that explains a message of this kind with these fields."""
        for name, pattern, chapter in self.routes:
            if re.search(pattern, fields.get(name, "")):
                return chapter
        return self.chapter

    def match(self, message: str) -> dict[str, str] | None:
        """The named fields of the first wording that matches `message`, or None."""
        for pattern in self.patterns:
            found = re.search(pattern, message)
            if found:
                return {k: v for k, v in found.groupdict().items() if v is not None}
        return None


# Apple MPS has no generated device check: these are what its kernels say instead.
MPS_PATTERNS = (
    r"Tensor for argument (?:#\d+ )?'?(?P<arg>\w+)'? is on (?P<found>\w+) but expected on (?P<want>mps)",
    r"Placeholder storage has not been allocated on MPS device!",
)

KINDS: dict[str, ErrorKind] = {}


def register(kind: ErrorKind) -> ErrorKind:
    """Add a kind to the index (chapters register the wordings they explain)."""
    KINDS[kind.name] = kind
    return kind


register(
    ErrorKind(
        name="same_device",
        chapter="01-devices",
        routes=(
            ("op", r"index_select|embedding", "03-embedding"),
            ("arg", r"^(index|indices|target)$", "03-embedding"),
            ("arg", r"^weight$", "02-dataparallel"),
            ("op", r"_cat$|_stack$", "05-inside"),
        ),
        patterns=(
            # torch >= 2.8
            r"Expected all tensors to be on the same device, but got (?P<arg>\w+) is on "
            r"(?P<found>[\w:]+), different from other tensors on (?P<want>[\w:]+) "
            r"\(when checking argument in method (?P<op>\w+)\)",
            # torch 1.9 .. 2.7 (1.9 spells it "arugment")
            r"Expected all tensors to be on the same device, but found at least two devices, "
            r"(?P<want>[\w:]+) and (?P<found>[\w:]+)!(?: \(when checking (?:argument|arugment) for argument "
            r"(?P<arg>\w+) in method (?P<op>\w+)\))?",
            # torch <= 1.8
            r"Expected object of device type (?P<want>\w+) but got device type (?P<found>\w+) "
            r"for argument #\d+ '(?P<arg>\w+)' in call to (?P<op>\w+)",
            *MPS_PATTERNS,
        ),
        example="Expected all tensors to be on the same device, but got weight is on cpu, "
        "different from other tensors on cuda:0 (when checking argument in method "
        "wrapper_CUDA_nll_loss_forward)",
        reading={
            "en": "PyTorch checked the devices of every tensor an operation receives before running "
            "it. The operation ({op}) got its argument `{arg}` on {found} while the others were on "
            "{want}. Find the line that calls this operation and print the `.device` of what it is "
            "given. Then decide which device you meant (usually the model's) and move whatever is on "
            "the other one (or build it there): the argument named is not always the misplaced one.",
            "zh": "PyTorch 在执行运算前检查了它收到的每个张量所在的设备。运算（{op}）的参数 `{arg}` 在 "
            "{found} 上，而其他张量在 {want} 上。找到调用这个运算的那一行，打印它收到的各个张量的 "
            "`.device`。然后想清楚它们本该在哪个设备上（通常是模型所在的设备），把不在那里的张量移过去"
            "（或者直接在那里创建）：报错里点名的参数不一定就是放错的那个。",
        },
        reading_without_op={
            "en": "PyTorch found the tensors of one operation on two devices, {want} and {found}. This short form "
            "of the message names neither the operation nor the argument, and it lists the two devices in a "
            "fixed order, not by which tensor is misplaced. The operation is the last line of your own code in "
            "the traceback: print the `.device` of every tensor it uses, decide which device you meant (usually "
            "the model's), and move whatever is on the other one.",
            "zh": "PyTorch 发现同一个运算的张量分布在两个设备上：{want} 和 {found}。这种简短的报错既不说是哪个运算，"
            "也不说是哪个参数，而且两个设备按固定顺序列出，并不表示哪个张量放错了。出错的运算就是 traceback 里"
            "你自己代码的最后一行：打印它用到的每个张量的 `.device`，想清楚它们本该在哪个设备上（通常是模型所在的"
            "设备），再把不在那里的张量移过去。",
        },
    )
)

register(
    ErrorKind(
        name="conv_input_weight_type",
        chapter="02-dataparallel",
        patterns=(
            r"Input type \((?P<input>[^)]+)\) and weight type \((?P<weight>[^)]+)\) should be the same",
            *MPS_PATTERNS,
        ),
        example="Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) "
        "should be the same",
        reading={
            "en": "A convolution compares its input with its weight before it runs. The input's "
            "type is {input} and the weight's is {weight}: the legacy type names carry the device "
            "(`torch.cuda.FloatTensor` is a float32 tensor on a GPU, `torch.FloatTensor` one on the "
            "CPU). Same dtype, different devices: the batch was moved, the model that received it "
            "was not.",
            "zh": "卷积在运行前会比较输入和权重。输入的类型是 {input}，权重的类型是 {weight}：这些旧式类型名"
            "里包含了设备信息（`torch.cuda.FloatTensor` 是 GPU 上的 float32 张量，`torch.FloatTensor` "
            "是 CPU 上的）。数据类型相同、设备不同：数据批次移动了，接收它的模型却没有移动。",
        },
    )
)

register(
    ErrorKind(
        name="dataparallel_module_device",
        chapter="02-dataparallel",
        patterns=(
            r"module must have its parameters and buffers on device (?P<want>[\w:]+) "
            r"\(device_ids\[0\]\) but found one of them on device: (?P<found>[\w:]+)",
        ),
        example="module must have its parameters and buffers on device cuda:0 (device_ids[0]) "
        "but found one of them on device: cpu",
        reading={
            "en": "DataParallel copies the module from device_ids[0] ({want}) to the other GPUs on "
            "every forward pass, so the module must already be there; one parameter or buffer was "
            "on {found}. Move the model before (or right after) wrapping it.",
            "zh": "DataParallel 每次前向传播都会把模块从 device_ids[0]（{want}）复制到其他 GPU，所以模块必须"
            "已经在那里；但有一个参数或缓冲区在 {found} 上。请在包装之前（或之后立刻）移动模型。",
        },
    )
)


register(
    ErrorKind(
        name="indices_current_device",
        chapter="03-embedding",
        patterns=(r"Input, output and indices must be on the current device",),
        example="Input, output and indices must be on the current device",
        reading={
            "en": "This is the PyTorch 1.7–1.8 wording of an index operation (an nn.Embedding lookup, "
            "index_select) whose weight and indices are on different devices. Since 1.9 the same "
            "mistake prints the generated device check instead (\"... but got index is on cpu ...\"). "
            "Move the indices to the device of the embedding.",
            "zh": "这是 PyTorch 1.7–1.8 对索引类运算（nn.Embedding 查表、index_select）的措辞：权重和索引在不同的"
            "设备上。从 1.9 起，同样的错误打印的是自动生成的设备检查（“... but got index is on cpu ...”）。"
            "请把索引移到 Embedding 所在的设备上。",
        },
    )
)


register(
    ErrorKind(
        name="rnn_hidden_device",
        chapter="05-inside",
        patterns=(
            # RNN, LSTM and GRU check their own devices (aten/src/ATen/native/RNN.cpp)
            r"Input and (?P<arg>hidden|parameter) tensors are not at the same device, found input tensor at "
            r"(?P<want>[\w:]+) and (?:hidden|parameter) tensor at (?P<found>[\w:]+)",
        ),
        example="Input and hidden tensors are not at the same device, found input tensor at cuda:0 and "
        "hidden tensor at cpu",
        reading={
            "en": "An RNN, LSTM or GRU compares the devices of its input and of its {arg} tensors before it "
            "runs: the input is on {want}, a {arg} tensor on {found}. Decide which device you meant, then move "
            "the other. A hidden state is not a parameter: `model.to()` never moves the `h0` you build. "
            "Create it where the input is: `x.new_zeros(layers, batch, hidden)` or "
            "`torch.zeros(..., device=x.device)` — or pass no hidden state at all (zeros on the input's "
            "device are the default).",
            "zh": "RNN、LSTM 和 GRU 在运行前会比较输入张量与 {arg} 张量所在的设备：输入在 {want} 上，"
            "有一个 {arg} 张量在 {found} 上。先想清楚应该在哪个设备上，再把另一个移过去。"
            "隐藏状态不是参数：`model.to()` 不会移动你自己构造的 `h0`。"
            "请在输入所在的设备上创建它：`x.new_zeros(layers, batch, hidden)` 或 "
            "`torch.zeros(..., device=x.device)`；也可以干脆不传隐藏状态（默认就是输入所在设备上的全零张量）。",
        },
    )
)

register(
    ErrorKind(
        name="cat_same_device",
        chapter="05-inside",
        patterns=(
            # torch.cat of tensors on two devices in older PyTorch 1.x, quoted from public reports
            # (current versions print the generated check, naming `tensors` in wrapper_..._cat: see same_device)
            r"All input tensors must be on the same device\. Received (?P<want>[\w:]+) and (?P<found>[\w:]+)",
            r"Expected object of backend (?P<want>\w+) but got backend (?P<found>\w+) for sequence element "
            r"(?P<arg>\d+) in sequence argument at position #\d+ 'tensors'",
        ),
        example="All input tensors must be on the same device. Received cuda:0 and cpu",
        reading={
            "en": "This is how older PyTorch 1.x versions worded a torch.cat (or torch.stack) of tensors on two "
            "devices ({want} and {found}). Current versions print the generated device check instead (\"... but got "
            "tensors is on cpu ... wrapper_CUDA_cat\"). One of the tensors joined was made on the CPU: create "
            "it on the device of the others (`device=x.device`, `x.new_zeros`, `torch.zeros_like(x)`).",
            "zh": "这是较早的 PyTorch 1.x 版本对 torch.cat（或 torch.stack）拼接两个设备（{want} 和 {found}）"
            "上张量时的措辞。"
            "现在的版本打印的是自动生成的设备检查（“... but got tensors is on cpu ... wrapper_CUDA_cat”）。"
            "被拼接的张量里有一个是在 CPU 上创建的：请在其他张量所在的设备上创建它"
            "（`device=x.device`、`x.new_zeros`、`torch.zeros_like(x)`）。",
        },
    )
)


register(
    ErrorKind(
        name="cuda_deserialize",
        chapter="07-checkpoints",
        patterns=(
            # torch/serialization.py: a storage saved on a GPU, loaded where that GPU does not exist
            r"Attempting to deserialize object on a (?P<want>\w+) device but torch\.\w+\.is_available\(\) is False",
            r"Attempting to deserialize object on (?P<want>\w+) device \d+ but torch\.\w+\.device_count\(\) is \d+",
        ),
        example="Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
        "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
        "to map your storages to the CPU.",
        reading={
            "en": "The checkpoint records, for every tensor, the device it was saved from ({want}), and "
            "torch.load puts it back there by default; this machine does not have that device. Tell torch.load "
            "where to put the tensors: `torch.load(path, map_location=device)`.",
            "zh": "检查点为每个张量记下了保存时所在的设备（{want}），torch.load 默认会把它放回那里；"
            "可这台机器上没有那个设备。请告诉 torch.load 把张量放到哪里：`torch.load(path, map_location=device)`。",
        },
    )
)

register(
    ErrorKind(
        name="state_dict_prefix",
        chapter="07-checkpoints",
        patterns=(r"(?s)Missing key\(s\) in state_dict: .*Unexpected key\(s\) in state_dict: \"module\.",),
        example='Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc.weight", '
        '"fc.bias". \n\tUnexpected key(s) in state_dict: "module.fc.weight", "module.fc.bias". ',
        reading={
            "en": "The checkpoint was saved from a model wrapped in DataParallel or DistributedDataParallel: "
            "every key starts with `module.`. Save `model.module.state_dict()`, or strip the prefix before "
            "loading (`torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state, \"module.\")`).",
            "zh": "这个检查点保存自一个用 DataParallel 或 DistributedDataParallel 包装过的模型：每个键都以 `module.` "
            "开头。请保存 `model.module.state_dict()`，或者在加载前去掉这个前缀"
            "（`torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state, \"module.\")`）。",
        },
    )
)


register(
    ErrorKind(
        name="weights_only_load",
        chapter="07-checkpoints",
        patterns=(r"Weights only load failed",),
        example="Weights only load failed. This file can still be loaded, to do so you have two options, do those "
        "steps only if you trust the source of the checkpoint.",
        reading={
            "en": "torch.load with weights_only=True (the default since PyTorch 2.6) refused a pickle that needs "
            "more than tensors and plain containers, here most likely a whole pickled model. A pickle can run any "
            "code: save and load a state_dict instead, or, for a file you trust, allow its classes with "
            "`torch.serialization.safe_globals([...])`.",
            "zh": "weights_only=True 的 torch.load（PyTorch 2.6 起的默认行为）拒绝了一个"
            "不只包含张量和普通容器的 pickle，"
            "这里多半是整个被 pickle 的模型。pickle 可以执行任意代码：请改为保存和加载 state_dict；"
            "对于你信任的文件，可以用 `torch.serialization.safe_globals([...])` 放行其中的类。",
        },
    )
)


@dataclass(frozen=True)
class Match:
    """A pasted message recognised by the index."""

    kind: ErrorKind
    fields: dict[str, str]

    @property
    def chapter(self) -> str:
        """The chapter that explains this message."""
        return self.kind.chapter_for(self.fields)

    def reading(self, lang: str | None = None) -> str:
        """A one-paragraph reading of the message, in the chosen language."""
        short = "op" not in self.fields and "want" in self.fields and bool(self.kind.reading_without_op)
        template = (self.kind.reading_without_op if short else self.kind.reading).get(lang or get_language(), "")
        fields = {"op": "?", "arg": "?", "found": "?", "want": "?", "input": "?", "weight": "?"}
        fields.update(self.fields)
        return template.format(**fields)


def lookup(message: str) -> list[Match]:
    """Every kind whose wordings match `message` (old and new wordings alike)."""
    found = []
    for kind in KINDS.values():
        fields = kind.match(message)
        if fields is not None:
            found.append(Match(kind, fields))
    return found


def match_kind(name: str, message: str) -> Match | None:
    """Match `message` against one kind only."""
    fields = KINDS[name].match(message)
    return None if fields is None else Match(KINDS[name], fields)
