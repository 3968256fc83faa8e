"""What can cause a message, and its fix, in both languages: the ranked answers that `diagnose` gives.

Placeholders: {arg}, {op}, {found}, {want} (the message's own fields), {dev1}/{dev2} (devices found in the text).
"""

from __future__ import annotations

CAUSES: dict[str, dict[str, str]] = {
    "batch_not_moved": {
        "en": "The model is on the accelerator and its input is still on the CPU. Move the batch, and keep what "
        "`Tensor.to()` returns: `x = x.to(device)` (a bare `x.to(device)` throws the moved copy away).",
        "zh": "模型在加速器上，输入却还在 CPU 上。移动数据批次，并保留 `Tensor.to()` 的返回值："
        "`x = x.to(device)`（单独一行 `x.to(device)` 会把移好的副本丢掉）。",
    },
    "model_not_moved": {
        "en": "The input is on the accelerator and the model (at least this layer) is still on the CPU. Move the model "
        "you actually call: `model.to(device)` — after wrapping it (DataParallel, compile), assign the result back to "
        "the same name and train that one.",
        "zh": "输入在加速器上，模型（至少这一层）还在 CPU 上。移动你真正调用的那个模型：`model.to(device)`；"
        "包装之后（DataParallel、compile）要把结果赋回同一个变量名，并训练这个变量。",
    },
    "layer_outside_to": {
        "en": "A tensor or layer the model uses was not moved by `model.to()`: a layer built in `forward`, a plain "
        "tensor attribute (not a buffer), or a module added after the move. Register tensors with "
        "`self.register_buffer(...)`, build layers in `__init__`, and create tensors in `forward` with "
        "`device=x.device` or `x.new_zeros(...)`.",
        "zh": "模型用到的某个张量或层没有被 `model.to()` 移动：在 `forward` 里构造的层、普通张量属性（不是缓冲区），"
        "或者移动之后才添加的模块。用 `self.register_buffer(...)` 注册张量，在 `__init__` 里构造层，"
        "在 `forward` 里用 `device=x.device` 或 `x.new_zeros(...)` 创建张量。",
    },
    "tensor_made_inside": {
        "en": "A tensor created on the fly (`torch.zeros`, `torch.arange`, `torch.tensor`, a mask) is on the CPU while "
        "the data is on the accelerator. Create it where the data is: `device=x.device`, `x.new_zeros(...)`, "
        "`torch.zeros_like(x)`.",
        "zh": "临时创建的张量（`torch.zeros`、`torch.arange`、`torch.tensor`、掩码）在 CPU 上，而数据在加速器上。"
        "请在数据所在的设备上创建它：`device=x.device`、`x.new_zeros(...)`、`torch.zeros_like(x)`。",
    },
    "ids_not_moved": {
        "en": "The token ids (the indices of the embedding lookup) are on the CPU while the embedding is on the "
        "accelerator. Move the ids with the rest of the batch: `ids = ids.to(device)`.",
        "zh": "token id（Embedding 查表用的索引）在 CPU 上，而 Embedding 在加速器上。把 id 和批次的其余部分一起移过去："
        "`ids = ids.to(device)`。",
    },
    "table_not_moved": {
        "en": "The embedding table (or the tensor being indexed) stayed on the CPU while the ids are on the "
        "accelerator: the message names the ids, but it is the model that must move: `model.to(device)`.",
        "zh": "Embedding 的嵌入表（或被索引的张量）留在了 CPU 上，而 id 在加速器上：报错点名的是 id，"
        "要移动的却是模型：`model.to(device)`。",
    },
    "labels_not_moved": {
        "en": "The labels (the loss's `target`) are still on the CPU while the model's output is on the accelerator: "
        "`labels = labels.to(device)`.",
        "zh": "标签（损失函数的 `target`）还在 CPU 上，而模型输出在加速器上：`labels = labels.to(device)`。",
    },
    "loss_weight_not_moved": {
        "en": "The loss holds a tensor of its own (the class weights of `CrossEntropyLoss(weight=...)`/`NLLLoss`) on "
        "another device than the logits. Move the loss with the model: `criterion = criterion.to(device)`.",
        "zh": "损失函数自带一个张量（`CrossEntropyLoss(weight=...)`/`NLLLoss` 的类别权重），"
        "它和 logits 不在同一个设备上。"
        "把损失函数和模型一起移过去：`criterion = criterion.to(device)`。",
    },
    "hidden_state": {
        "en": "The RNN's initial hidden state was built on the CPU: `model.to()` never moves an `h0` you create. Build "
        "it with `x.new_zeros(layers, batch, hidden)` or pass none (zeros on the input's device are the default).",
        "zh": "RNN 的初始隐藏状态是在 CPU 上创建的：`model.to()` 不会移动你自己构造的 `h0`。用 "
        "`x.new_zeros(layers, batch, hidden)` 创建它，或者干脆不传（默认就是输入所在设备上的全零张量）。",
    },
    "index_device": {
        "en": "Advanced indexing `t[idx]` needs the indices on the CPU or on the device of the indexed tensor (here "
        "{want}). Move the indices to the tensor's device (`t[idx.to(t.device)]`), or move the tensor, usually a "
        "lookup table kept as a plain attribute, to the accelerator (`register_buffer`).",
        "zh": "高级索引 `t[idx]` 要求索引在 CPU 上，或者与被索引的张量在同一设备上（这里是 {want}）。"
        "把索引移到张量所在的设备（`t[idx.to(t.device)]`），或者把张量（通常是以普通属性存放的一张查找表）"
        "移到加速器上（`register_buffer`）。",
    },
    "dataparallel_module": {
        "en": "DataParallel copies the module from device_ids[0] to the other GPUs on every forward pass, so the "
        "module must already be on device_ids[0]: `model.to('cuda:0')` (or the first of your device_ids) before "
        "wrapping. The inputs may stay on the CPU: scatter copies them.",
        "zh": "DataParallel 每次前向传播都会把模块从 device_ids[0] 复制到其他 GPU，"
        "所以模块必须已经在 device_ids[0] 上："
        "包装之前先 `model.to('cuda:0')`（或你 device_ids 中的第一个）。输入可以留在 CPU 上：scatter 会复制它们。",
    },
    "multi_gpu_mix": {
        "en": "Two GPUs are involved ({dev1} and {dev2}): one tensor or module is on another GPU than the rest — a "
        "hard-coded `cuda:0` or `.cuda()` inside a model replicated by DataParallel, or a DDP process not using its "
        "own `local_rank`. Create tensors on `x.device`, and in DDP call `torch.cuda.set_device(local_rank)`.",
        "zh": "涉及两块 GPU（{dev1} 和 {dev2}）：有一个张量或模块在另一块 GPU 上——"
        "例如被 DataParallel 复制的模型里写死了 "
        "`cuda:0` 或 `.cuda()`，或者某个 DDP 进程没有使用自己的 `local_rank`。请在 `x.device` 上创建张量；"
        "在 DDP 里调用 `torch.cuda.set_device(local_rank)`。",
    },
    "ddp_setup": {
        "en": "Each DDP process must own one device: `torch.cuda.set_device(local_rank)`, `model.to(local_rank)`, then "
        "`DistributedDataParallel(model, device_ids=[local_rank])`. A CPU module (gloo) takes no device_ids, and "
        "the NCCL backend needs CUDA tensors.",
        "zh": "每个 DDP 进程必须独占一个设备：`torch.cuda.set_device(local_rank)`、`model.to(local_rank)`，然后 "
        "`DistributedDataParallel(model, device_ids=[local_rank])`。CPU 上的模块（gloo）不传 device_ids，"
        "NCCL 后端只接受 CUDA 张量。",
    },
    "map_location": {
        "en": "The checkpoint remembers the device each tensor was saved from, and `torch.load` puts it back there; "
        "this machine lacks that device. Say where to load: `torch.load(path, map_location=device)`.",
        "zh": "检查点记住了每个张量保存时所在的设备，`torch.load` 默认放回原处；这台机器没有那个设备。"
        "请指定加载位置：`torch.load(path, map_location=device)`。",
    },
    "map_location_remap": {
        "en": "`torch.load` was asked to put a tensor on a GPU this machine does not have: the checkpoint was saved "
        "on another GPU (say `cuda:1`). Remap it when loading: `torch.load(path, map_location={'cuda:1': 'cuda:0'})`, "
        "or simply `map_location=device`.",
        "zh": "`torch.load` 要把张量放到这台机器上不存在的 GPU 上：检查点是在另一块 GPU（比如 `cuda:1`）上保存的。"
        "加载时重新映射：`torch.load(path, map_location={'cuda:1': 'cuda:0'})`，或者直接 `map_location=device`。",
    },
    "state_dict_not_model": {
        "en": "`torch.load` returned a dict (a state_dict, or a checkpoint holding one), not a model: build the model, "
        "then `model.load_state_dict(torch.load(path, map_location=device))`, then `model.to(device)`.",
        "zh": "`torch.load` 返回的是一个 dict（state_dict，或者包含 state_dict 的检查点），而不是模型：先构建模型，"
        "再 `model.load_state_dict(torch.load(path, map_location=device))`，然后 `model.to(device)`。",
    },
    "lengths_on_cpu": {
        "en": "The lengths were moved with the rest of the batch, but `pack_padded_sequence` reads them on the CPU: "
        "pass `lengths.cpu()` (a batch-moving helper should leave them where they are).",
        "zh": "长度张量随整个批次一起被移到了设备上，但 `pack_padded_sequence` 要在 CPU 上读取它：请传入 "
        "`lengths.cpu()`（移动批次的辅助函数应当让它留在原处）。",
    },
    "container_to": {
        "en": "The batch is a list, tuple or dict of tensors (what a DataLoader returns for such a dataset). Move each "
        "tensor, keeping the container: a small recursive `to_device(batch, device)` does it for any nesting.",
        "zh": "这个批次是由张量组成的 list、tuple 或 dict（数据集返回这种结构时，DataLoader 也会返回它）。"
        "请逐个移动其中的张量并保留容器结构：写一个递归的 `to_device(batch, device)` 就能处理任意嵌套。",
    },
    "meta_weights": {
        "en": "A tensor is on the `meta` device: it has a shape but no data. A model built or loaded lazily "
        "(`device_map`, `low_cpu_mem_usage`, `init_empty_weights`, offloading) keeps parameters on `meta` until their "
        "weights are loaded; some were not. Load the whole checkpoint (or `model.to_empty(device=...)` then load the "
        "state_dict), and check the device_map/offload settings.",
        "zh": "有张量在 `meta` 设备上：它只有形状，没有数据。延迟构造或加载的模型（`device_map`、`low_cpu_mem_usage`、"
        "`init_empty_weights`、offload）在权重加载之前把参数放在 `meta` 上；有些权重没有被加载。请完整加载检查点"
        "（或先 `model.to_empty(device=...)` 再加载 state_dict），并检查 device_map/offload 设置。",
    },
    "optimizer_state": {
        "en": "The optimizer's state is on another device than the parameters — typically its state_dict was loaded "
        "before the model was moved. Move the model, build the optimizer, then load the optimizer state.",
        "zh": "优化器的状态和参数不在同一个设备上——通常是在移动模型之前就加载了优化器的 state_dict。"
        "请先移动模型，再创建优化器，最后加载优化器状态。",
    },
    "generator_device": {
        "en": "A random generator on one device was asked to make numbers on another. Usually "
        "`torch.set_default_device('cuda')` (or the old `torch.set_default_tensor_type(torch.cuda.FloatTensor)`) "
        "makes a DataLoader's shuffling sampler work on the GPU with a CPU generator. Remove the default-device change "
        "and move batches explicitly, or give the DataLoader `generator=torch.Generator(device=...)` on that device.",
        "zh": "一个设备上的随机数生成器被要求在另一个设备上生成随机数。通常是 `torch.set_default_device('cuda')`"
        "（或旧的 `torch.set_default_tensor_type(torch.cuda.FloatTensor)`）让 DataLoader 的打乱采样器在 GPU 上运行，"
        "而生成器在 CPU 上。去掉对默认设备的修改、显式移动批次，或者给 DataLoader 传入同一设备上的 "
        "`generator=torch.Generator(device=...)`。",
    },
    "pin_cuda": {
        "en": "`DataLoader(pin_memory=True)` pins each batch in page-locked CPU memory, but these tensors are already "
        "on the GPU: the dataset or the collate function moved them. Keep the dataset on the CPU and move each batch "
        "in the training loop (`batch.to(device, non_blocking=True)`), or set `pin_memory=False`.",
        "zh": "`DataLoader(pin_memory=True)` 会把每个批次放进 CPU 的锁页内存，可这些张量已经在 GPU 上了："
        "是数据集或 collate 函数移动了它们。让数据集留在 CPU 上，在训练循环里移动每个批次"
        "（`batch.to(device, non_blocking=True)`），或者设置 `pin_memory=False`。",
    },
    "numpy_device": {
        "en": "NumPy reads only CPU memory. Copy the tensor to the CPU first: `t.detach().cpu().numpy()`.",
        "zh": "NumPy 只能读取 CPU 内存。先把张量复制到 CPU：`t.detach().cpu().numpy()`。",
    },
    "mps_mix": {
        "en": "On Apple's MPS device an operation received a CPU tensor (MPS kernels say so in their own words). Move "
        "the model and every input to `mps`, and create tensors in `forward` with `device=x.device`.",
        "zh": "在 Apple 的 MPS 设备上，某个运算收到了 CPU 上的张量（MPS 内核用自己的话这么说）。把模型和所有输入都移到 "
        "`mps`，在 `forward` 里用 `device=x.device` 创建张量。",
    },
    "custom_kernel": {
        "en": "An extension or hand-written kernel requires its inputs on the accelerator and got a CPU tensor: move "
        "that input (and the module holding its weights) to the device before calling it.",
        "zh": "某个扩展或手写内核要求输入在加速器上，却收到了 CPU 张量：调用之前把这个输入（以及保存其权重的模块）"
        "移到设备上。",
    },
}

# What the reader does to find out which of the ranked causes is theirs.
CHECK = {
    "en": "To see which side is misplaced, print the devices just before the failing line: "
    "`print(next(model.parameters()).device)` and the `.device` of each input (batch, labels, tensors made in "
    "`forward`). Decide which device you meant (usually the accelerator) and move whatever is on the other one.",
    "zh": "想知道放错的是哪一边，就在出错的那一行之前打印设备：`print(next(model.parameters()).device)`，以及每个输入"
    "（批次、标签、在 `forward` 里创建的张量）的 `.device`。想清楚本该在哪个设备上（通常是加速器），"
    "再把不在那里的东西移过去。",
}

# Why a chapter is on the list: the message itself, or a frame of the traceback (its place is shown beside it).
REASONS: dict[str, dict[str, str]] = {
    "message": {"en": "what the message itself says", "zh": "依据：报错信息本身"},
    "message_also": {"en": "another common cause of this message", "zh": "这条报错的另一种常见原因"},
    "evidence_also": {"en": "related to where it happened", "zh": "与出错位置相关"},
    "optimizer_step": {
        "en": "it was raised inside the optimizer's step: its state (momentum, Adam's averages) is on another "
        "device than the parameters, typically loaded before the model was moved",
        "zh": "错误发生在优化器的 step 里：它的状态（动量、Adam 的滑动平均）和参数不在同一个设备上，"
        "通常是在移动模型之前就加载了优化器状态",
    },
    "grad_scaler": {"en": "it was raised inside GradScaler", "zh": "错误发生在 GradScaler 里"},
    "autocast": {"en": "it was raised inside autocast", "zh": "错误发生在 autocast 里"},
    "serialization": {
        "en": "it was raised inside torch.load: the checkpoint's tensors go back to the device they were saved from",
        "zh": "错误发生在 torch.load 里：检查点里的张量会回到保存时所在的设备",
    },
    "data_parallel": {"en": "it was raised inside DataParallel", "zh": "错误发生在 DataParallel 里"},
    "distributed": {"en": "it was raised inside DDP or torch.distributed",
                    "zh": "错误发生在 DDP 或 torch.distributed 里"},
    "dataloader": {"en": "it was raised inside the DataLoader", "zh": "错误发生在 DataLoader 里"},
    "rnn": {"en": "it was raised inside an RNN/LSTM/GRU: its hidden state",
            "zh": "错误发生在 RNN/LSTM/GRU 里：与隐藏状态有关"},
    "embedding": {"en": "it was raised inside an embedding lookup: the indices and the table",
                  "zh": "错误发生在 embedding 查表时：与索引和嵌入表有关"},
    "loss": {"en": "it was raised inside the loss: the labels (or the loss's weight tensor)",
             "zh": "错误发生在损失函数里：与标签（或损失函数的权重张量）有关"},
    "factory_in_forward": {
        "en": "the failing line of your `forward` makes a tensor without `device=`: it is born on the CPU",
        "zh": "你的 `forward` 中出错的那一行创建张量时没有写 `device=`：它会在 CPU 上创建",
    },
    "layer_in_forward": {
        "en": "the failing line of your `forward` builds a layer: its parameters are born on the CPU",
        "zh": "你的 `forward` 中出错的那一行新建了一个层：它的参数会在 CPU 上创建",
    },
    "raised_in_own_code": {
        "en": "the error was raised on a line of your own code, not inside a PyTorch layer: a tensor made or kept "
        "there (a plain attribute, a `torch.zeros(...)` without `device=`) is on the other device",
        "zh": "错误发生在你自己代码的某一行，而不是 PyTorch 的层内部：在那里创建或保存的张量"
        "（普通张量属性、没写 `device=` 的 `torch.zeros(...)`）位于另一个设备上",
    },
    "numpy_call": {"en": "the failing line calls `.numpy()` without `.cpu()` first",
                   "zh": "出错的那一行调用 `.numpy()` 之前没有先调用 `.cpu()`"},
    "torch_load": {"en": "the failing line calls torch.load", "zh": "出错的那一行调用了 torch.load"},
    "load_state_dict": {"en": "the failing line loads an optimizer's state", "zh": "出错的那一行加载了优化器状态"},
    "optimizer_step_call": {"en": "the failing line is the optimizer's step", "zh": "出错的那一行是优化器的 step"},
    "scaler_call": {"en": "the failing line uses the GradScaler", "zh": "出错的那一行用到了 GradScaler"},
    "batch_loop": {"en": "the failing line loops over a batch", "zh": "出错的那一行在遍历一个批次"},
}

# The words around an answer, in both languages (explain.py and the paste page use the same ones).
LABELS: dict[str, dict[str, str]] = {
    "device": {"en": "A device-placement error", "zh": "这是设备错误"},
    "family": {"en": "family", "zh": "类别"},
    "op": {"en": "operation", "zh": "运算"},
    "arg": {"en": "argument", "zh": "参数"},
    "devices": {"en": "devices", "zh": "设备"},
    "meaning": {"en": "What it means", "zh": "含义"},
    "causes": {"en": "Likely causes, most likely first", "zh": "可能的原因（可能性从高到低）"},
    "cause": {"en": "Likely cause", "zh": "可能的原因"},
    "check": {"en": "How to tell which", "zh": "如何分辨"},
    "chapter": {"en": "Read", "zh": "请阅读"},
    "also": {"en": "Also possible", "zh": "也可能是"},
    "fallback": {
        "en": "No chapter of this course explains this family of device error; chapter 09's method applies to it.",
        "zh": "本课程没有专门讲这类设备错误的章节；第 09 章的排查方法同样适用。",
    },
    "not_device": {"en": "Not a device-placement error.", "zh": "这不是设备错误。"},
    # for a message that says where an error happened but not what it was (DataParallel's replica header)
    "undecided": {"en": "Not known to be a device-placement error.", "zh": "还不能确定这是设备错误。"},
    "unknown": {
        "en": "Not recognised: this does not look like a PyTorch device-placement error. Paste the whole last line of "
        "the traceback (it starts with the error's type, e.g. `RuntimeError:`).",
        "zh": "无法识别：这看起来不像 PyTorch 的设备错误。请粘贴 traceback 的完整最后一行"
        "（以错误类型开头，例如 `RuntimeError:`）。",
    },
    "unknown_error": {
        "en": "Not recognised as a device-placement error: none of the wordings PyTorch uses for one is in this text. "
        "If you suspect one all the same, chapter 09's method applies: print the device of the model, the batch and "
        "every tensor on the failing line.",
        "zh": "没有识别出设备错误：这段文字里没有 PyTorch 报告设备错误时使用的任何一种说法。"
        "如果仍然怀疑是设备问题，可以用第 09 章的方法：打印模型、批次以及出错那一行里每个张量所在的设备。",
    },
    "evidence": {"en": "In your traceback", "zh": "在你的 traceback 中"},
    "ranking": {"en": "Chapters to read, most likely first", "zh": "建议阅读的章节（可能性从高到低）"},
    "ranking_one": {"en": "Chapter to read", "zh": "建议阅读的章节"},
    "guess": {
        "en": "The message and the traceback do not settle it: this order is the most likely one, not a certainty.",
        "zh": "仅凭报错信息和 traceback 无法确定：这个顺序只是最可能的情况，并非定论。",
    },
    "cut": {
        "en": "This paste is long: {kb} KB of lines that name no error, frame or device were left out.",
        "zh": "粘贴的内容很长：其中 {kb} KB 既不含错误、也不含调用帧或设备的行被略过了。",
    },
    "coming": {"en": "(chapter being written)", "zh": "（本章正在编写）"},
}

CHAPTER_TITLES: dict[str, dict[str, str]] = {
    "01-devices": {"en": "01 · Devices 101", "zh": "01 · 设备入门"},
    "02-dataparallel": {"en": "02 · DataParallel", "zh": "02 · DataParallel"},
    "03-embedding": {"en": "03 · Embedding indices and labels", "zh": "03 · Embedding 索引与标签"},
    "04-batches": {"en": "04 · Moving whole batches", "zh": "04 · 整批数据的移动"},
    "05-inside": {"en": "05 · Tensors born inside the model", "zh": "05 · 在模型内部创建的张量"},
    "06-multigpu": {"en": "06 · Several GPUs and DDP", "zh": "06 · 多卡训练与 DDP"},
    "07-checkpoints": {"en": "07 · Saving and loading across devices", "zh": "07 · 跨设备保存与加载"},
    "08-amp": {"en": "08 · Mixed precision", "zh": "08 · 混合精度"},
    "09-debugging": {"en": "09 · A debugging method", "zh": "09 · 一套排查方法"},
}
