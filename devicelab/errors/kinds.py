"""The families of messages the index knows, in the order they are tried: device errors first, then the
errors it recognises only to decline them (dtype, shape, memory, CUDA runtime) with a one-line pointer.

Wordings come from PyTorch's sources 1.0-2.14 (the generated check in each version, hand-written TORCH_CHECKs,
torch/nn/parallel, torch/serialization.py, the MPS kernels) and from messages users pasted in public threads,
Chinese renderings included.
"""

from __future__ import annotations

from .core import DEVICE, DEVICE_TYPES, ErrorKind, Route

D = DEVICE
ACCEL = r"^(cuda|mps|xpu|hpu|npu|xla|privateuseone|mtia|hip)"
MATMUL = r"addmm|_mm$|^mm$|bmm|matmul|linear|addmv|_mv$|baddbmm|addbmm"
NORM_CONV = r"layer_norm|batch_norm|group_norm|instance_norm|conv|convolution|cudnn|prelu"
# Names of an optimizer's own state tensors (Adam, AdamW, SGD with momentum, RMSprop, Adagrad): a paste that shows
# them failed inside the optimizer's update.
# An embedding in the paste (a layer's name, F.embedding, a frame in torch/nn/modules/sparse.py).
EMBEDDING = r"[Ee]mbed|modules/sparse\.py|EmbeddingBag"
# (the foreach and fused optimizers name their lists in the plural: "exp_avgs, and exp_avg_sqs must have ...")
OPTIMIZER_STATE = (r"\b(?:exp_avgs?|exp_avg_sqs?|max_exp_avg_sqs?|momentum_buffers?(?:_list)?|square_avgs?|"
                   r"state_sums?)\b")

# A multi-GPU program's words in the paste (DataParallel, DDP, FSDP, DeepSpeed, a device map).
# (a wavelet "scattering" transform is no scatter)
MULTI_GPU = (r"DataParallel|[Rr]eplica|[Ss]catter(?!ing)|[Bb]roadcast|device_ids|local[_ ]rank|NCCL|nccl|all_reduce|"
             r"all_gather|[Dd]istributed|SyncBatchNorm|FSDP|FullyShard|deepspeed|DeepSpeed|different GPUs|device_map|"
             # FSDP's own word for the GPU a rank computes on ("Expects tensor to be on the compute device cuda:1")
             r"\bcompute device\b|"
             # Chinese: "several cards", "two cards", "multi-GPU"
             r"多卡|[多两几][张块个种]卡|多个? ?GPU|多显卡|双卡|不同(?:的)? ?(?:GPU|gpu|显卡)|"
             # "多张显卡", "4张V100", "两块GPU"
             r"[多两几二三四五六七八2-9][张块个] ?(?:显卡|GPU|gpu|[VAHL]\d{2,3}\b|"
             r"(?:RTX ?|GTX ?)?[1-5]0[5-9]0(?: ?Ti)?\b)|"
             # in English: "DDP", "multi-GPU training", "multiple GPUs", "more than one GPU"
             r"\bDDP\b|\b[Mm]ulti-?(?:GPU|gpu)|\b(?:multiple|several|many|more than one) GPUs?\b|"
             # a second GPU said in words: "when training a model in different GPU", "on another GPU"
             r"\b(?:another|a different|different|other|second) (?:GPU|gpu)s?\b|"
             # a count of GPUs: "on a 8gpu node", "with 4 GPUs", "2x GPU"
             r"\b(?:[2-9]|1[0-6]) ?(?:x ?)?(?:GPUs|gpus|GPU|gpu)\b|"
             # a count of cards by model: "two 3090s", "4x A100", "8 V100s"
             r"\b(?:two|three|four|five|six|seven|eight|[2-9]|1[0-6]) ?(?:x ?)?(?:RTX ?|GTX ?)?"
             r"(?:[1-5]0[5-9]0(?: ?Ti)?|[VAHL]\d{2,3}|A[456]000)s?\b")
# A paste that names two different GPUs by number ("cuda:1" in its settings, "device 0" in its error): a multi-GPU
# program. A version ("CUDA 11.8") is no GPU number.
TWO_GPUS = (r"(?:cuda:|cuda\(|[Dd]evice[- ]|GPU[- ]?|\bgpu[- ]?)(\d)(?!\d|\.\d)[\s\S]{0,400}?"
            r"(?:cuda:|cuda\(|[Dd]evice[- ]|GPU[- ]?|\bgpu[- ]?)(?!\1(?!\d|\.\d))\d(?!\d|\.\d)")
# A program said to work on the default GPU only, without a pair of numbers: "only works with cuda:0", "incorrect
# results on non-default GPUs", "hard-coded to GPU 0", "必须为0卡"
OTHER_GPU = (r"\bonly (?:works?|runs?) (?:on|with|for) (?:the )?(?:cuda:0|(?:GPU|gpu|[Dd]evice) ?[:#]? ?0|"
             r"(?:first|default) (?:GPU|gpu|device))(?![\w:])|\bnon-default (?:CUDA |cuda )?(?:GPU|gpu|device)s?\b|"
             r"\bhard-?coded\b[^.\n]{0,30}?\b(?:cuda:0|(?:GPU|gpu|[Dd]evice) ?[:#]? ?0|the first GPU)(?![\w:])|"
             r"(?:必须|只能)(?:为|用|是|在|使用)? ?(?:cuda:0|(?:GPU|gpu) ?0|0 ?号? ?(?:卡|GPU|gpu|显卡))")
# A poster who has one GPU: an old "tensors are on different GPUs" then meant the CPU and the GPU
ONE_GPU_ONLY = (r"\b(?:[Ii]|[Ww]e) (?:only |just )?ha(?:ve|d) (?:only |just )?(?:one|a single|1) GPU\b|"
                r"只有一(?:张|块|个) ?(?:显卡|GPU|卡)")
# An optimizer resumed from a checkpoint, in the poster's words ("error when load checkpoint and finetune with
# optimizer"): its state was loaded where the model was not (chapter 07)
RESUMED_OPTIMIZER = (r"\b(?:[Oo]ptimi[sz]er|optim)\b[^\n]{0,80}?\b(?:checkpoints?|ckpt|load\w*|resum\w*)\b|"
                     r"\b(?:checkpoints?|ckpt|load\w*|resum\w*)\b[^\n]{0,80}?\b(?:[Oo]ptimi[sz]er|optim)\b")
# Tensors a function makes for itself without saying where, in a poster's words: "intermediate tensors", "helper
# tensors ... instead of defaulting to CPU", "we forgot to specify the device"
MADE_WITHOUT_DEVICE = (r"\b(?:intermediate|helper|internal|temporary|auxiliary) tensors?\b|"
                       # "Moved new tensors to the same device as others", "tensors created on the fly"
                       r"\b(?:new|newly (?:created|constructed|made|built)) tensors\b|\bcreated on the fly\b|"
                       r"\bspecify(?:ing)? (?:the |a )?device\b|\bdefault(?:s|ing)? to (?:the )?(?:CPU|cpu)\b|"
                       # "initialized on the default device", "tensors are created without having the device in
                       # mind", "newly constructed tensors are built on CPU", "created within with torch.device(...)"
                       r"\b(?:created|constructed|built|initiali[sz]ed|allocated|made|placed)\b[^.\n]{0,40}?\bon "
                       r"(?:the )?default (?:device|cuda|CUDA|GPU)\b|\bwithout (?:having )?(?:the |a )?device\b|"
                       r"\b(?:created|constructed|built|made) tensors?\b[^.\n]{0,20}?\bon (?:the )?(?:CPU|cpu)\b|"
                       # "tensors are created on cpu when cuda is specified as the device"
                       r"\b[Tt]ensors? (?:are|were|is|was|get|gets|got|being) (?:\w+ )?(?:created|constructed|built|"
                       r"made|initiali[sz]ed|allocated|specified) (?:on|in|as) (?:the )?(?:CPU|cpu)\b|"
                       r"\bwith torch\. ?device\(|"
                       # "IDX and lim remain initialized on CPU after the module is moved"
                       r"\b(?:remain|remains|remained|stay|stays|stayed|left) (?:initiali[sz]ed|created|allocated|"
                       r"constructed) on (?:the )?(?:CPU|cpu)\b|"
                       # "a new tensor c is created without assigning to the same device as input tensors", "`ones`
                       # and `eye` tensors not being assigned to the right device"
                       r"\b(?:created|constructed|built|made|initiali[sz]ed|allocated)\b without (?:assigning|"
                       r"specifying|setting|passing|giving|moving|putting)\b|"
                       r"\bnew tensors?\b[^.\n]{0,20}?\b(?:created|constructed|built|made|allocated)\b|"
                       r"\b(?:zeros|ones|empty|full|arange|eye|linspace|randn|rand|randint)(?: and \w+)? tensors?\b|"
                       # "place zeros(1) on the same device as the param"
                       r"\b(?:zeros|ones|empty|full|arange|randn|rand|eye|tensor)\([^)\n]{0,30}\)[^.\n]{0,30}?"
                       r"\b(?:on|to) the (?:same|default|right|correct) device\b|"
                       # "some variables in the computation are located in CPU", "tensors being built and processed
                       # in the layer were always getting sent to 'cpu'"
                       r"\b(?:variables?|tensors?|values?) (?:used )?in the (?:computation|calculation|function|"
                       r"method|layer|module|library)\b[^.\n]{0,30}?\b(?:on|in|to) (?:the )?'?(?:CPU|cpu)\b|"
                       r"\btensors? (?:being |that are |which are |that get |that were )?(?:built|created|constructed|"
                       r"made|generated)\b[^.\n]{0,60}?\b(?:sent|moved|put|placed|kept|left|on|to|in) (?:to |on |in )?"
                       r"(?:the )?'?(?:CPU|cpu)\b")
# A model trained on a GPU and used where there is none, in a poster's words: "Model trained on GPU is unable to
# predict on CPU", "gpu训练cpu预测"
TRAINED_ON_GPU_USED_ON_CPU = (
    r"\b(?:[Tt]rained|[Ss]aved)\b[^\n]{0,40}?\b(?:GPU|gpu|cuda|CUDA)s?\b[^\n]{0,80}?\b(?:[Pp]redict\w*|[Ii]nfer\w*|"
    r"[Rr]un\w*|[Tt]est\w*|[Dd]eploy\w*|[Ss]ampl\w*|[Gg]enerat\w*|[Ee]valuat\w*)\b[^\n]{0,40}?"
    r"(?:\b(?:on|to|with) (?:a |an |my )?(?:CPU|cpu)\b|"
    r"\b(?:CPU|cpu)[- ]only\b|\bonly[- ](?:CPU|cpu)\b|\bwithout (?:a |any )?(?:GPU|CUDA)\b)|"
    r"(?:GPU|gpu|cuda|CUDA|显卡) ?上?训练[^。\n]{0,12}?(?:CPU|cpu) ?上?(?:预测|推理|加载|运行|测试|部署)")
# A fix, quoted in a post, that moves a model's own attribute where the model runs: "需要在这里添加self.ids =
# self.ids.to(self.device)", "the fix is to add self.mask = self.mask.to(self.device)".
FIX_MOVES_ATTRIBUTE = (r"(?:添加|加上|加入|改成|改为|需要|应该|\b[Aa]dd(?:ed|ing|s)?\b|\b[Nn]eeds? to\b|\b[Ss]hould\b|"
                       r"\b[Ff]ix(?:ed|es)?\b|\b[Ii]nsert(?:ed|s)?\b)[^\n]{0,30}?\bself\.\w+ ?= ?self\.\w+\.to\("
                       r"[^()\n]{0,40}?device[^()\n]{0,20}?\)")
# Chinese renderings that Chinese posts quote (machine or hand translations of the English sentence).
ZH_SAME = r"(?:预期|期望|应该|要求)?所有(?:的)?张量(?:都)?(?:应该)?(?:在|位于|处于)同一(?:个)?设备上"

# --------------------------------------------------------------------------------------------- device errors

# MPS's "Placeholder storage has not been allocated on MPS device!": what it means, for the families that know it.
MPS_PLACEHOLDER_READING = {
    "en": "On Apple's MPS device a kernel found one of its tensors with no storage on the MPS device: a tensor it uses "
    "is still on the CPU (the batch, a layer's weight, or a tensor made without `device=`). This wording names neither "
    "the tensor nor the argument: print the `.device` of every tensor the operation uses, and move the one on the CPU "
    "to `mps`.",
    "zh": "在 Apple 的 MPS 设备上，某个内核发现它的一个张量在 MPS 设备上没有存储：它用到的某个张量还在 CPU 上"
    "（批次、某一层的权重，或没有指定 `device=` 就创建的张量）。这种措辞既不说是哪个张量，也不说是哪个参数："
    "打印这个运算用到的每个张量的 `.device`，把在 CPU 上的那个移到 `mps`。",
}

SAME_DEVICE = ErrorKind(
    name="same_device",
    chapter="01-devices",
    confident=False,
    candidates=("05-inside", "09-debugging"),
    causes=("batch_not_moved", "model_not_moved", "layer_outside_to"),
    patterns=(
        # torch >= 2.8
        r"[Ee]xpected all tensors to be on the same device, but got (?P<arg>\w+) is on "
        r"(?P<found>" + D + r"), different from other tensors on (?P<want>" + D + r")"
        r"(?: \(when checking argument in method (?P<op>\w+))?",
        # torch 1.9 .. 2.7 (1.9 spells it "arugment"); the short form, with no operation, is TensorIterator's
        r"[Ee]xpected all tensors to be on the same device, but found (?P<_form>at least two devices), (?P<want>" + D +
        r") and "
        r"(?P<found>" + D + r")!?(?: \(when checking (?:argument|arugment) for argument (?P<arg>\w+) in method "
        r"(?P<op>\w+))?",
        # hand-written cuBLAS/CPU addmm checks (2.x)
        r"Expected all tensors to be on the same device\. (?P<op>\w+):? expected '(?P<arg>\w+)' to be (?:a )?"
        r"(?P<want>CUDA|CPU)(?: tensor)?, but got (?:tensor on )?(?P<found>" + D + r"|CUDA|CPU)",
        # torch 1.0 .. 1.8 (the TH/THC legacy functions)
        r"Expected object of device type (?P<want>\w+) but got device type (?P<found>\w+)\b(?! for sequence)"
        r"(?: for argument #\d+ "
        r"'(?P<arg>\w+)')?(?: in call to (?P<op>\w+))?",
        # torch <= 1.3
        r"Expected object of backend (?P<want>\w+) but got backend (?P<found>\w+)\b(?! for sequence)"
        r"(?: for argument #\d+ "
        r"'(?P<arg>\w+)')?",
        # torch 0.4 .. 1.0: legacy type names carry the device (and the dtype: same device is a dtype error)
        r"Expected object of type (?P<want>torch\.[\w.]+?)\.? but found type (?P<found>torch\.[\w.]+?)\.?(?: for "
        r"argument #\d+ '(?P<arg>\w+)')?(?![\w.])",
        # torch 1.4 .. 1.8 checkSameGPU (aten/src/ATen/TensorUtils.cpp): names the argument(s) on the CPU
        r"Tensor for (?:argument #\d+ )?'(?P<arg>\w+)' is on (?P<found>CPU|GPU),(?: Tensor for [^,]*? is on CPU,)* "
        r"but expected (?:it|them) to be on (?P<want>GPU)(?: \(while checking arguments for (?P<op>\w+))?",
        r"Tensor for (?:argument #\d+ )?'(?P<arg>\w+)' is on (?P<found>CPU)",
        # TensorIterator in torch 1.3 .. 1.5, and 1.0 .. 1.2
        r"(?P<_expected>expected device) (?P<want>" + D + r")(?: and dtype \w+)? but got device (?P<found>" + D + r")",
        r"expected type (?P<want>torch\.[\w.]+Tensor) but got (?P<found>torch\.[\w.]+Tensor)",
        # Apple MPS has no generated check: F.linear and other kernels say this instead
        r"Tensor for argument (?:#\d+ )?'?(?P<arg>\w+)'? is on (?P<found>" + D + r") but expected on (?P<want>mps)",
        r"(?P<_mps>Placeholder storage has not been allocated on MPS device)",
        r"(?P<_mps>MPS ?设备上未分配占位符存储)",
        # torch.compile's fake tensors (the tracing of a compiled function), since 2.0
        # (an out-of-tree backend's own device names too: "spyre:0, cpu")
        r"(?P<_fake>Unhandled FakeTensor Device Propagation) for (?P<op>[\w.]+), found two different devices "
        r"(?P<want>" + D + r"|[a-z]\w*:\d+), (?P<found>" + D + r"|[a-z]\w*:\d+)",
        # Chinese renderings
        ZH_SAME + r"[^!]{0,40}?(?P<want>" + D + r") ?(?:和|与|以及|and) ?(?P<found>" + D + r")"
        r"(?:[^!]{0,60}?(?:参数|argument) ?(?P<arg>\w+)[^!]{0,30}?(?:方法|method) ?(?P<op>\w+))?",
        ZH_SAME,
        r"张量[^!]{0,20}?在 ?(?P<want>" + D + r") ?(?:和|与|以及) ?(?P<found>" + D + r")",
        r"期望设备类型为 ?(?P<want>\w+) ?的对象,? ?但参数 ?#\d+ ?'(?P<arg>\w+)' ?在调用 ?(?P<op>\w+) ?时得到设备类型 ?"
        r"(?P<found>\w+)",
        r"期望 ?(?P<want>cuda|cpu|CUDA|CPU) ?类型(?:的)?对象,? ?但(?:是)?得到(?:了)? ?(?P<found>cuda|cpu|CUDA|CPU)",
        # the 2.8 form cut after the device of the argument it names ("... but got index is on cuda:0...")
        r"Expected all tensors to be on the same device, but got (?P<arg>\w+) is on (?P<found>" + D + r")",
        # a paste cut short after the head, or inside it at the very end of the paste ("... Expected all tensors to
        # be on the sa"); not before "to be": vmap's "Expected all tensors to have the same size ..." starts the same
        r"Expected all tensors to be on the same device",
        r"Expected all tensors to be" + "".join("(?:" + c for c in " on the same devic") + ")?" * 18 + "$",
    ),
    routes=(
        Route({"relation": "^index$"}, "06-multigpu", True, ("multi_gpu_mix",), ("09-debugging",)),
        Route({"relation": "^same$", "dtypes": "different"}, "08-amp", True, (), (), False, "dtype_mismatch"),
        # the paste shows an optimizer's own state (Adam's exp_avg, SGD's momentum_buffer): the state stayed behind
        Route({"_text": OPTIMIZER_STATE}, "07-checkpoints", False, ("optimizer_state",), ("01-devices",)),
        Route({"_text": RESUMED_OPTIMIZER, "relation": "^type$"}, "07-checkpoints", False, ("optimizer_state",),
              ("01-devices",)),
        # meta with an operation named reads as any other pair of devices (the course's tests stand meta in for a GPU)
        Route({"types": "meta", "op": "^$"}, "07-checkpoints", False, ("meta_weights",), ("09-debugging",)),
        Route({"_mps": "."}, "01-devices", False, ("mps_mix", "layer_outside_to"), ("05-inside",)),
        Route({"_fake": "."}, "05-inside", False, ("tensor_made_inside", "batch_not_moved"),
              ("09-debugging", "01-devices")),
        # the legacy type names in autograd's check of a gradient (GRADIENT_DEVICE's older wording): made inside
        Route({"_text": r"Backward\d* returned an invalid gradient"}, "05-inside", False, ("tensor_made_inside",),
              ("01-devices", "09-debugging")),
        # (after MPS's placeholder and the fake tensors' wordings, which name no device either)
        # the devices cut off or never printed ("... but found at least two devices"), in a paste that shows a
        # multi-GPU program ("works on one GPU, fails on several", DDP, "多张显卡")
        Route({"relation": "^$", "_text": TWO_GPUS + "|" + MULTI_GPU}, "06-multigpu", False, ("multi_gpu_mix",),
              ("01-devices", "09-debugging")),
        Route({"op": "_foreach|fused_adam|_adam|adamw|_sgd|optim"}, "07-checkpoints", False, ("optimizer_state",),
              ("02-dataparallel", "09-debugging")),
        # the class weights of CrossEntropyLoss / NLLLoss: chapter 02's section, whichever side moved
        Route({"op": "nll_loss|cross_entropy", "arg": "^weight$"}, "02-dataparallel", True,
              ("loss_weight_not_moved", "model_not_moved")),
        Route({"op": "nll_loss|cross_entropy|loss", "arg": "^target$", "found_dev": "^cpu"}, "03-embedding", True,
              ("labels_not_moved",)),
        Route({"op": "nll_loss|cross_entropy|loss", "arg": "^target$"}, "01-devices", False,
              ("model_not_moved", "labels_not_moved"), ("03-embedding", "02-dataparallel")),
        # An nn.Embedding looks its rows up with index_select; so do libraries that gather along an index that came
        # with the batch (a graph's edges): the chapter is 03 with confidence only when an embedding shows.
        Route({"op": "index_select|embedding", "arg": "^ind", "found_dev": "^cpu", "_text": EMBEDDING},
              "03-embedding", True, ("ids_not_moved",)),
        Route({"op": "index_select|embedding", "_text": EMBEDDING}, "03-embedding", True,
              ("table_not_moved", "ids_not_moved")),
        Route({"op": "embedding"}, "03-embedding", True, ("table_not_moved", "ids_not_moved")),
        Route({"op": "index_select", "arg": "^ind", "found_dev": "^cpu"}, "03-embedding", False,
              ("ids_not_moved", "batch_not_moved"), ("04-batches", "01-devices")),
        Route({"op": "index_select"}, "03-embedding", False, ("table_not_moved", "ids_not_moved"),
              ("04-batches", "01-devices")),
        Route({"op": "gather|scatter|index_add|index_put|index_copy|take"}, "05-inside", False,
              ("tensor_made_inside", "ids_not_moved"), ("03-embedding", "01-devices")),
        Route({"op": "^$", "arg": "^(index|indices)$"}, "03-embedding", False, ("ids_not_moved", "table_not_moved"),
              ("05-inside", "01-devices")),
        Route({"arg": "^(hx|h0|c0|hidden|hx_)$", "found_dev": "^cpu"}, "05-inside", False, ("hidden_state",),
              ("01-devices",)),
        Route({"op": "_cat|_stack|^cat$|^stack$", "arg": "^tensors$"}, "05-inside", False,
              ("tensor_made_inside", "batch_not_moved"), ("01-devices",)),
        Route({"arg": "^tensors$"}, "05-inside", False, ("tensor_made_inside", "batch_not_moved"), ("01-devices",)),
        # a norm or conv layer's own parameters on the CPU, its input on the accelerator
        Route({"op": NORM_CONV, "arg": "^(weight|bias|running_mean|running_var)$", "found_dev": "^cpu"}, "05-inside",
              False, ("layer_outside_to", "model_not_moved"), ("01-devices", "02-dataparallel")),
        Route({"op": NORM_CONV, "arg": "^(weight|bias)$"}, "01-devices", False, ("batch_not_moved", "model_not_moved"),
              ("02-dataparallel",)),
        Route({"op": NORM_CONV, "arg": "^(self|input)$", "found_dev": "^cpu"}, "01-devices", True,
              ("batch_not_moved",), ("02-dataparallel",)),
        Route({"op": NORM_CONV}, "01-devices", False, ("model_not_moved", "batch_not_moved"), ("02-dataparallel",)),
        # nn.Linear is addmm(bias, input, weight.T): mat1 is the input, mat2 the weight
        Route({"arg": "^(mat1|input)$", "found_dev": "^cpu"}, "01-devices", True, ("batch_not_moved",)),
        Route({"arg": "^(mat1|input)$", "want_dev": "^cpu"}, "01-devices", True, ("model_not_moved",),
              ("02-dataparallel", "05-inside")),
        Route({"arg": "^(mat2|self|vec|batch2|weight)$"}, "01-devices", False,
              ("model_not_moved", "layer_outside_to", "batch_not_moved"), ("05-inside", "02-dataparallel")),
        Route({"op": "^$", "arg": "^(other|)$", "_text": MADE_WITHOUT_DEVICE}, "05-inside", False,
              ("tensor_made_inside", "batch_not_moved"), ("01-devices", "09-debugging")),
        Route({"arg": "^other$"}, "01-devices", False, ("tensor_made_inside", "batch_not_moved"), ("05-inside",)),
        # the short form: an element-wise operation, often with a tensor the model holds or makes (chapter 05)
        Route({"_form": ".", "op": "^$"}, "01-devices", False,
              ("tensor_made_inside", "batch_not_moved", "model_not_moved"),
              ("05-inside", "09-debugging")),
    ),
    example="Expected all tensors to be on the same device, but got weight is on cpu, "
    "different from other tensors on cuda:0 (when checking argument in method "
    "wrapper_CUDA_nll_loss_forward)",
    reading={
        "en": "PyTorch checked the devices of every tensor an operation receives before running it. The operation "
        "({op}) got its argument `{arg}` on {found} while the first tensor it checked was on {want}. The check names "
        "the first argument that differs from the first tensor, which is not always the misplaced one: decide which "
        "device you meant (usually the accelerator) and move whatever is on the other one.",
        "zh": "PyTorch 在执行运算前检查了它收到的每个张量所在的设备。运算（{op}）的参数 `{arg}` 在 {found} 上，"
        "而它检查的第一个张量在 {want} 上。检查报出的是第一个与第一个张量设备不同的参数，不一定就是放错的那个："
        "想清楚本该在哪个设备上（通常是加速器），再把不在那里的东西移过去。",
    },
    reading_by_marker={
        "_mps": MPS_PLACEHOLDER_READING,
        "_expected": {
            "en": "An operation (the TensorIterator check of an older PyTorch) expected its tensors on {want} and got "
            "one "
            "on {found}: this wording lists the expected device first, then the one it got. Decide which device you "
            "meant and move whatever is on the other one.",
            "zh": "某个运算（较早 PyTorch 版本的 TensorIterator 检查）要求张量在 {want} 上，却得到了一个在 {found} 上的"
            "张量："
            "这种措辞先列出期望的设备，再列出实际得到的设备。想清楚本该在哪个设备上，再把不在那里的东西移过去。",
        },
    },
    reading_without_op={
        "en": "PyTorch found the tensors of one operation on two devices, {want} and {found}. This short form of the "
        "message names neither the operation nor the argument, and it lists the two devices in a fixed order, not by "
        "which tensor is misplaced. The operation is the last line of your own code in the traceback: print the "
        "`.device` of every tensor it uses, decide which device you meant (usually the model's), and move whatever is "
        "on the other one.",
        "zh": "PyTorch 发现同一个运算的张量分布在两个设备上：{want} 和 {found}。这种简短的报错既不说是哪个运算，"
        "也不说是哪个参数，而且两个设备按固定顺序列出，并不表示哪个张量放错了。出错的运算就是 traceback 里"
        "你自己代码的最后一行：打印它用到的每个张量的 `.device`，想清楚它们本该在哪个设备上（通常是模型所在的"
        "设备），再把不在那里的张量移过去。",
    },
)

CONV = ErrorKind(
    name="conv_input_weight_type",
    chapter="02-dataparallel",
    device_fields=("input", "weight"),
    patterns=(
        r"Input type \((?P<input>[^)]+)\) and weight type \((?P<weight>[^)]+)\) should be the same",
        r"输入类型 ?\((?P<input>[^)]+)\) ?(?:和|与)权重类型 ?\((?P<weight>[^)]+)\)",
        # the same check, cut short, and MPS's own wordings (the reproduce helper accepts them on a Mac)
        r"Input type \((?P<input>[^)]+)\) and weight type \((?P<weight>[^)]+)\)",
        r"Tensor for argument (?:#\d+ )?'?(?P<arg>\w+)'? is on (?P<found>" + D + r") but expected on (?P<want>mps)",
        r"(?P<_mps>Placeholder storage has not been allocated on MPS device)",
    ),
    routes=(
        Route({"relation": "^same$"}, "08-amp", True, (), (), False, "dtype_mismatch"),
        Route({"relation": "^index$"}, "06-multigpu", True, ("multi_gpu_mix",)),
        Route({"_mps": "."}, "01-devices", False, ("mps_mix",), ("05-inside",)),
        Route({"want": "mps"}, "01-devices", False, ("mps_mix",), ("05-inside",)),
        Route({"devices": "^$"}, "08-amp", True, (), (), False, "dtype_mismatch"),
        Route({"input_dev": ACCEL, "weight_dev": "^cpu"}, "02-dataparallel", False,
              ("model_not_moved", "layer_outside_to"), ("01-devices", "05-inside")),
        Route({"input_dev": "^cpu", "weight_dev": ACCEL}, "01-devices", True, ("batch_not_moved",),
              ("02-dataparallel",)),
    ),
    confident=False,
    causes=("model_not_moved", "batch_not_moved"),
    candidates=("01-devices",),
    example="Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",
    reading_by_marker={
        "_mps": MPS_PLACEHOLDER_READING,
    },
    reading={
        "en": "A convolution compares its input with its weight before it runs. The input's type is {input} and the "
        "weight's is {weight}: the legacy type names carry the device (`torch.cuda.FloatTensor` is a float32 tensor "
        "on a GPU, `torch.FloatTensor` one on the CPU) and the dtype. Here the input is on {input_dev} and the "
        "weight on {weight_dev}.",
        "zh": "卷积在运行前会比较输入和权重。输入的类型是 {input}，权重的类型是 {weight}：这些旧式类型名里包含了设备"
        "（`torch.cuda.FloatTensor` 是 GPU 上的 float32 张量，`torch.FloatTensor` 是 CPU 上的）和 dtype（数据类型）。"
        "这里输入在 {input_dev} 上，权重在 {weight_dev} 上。",
    },
)

DATAPARALLEL = ErrorKind(
    name="dataparallel_module_device",
    chapter="06-multigpu",
    causes=("dataparallel_module",),
    candidates=("02-dataparallel",),
    patterns=(
        r"module must have its parameters and buffers on device (?P<want>" + D + r") ?\(device_ids\[0\]\) ?but found "
        r"one of them on device ?: ?(?P<found>" + D + r")",
        r"module must have its parameters and buffers on device",
        # DataParallel's gather: a replica returned a tensor that is not on a GPU
        r"(?P<_gather>assert all\(map\(lambda i: i\.is_cuda, inputs\)\))",
        r"(?:模型|模块)(?:的)?参数和缓冲区必须(?:位于|在) ?(?:设备 ?)?(?P<want>[a-z]+:?\d*)[^,]{0,30}?(?:,? ?但(?:是)?"
        r"发现(?:其中)?(?:有)?一个(?:位于|在) ?(?:设备 ?)?(?P<found>[a-z]+:?\d*))?",
    ),
    routes=(Route({"_gather": "."}, "06-multigpu", False, ("tensor_made_inside", "multi_gpu_mix"), ("05-inside",)),),
    example="module must have its parameters and buffers on device cuda:0 (device_ids[0]) "
    "but found one of them on device: cpu",
    reading={
        "en": "DataParallel copies the module from device_ids[0] ({want}) to the other GPUs on every forward pass, so "
        "the module must already be there; one parameter or buffer was on {found}.",
        "zh": "DataParallel 每次前向传播都会把模块从 device_ids[0]（{want}）复制到其他 GPU，所以模块必须已经在那里；"
        "但有一个参数或缓冲区在 {found} 上。",
    },
)

DDP = ErrorKind(
    name="ddp_device",
    chapter="06-multigpu",
    causes=("ddp_setup",),
    patterns=(
        r"DistributedDataParallel device_ids and output_device arguments only work with single-device",
        r"DistributedDataParallel's input module must be on the same type of devices",
        r"Attempt to perform collective on tensor not on device passed to init_process_group",
        r"Tensors must be CUDA and dense",
        r"No backend type associated with device type (?P<found>\w+)",
        r"ProcessGroupNCCL is only supported with GPUs(?!, no GPUs found)",
        r"Expected tensor for argument #\d+ '(?P<arg>\w+)' to have the same device as tensor for argument #\d+ "
        r"'\w+' ?; but device (?P<found>\d+) does not equal (?P<want>\d+)(?: \(while checking arguments for "
        r"(?P<op>\w+))?",
        r"(?P<_thc>arguments are located on different (?:GPUs|gpus))",
        r"(?P<_thc>THC\w*_checkGPU|checkGPU)",
        r"all tensors must be on devices\[0\]",
        # FSDP: the module's device and device_id disagree on a rank
        r"Inconsistent compute device and device_id on rank \d+ ?: ?(?P<want>" + D + r") vs (?P<found>" + D + r")",
        # FSDP with parameter CPU offloading: the module must stay on the CPU, and it was moved
        r"FSDP-managed module with parameter CPU offloading enabled has parameters on (?P<found>" + D + r")",
    ),
    routes=(Route({"_thc": "."}, "06-multigpu", False, ("multi_gpu_mix",), ("01-devices",)),),
    example="DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-"
    "device GPU modules or CPU modules, but got device_ids [0], output_device None, and module parameters "
    "{device(type='cpu')}.",
    reading={
        "en": "A multi-GPU setup put a module or a tensor on another device than the one its process or wrapper "
        "expects (DistributedDataParallel, process groups, or two GPUs in one operation).",
        "zh": "多卡设置中，某个模块或张量所在的设备与其进程或包装器预期的不同"
        "（DistributedDataParallel、进程组，或一个运算里出现了两块 GPU）。",
    },
)

INDICES_CURRENT = ErrorKind(
    name="indices_current_device",
    chapter="03-embedding",
    causes=("ids_not_moved", "table_not_moved"),
    device_fields=(),
    patterns=(r"[Ii]nput, output and indices must be on the current device", r"输入,? ?输出和索引必须在当前设备上"),
    example="Input, output and indices must be on the current device",
    reading={
        "en": "This is the PyTorch 1.7–1.8 wording of an index operation (an nn.Embedding lookup, index_select) whose "
        "weight and indices are on different devices. Since 1.9 the same mistake prints the generated device check "
        "instead (\"... but got index is on cpu ...\").",
        "zh": "这是 PyTorch 1.7–1.8 对索引类运算（nn.Embedding 查表、index_select）的措辞：权重和索引在不同的设备上。"
        "从 1.9 起，同样的错误打印的是自动生成的设备检查（“... but got index is on cpu ...”）。",
    },
)

RNN = ErrorKind(
    name="rnn_hidden_device",
    chapter="05-inside",
    causes=("hidden_state",),
    candidates=("01-devices",),
    patterns=(
        # RNN, LSTM and GRU check their own devices (aten/src/ATen/native/RNN.cpp)
        r"Input and (?P<arg>hidden|parameter) tensors are not at the same device, found input tensor at "
        r"(?P<want>" + D + r") and (?:hidden|parameter) tensor at (?P<found>" + D + r")",
        r"Input and (?P<arg>hidden|parameter) tensors are not at the same device",
        r"输入(?:张量)?和(?P<arg>隐藏|参数)(?:状态)?张量不在同一(?:个)?设备",
    ),
    routes=(
        Route({"relation": "^index$"}, "06-multigpu", True, ("multi_gpu_mix",)),
        Route({"arg": "^(parameter|参数)$"}, "01-devices", False, ("model_not_moved", "batch_not_moved"),
              ("05-inside",)),
    ),
    example="Input and hidden tensors are not at the same device, found input tensor at cuda:0 and "
    "hidden tensor at cpu",
    reading={
        "en": "An RNN, LSTM or GRU compares the devices of its input and of its {arg} tensors before it runs: the "
        "input is on {want}, a {arg} tensor on {found}. Decide which device you meant, then move the other. A hidden "
        "state is not a parameter: `model.to()` never moves the `h0` you build. Create it where the input is: "
        "`x.new_zeros(layers, batch, hidden)` or `torch.zeros(..., device=x.device)` — or pass no hidden state at all "
        "(zeros on the input's device are the default).",
        "zh": "RNN、LSTM 和 GRU 在运行前会检查输入张量和它们自己的张量（隐藏状态、参数）是否在同一个设备上：输入在 "
        "{want} "
        "上，报错点名的 `{arg}` 张量在 {found} 上。先想清楚应该在哪个设备上，再把另一个移过去。隐藏状态不是参数："
        "`model.to()` 不会移动你自己构造的 "
        "`h0`。请在输入所在的设备上创建它：`x.new_zeros(layers, batch, hidden)` 或 "
        "`torch.zeros(..., device=x.device)`；也可以干脆不传隐藏状态（默认就是输入所在设备上的全零张量）。",
    },
)

CAT = ErrorKind(
    name="cat_same_device",
    chapter="05-inside",
    confident=False,
    causes=("tensor_made_inside", "batch_not_moved"),
    candidates=("01-devices",),
    patterns=(
        # torch.cat of tensors on two devices in older PyTorch 1.x, quoted from public reports
        # (current versions print the generated check, naming `tensors` in wrapper_..._cat: see same_device)
        r"All input tensors must be on the same device(?:\. Received (?P<want>" + D + r") and (?P<found>" + D + r"))?",
        r"Expected object of backend (?P<want>\w+) but got backend (?P<found>\w+) for sequence element "
        r"(?P<arg>\d+) in sequence argument at position #\d+ 'tensors'",
        r"Expected a Tensor of type (?P<want>torch\.[\w.]+) but found a type (?P<found>torch\.[\w.]+) for sequence "
        r"element (?P<arg>\d+)",
    ),
    routes=(
        Route({"relation": "^same$", "dtypes": "different"}, "08-amp", True, (), (), False, "dtype_mismatch"),
        Route({"relation": "^index$"}, "06-multigpu", True, ("multi_gpu_mix",)),
    ),
    example="All input tensors must be on the same device. Received cuda:0 and cpu",
    reading={
        "en": "This is how older PyTorch 1.x versions worded a torch.cat (or torch.stack) of tensors on two devices "
        "({want} and {found}). Current versions print the generated device check instead (\"... but got tensors is "
        "on cpu ... wrapper_CUDA_cat\").",
        "zh": "这是较早的 PyTorch 1.x 版本对 torch.cat（或 torch.stack）拼接两个设备"
        "（{want} 和 {found}）上张量时的措辞。"
        "现在的版本打印的是自动生成的设备检查（“... but got tensors is on cpu ... wrapper_CUDA_cat”）。",
    },
)

ADVANCED_INDEX = ErrorKind(
    name="index_device",
    chapter="05-inside",
    confident=False,
    causes=("index_device", "tensor_made_inside"),
    candidates=("01-devices", "03-embedding"),
    patterns=(
        r"indices should be either on cpu or on the same device as the indexed tensor \((?P<want>" + D +
        r")\)",
        r"indices should be either on cpu or on the same device",
        r"索引应(?:该)?(?:位于|在) ?cpu ?上?或(?:与|和)被索引(?:的)?张量(?:位于|在)同一(?:个)?设备",
    ),
    device_fields=("want",),
    # Indices on the CPU are accepted: when the indexed tensor is on an accelerator, the indices are on another one
    # (two GPUs, or a model split over GPUs)
    routes=(
        Route({"want": r"^(?:cuda|xpu|npu|hpu|mps)"}, "06-multigpu", False, ("multi_gpu_mix",),
              ("05-inside", "03-embedding")),
    ),
    example="indices should be either on cpu or on the same device as the indexed tensor (cpu)",
    reading={
        "en": "Advanced indexing (`t[idx]`, `t[mask]`) got indices on another device than the tensor it indexes "
        "(on {want}). The indices may be on the CPU or on the indexed tensor's device, nowhere else.",
        "zh": "高级索引（`t[idx]`、`t[mask]`）收到的索引与被索引的张量（在 {want} 上）不在同一设备上。"
        "索引只能在 CPU 上，或者和被索引的张量在同一个设备上。",
    },
)

META = ErrorKind(
    name="expected_device",
    chapter="01-devices",
    confident=False,
    causes=("batch_not_moved", "model_not_moved"),
    candidates=("05-inside", "09-debugging"),
    patterns=(
        # torch/_prims_common check_same_device and meta kernels
        r"Tensor on device (?P<found>" + D + r") is not on the expected device (?P<want>" + D + r")",
        # moving a module whose parameters were never materialised
        r"(?P<_meta>Cannot copy out of meta tensor)",
        r"(?P<_meta>Tensor\.item\(\) cannot be called on meta tensors)",
        # a storage put under a tensor of another device (load_state_dict(assign=True), set_())
        r'(?P<_storage>Attempted to set the storage) of a tensor on device "(?P<found>' + D + r')" to a storage on '
        r'different device "(?P<want>' + D + r')"',
    ),
    routes=(
        Route({"_meta": "."}, "07-checkpoints", False, ("meta_weights",), ("09-debugging",)),
        Route({"types": "meta"}, "07-checkpoints", False, ("meta_weights",), ("09-debugging",)),
        Route({"_storage": "."}, "07-checkpoints", False, ("map_location",), ("05-inside", "01-devices")),
        Route({"relation": "^index$"}, "06-multigpu", True, ("multi_gpu_mix",)),
    ),
    example="Tensor on device meta is not on the expected device cuda:0!",
    reading_by_marker={
        "_meta": {
            "en": "A tensor on the `meta` device has a shape and a dtype but no values, so nothing can be copied out "
            "of it "
            "or read from it. A model built on `meta` (or with `init_empty_weights`, or loaded with "
            "`low_cpu_mem_usage`) "
            "still has parameters there: load its weights into it with `load_state_dict(..., assign=True)`, or make "
            "real, empty tensors with `model.to_empty(device=...)` and then load them, before moving it or running it.",
            "zh": "`meta` 设备上的张量有形状和 dtype，却没有数值，所以不能从中复制或读出任何东西。在 `meta` 上构造的模"
            "型"
            "（或用 `init_empty_weights` 构造、用 `low_cpu_mem_usage` 加载的模型）仍有参数留在那里：先用 "
            "`load_state_dict(..., assign=True)` 把权重装进去，或用 `model.to_empty(device=...)` 生成真实的空张量再加载"
            "，"
            "然后再移动或运行它。",
        },
        "_storage": {
            "en": "A tensor on {found} was given a storage that lives on {want} (`load_state_dict(..., assign=True)`, "
            "`set_()`): a tensor and its storage must be on the same device. Load the checkpoint onto the model's "
            "device "
            "(`torch.load(..., map_location=...)`) first.",
            "zh": "一个在 {found} 上的张量被换上了一个在 {want} 上的存储（`load_state_dict(..., assign=True)`、"
            "`set_()`）："
            "张量和它的存储必须在同一个设备上。请先把检查点加载到模型所在的设备上（`torch.load(..., "
            "map_location=...)`）。",
        },
    },
    reading={
        "en": "An operation expected every tensor on {want} and found one on {found}.",
        "zh": "某个运算要求所有张量都在 {want} 上，却发现有一个在 {found} 上。",
    },
)

GENERATOR = ErrorKind(
    name="generator_device",
    chapter="09-debugging",
    confident=False,
    causes=("generator_device",),
    candidates=("04-batches",),
    patterns=(
        r"Expected an? '(?P<want>\w+)' device type for generator but found '(?P<found>\w+)'",
        r"期望 ?'(?P<want>\w+)' ?设备类型的生成器,? ?但(?:是)?(?:找到|发现|得到)(?:了)? ?'(?P<found>\w+)'",
    ),
    example="Expected a 'cuda' device type for generator but found 'cpu'",
    reading={
        "en": "A random-number generator on {found} was asked to produce numbers for {want} (`torch.randperm`, "
        "`torch.randint`, ... with `generator=`).",
        "zh": "一个位于 {found} 的随机数生成器被要求为 {want} 生成随机数（带 `generator=` 的 `torch.randperm`、"
        "`torch.randint` 等）。",
    },
)

PIN = ErrorKind(
    name="pin_memory_device",
    chapter="04-batches",
    causes=("pin_cuda",),
    device_fields=("found",),
    patterns=(r"cannot pin '(?P<found>torch\.[\w.]+|(?:CUDA|MPS|XPU)\w*Type)'",
              r"(?P<_dense>[Oo]nly dense CPU tensors can be pinned)"),
    example="cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned",
    reading={
        "en": "`pin_memory` copies a CPU tensor into page-locked memory for a faster copy to the GPU; it was given a "
        "tensor already on {found_dev} ({found}).",
        "zh": "`pin_memory` 把 CPU 张量复制到锁页内存里，以便更快地拷贝到 GPU；"
        "它收到的却是已经在 {found_dev} 上的张量"
        "（{found}）。",
    },
    reading_by_marker={
        "_dense": {
            "en": "`pin_memory` copies a CPU tensor into page-locked memory for a faster copy to the GPU; it was given "
            "a tensor that is not a dense CPU tensor, most often one already on the GPU.",
            "zh": "`pin_memory` 把 CPU 张量复制到锁页内存里，以便更快地拷贝到 GPU；它收到的却不是稠密的 CPU 张量，"
            "最常见的是已经在 GPU 上的张量。",
        },
    },
)

NUMPY = ErrorKind(
    name="numpy_device",
    chapter="09-debugging",
    confident=False,
    causes=("numpy_device",),
    candidates=("01-devices",),
    device_fields=("found",),
    patterns=(
        r"can't convert (?P<found>" + D + r") device type tensor to numpy",
        # torch <= 1.4
        r"can't convert (?P<found>CUDA|cuda) tensor to numpy",
        # Chinese renderings: "无法转换CUDA张量为numpy", "无法将cuda0设备类型张量转换为numpy"
        r"无法(?:将|转换) (?P<found>(?:cuda|CUDA|GPU)(?::?\d+)?) (?:设备类型 )?(?:的 )?"
        r"张量 (?:转换)?(?:为|成) numpy",
    ),
    example="can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
    "first.",
    reading={
        "en": "`.numpy()` was called on a tensor on {found}; NumPy arrays live in CPU memory.",
        "zh": "对 {found} 上的张量调用了 `.numpy()`；NumPy 数组只存在于 CPU 内存中。",
    },
)

DESERIALIZE = ErrorKind(
    name="cuda_deserialize",
    chapter="07-checkpoints",
    causes=("map_location",),
    device_fields=(),
    patterns=(
        # torch/serialization.py: a storage saved on a GPU, loaded where that GPU does not exist
        r"Attempting to deserialize object on (?:a )?(?P<want>\w+) device but torch\.\w+\.is_available\(\) is False",
        r"Attempting to deserialize object on (?P<want>\w+) device \d+ but torch\.\w+\.device_count\(\) is \d+",
        r"(?:试图|尝试)在 ?(?P<want>\w+) ?设备上反序列化对象",
        # a traceback cut before the message, through the function that restores a storage's device
        r"(?P<_frame>default_restore_location)",
        # a PyTorch without CUDA kernels asked to make a CUDA tensor: what torch.jit.load of a file saved on a GPU
        # prints on such a machine (the storage is re-created on its saved device)
        r"Could not run '(?P<_nokernels>aten::empty_strided)' with arguments from the '(?P<want>CUDA)' backend",
    ),
    routes=(Route({"_frame": "."}, "07-checkpoints", False, ("map_location",), ("09-debugging",)),
            Route({"_nokernels": "."}, "07-checkpoints", False, ("map_location",), ("01-devices",))),
    example="Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
    "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
    "to map your storages to the CPU.",
    reading={
        "en": "The checkpoint records, for every tensor, the device it was saved from ({want}), and torch.load puts it "
        "back there by default; this machine does not have that device. Tell torch.load where to put the tensors: "
        "`torch.load(path, map_location=device)`.",
        "zh": "检查点为每个张量记下了保存时所在的设备（{want}），torch.load 默认会把它放回那里；"
        "可这台机器上没有那个设备。"
        "请告诉 torch.load 把张量放到哪里：`torch.load(path, map_location=device)`。",
    },
    reading_by_marker={
        "_nokernels": {
            "en": "This PyTorch has no {want} kernels (a build without CUDA), yet it was asked to create a tensor on "
            "{want}. That is what loading a TorchScript file or checkpoint saved on a GPU does on such a machine: "
            "each tensor goes back to the device it was saved from. Say where to put them: "
            "`torch.jit.load(path, map_location=\"cpu\")` (or `torch.load(path, map_location=device)`).",
            "zh": "这个 PyTorch 没有 {want} 内核（不带 CUDA 的版本），却被要求在 {want} 上创建张量。"
            "在这样的机器上加载在 GPU 上保存的 TorchScript 文件或检查点就会这样：每个张量都回到保存时所在的设备。"
            "请指定张量放到哪里：`torch.jit.load(path, map_location=\"cpu\")`"
            "（或 `torch.load(path, map_location=device)`）。",
        },
    },
)

# Old and odd wordings: each names two devices (or a CPU tensor given to GPU code) in its own words.
LEGACY_BACKEND = ErrorKind(
    name="legacy_backend",
    chapter="01-devices",
    confident=False,
    candidates=("05-inside", "09-debugging"),
    causes=("batch_not_moved", "model_not_moved", "layer_outside_to"),
    routes=(
        # the same backend on both sides: the two dtypes differ, not the devices
        Route({"relation": "^same$"}, None, False, device_error=False, family="dtype_mismatch"),
        Route({"_text": OPTIMIZER_STATE}, "07-checkpoints", False, ("optimizer_state",), ("01-devices",)),
        Route({"_text": RESUMED_OPTIMIZER}, "07-checkpoints", False, ("optimizer_state",), ("01-devices",)),
    ),
    patterns=(
        # torch 0.4 .. 1.0 (TensorIterator's ancestor): backend and dtype of both sides
        r"expected backend (?P<want>\w+) and dtype \w+ but got backend (?P<found>\w+) and dtype \w+",
        # torch 1.0 .. 1.2 CPU_tensor_apply / checkBackend
        r"Expected tensor to have (?P<want>\w+) Backend, but got tensor with (?P<found>\w+) Backend"
        r"(?: \(while checking arguments for (?P<op>\w+))?",
        r"Expected tensor for argument #\d+ '(?P<arg>\w+)' to have (?P<want>\w+) Backend, but got tensor with "
        r"(?P<found>\w+) Backend",
    ),
    example="RuntimeError: expected backend CUDA and dtype Float but got backend CPU and dtype Float",
    reading={
        "en": "An old PyTorch wording of the same-device check: the operation wanted every tensor on {want_dev} and "
        "got one on {found_dev}.",
        "zh": "这是旧版 PyTorch 对同一设备检查的说法：该运算要求所有张量都在 {want_dev} 上，"
        "却收到了一个在 {found_dev} 上的张量。",
    },
)

SPARSE_ASSERT = ErrorKind(
    name="sparse_cuda_assert",
    chapter="01-devices",
    confident=False,
    candidates=("09-debugging",),
    causes=("batch_not_moved", "model_not_moved"),
    device_fields=(),
    patterns=(r"(?<![\w!])(?P<_assert>!?\w+\.is_cuda\(\)) INTERNAL ASSERT FAILED",),
    example='RuntimeError: !t.is_cuda() INTERNAL ASSERT FAILED at "../aten/src/ATen/native/sparse/'
    'SparseTensorMath.cpp":1143',
    reading={
        "en": "An internal check of a (sparse) CPU or GPU kernel found a tensor on the other kind of device: one "
        "operand is on the GPU and another on the CPU.",
        "zh": "（稀疏）张量运算内核的内部检查发现了一个位于另一类设备上的张量：一个操作数在 GPU 上，另一个在 CPU 上。",
    },
)

TRITON_POINTER = ErrorKind(
    name="triton_cpu_pointer",
    chapter="01-devices",
    confident=False,
    candidates=("05-inside", "09-debugging"),
    causes=("batch_not_moved", "layer_outside_to"),
    device_fields=(),
    patterns=(r"Pointer argument \(at (?P<arg>\d+)\) cannot be accessed from Triton \(cpu tensor\?\)",
              # Triton's launcher, handed only CPU tensors, looks for a CPU backend it does not have
              r"Cannot find backend for (?P<_cpu>cpu)\b"),
    example="ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)",
    reading={
        "en": "A Triton GPU kernel (a custom kernel, or one that torch.compile generated) was given a CPU tensor as "
        "its argument number {arg}: a GPU kernel can only read GPU memory.",
        "zh": "一个 Triton GPU 内核（自定义的，或由 torch.compile 生成的）的第 {arg} 个参数收到了 CPU 张量："
        "GPU 内核只能读取显存。",
    },
    reading_by_marker={
        "_cpu": {
            "en": "A Triton GPU kernel (a library's fused kernel, or one that torch.compile generated) was launched on "
            "CPU tensors, so Triton looked for a CPU backend it does not have: its kernels run only on a GPU. Move "
            "the model and its inputs to the GPU.",
            "zh": "一个 Triton GPU 内核（某个库的融合内核，或由 torch.compile 生成的）收到的都是 CPU 张量，"
            "于是 Triton 去找它并没有的 CPU 后端：它的内核只能在 GPU 上运行。请把模型和输入都移到 GPU 上。",
        },
    },
)

SPARSE_INDICES = ErrorKind(
    name="sparse_indices_device",
    chapter="01-devices",
    confident=False,
    candidates=("06-multigpu", "09-debugging"),
    causes=("batch_not_moved",),
    device_fields=("want", "found"),
    routes=(Route({"relation": "^index$"}, "06-multigpu", False, ("multi_gpu_mix",), ("01-devices",)),),
    patterns=(r"device of (?P<arg>indices) \((?P<found>-?\d+)\) must match device of values \((?P<want>-?\d+)\)",
              # compressed (CSR/CSC/BSR) components:
              # "device of crow_indices (=cpu) must match device of values (=cuda:0)"
              r"device of (?P<arg>\w+) \(=?(?P<found>-?\d+|" + D + r")\) must match device of \w+ \(=?(?P<want>-?\d+|"
              + D + r")\)"),
    example="RuntimeError: device of indices (0) must match device of values (5)",
    reading={
        "en": "A sparse tensor was built from indices and values on different devices (device numbers: -1 is the "
        "CPU, 0, 1, ... are GPUs): indices on {found_dev}, values on {want_dev}.",
        "zh": "稀疏张量的 indices 和 values 位于不同的设备上（设备编号 -1 表示 CPU，0、1……表示 GPU）："
        "indices 在 {found_dev} 上，values 在 {want_dev} 上。",
    },
)

CONTAINER_TO = ErrorKind(
    name="container_has_no_to",
    chapter="04-batches",
    causes=("container_to",),
    routes=(
        # a dict that torch.load returned: a state_dict (or a checkpoint holding one), not a batch
        Route({"container": "^dict$", "_text": r"torch\.load|state_dict|checkpoint|\.pth?\b|\.ckpt\b"},
              "07-checkpoints", False, ("state_dict_not_model",), ("04-batches",)),
        Route({"container": "^dict$"}, "04-batches", False, ("container_to",), ("07-checkpoints",)),
    ),
    device_fields=(),
    patterns=(r"'(?P<container>list|tuple|dict)' object has no attribute '(?P<method>to|cuda|cpu)(?:'|(?!\w))",),
    example="AttributeError: 'list' object has no attribute 'to'",
    reading={
        "en": "`.{method}()` was called on a Python {container}: a batch that is a {container} of tensors has no "
        "`.{method}()` of its own; each tensor in it has to be moved (and put back in a {container}).",
        "zh": "对一个 Python {container} 调用了 `.{method}()`：由张量组成的 {container} 批次本身没有 "
        "`.{method}()`，需要把其中每个张量分别移动（再放回 {container} 里）。",
    },
)

AUTOCAST_DEVICE_TYPE = ErrorKind(
    name="autocast_device_type",
    chapter="08-amp",
    device_error=False,
    device_fields=(),
    patterns=(
        r"unsupported autocast device_type '(?P<given>[^']+)'",
        r"User specified an unsupported autocast device_type '(?P<given>[^']+)'",
        r"Expected `device_type` of type `str`, got: `(?P<given>[^`]+)`",
    ),
    example="RuntimeError: unsupported autocast device_type 'cuda:0'",
    reading={
        "en": "Not a placement mix-up between tensors: autocast takes a device *type* (`'cuda'`, `'cpu'`, `'mps'`), "
        "not a device with an index or a `torch.device` (it got `{given}`). Pass `device.type`; chapter 08 shows it.",
        "zh": "不是张量之间放错了设备：autocast 需要的是设备*类型*（`'cuda'`、`'cpu'`、`'mps'`），"
        "而不是带编号的设备或 `torch.device`（它收到的是 `{given}`）。请传入 `device.type`；第 08 章有示例。",
    },
)

CUSTOM_OP = ErrorKind(
    name="cuda_only_input",
    chapter="01-devices",
    confident=False,
    candidates=("05-inside", "09-debugging"),
    causes=("custom_kernel", "batch_not_moved"),
    device_fields=(),
    patterns=(
        # hand-written checks of CUDA extensions (TORCH_CHECK / AT_ASSERTM in detection, attention, 3D ops)
        r"Expected (?P<arg>[\w.\[\]]+?)(?:\.device\(\))?\.is_cuda\(\) to be true, but got false",
        r"Expected (?:[\w.\[\]]+\.)?is_cuda(?:\(\))? to be true,? but got false",
        # (each name read from its first character: a start inside a long word would scan the word again)
        r"(?<![\w.\[\]'])(?P<arg>[\w.\[\]']+) must be a CUDA tensor",
        r"(?<![\w.\[\]'])(?P<arg>[\w.\[\]']+) (?:must be|is not) (?:a )?(?:GPU|cuda) tensor",
        r"(?<![\w.\[\]'])(?P<arg>[\w.\[\]']+) must be on (?:CUDA|cuda|the GPU)",
        # torch_xla: a CPU tensor given to an XLA operation
        r"Input tensor is not an XLA tensor: (?P<arg>\w+)",
        # torch <= 0.4: a CUDA tensor where a CPU one is needed, or the reverse
        r"expected (?P<_want>CPU|CUDA) \(got (?P<_found>CPU|CUDA)\)",
    ),
    example="RuntimeError: Expected x.is_cuda() to be true, but got false.",
    reading={
        "en": "A hand-written check (an extension's kernel, or a backend such as XLA) found a tensor on the wrong kind "
        "of device: it needs every input on its device and got one from the CPU (or the reverse).",
        "zh": "一个手写的检查（扩展的内核，或 XLA 之类的后端）发现张量所在的设备类型不对："
        "它要求所有输入都在它的设备上，却收到了一个来自 CPU 的张量（或者反过来）。",
    },
)

PACKED_LENGTHS = ErrorKind(
    name="packed_lengths_device",
    chapter="04-batches",
    confident=False,
    candidates=("05-inside",),
    causes=("lengths_on_cpu",),
    device_fields=("found",),
    patterns=(r"'lengths' argument should be a 1D CPU int64 tensor, but got 1D (?P<found>" + D + r") \w+ tensor",),
    example="RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor",
    reading={
        "en": "`pack_padded_sequence` wants the sequence lengths as a CPU tensor, and they were on {found}.",
        "zh": "`pack_padded_sequence` 要求序列长度是 CPU 张量，而它们在 {found} 上。",
    },
)

GRADIENT_DEVICE = ErrorKind(
    name="gradient_device",
    chapter="05-inside",
    confident=False,
    candidates=("01-devices", "09-debugging"),
    causes=("tensor_made_inside",),
    patterns=(
        r"returned an invalid gradient at index (?P<arg>\d+) - expected device (?P<want>" + D + r") but got "
        r"(?P<found>" + D + r")",
    ),
    example="RuntimeError: Function AddmmBackward returned an invalid gradient at index 1 - expected device cpu but "
    "got cuda:0",
    reading={
        "en": "During backward, a gradient came out on {found} for a tensor that lives on {want}: a custom autograd "
        "Function, a hook or an operation written in the model made a tensor on the other device.",
        "zh": "反向传播时，一个位于 {want} 上的张量得到的梯度却在 {found} 上："
        "自定义的 autograd Function、钩子或模型里写的某个运算在另一个设备上创建了张量。",
    },
)

LEGACY_ARGUMENTS = ErrorKind(
    name="legacy_argument_types",
    chapter=None,
    device_error=False,
    device_fields=(),
    patterns=(
        # PyTorch 0.x: a Python binding given tensors of the wrong legacy types, CPU and CUDA ones mixed or not
        r"\b(?P<op>\w+) received an invalid combination of arguments - got \((?P<tail>[^!]{0,400})",
    ),
    routes=(
        Route({"op": "NLLCriterion|CrossEntropy", "tail": r"^(?=.*torch\.cuda\.)(?=.*torch\.[A-Z])"}, "02-dataparallel",
              False, ("loss_weight_not_moved", "labels_not_moved"), ("03-embedding", "01-devices"), True),
        Route({"tail": r"^(?=.*torch\.cuda\.)(?=.*torch\.[A-Z])", "_text": OPTIMIZER_STATE}, "07-checkpoints", False,
              ("optimizer_state",), ("01-devices",), True),
        Route({"tail": r"^(?=.*torch\.cuda\.)(?=.*torch\.[A-Z])"}, "01-devices", False,
              ("batch_not_moved", "model_not_moved", "optimizer_state"), ("05-inside", "07-checkpoints"), True),
    ),
    example="CudaClassNLLCriterion_updateOutput received an invalid combination of arguments - got (int, "
    "torch.cuda.FloatTensor, torch.cuda.LongTensor, torch.cuda.FloatTensor, bool, torch.FloatTensor, "
    "torch.cuda.FloatTensor, int)",
    reading={
        "en": "A PyTorch 0.x function ({op}) received arguments of the wrong legacy types; when the list mixes "
        "`torch.cuda.*Tensor` and `torch.*Tensor`, tensors on the GPU and on the CPU were mixed.",
        "zh": "PyTorch 0.x 的函数（{op}）收到了类型不对的参数；如果列表里同时有 `torch.cuda.*Tensor` 和 "
        "`torch.*Tensor`，就是 GPU 上和 CPU 上的张量混在了一起。",
    },
)

HAND_WRITTEN = ErrorKind(
    name="hand_written_device_check",
    chapter="01-devices",
    confident=False,
    causes=("batch_not_moved", "tensor_made_inside", "model_not_moved"),
    candidates=("05-inside", "09-debugging"),
    scan="tail",
    fallback=True,
    patterns=(
        # the many hand-written TORCH_CHECKs: "X and Y must be on the same device", "expected ... to be on same
        # device, but got ...", "... must have the same device", "Expected b and A to be on the same device" ...
        # an exception's name is no operation, even in a paste written all in lower case ("runtimeerror: ...")
        r"(?<![\w.])(?![\w.]*(?:[Ee]rror|[Ee]xception|[Ww]arning)\b)(?P<op>[a-z_][\w.]*)(?:\(\))?: ?[^.!?:]{0,80}?"
        r"(?:to be|must be|need to be|should be|be|are not|is not|are) (?:on|in|at) (?:the )?same device"
        r"(?P<tail>[^!?]{0,160})",
        r"(?:to be|must be|need to be|should be|be|are not|is not|are) (?:on|in|at) (?:the )?same device"
        r"(?P<tail>[^!?]{0,160})",
        r"(?:must|to|should) have the same device(?P<tail>[^!?]{0,160})",
        r"(?P<tail>Expected [\w ,]{1,80} to have the same device type, but got[^!?]{0,160})",
        r"(?P<tail>(?:all )?tensors must all be on the same device[^!?]{0,80})",
        r"(?P<tail>\b\w+ must be (?:an? )?(?:CUDA|cuda|GPU|NPU|npu|XPU|xpu|MPS|mps|XLA|xla) tensor[^!?]{0,80})",
        r"(?P<tail>expected (?:input|\w+) to be on (?:the )?(?:same )?(?:device|cuda|CUDA)[^!?]{0,120})",
        # libraries' own checks: "found two different devices", "are on different devices", "device mismatch"
        r"(?:on|found|found two|across|between) (?:two )?different devices(?P<tail>[^!?]{0,160})",
        r"(?:not on|not in) the (?:same|expected|correct|right) device(?P<tail>[^!?]{0,160})",
        r"\b[Dd]evice (?:type )?[Mm]ismatch(?P<tail>[^!?]{0,160})",
        r"(?:不在同一个?设备|设备不一致|设备不匹配)(?P<tail>[^!?]{0,80})",
        # a bare AssertionError under a failed `assert` on a tensor's device (`assert outputs.is_cuda or
        # outputs.device.type == 'xla'`, `assert x.device == y.device`): the traceback's frames choose the chapter
        r"\bassert (?P<tail>[^!?]{0,120}?\.(?:is_cuda|is_cpu|is_mps|is_xla|device(?:\.type)?)\b[^!?]{0,120}?) "
        r"AssertionError\b",
    ),
    routes=(
        Route({"tail": "dtype except"}, "07-checkpoints", False, ("optimizer_state",), ("02-dataparallel",)),
        Route({"relation": "^index$"}, "06-multigpu", True, ("multi_gpu_mix",)),
        Route({"relation": "^$", "_text": TWO_GPUS}, "06-multigpu", False, ("multi_gpu_mix",),
              ("01-devices", "09-debugging")),
        Route({"relation": "^$", "_text": MULTI_GPU}, "06-multigpu", False, ("multi_gpu_mix",),
              ("01-devices", "09-debugging")),
        Route({"types": "meta"}, "07-checkpoints", False, ("meta_weights",), ("09-debugging",)),
        Route({"_text": MADE_WITHOUT_DEVICE}, "05-inside", False, ("tensor_made_inside",),
              ("01-devices", "09-debugging")),
        Route({"tail": "CUDA tensor|GPU tensor"}, "09-debugging", False, ("custom_kernel", "batch_not_moved"),
              ("01-devices",)),
    ),
    example="expected self and mask to be on the same device, but got mask on cpu and self on cuda:0",
    reading={
        "en": "An operation that checks its own arguments found two of them on different devices ({dev1} and "
        "{dev2}).",
        "zh": "一个自行检查参数的运算发现其中两个参数在不同的设备上（{dev1} 和 {dev2}）。",
    },
)

# --------------------------------------------------------------------------------------------- the general reading
# Any message, in any library's words or in Chinese, that names two places a tensor can live, or says a thing is
# expected on one and found on another, is a device-placement error, even when no family above knows its wording.
# What the paste is about (a generator, a replica, a checkpoint, an optimizer, an index, a hidden state) chooses
# the chapter; the answer is never confident, and chapter 09's method is always among the candidates.
DW = (r"(?:device\(type='(?:cuda|cpu|mps|xpu|meta|xla|hpu|npu)'(?:, ?index=\d+)?\)|"  # torch.device's repr
      r"torch\.cuda\.\w+Tensor|torch\.(?:Float|Double|Half|Long|Int|Byte|Bool|BFloat16)Tensor|"
      r"(?:CUDA|CPU|MPS|XPU)(?:Float|Double|Half|Long|Int|Byte|Bool|BFloat16|ComplexFloat|ComplexDouble)Type|" + D +
      r"|GPUs|CPUs|GPU|CPU|gpus|cpus|gpu|Gpu|Cpu|Cuda|CUDA|Mps|MPS|XLA|TPU|NPU|XPU|HPU|DirectML|Dml|DML|"
      r"[Gg]raphics? cards?|"
      r"(?:cuda |CUDA |GPU )?device (?:-1|\d+))")
DW_ZH = r"(?:" + DW + r"|显卡|显存|内存)"
# What a device word can qualify in a message ("a cpu tensor", "CUDA generator", "GPU weights").
THING = (r"(?:tensors?|Tensors?|generators?|Generators?|graphs?|models?|modules?|weights?|param\w*|features?|states?|"
         r"buffers?|inputs?|outputs?|storages?|arrays?|masks?|indices|labels?|scalars?)")
# Said of a tensor that is not where it must be ("found some tensors to not be on a GPU").
NOT_ON = r"not (?:be )?(?:on|in) (?:a |the )?(?:GPU|CPU|cuda|CUDA|device)\b|same GPU"
# A graph library's objects or words in the paste (PyG, DGL): their edges and features come with the batch.
GRAPH = (r"\bDGL|\bdgl\b|DGLGraph|torch_geometric|edge_index|node feature|edge feature|"
         r"[Gg]raphs? (?:on|to batch|must be)|\bsubgraph\b|[Gg]raph and \w+ (?:should|must)|same device context")
# within one sentence (a dot inside a name, `out.device` or `x.is_cuda`, ends none)
_CUT = r"(?:[^.!?;\n。！？；]|\.(?=\w))"
TWO_DEVICES = ErrorKind(
    name="two_devices",
    chapter="01-devices",
    confident=False,
    scope="error",
    prefer_pair=True,
    causes=("batch_not_moved", "model_not_moved", "tensor_made_inside"),
    candidates=("05-inside", "09-debugging"),
    fallback=True,
    patterns=(
        # "expected ... on X ... but got/found ... Y", in any library's words
        r"(?:[Ee]xpect(?:ed|s|ing)?|should (?:be|live)|must (?:be|live)|needs? to be|requires?|wants?|supposed to be)\b"
        + _CUT + r"{0,80}?\b(?P<want>" + DW + r")(?![\w-])" + _CUT + r"{0,200}?(?:\. (?=[Bb]ut\b))?\b(?:[Bb]ut|got|"
        r"found|received|instead|whereas|while|is on|was on|are on|is in|lives on|not)\b" + _CUT +
        r"{0,80}?\b(?P<found>" + DW +
        r")(?![\w-])",
        # "X is on A ... Y is on B", "tensors on A and B", "devices A and B", "A vs B"; not a run's place ("it works
        # successfully on CPU, and ... to GPU": where the program ran, not where a tensor is)
        r"(?<!\bworks\s)(?<!\bruns\s)(?<!\bworked\s)(?<!\bran\s)(?<!\bsuccessfully\s)(?<!\bfine\s)"
        r"\b(?:[Dd]evices?|on|in|at)\b" + _CUT + r"{0,60}?\b(?P<want>" + DW + r")(?![\w-])" + _CUT +
        r"{0,50}?(?:\b(?:and|vs\.?|versus|or|but|while|whereas|yet)\b| [-/] )"
        r"(?! (?:it |this |everything |all )?(?:works?|worked|runs?|ran)\b)" + _CUT + r"{0,50}?\b(?P<found>" + DW +
        # ... not where a program ran: "but with cpu it works"
        r")(?![\w-])(?! (?:it |this |everything |all )?(?:works?|worked|runs?|ran)\b)",
        # two things, each said to be on its device: "seq_lens is on cpu, block_table on cuda:0"
        # (or "seq_lens is on cpu; block_table is on cuda:0")
        r"\b(?!(?:works?|worked|runs?|ran|fine|well|successfully)\b)\w+ (?:is |are |was |were )?on (?P<want>" + DW +
        r")(?![\w-])[,;]? (?:and |but |while |whereas )?"
        r"(?:the |whose |its |their )?\w+ (?:is |are |was |were )?on (?P<found>" + DW + r")(?![\w-])",
        # a pair called a mismatch: "there will be a CUDA/CPU mismatch", "tensor cpu cuda mismatch", "cpu-gpu mismatch"
        r"\b(?P<want>" + DW + r")(?:-|(?![\w-])(?: ?/ ?| - | vs\.? | and | & | ))(?P<found>" + DW + r")(?![\w-]) "
        r"(?:device )?(?:mismatch|conflict|mix)",
        # ... or an error, with "vs": "The CPU vs GPU error re: the sigma coordinates"
        r"\b(?P<want>" + DW + r")(?![\w-]) vs\.? (?P<found>" + DW + r")(?![\w-]) (?:device )?errors?\b",
        # ... or issues that a change avoids, fixes or causes: "moved x to cpu to avoid cpu/cuda issues"
        r"\b(?:avoid|avoids|avoiding|fix|fixes|fixed|fixing|cause|causes|caused|causing)\b[^.\n]{0,15}?\b(?P<want>" + DW
        + r")(?![\w-]) ?/ ?(?P<found>" + DW + r")(?![\w-]) (?:device )?(?:issues?|errors?|problems?)",
        # both places named as a pair: "a module with both CPU and GPU params", "Both 'meta' and 'cpu' are present",
        # "Does not support mixing cuda+mps"
        r"\b(?:[Bb]oth|[Mm]ix(?:ing|ed|es)?(?: of)?)\b" + _CUT + r"{0,20}?'?\b(?P<want>" + DW + r")(?![\w-])'? ?"
        r"(?:and|\+|&|with) ?'?\b(?P<found>" + DW + r")(?![\w-])",
        # a legacy constructor given another device (an old release printed "cpubut", without the space)
        r"legacy constructor expects device type: ?(?P<want>[a-z]+?) ?but device type: ?(?P<found>[a-z]+) was passed",
        # two devices printed for two things: "original.device: cuda:0 right_inverse(original).device: cpu"
        r"\.device ?[:=] ?'?(?P<want>" + DW + r")(?![\w-])'?" + _CUT + r"{0,80}?\.device ?[:=] ?'?(?P<found>" + DW
        + r")(?![\w-])",
        # two sides of a check, each with its device in brackets: "backend of indices (CUDA) must match backend of
        # values (CPU)"
        r"\b(?:device|backend) (?:type )?of [\w ]{1,30}\(=?(?P<want>" + DW + r")\) must (?:match|be the same as) "
        r"(?:the )?"
        r"(?:device|backend) (?:type )?of [\w ]{1,30}\(=?(?P<found>" + DW + r")\)",
        # a thing said to have gone to another device than where the work runs: "When training on cuda:1, ... some
        # tensors that get placed on cuda:0"
        r"\bon (?P<want>" + DW + r")(?![\w-])" + _CUT + r"{0,80}?\b(?:placed|put|created|allocated|loaded|left|kept|"
        r"stays?|stayed|remains?|remained|ends? up|ended up) (?:on|to|onto|in) (?P<found>" + DW + r")(?![\w-])",
        # a pair written as a pair: "(cpu:0 vs. cuda:0)", "{'cuda', 'meta'}", "[cpu, cuda:0]"
        r"[(\[{] ?'?\b(?P<want>" + DW + r")'? ?(?:vs\.?|versus|!=|,|and|/) ?'?\b(?P<found>" + DW + r")'? ?[)\]}]",
        # the legacy type names carry the device: a torch.cuda.*Tensor beside a torch.*Tensor, THCuda* beside TH*
        r"(?P<want>torch\.cuda\.\w+Tensor)\b[^\n]{0,200}?(?P<found>torch\.(?!cuda\.)[A-Z]\w*Tensor)\b",
        r"(?P<want>torch\.(?!cuda\.)[A-Z]\w*Tensor)\b[^\n]{0,200}?(?P<found>torch\.cuda\.\w+Tensor)\b",
        r"\b(?P<want>TH(?:Cuda)?[A-Z]\w*Tensor)\b[^\n]{0,160}?\b(?P<found>TH(?:Cuda)?[A-Z]\w*Tensor)\b",
        # ... and a title that drops the "torch.": "expected FloatTensor but found cuda.FloatTensor"
        r"(?<![\w.])(?P<want>(?:torch\.)?cuda\.[A-Z]\w*Tensor)\b[^\n]{0,200}?(?<![\w.])(?P<found>[A-Z]\w*Tensor)\b",
        r"(?<![\w.])(?P<want>[A-Z]\w*Tensor)\b[^\n]{0,200}?(?<![\w.])(?P<found>(?:torch\.)?cuda\.[A-Z]\w*Tensor)\b",
        # one device, said to be required: "expected input tensor to be on GPU", "must be on CPU", "to be on the
        # compute device cuda:1"
        r"(?:[Ee]xpect(?:ed|s|ing)?|must|should|needs?|has|have|[Rr]equires?|wants?)\b" + _CUT + r"{0,60}?\b"
        r"(?:to be|be|live|reside)(?: stored| placed| located| allocated)? (?:on|in) "
        r"(?:the |a )?(?:\w+ ){0,2}(?:device )?\b(?P<want>" + DW + r")(?![\w-])",
        # Chinese: "期望在 X 上，却在 Y 上", "在 CPU 上，但预计它在 GPU 上", "X 和 Y 上的张量不在同一设备"
        r"(?:期望|应该|应当|需要|要求|预期)" + _CUT + r"{0,40}?(?P<want>" + DW_ZH + r")" + _CUT +
        r"{0,60}?(?:但|却|而|实际|得到|发现|然而)" + _CUT + r"{0,40}?(?P<found>" + DW_ZH + r")",
        r"在 ?(?P<found>" + DW_ZH + r") ?上" + _CUT + r"{0,10}?(?:但|却|而)" + _CUT +
        r"{0,10}?(?:预计|期望|应该|应当|预期)" + _CUT + r"{0,10}?在 ?(?P<want>" + DW_ZH + r")",
        r"(?P<want>" + DW_ZH + r")" + _CUT + r"{0,30}?(?:和|与|跟|或)" + _CUT + r"{0,30}?(?P<found>" + DW_ZH +
        r")" + _CUT + r"{0,30}?(?:不在同一|不同的?设备|设备不同|设备不一致|不一致)",
        # the pair joined by a comparison: "is on cpu, different from other tensors on cuda:0", "the model's device
        # (cpu) does not match the input's device (cuda:0)", "on cuda:0 rather than cpu"
        # or written as code: "cu_seqlens_q device cpu != expected cuda:0"
        r"\b(?P<want>" + DW + r")(?![\w-])" + _CUT + r"{0,60}?(?:\b(?:different from|differs? from|does ?n[o']t match|"
        r"do ?n[o']t match|mismatch(?:es|ed)? (?:with|against)|rather than|instead of|"
        r"(?<!\belse\s)(?<!\bother\s)than)\b|"
        r" ?(?:!=|≠) ?)" + _CUT +
        r"{0,60}?\b(?P<found>" + DW + r")(?![\w-])",
        # the wanted place named first: "CUDA tensor expected but got CPU tensor", "cuda required, got cpu"
        r"\b(?P<want>" + DW + r")(?![\w-]) (?:\w+ ){0,2}?(?:is |are |was )?(?:expected|required|needed|wanted)\b" +
        _CUT + r"{0,40}?\b(?:but|got|found|received|given|instead)\b" + _CUT + r"{0,40}?\b(?P<found>" + DW +
        r")(?![\w-])",
        # one place said to be required without "to be": "Expected cuda tensor", "expected all tensors on cuda",
        # "requires CUDA tensors", "only supports GPU inputs"
        r"(?P<_one>[Ee]xpect(?:ed|s|ing)?|[Rr]equires?|[Nn]eeds?|only (?:supports?|accepts?|works with)|"
        r"[Mm]ust be|[Ss]hould be)\b" + _CUT
        + r"{0,40}?(?:\b(?:an?|all|only) )?\b(?P<want>" + DW + r")(?![\w-]) " + THING + r"\b",
        r"(?P<_one>[Ee]xpect(?:ed|s|ing)?)\b (?:\w+ ){0,4}?(?:on|in) (?:the |a )?(?P<want>" + DW + r")(?![\w-])",
        # "The input is not an XLA tensor", "Please move all tensors to xla device", "Input list must contain tensors
        # on CPU"
        r"(?P<_one>\b(?:is|are) not) (?:an? )?(?P<want>" + DW + r")(?![\w-]) " + THING + r"\b",
        # "it is not a `torch.cuda.FloatTensor` type": a legacy type name is a thing of its own
        r"(?P<_one>\b(?:is|are) not) (?:an? )?[`'\"]?(?P<want>torch\.cuda\.[A-Z]\w*Tensor)\b",
        r"(?P<_one>(?:[Pp]lease|[Yy]ou (?:should|need to|must)) move) (?:all |the |your )?(?:\w+ ){0,3}?"
        r"(?:to|onto) (?:the |an? )?(?P<want>" + DW + r")(?![\w-])",
        r"(?P<_one>must be of (?:type|device)) (?P<want>" + DW + r")(?![\w-])",
        r"(?P<_one>[Mm]ust (?:contain|hold|have)) (?:\w+ ){0,2}?" + THING + r" (?:on|in) (?:the )?(?P<want>" + DW +
        r")(?![\w-])",
        r"(?P<_one>(?:[Tt]ensors|params|parameters)\b[^\n]{0,60}?supported devices?):? ?\[?'(?P<want>" + DW + r")'",
        # Chinese, one place required or denied: "张量不在 GPU 上", "输入张量必须在 CUDA 上", "应该放到 cuda 上"
        r"(?P<_one>不在|必须在|必须位于|应该在|应当在|应在|需要在|要求在|只能在|应该放到|需要放到) ?(?P<want>" + DW_ZH +
        r") ?上",
        # what a place means without a pair: a meta tensor reached, a location that cannot be restored, an op that
        # does not run on the CPU, the code of the failing line comparing devices, a compiled graph with CPU tensors
        r"(?P<_meta>from the 'Meta' backend|[Mm]eta tensors? (?:has|have) no data|(?:on|with|for) [Mm]eta tensors|"
        r"\b[Mm]eta[- ]tensors? error\b|"
        r"\bis (?:still )?on the meta device|(?:to|from) the meta device|"
        r"(?:to|into) a meta (?:parameter|tensor|buffer)\b|device=['\"]?meta\b|"
        # "device meta is invalid when using group offload"
        r"\b[Dd]evice ['\"]?meta['\"]? is (?:invalid|not (?:valid|supported|allowed))|"
        # "RuntimeError: Cannot post-process meta tensor FusedMoE.w13_weight"
        r"\b[Cc]annot (?:[\w-]+ )?(?:process|post-process|copy|move|use|load|handle) (?:a |the )?meta tensors?\b)",
        # a poster's words: a model trained or saved on a GPU, loaded or restored on a machine without one
        r"(?P<_location>\b(?:[Tt]rained|[Ss]aved|[Ee]xported|[Pp]ickled)\b[^\n]{0,40}?\b(?:GPU|gpu|cuda|CUDA|XLA|TPU)\b"
        r"[^\n]{0,120}?\b(?:[Ll]oad\w*|[Rr]estor\w*|[Uu]npickl\w*)\b[^\n]{0,80}?(?:\b(?:CPU|cpu)\b|"
        r"without (?:a |any )?(?:GPU|CUDA|XLA|TPU)\b)|"
        r"\b(?:[Ll]oad\w*|[Rr]estor\w*|[Uu]npickl\w*)\b[^\n]{0,80}?\b(?:on|to|in) (?:a |an )?(?:CPU|cpu)[- ]only\b|"
        r"\b(?:[Ll]oad\w*|[Rr]estor\w*|[Uu]npickl\w*)\b[^\n]{0,80}?\b(?:in|on) an? (?:environment|machine) without "
        r"(?:a |any )?(?:GPU|CUDA|XLA|TPU)\b|"
        # "load_params() attempts to load on GPU when no GPU is available"
        r"\b[Ll]oad\w*\b[^\n]{0,40}?\b(?:on|onto|to) (?:the )?(?:GPU|gpu|cuda|CUDA)\b[^\n]{0,20}?"
        r"\b(?:when|while|if|but|though|although|where) (?:there is |there's )?no (?:GPU|gpu|cuda|CUDA)\b|"
        # "Is there a way to load the replay_buffer for devices where cuda is not available?"
        r"\b(?:[Ll]oad\w*|[Rr]estor\w*|[Uu]npickl\w*)\b[^\n]{0,80}?\b(?:machines?|devices?|computers?|servers?|"
        r"environments?|laptops?|hosts?|systems?|platforms?)\b,? (?:where|that|which|with|without)\b[^\n]{0,30}?"
        r"(?:\b(?:CUDA|cuda|GPU|gpu)s? (?:is |are )?(?:not|n't|no longer) (?:available|installed|present)\b|"
        r"\b(?:no|without) (?:a |any )?(?:CUDA|cuda|GPU|gpu)s?\b))",
        # "Model trained on GPU is unable to predict on CPU", "gpu训练cpu预测"
        r"(?P<_location>" + TRAINED_ON_GPU_USED_ON_CPU + r")",
        r"(?P<_location>restore data location of|please use torch\.load with map_location|"
        r"unknown (?:device|location) (?:tag|type) ?'?\w*'? in (?:the )?"
        r"checkpoint|"
        # a poster's words for the fix: "load the vocoder checkpoint to map to CPU if cuda is not available"
        r"\b[Ll]oad\w*\b[^.\n]{0,60}?\b(?:checkpoints?|ckpt|weights|state[_ ]dict)\b[^.\n]{0,30}?\bmap(?:ped|s)? "
        r"(?:it |them )?(?:to|onto) (?:the )?(?:CPU|cpu)\b|"
        # "use map_location=torch.device('cpu') when loading weights ... This causes error when trying to run model
        # with only CPU"
        r"\bmap_location\b[^\n]{0,200}?\b(?:only|just) (?:a |the )?(?:CPU|cpu)\b|"
        r"\bmap_location\b[^\n]{0,200}?\b(?:CPU|cpu)[- ]only\b|"
        r"\b(?:only|just) (?:a |the )?(?:CPU|cpu)\b[^\n]{0,200}?\bmap_location\b)",
        r"(?P<_cpu_only>[Nn]ot (?:implemented|supported|available) (?:on|for) (?:the )?CPU|CPU (?:is )?not supported|"
        # an extension's own words: "ball_query.cpp error: cpu not support"
        r"(?<![+.])\b(?:CPU|cpu) (?:is )?not support(?:ed)?\b|"
        r"[Oo]nly supports? (?:CUDA|GPU)|[Oo]nly (?:CUDA|GPU) (?:\w+ ){0,2}?tensors? (?:is|are) (?:currently )?"
        r"supported|implementation for device cpu not found|device=cpu \(supported: \{'cuda')",
        r"(?P<_code>set\(\w+\.device for |\.device ?(?:==|!=) ?\w+\.device|\.is_cuda ?(?:==|!=|\)|$))",
        # a check on a device written in C++ or Python, as the failed check prints it: "Expected input.device() ==
        # weight.device() to be true", "x.device().type() == at::kCUDA", "Check failed: x.device().is_cuda()",
        # "assert input.is_cuda" (the failing line above an AssertionError)
        r"(?P<_code>\.device\(\) ?(?:==|!=) ?[\w.\[\]]+\.device\(\)|device\(\)\.type\(\) ?(?:==|!=) ?"
        r"(?:at::|c10::|torch::)?(?:k(?:CUDA|CPU|MPS)\b|DeviceType::)|[Cc]heck failed:? ?[\w.\[\]()]*"
        r"\.(?:is_cuda|is_cpu)\(\)|\bassert (?:not )?[\w.\[\]]+\.(?:is_cuda|is_cpu)\b|"
        r"\.(?:is_cuda|is_cpu)\(\) (?:INTERNAL ASSERT FAILED|[Ii]nternal [Aa]ssert(?:ion)? [Ff]ailed)|"
        # "assert self.qweight.device.type == \"cuda\"", a C++ assert's own report: 'Assert on "input_device == "cpu""
        # failed'
        r"\bassert [\w.\[\]]+\.device(?:\.type)? ?(?:==|!=) ?['\"](?:cuda|cpu|mps|xpu|npu|xla)\b|"
        r"\b[Aa]ssert(?:ion)? on \"[\w.]*device(?:\.type)? ?(?:==|!=) ?\\?['\"](?:cuda|cpu|gpu|mixed)\b)",
        r"(?P<_graph>cudagraphs? due to[^\n]{0,30}?\bcpu device)",
        # no device named, but said: "on different devices", "device mismatch", "不在同一个设备上"
        r"(?P<_said>(?:[Tt]wo|[Dd]if{1,2}e?re?nt|[Mm]ultiple|[Mm]ixed|[Ss]eparate|[Dd]istinct) (?:devices?|GPUs)\b|"
        r"[Dd]evice[- ](?:type[- ])?[Mm]is-?[Mm]atch|"
        # "the tensor storage device in the custom loss is different from the model" (not a device's name or number)
        # (and not its results: "the device output is different from the CPU's" is a numerical question)
        r"\b[Dd]evices?\b(?! (?:names?|ids?|IDs?|index|indices|count|numbers?|ordinals?|order|memory|drivers?)\b)"
        r"(?:(?!results?|outputs?|values?|predictions?|accuracy|precision|speed|performance)[^.\n]){0,50}?"
        r"\b(?:is|are|was|were) (?:\w+ )?different (?:from|than|to)\b|"
        r"(?:on|to|onto|in) (?:a |another |some )?different (?:CUDA |GPU |cuda )?(?:devices?|GPUs?|gpus?)\b|"
        r"\bnon-(?:CUDA|GPU|CPU|cuda|gpu|cpu) (?:tensors?|devices?|param(?:eter)?s?|inputs?|weights?|buffers?)\b|"
        r"share (?:a|the same) device\b|"
        # a tensor refused because it is on the GPU already: "prediction functions can't consume already-on-GPU
        # tensors", "pinning fails for data already on the GPU"
        r"(?:can ?not|can't|fails?|failed|breaks?|incompatible|not compatible|does ?n[o']t work)\b[^.\n]{0,60}?"
        r"\balready[- ]on[- ](?:the[- ])?(?:GPU|CUDA|cuda|gpu)\b|"
        r"devices? \([^()]{1,30}\) must match|[Dd]ifferent device types?\b|[Mm]ismatched devices?\b"
        r"(?! (?:names?|ids?|IDs?|index|indices|count|numbers?|ordinals?|order|memory|drivers?)\b)|"
        r"(?:on|to) (?:an? |the )?(?:unexpected|wrong|incorrect) device\b|"
        r"(?:does ?n[o']t|do ?n[o']t|cannot|can't) (?:support|accept|handle) (?:\w+ )?"
        r"(?:CUDA|GPU|cuda|gpu|CPU|cpu|MPS|NPU|XPU|XLA) tensors|"
        # a component that refuses what is on the GPU: "couldn't accept input tensor on CUDA", "can not work on CUDA
        # Tensor"
        r"(?:could ?n[o']t|could not|can ?not|can't|does ?n[o']t|does not|won'?t) (?:accept|handle|take|work on|"
        r"work with) (?:an? |the )?(?:(?:input|inputs|tensors?|input tensors?|data) (?:on|from|in) (?:the )?"
        r"(?:CUDA|GPU|cuda|gpu)\b|(?:CUDA|GPU|cuda|gpu) (?:[Tt]ensors?|inputs?)\b)|"
        r"(?:必须|需要|应该|要)在同?一(?:块|张|个)(?:显)?卡上|"
        # two GPUs by number, one that works and one that does not: "works for device-0 but not for device-1"
        r"\bworks?\b[^.\n]{0,20}?\b(?:on|for|with) (?:device|GPU|gpu|cuda)[- :]?\d\b[^.\n]{0,20}?\bnot\b"
        r"[^.\n]{0,20}?\b(?:device|GPU|gpu|cuda)[- :]?\d\b|"
        r"(?:on|to) (?:another|an? other|other) (?:device|GPU)\b|(?:on|across) more than one (?:device|GPU)\b|"
        # "when some use CPU and some use GPU", "some on the GPU, some on the CPU"
        r"\bsome\b[^.\n]{0,20}?\b(?:CPU|GPU|cpu|gpu)\b[^.\n]{0,12}?\bsome\b[^.\n]{0,20}?\b(?:CPU|GPU|cpu|gpu)\b|"
        r"(?:wrong|incorrect) (?:device|GPU)\b|different memory locations|"
        # "the input token not addressed on right device", "a mismatch between the generated kernel's device and the
        # input tensor's device", "initialized on the default device, rather than the device of the Q/K/V tensors"
        r"\bnot (?:\w+ ){0,2}(?:on|in|to) (?:the )?(?:right|correct|proper|expected|current|same|model's) device\b|"
        # a fix's own words: "move data to correct device when using gpu"
        r"\b[Mm]ov(?:e|es|ing) (?:the )?(?:\w+ ){0,2}?(?:to|onto) (?:the )?(?:correct|right|proper|appropriate) "
        r"device\b|"
        # "errors because some tensors lie on CPU", "the sampling data is created on cpu whereas logits are still on
        # device"
        r"\b(?:[Ss]ome|[Cc]ertain|[Rr]emaining) (?:of the )?(?:\w+ )?" + THING + r" (?:still )?(?:(?:lie|reside|stay|"
        r"remain)s?|being|left|sitting) (?:on|in) (?:the )?(?:CPU|cpu)\b|"
        r"\bon (?:the )?(?:CPU|cpu)\b[^.\n]{0,10}?\b(?:whereas|while|but)\b[^.\n]{0,40}?\b(?:is|are) (?:still )?on "
        r"(?:the )?device\b|"
        r"\bmismatch (?:between|of) (?:the )?[\w'. -]{0,40}?\bdevice\b[\w'. -]{0,10}? and (?:the )?[\w'. -]{0,40}?"
        r"\bdevice\b|\b(?:rather than|instead of) (?:on )?the (?:same )?device (?:of|as)\b|"
        # "Please move the labels to the device of the logits", "move inputs to the same device as the model"
        r"\b[Mm]ov(?:e|es|ing) (?:the |your |all )?(?:\w+ ){0,2}?(?:to|onto) the (?:same )?device (?:of|as)\b"
        r"(?! (?:your |the user's |their )?choice)|"
        r"[Dd]evices? (?:do(?:es)? not|do ?n[o']t|does ?n[o']t) match|"
        r"same (?:\w+ ){0,2}(?:device|GPU)\b|not (?:be )?(?:on|in) (?:a |the )?(?:GPU|CPU|cuda|CUDA|device)\b|"
        r"same (?:\w+, ){1,3}(?:and )?device\b|same backend|不同(?:的)? ?(?:设备|device|GPU|gpu|显卡)|不在一个设备|"
        r"不[在再]同?一(?:个|块|张)? ?(?:显卡|卡|GPU|gpu|device|设备)|设备不一样|"
        # a fix that moves the model's own attribute where the model runs: "需要添加self.ids = self.ids.to(self.device)"
        # (said as a fix: the same line in a traceback's frame is only where an error happened)
        + FIX_MOVES_ATTRIBUTE + r"|"
        # "需要把数据也放到cuda上": a thing that has to be moved too
        r"(?:需要|应该|应当|要|得|必须)把[^，,。\n]{0,20}?(?:放|移|转|迁移)(?:到|至) ?" + DW_ZH + r"|"
        r"同一(?:个)?设备|(?:设备|device|显卡) ?不(?:一致|匹配|同)|device_map='?auto'?[^\n]{0,80}?distributed)",
        # a poster's own words for a thing left behind: "the labels are still on the CPU", "was never moved to the
        # GPU", "forgot to move the mask to cuda", "数据没有放到GPU上", "参数还在cpu上", "cpu和gpu混用"
        r"(?P<_said>\b(?:still|remains?|remained|stays?|stayed|(?:was |were |is |are )?left)"
        r"(?: (?:initiali[sz]ed|created|allocated|defined|stored|kept))? (?:on|in|at) (?:the )?"
        + DW + r"(?![\w-]))",
        # "Weights are in CPU format", "the parameters are on the CPU"
        r"(?P<_said>\b(?:[Ww]eights?|[Pp]arameters?|[Pp]arams)\b (?:are|is|were|was) (?:still )?(?:in|on) (?:the )?"
        r"(?:CPU|cpu)\b)",
        r"(?P<_said>(?:\b(?:not|never)|n't) (?:been |being |getting )?(?:move[ds]?|moving|sent|send|transferr?e?d?|put|"
        r"placed|copied|shift(?:ed)?|migrated)(?: back| over)? (?:to|on|onto|in|into) (?:the )?" + DW + r"(?![\w-]))",
        # ... with what was not moved between: "the functions didn't move the model to the selected device", "did not
        # send the mask to the GPU"
        r"(?P<_said>(?:\b(?:not|never)|n'?t|'nt) (?:move|moving|send|sending|transfer|transferring|put|copy|bring)"
        r" (?:the |its |their |this |that |these |those |any )?(?:[\w.]+ ){1,2}?(?:back )?(?:to|onto|into) (?:the )?"
        r"(?:(?:selected|select|chosen|target|specified|current|right|correct|same|proper|appropriate|model's|\w+'s) )?"
        r"(?:device\b|" + DW + r"(?![\w-])))",
        # "some variables in the computation are located in CPU", "tensors ... getting sent to 'cpu'"
        r"(?P<_said>\b(?:[Vv]ariables?|" + THING + r")\b[^.\n]{0,80}?\b(?:located|sent|placed) (?:on|in|to|onto) "
        r"(?:the )?'?(?:CPU|cpu)'?(?![\w-]))",
        # "some of the buffers will store on CPU", "all buffers appear to be stored on cpu", "by default stored on the
        # CPU"
        r"(?P<_said>\b" + THING + r"\b[^.\n]{0,40}?\b(?:by default |appears? to be |seems? to be )?"
        r"(?:store[ds]?|stay(?:s|ed)?|remain(?:s|ed)?|kept|created|allocated) (?:on|in|at) (?:the )?" + DW +
        r"(?![\w-]))",
        # a thing said not to be moved: "registered buffers are ... not moved", "the constant tensors never get moved"
        r"(?P<_said>\b(?:buffers?|" + THING + r"|attributes?|constants?)\b[^.\n]{0,60}?"
        r"(?:\b(?:not|never)|n't|\bits not) (?:being |getting |been |get )?(?:moved|transferred)\b"
        r"(?=[^.\n]{0,40}?\b(?:device|GPU|gpu|CUDA|cuda|model|module|network|net)\b| ?(?:$|[.\n])))",
        # a tensor the module does not know as its own, so `.to()` leaves it behind: "Tensor in list member is not
        # tracked by PyTorch module as a *buffer*" (chapter 05)
        r"(?P<_said>\bnot (?:tracked|registered|recogni[sz]ed|known) (?:\w+ ){0,4}?as (?:a |an |its )?"
        r"\*{0,2}buffers?\b)",
        # a replica's device attribute: "self.device in training_step points to the root device no matter on which
        # gpu"
        r"(?P<_said>\b(?:points?|refers?) to the (?:root|main|primary) device\b)",
        # one place, and not another thing's device: "the generated tensor locates in cpu, not A's device", "on the
        # CPU instead of the model's device"
        r"(?P<_said>\b(?:on|in) (?:the )?" + DW + r"(?![\w-]),? (?:and )?(?:not|rather than|instead of) (?:on |in )?"
        r"(?:the )?(?:same device as|device of|[\w.]+'s? device)\b)",
        # one thing on a device and another not: "M is on gpu but loss is not"
        r"(?P<_said>\b\w+ (?:is|are|was|were) (?:on|in) (?:the )?" + DW + r"(?![\w-]),? but (?:the )?(?:\w+ ){1,3}"
        r"(?:is|are|was|were)(?: not|n't)(?= ?(?:[.,;!?)\n]|$)))",
        # moving a network whose layers sit in a plain list or dict: "net.cuda() when the Network class has a list or
        # dict which contains nn layers"
        r"(?P<_said>(?:\.cuda\(\)|\.to\([^()\n]{0,20}\))[^\n]{0,80}?\b(?:lists?|dicts?|dictionar(?:y|ies))\b"
        r"[^\n]{0,30}?\b(?:nn )?(?:layers|modules|submodules)\b)",
        # "calling .to('cuda') doesn't move everything to the device"
        r"(?P<_said>(?:does ?n[o']t|do ?n[o']t|did ?n[o']t|won'?t|does not|do not|did not|not) (?:move|transfer|send|"
        r"put|bring) (?:everything|all (?:of )?(?:the |its )?\w+|some (?:of )?(?:the |its )?\w+) (?:to|onto) (?:the )?"
        r"(?:device|GPU|gpu|cuda|CUDA)\b)",
        r"(?P<_said>\bforg[eo]t(?:ten)? (?:to )?(?:move|send|transfer|put|place|call|add|copy)\b" + _CUT + r"{0,40}?"
        r"(?:\b(?:to|on|onto) (?:the )?" + DW + r"(?![\w-])|\.(?:cuda|to)\())",
        r"(?P<_said>(?:没有?|未|忘了?|忘记|漏了?)(?:把[^，,。\n]{0,20})?"
        r"(?:放|移|转|迁移|拷贝|复制|搬)(?:到|至|在) ?" + DW_ZH +
        r"|(?:还|仍然|仍|依然)(?:在|留在|停留在) ?" + DW_ZH + r" ?上|" + DW_ZH + r" ?(?:和|与|跟) ?" + DW_ZH +
        r" ?混(?:用|合|着用|在一起)|(?:忘了|忘记|没有|漏了)(?:调用|加|写)? ?\.(?:cuda|to)\()",
        # last, for wordings nothing above reads: a thing of one device tied to another device ("a cpu tensor from a
        # generator of type cuda", "weights on GPU 0 for inputs on CPU", "a CUDA tensor into a CPU buffer")
        r"\b(?P<want>" + DW + r")(?![\w-]) (?:\w+ ){0,2}?" + THING + r"\b" + _CUT
        + r"{0,60}?\b(?:from|to|with|for|than|onto|into|of type|on|at)\b" + _CUT + r"{0,40}?\b(?P<found>" + DW
        + r")(?![\w-])",
        # Chinese: two things each said to be on a device, "模型在GPU上，数据在CPU上", "张量位于 cuda:0，而权重位于 cpu"
        # (two runs compared, "在cuda上运行会报错，如果跑在cpu上则不会", are not a pair)
        r"(?:在|位于|放在|处于) ?(?P<want>" + DW_ZH + r") ?上?(?:(?!如果|若|要是|换成|改成|改用|换到)" + _CUT +
        r"){0,30}?(?:在|位于|放在|处于) ?(?P<found>" + DW_ZH + r")",
    ),
    device_fields=("want", "found"),
    routes=(
        Route({"relation": "^same$", "_text": NOT_ON}, "01-devices", False,
              ("batch_not_moved", "model_not_moved", "meta_weights"), ("07-checkpoints", "09-debugging")),
        Route({"relation": "^same$"}, None, False, (), (), False, "two_devices_same"),
        Route({"relation": "^index$"}, "06-multigpu", False, ("multi_gpu_mix",), ("01-devices", "09-debugging")),
        Route({"types": "meta"}, "07-checkpoints", False, ("meta_weights",), ("09-debugging",)),
        Route({"_meta": "."}, "07-checkpoints", False, ("meta_weights",), ("05-inside", "09-debugging")),
        Route({"_other_gpu": "."}, "06-multigpu", False, ("multi_gpu_mix",), ("05-inside", "09-debugging")),
        Route({"_text": ONE_GPU_ONLY, "_said": "."}, "01-devices", False, ("model_not_moved", "batch_not_moved"),
              ("05-inside", "09-debugging")),
        Route({"_text": TWO_GPUS, "_said": "."}, "06-multigpu", False, ("multi_gpu_mix",),
              ("01-devices", "09-debugging")),
        Route({"_location": "."}, "07-checkpoints", False, ("map_location",), ("09-debugging",)),
        # a pair of devices read first, in a post about a model trained on a GPU and used on a CPU
        Route({"_text": TRAINED_ON_GPU_USED_ON_CPU}, "07-checkpoints", False, ("map_location",),
              ("01-devices", "09-debugging")),
        Route({"_cpu_only": "."}, "01-devices", False, ("custom_kernel",), ("09-debugging",)),
        Route({"_text": r"\b[Gg]enerator|randperm|\b(?:Random|Sequential|Distributed|Batch|WeightedRandom|"
                        r"SubsetRandom)?[Ss]amplers?\b"}, "04-batches", False, ("generator_device",),
              ("09-debugging", "01-devices")),
        # in a multi-GPU program: a GPU beside the CPU is a model or batch left behind, two GPUs a mix of GPUs
        Route({"_text": MULTI_GPU, "relation": "^type$"}, "06-multigpu", False, ("model_not_moved", "batch_not_moved"),
              ("01-devices", "09-debugging")),
        Route({"_text": MULTI_GPU}, "06-multigpu", False, ("multi_gpu_mix",), ("01-devices", "09-debugging")),
        Route({"_text": OPTIMIZER_STATE + r"|torch/optim/|capturable=True|state_steps|fused=True|"
                        r"\b[Oo]ptimi[sz]er(?:'s)? states?\b|\bstate of the optimi[sz]er\b"}, "07-checkpoints",
              False, ("optimizer_state",), ("01-devices", "09-debugging")),
        Route({"_text": r"state_dict|[Cc]heckpoint|torch\.load|map_location|from_pretrained|safetensors|"
                        r"[Dd]eserializ|\.ckpt\b"}, "07-checkpoints", False, ("map_location", "meta_weights"),
              ("01-devices", "09-debugging")),
        Route({"_text": r"Backward\d* returned an invalid gradient|cudagraphs? due to"}, "05-inside", False,
              ("tensor_made_inside",), ("01-devices", "09-debugging")),
        Route({"_text": GRAPH}, "04-batches", False, ("batch_not_moved",), ("01-devices", "09-debugging")),
        # transformers' generate() warning: the batch (its input ids) left on another device than the model
        Route({"_text": r"calling \.generate\(\) with the input_ids being on a device"}, "01-devices", False,
              ("batch_not_moved",), ("03-embedding", "09-debugging")),
        # a search index on a device (faiss' "GPU tensor on CPU index") is no embedding's indices
        Route({"_text": r"\b(?:CPU|GPU|cpu|gpu) index\b"}, "01-devices", False, ("batch_not_moved",),
              ("06-multigpu", "09-debugging")),
        Route({"_text": EMBEDDING + r"|index_select|\bind(?:ex|ices)\b(?!=)|token"}, "03-embedding", False,
              ("ids_not_moved", "table_not_moved"), ("05-inside", "09-debugging")),
        Route({"_text": r"\b(?:LSTM|GRU|RNN)\b|[Hh]idden state|\bhx\b|\bh0\b"}, "05-inside", False,
              ("hidden_state",), ("01-devices", "09-debugging")),
        # a tensor or layer the model holds without registering it: a plain attribute, a Python list of layers
        Route({"_text": r"register_buffer|def forward|in forward|\bforward\(|self\.\w+ = torch\.|\b[Uu]nregistered\b|"
                        + FIX_MOVES_ATTRIBUTE + r"|"
                        r"\bnot (?:\w+ ){0,2}registered\b|\bbuffers?\b|ModuleList|plain (?:Python )?list|"
                        r"(?:plain|normal|regular) "
                        r"(?:tensor )?attributes?|`self\.\w+`|\bby default (?:stored|created|made|on)\b|"
                        r"list of (?:modules|layers)|\b(?:lists?|dicts?) (?:\w+ ){0,3}(?:nn )?(?:layers|modules)\b|"
                        r"\btrac(?:ed|ing)\b[^.\n]{0,40}\bon (?:the )?(?:cpu|CPU)\b|"
                        r"\bdecompositions?\b|"
                        + MADE_WITHOUT_DEVICE},
              "05-inside", False, ("tensor_made_inside",), ("01-devices", "09-debugging")),
        Route({"_text": r"\bDGL|\bdgl\b|[Gg]raphs? (?:to batch|must be)|DataLoader|[Dd]ataloader|collate|pin_memory|"
                        r"\bbatch\b(?![ _-]?sizes?\b)"}, "04-batches", False, ("batch_not_moved",),
              ("01-devices", "09-debugging")),
    ),
    example="ValueError: expected the metric's state on cuda:0, but got input on cpu",
    reading={
        "en": "The message names two places for the tensors of one computation, {want} and {found}: something was "
        "expected on one device and found on the other. No wording the course holds says more, so read the "
        "traceback for the operation, print the `.device` of each tensor it uses, decide which device you meant, "
        "and move whatever is on the other one.",
        "zh": "这条报错为同一次计算的张量说出了两个位置：{want} 和 {found}，也就是某样东西本该在一个设备上，却在另一个"
        "设备上。课程收录的措辞里没有更具体的，所以请在 traceback 里找到出错的运算，打印它用到的每个张量的 "
        "`.device`，想清楚本该在哪个设备上，再把不在那里的东西移过去。",
    },
    reading_by_marker={
        "_one": {
            "en": "The message says a tensor must be on {want}, or is not there: a tensor this computation uses is "
            "somewhere else. Read the traceback for the operation, print the `.device` of each tensor it uses, and "
            "move the one that is not on {want} (or, if {want} is not where you meant to run, move the others).",
            "zh": "这条报错说某个张量必须在 {want} 上，或者说它不在那里：这次计算用到的某个张量在别的地方。请在 "
            "traceback 里找到出错的运算，打印它用到的每个张量的 `.device`，把不在 {want} 上的那个移过去"
            "（如果 {want} 并不是你想用的设备，就反过来移动其余的张量）。",
        },
        "_code": {
            "en": "The check that failed tests where a tensor lives (an `is_cuda` assertion, a `.device()` comparison, "
            "a set of devices): a tensor it checks is not on the device the code requires. Read the check for which "
            "tensor and which device it wants, print that tensor's `.device`, and move it (or the others) so that "
            "they agree.",
            "zh": "失败的这项检查测试的是张量所在的位置（一个 `is_cuda` 断言、一次 `.device()` 比较或一组设备）："
            "它检查的某个张量不在代码要求的设备上。请从这项检查里看出它检查的是哪个张量、要求哪个设备，打印该张量的 "
            "`.device`，再移动它（或其余的张量），让它们一致。",
        },
        "_meta": META.reading_by_marker["_meta"],  # a meta tensor reached: the same reading as META's
        "_location": {
            "en": "The checkpoint names a device that this machine cannot restore its tensors to (a GPU it does not "
            "have, or a device tag it does not know). Load it with `map_location` set to a device this machine has "
            "(`map_location=\"cpu\"` always works), then move the model to the device you want.",
            "zh": "检查点里记下的设备，这台机器无法把张量恢复到那里（一块它没有的 GPU，或一个它不认识的设备标记）。"
            "加载时把 `map_location` 设为这台机器有的设备（`map_location=\"cpu\"` 总是可行），"
            "再把模型移到你想用的设备上。",
        },
        "_cpu_only": {
            "en": "The operation has no CPU implementation (or runs only on CUDA), and a tensor it was given is on the "
            "CPU. Move its inputs (and the module it belongs to) to the GPU; on a machine without one, use an "
            "operation that runs on the CPU.",
            "zh": "这个运算没有 CPU 实现（或者只能在 CUDA 上运行），而传给它的张量在 CPU 上。请把它的输入（以及它所属的"
            "模块）移到 GPU 上；在没有 GPU 的机器上，请换用能在 CPU 上运行的运算。",
        },
        "_graph": {
            "en": "A compiled graph was given a CPU tensor beside tensors on the GPU, so CUDA graphs were skipped for "
            "it. Find the tensor on the CPU (often one made inside `forward` without `device=`, or a buffer that was "
            "never moved) and make it on the GPU, or move it there.",
            "zh": "编译得到的图在 GPU 张量之外还收到了一个 CPU 张量，于是没有为它使用 CUDA Graphs。请找出这个 CPU 张量"
            "（常见的是在 `forward` 里创建时没写 `device=` 的张量，或从未移动过的缓冲区），直接在 GPU 上创建它，或把它"
            "移过去。",
        },
        "_said": {
            "en": "The message says that tensors of one computation are on different devices, without naming them. "
            "Read the traceback for the operation, print the `.device` of each tensor it uses, decide which "
            "device you meant, and move whatever is on the other one.",
            "zh": "这条报错说同一次计算的张量在不同的设备上，但没有说是哪两个设备。请在 traceback 里找到出错的运算，"
            "打印它用到的每个张量的 `.device`，想清楚本该在哪个设备上，再把不在那里的东西移过去。",
        },
    },
)

# Two things of one computation, each said to be on its device, in the poster's words anywhere in the paste (the
# general reading above reads only the error lines): "数据放在cpu，模型放在gpu，导致报错" puts the words before
# "报错" on its line, "The model is on cuda:0 but the labels are still on the CPU" comes before the traceback. A thing
# is named for each device (a model, data, inputs, labels, weights, ...), so "it runs on the CPU, on the GPU it
# fails" is not read as a pair.
THING_EN = (r"(?:model|network|net|module|layer|data|dataset|batch|inputs?|input_ids|images?|labels?|targets?|"
            r"weights?|params|parameters?|tensors?|hidden(?: state)?|mask|index|indices|embeddings?|loss|outputs?|"
            r"features?|optimizer(?: state)?)")
THING_ZH = (r"(?:模型|网络|数据|输入|标签|权重|参数|张量|隐藏状态|索引|特征|输出|损失|优化器|model|data|input_ids|"
            r"inputs?|labels?|tensors?|hidden|weights?|mask|index)")
PLACED_ZH = r"(?:放在|放到了?|在|位于|处于|加载到了?|转到了?|移到了?|搬到了?)"
# One GPU by its number ("cuda:1", "GPU 1", "device 0"), where a program works on one and fails on another.
GPU_N = r"(?:cuda:\d|(?:GPU|gpu|[Dd]evice) ?[:#-]? ?\d)(?![\w:]|\.\d)"
WORKS = (r"(?:works?|worked|working)(?: fine| well| ok| okay| normally| correctly| perfectly| properly)?|"
         r"(?:runs?|ran|running) (?:fine|well|ok|okay|normally|correctly|perfectly|properly|without (?:any )?"
         r"(?:errors?|problems?|issues?))|(?:is|was) (?:fine|ok|okay)|no (?:errors?|problems?|issues?)|"
         r"successful(?:ly)?")
FAILS = (r"(?:errors?|fails?|failed|failing|failures?|crash(?:es|ed|ing)?|breaks?|broke|exceptions?|raises?|"
         r"(?:does ?n[o']t|do ?n[o']t|can ?not|can't|not) (?:on|with|for|in|work|run)|wrong)")
CONTRAST = r"(?:\b(?:[Bb]ut|[Hh]owever|[Ww]hile|[Ww]hereas|[Yy]et)\b|[.;!](?= ))"
TWO_PLACES_IN_WORDS = ErrorKind(
    name="two_places_in_words",
    chapter="01-devices",
    confident=False,
    causes=TWO_DEVICES.causes,
    candidates=TWO_DEVICES.candidates,
    fallback=True,
    prefer_pair=True,
    patterns=(
        r"\b(?:[Tt]he |[Mm]y |[Oo]ur |[Yy]our )?" + THING_EN + r" (?:is|are|was|were|stays?|stayed|remains?|"
        r"remained)(?: still| all)? (?:on|in) (?:the )?(?P<want>" + DW + r")(?![\w-])" + _CUT + r"{0,12}?"
        r"(?:\b(?:but|while|whereas|and|yet)\b|,) (?:the |my |our |your |all )?" + THING_EN + r" (?:is|are|was|were|"
        r"stays?|stayed|remains?|remained)(?: still| all)? (?:on|in) (?:the )?(?P<found>" + DW + r")(?![\w-])",
        THING_ZH + r"(?:都|也|还|仍然|却)?" + PLACED_ZH + r" ?(?P<want>" + DW_ZH + r") ?上?" + r"[，,；;、 ]?"
        r"(?:但是?|而|可是|然而|却)?" + THING_ZH + r"(?:都|也|还|仍然|却|又)?" + PLACED_ZH + r" ?(?P<found>" + DW_ZH
        + r")",
        # "gpu上训练的模型在cpu上加载报错": a model trained on a GPU, used where there is none
        r"(?P<_location>" + TRAINED_ON_GPU_USED_ON_CPU + r")",
        # a program that works on one GPU and fails on another: "it works fine on cuda:0, but an error is prompted on
        # cuda:1", "When I run on cuda:0, everything works fine. But when I run cuda:1, ... error", "crashes on GPU 1
        # but works on GPU 0", "在cuda:0上正常，换到cuda:1就报错"
        r"(?P<_one_gpu>\b(?:" + WORKS + r")\b[^\n]{0,40}?\b(?P<want>" + GPU_N + r")[^\n]{0,60}?" + CONTRAST +
        r"(?=[^\n]{0,80}?\b" + FAILS + r"\b)[^\n]{0,80}?\b(?P<found>" + GPU_N + r"))",
        r"(?P<_one_gpu>\b(?P<want>" + GPU_N + r")[^\n]{0,40}?\b(?:" + WORKS + r")\b[^\n]{0,30}?" + CONTRAST +
        r"(?=[^\n]{0,80}?\b" + FAILS + r"\b)[^\n]{0,80}?\b(?P<found>" + GPU_N + r"))",
        r"(?P<_one_gpu>\b(?:" + FAILS + r")\b[^\n]{0,40}?\b(?P<found>" + GPU_N + r")[^\n]{0,60}?" + CONTRAST +
        r"[^\n]{0,40}?\b(?:" + WORKS + r")\b[^\n]{0,30}?\b(?P<want>" + GPU_N + r"))",
        # a mismatch between two places, said between them: "returns predictions on the CPU, causing a mismatch when
        # performing assignments to tensors initialized on the GPU"
        r"\b(?:on|in) (?:the )?(?P<want>" + DW + r")(?![\w-])[^.\n]{0,40}?\b(?:mismatch|conflict)\w*\b[^.\n]{0,80}?\b"
        r"(?:on|in) (?:the )?(?P<found>" + DW + r")(?![\w-])",
        r"(?P<_other_gpu>" + OTHER_GPU + r")",
        # a device asked for and another one used: "with device=cpu it still loads onto cuda", "device = cpu
        # 的时候...还是会加载到cuda上"
        r"(?P<_said>\bdevice ?= ?['\"]?(?:cpu|CPU)['\"]?[^\n]{0,80}?(?:\bstill (?:gets? |is |are )?"
        r"(?:loaded|placed|put|moved|runs?|goes) (?:on|to|onto) (?:the )?|"
        r"(?:还是|仍然|依然|却|仍)(?:会)?[^\n，,。]{0,10}?(?:加载|放|跑|运行|移)(?:到|在) ?)"
        r"(?:GPU|gpu|cuda|CUDA|显卡)\b)",
        r"(?P<_one_gpu>(?P<want>" + GPU_N + r") ?上?[^\n。]{0,20}?(?:正常|没问题|没有问题|可以跑|能跑|能运行|可以运行)"
        r"[^\n。]{0,30}?(?P<found>" + GPU_N + r") ?上?[^\n。]{0,20}?(?:报错|出错|错误|不行|失败))",
    ),
    routes=TWO_DEVICES.routes,
    example="The model is on cuda:0 but the labels are still on the CPU.\nRuntimeError: the loss failed",
    reading=TWO_DEVICES.reading,
    reading_by_marker={
        "_location": TWO_DEVICES.reading_by_marker["_location"],
        "_one_gpu": {
            "en": "The program works on {want} and fails on {found}. What follows the tensors to the other GPU works; "
            "something that stays on the current CUDA device (`cuda:0` unless you set it) does not. Look for "
            "`.cuda()` or `device=\"cuda\"` without a number, for `torch.cuda.current_device()`, and for custom "
            "kernels (CUDA extensions, Triton), which may launch on the current device: call "
            "`torch.cuda.set_device()` with the GPU you run on (or wrap the work in `with torch.cuda.device(...)`), "
            "and create tensors with `device=x.device`.",
            "zh": "程序在 {want} 上正常，在 {found} 上出错。跟着张量去了另一块 GPU 的部分都能运行，留在当前 CUDA 设备"
            "（没有设置时是 `cuda:0`）上的部分就会出错。请查找不带编号的 `.cuda()` 或 `device=\"cuda\"`、"
            "`torch.cuda.current_device()`，以及可能在当前设备上启动的自定义内核（CUDA 扩展、Triton）：用 "
            "`torch.cuda.set_device()` 设成实际运行的那块 GPU（或把这段代码放进 `with torch.cuda.device(...)`），"
            "并用 `device=x.device` 创建张量。",
        },
        "_other_gpu": {
            "en": "The program works on the default GPU and fails, or computes wrong results, on another one. What "
            "follows the tensors to the other GPU works; something that stays on the current CUDA device (`cuda:0` "
            "unless you set it) does not. Look for `.cuda()` or `device=\"cuda\"` without a number, for a "
            "hard-coded `cuda:0`, for `torch.cuda.current_device()`, and for custom kernels (CUDA extensions, "
            "Triton), which may launch on the current device: call `torch.cuda.set_device()` with the GPU you run on "
            "(or wrap the work in `with torch.cuda.device(...)`), and create tensors with `device=x.device`.",
            "zh": "程序在默认 GPU 上正常，换到另一块 GPU 就出错或算出错误结果。跟着张量去了另一块 GPU 的部分都能运行，"
            "留在当前 CUDA 设备（没有设置时是 `cuda:0`）上的部分就会出问题。请查找不带编号的 `.cuda()` 或 "
            "`device=\"cuda\"`、写死的 `cuda:0`、`torch.cuda.current_device()`，以及可能在当前设备上启动的自定义"
            "内核（CUDA 扩展、Triton）：用 `torch.cuda.set_device()` 设成实际运行的那块 GPU（或把这段代码放进 "
            "`with torch.cuda.device(...)`），并用 `device=x.device` 创建张量。",
        },
    },
)

# DataParallel re-raises a replica's error under its own header; the replica's message follows it ("Original
# Traceback ..."), and any family that knows that message answers first. Only a paste cut after the header (or one
# whose message nothing reads) comes here. The error happened inside a replica, on one of several GPUs, which is
# chapter 06's subject; what it was, the header does not say (a device mix, a shape, StopIteration from
# `next(self.parameters())`, ...), so it is not called a device error: the reader is sent to chapter 06 and to the
# replica's own message.
REPLICA = ErrorKind(
    name="dataparallel_replica",
    chapter="06-multigpu",
    confident=False,
    device_error=False,
    undecided=True,
    fallback=True,
    device_fields=(),
    patterns=(r"Caught (?P<exc>[A-Za-z_][\w.]*) in replica (?P<replica>\d+) on device (?P<dev>\d+)",),
    example="RuntimeError: Caught RuntimeError in replica 1 on device 1.",
    reading={
        "en": "DataParallel ran a copy of the model (replica {replica}) on GPU {dev}, and that copy raised "
        "{exc}; what went wrong is the replica's own message, in the \"Original Traceback\" printed below this line. "
        "Paste that message here if it is not shown. When it is a device error, it is most often a tensor the model "
        "makes or keeps on one device (the CPU or `cuda:0`) meeting the replica's inputs on its own GPU.",
        "zh": "DataParallel 在 GPU {dev} 上运行了模型的一个副本（replica {replica}），这个副本抛出了 {exc}；副本自己的"
        "报错信息，在这一行下面的 “Original Traceback” 里，那才是真正出错的地方。如果没有显示，请把它粘贴到这里。"
        "如果它是设备错误，最常见的情况是模型在某个设备（CPU 或 `cuda:0`）上创建或保存的张量，遇到了副本在自己 GPU "
        "上的输入。",
    },
)

# Mixed precision that fails without a device error: not the subject of a device chapter, but chapter 08's.
AMP_FAILURE = ErrorKind(
    name="amp_failure",
    chapter="08-amp",
    confident=False,
    device_error=False,
    device_fields=(),
    fallback=True,
    patterns=(
        r"(?P<_amp>GradScaler|[Aa]ttempting to unscale FP16 gradients|unscale_\(\)|No inf checks were recorded|"
        r"\bautocast\b|torch\.(?:cuda\.)?amp\b|loss scal(?:e|er|ing)|expected scalar type (?:Half|BFloat16)|"
        r"c10::(?:Half|BFloat16)|at::Half|HalfTensor|\bfp16\b|\bbf16\b|float16|bfloat16|混合精度|半精度|"
        # a half-precision kernel missing on the CPU: "addmm_impl_cpu_" not implemented for 'Half'
        r"not implemented for '(?:Half|BFloat16|ComplexHalf)')",
    ),
    example="ValueError: Attempting to unscale FP16 gradients.",
    reading={
        "en": "This is not a device error: it is how mixed precision fails (half precision, autocast or the "
        "gradient scaler, or a half-precision model run on the CPU, which has no float16 kernel for many "
        "operations). Chapter 08 covers it: keep the model and data in float32, let autocast choose each "
        "operation's precision, and let the scaler unscale the gradients before anything reads them.",
        "zh": "这不是设备错误，而是混合精度出了问题（半精度、autocast 或梯度缩放器）。第 08 章讲的就是这个："
        "模型和数据保持 float32，让 autocast 为每个运算选择精度，在读取梯度之前先让梯度缩放器把它们还原。"
        "半精度模型在 CPU 上运行也会这样失败：CPU 上的很多运算没有 float16 内核，请改用 float32 或在 GPU 上运行。",
    },
)

# --------------------------------------------------------------------------------------------- declined
# Recognised so that a reader who pastes them is told plainly that they are not device-placement errors.


def _declined(name: str, chapter: str | None, patterns: tuple[str, ...], example: str, en: str, zh: str,
              indexed: bool = False) -> ErrorKind:
    return ErrorKind(name=name, chapter=chapter, patterns=patterns, example=example, reading={"en": en, "zh": zh},
                     device_error=False, device_fields=(), indexed=indexed)


STATE_DICT_PREFIX = _declined(
    "state_dict_prefix",
    "07-checkpoints",
    (r"Missing key\(s\) in state_dict: [^\n]*?Unexpected key\(s\) in state_dict: \"module\.",
     r"[Uu]nexpected key \"module\.[\w.]+\" in state_dict",
     r"Missing key\(s\) in state_dict: \"module\.",
     r"[Uu]nexpected key\(s\) \"module\."),
    'Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc.weight", '
    '"fc.bias". \n\tUnexpected key(s) in state_dict: "module.fc.weight", "module.fc.bias". ',
    "The checkpoint was saved from a model wrapped in DataParallel or DistributedDataParallel: every key starts with "
    "`module.`. Save `model.module.state_dict()`, or strip the prefix before loading "
    "(`torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state, \"module.\")`).",
    "这个检查点保存自一个用 DataParallel 或 DistributedDataParallel 包装过的模型：每个键都以 `module.` 开头。"
    "请保存 `model.module.state_dict()`，或者在加载前去掉这个前缀"
    "（`torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(state, \"module.\")`）。",
    indexed=True,
)

WEIGHTS_ONLY = _declined(
    "weights_only_load",
    "07-checkpoints",
    (r"Weights only load failed",),
    "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps only if "
    "you trust the source of the checkpoint.",
    "torch.load with weights_only=True (the default since PyTorch 2.6) refused a pickle that needs more than tensors "
    "and plain containers, here most likely a whole pickled model. A pickle can run any code: save and load a "
    "state_dict instead, or, for a file you trust, allow its classes with "
    "`torch.serialization.safe_globals([...])`.",
    "weights_only=True 的 torch.load（PyTorch 2.6 起的默认行为）拒绝了一个不只包含张量和普通容器的 pickle，"
    "这里多半是整个被 pickle 的模型。pickle 可以执行任意代码：请改为保存和加载 state_dict；"
    "对于你信任的文件，可以用 `torch.serialization.safe_globals([...])` 放行其中的类。",
    indexed=True,
)

DTYPE = _declined(
    "dtype_mismatch",
    "08-amp",
    (
        r"must have the same dtype",
        r"to have the same dtype",
        r"expected scalar type (?P<want>\w+) but found (?P<found>\w+)",
        r"Expected object of sca[lL]ar type (?P<want>\w+) but got sca[lL]ar type (?P<found>\w+)",
        r"to have the same type as tensor for argument",
        r"Input type \((?P<input>[\w:]+)\) and (?:bias|weight) type \((?P<weight>[\w:]+)\) should be the same",
        r"expected both vectors to have same dtype",
        r"Found dtype (?P<found>\w+) but expected (?P<want>\w+)",
        r"result type \w+ can't be cast to the desired output type",
        r"expected (?:m1|mat1) and (?:m2|mat2) to have the same dtype",
        r"must have the same dtype|dtype ?(?:不一致|不匹配)|必须具有相同的 ?(?:dtype|数据类型)|标量类型",
        r"dtype ?\w+ ?但(?:是)?期望",
        r"Expected (?:query|key|value)[\w ,]* to have the same dtype",
    ),
    "mat1 and mat2 must have the same dtype, but got Float and Half",
    "Not a device error: two tensors have different dtypes (float32, float16, bfloat16, int64...). Under mixed "
    "precision or after `.half()`, chapter 08 explains what autocast casts and what it leaves alone; a loss's class "
    "labels must be integers (`labels.long()`).",
    "不是设备错误：两个张量的 dtype（数据类型：float32、float16、bfloat16、int64……）不同。如果用了混合精度或调用了 "
    "`.half()`，第 08 章讲解 autocast 会转换什么、不会转换什么；损失函数的类别标签必须是整数（`labels.long()`）。",
)

SHAPE = _declined(
    "shape_mismatch",
    None,
    (
        r"shapes cannot be multiplied",
        r"形状无法相乘|形状不匹配",
        r"size mismatch",
        r"The size of tensor a \(\d+\) must match the size of tensor b",
        r"mat1 dim 1 must match mat2 dim 0",
        r"Expected input batch_size \(\d+\) to match target batch_size",
        r"expected input\[[^\]]*\] to have \d+ channels",
        r"Expected \d+D \(unbatched\) or \d+D \(batched\) input",
        r"shape '\[[^\]]*\]' is invalid for input of size",
        r"Sizes of tensors must match except in dimension",
        r"doesn't match the broadcast shape|is not broadcastable|must match the existing size",
    ),
    "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
    "Not a device error: the tensors' shapes do not fit the operation (print `.shape` before the failing line).",
    "不是设备错误：张量的形状与运算不匹配（在出错那一行之前打印 `.shape`）。",
)

OOM = _declined(
    "out_of_memory",
    None,
    (r"out of memory|OutOfMemoryError|CUDA_ERROR_OUT_OF_MEMORY|显存不足|内存不足|MPS backend out of memory",),
    "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.75 GiB total capacity)",
    "Not a device-placement error: the GPU ran out of memory. Use a smaller batch, mixed precision, or free tensors "
    "you keep (`loss.item()` instead of `loss`).",
    "不是设备错误：GPU 显存不足。减小批大小、使用混合精度，"
    "或者释放你留着的张量（记录 `loss.item()` 而不是 `loss`）。",
)

SHARED_GPU = _declined(
    "ranks_share_a_gpu",
    "06-multigpu",
    (r"Duplicate GPU detected ?: rank \d+ and rank \d+ both on CUDA device",),
    "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000",
    "Not a placement mix-up between tensors: two processes of one job use the same GPU, and NCCL refuses to build its "
    "communicator. Each process must take its own GPU: call `torch.cuda.set_device(local_rank)` before "
    "`init_process_group`, and use `torch.device(\"cuda\", local_rank)` rather than `\"cuda\"` (which is `cuda:0` in "
    "every process). Chapter 06 covers it.",
    "不是张量之间放错了设备：同一个作业的两个进程用了同一块 GPU，NCCL 拒绝建立通信器。每个进程都必须使用自己的 GPU："
    "在 `init_process_group` 之前调用 `torch.cuda.set_device(local_rank)`，并用 `torch.device(\"cuda\", local_rank)` "
    "代替 `\"cuda\"`（在每个进程里它都是 `cuda:0`）。第 06 章讲的就是这个。",
)

CUDA_FAULT = _declined(
    "cuda_kernel_fault",
    None,
    (
        r"illegal memory access|misaligned address|unspecified launch failure|an illegal instruction",
        r"device-side assert(?:ion)? triggered|Assertion [^!]{0,200}? failed",
        r"no kernel image is available for execution on the device",
        r"CUDNN_STATUS_\w+|cuDNN error|CUBLAS_STATUS_\w+|cublas\w* failed",
        r"NCCL error|ncclUnhandledCudaError|ncclInternalError|ncclSystemError",
    ),
    "CUDA error: device-side assert triggered",
    "Not a device-placement error: a CUDA kernel failed. Rerun with `CUDA_LAUNCH_BLOCKING=1` (or on the CPU) to get "
    "the "
    "real error; a device-side assert is most often a class label or an index out of range.",
    "不是设备错误：某个 CUDA 内核运行失败。用 `CUDA_LAUNCH_BLOCKING=1`（或在 CPU 上）重新运行，才能看到真正的错误；"
    "device-side assert（设备端断言）多半是类别标签或索引越界。",
)

NO_CUDA = _declined(
    "cuda_unavailable",
    "01-devices",
    (
        r"Torch not compiled with CUDA enabled",
        r"Found no NVIDIA driver on your system",
        r"No CUDA GPUs are available",
        r"CUDA driver initialization failed|CUDA driver version is insufficient|The NVIDIA driver on your system is "
        r"too old",
        r"torch\.cuda\.is_available\(\) is False|Cannot access accelerator device when none is available",
        r"no CUDA-capable device is detected",
        # NCCL asked for where no GPU is visible: the machine's (or the process's) GPUs, not a tensor's place
        r"only supported with GPUs, no GPUs found",
        # libraries' own words for a GPU that is not there (ultralytics, yolov5), and a driver older than the runtime
        r"[Ii]nvalid CUDA '[^']{0,40}' requested",
        r"CUDA driver version is insufficient",
    ),
    "Torch not compiled with CUDA enabled",
    "Not a placement mix-up: this machine (or this torch build) has no usable CUDA device. Pick the device from "
    "what is available — cuda, then mps, then cpu — instead of hard-coding `.cuda()` (chapter 01).",
    "不是张量放错了设备：这台机器（或这个 torch 版本）没有可用的 CUDA 设备。请根据可用情况选择设备"
    "（依次尝试 cuda、mps、cpu），不要写死 `.cuda()`（第 01 章）。",
)

INVALID_ORDINAL = _declined(
    "invalid_device_ordinal",
    "06-multigpu",
    (r"invalid device ordinal", r"Invalid device id", r"CUDA error: invalid device ordinal"),
    "CUDA error: invalid device ordinal",
    "Not a placement mix-up between tensors: the code asked for a GPU number this machine does not have (`cuda:1` on "
    "one GPU, a `local_rank` beyond `torch.cuda.device_count()`, or CUDA_VISIBLE_DEVICES hiding it). Check "
    "`torch.cuda.device_count()`; chapter 06 shows how each process picks its GPU.",
    "不是张量之间放错了设备：代码请求了这台机器上不存在的 GPU 编号（单卡机器上的 `cuda:1`、超出 "
    "`torch.cuda.device_count()` 的 `local_rank`，或被 CUDA_VISIBLE_DEVICES 隐藏了）。请检查 "
    "`torch.cuda.device_count()`；第 06 章介绍每个进程如何选择自己的 GPU。",
)

DEVICE_STRING = _declined(
    "device_string",
    "01-devices",
    (
        r"Expected one of [\w, ]+ device type at start of device string: (?P<given>\S+)",
        r"Invalid device string: '(?P<given>[^']*)'",
    ),
    "RuntimeError: Expected one of cpu, cuda, mps, meta device type at start of device string: gpu",
    "Not a placement mix-up between tensors: a device was named in a way PyTorch does not accept (`{given}`). "
    "Spell devices `cpu`, `cuda`, `cuda:0`, `mps`; chapter 01 shows "
    "how to pick one that works on every machine.",
    "不是张量之间放错了设备：设备名的写法 PyTorch 不接受（`{given}`）。"
    "设备应写成 `cpu`、`cuda`、`cuda:0`、`mps`；第 01 章介绍如何选出在任何机器上都能用的设备。",
)

# "don't know how to restore data location of torch.FloatStorage (tagged with gpu)": the place torch.load was asked to
# restore to (a map_location string) is no device name at all; a real one ("cuda:1", "xla:0") is the general reading's
# checkpoint saved where the device is absent.
KNOWN_TAGS = DEVICE_TYPES + r"|fpga|ideep|opengl|opencl|musa|mlu|dcu|gcu|tpu"  # and backends of other builds
LOCATION_TAG = _declined(
    "location_tag",
    "07-checkpoints",
    (r"restore data location of [\w.]+ \(tagged with (?P<given>(?!(?:" + KNOWN_TAGS + r")(?![A-Za-z]))[^)\s]+)\)",),
    "RuntimeError: don't know how to restore data location of torch.FloatStorage (tagged with gpu)",
    "Not a placement mix-up between tensors: `torch.load` was asked to restore the checkpoint's tensors to `{given}`, "
    "which is no device name PyTorch knows (the name comes from `map_location` when it is a string). Pass "
    "`map_location=\"cuda\"`, `\"cuda:0\"`, `\"cpu\"` or a `torch.device`; chapter 07 covers loading onto the right "
    "device.",
    "不是张量之间放错了设备：`torch.load` 被要求把检查点里的张量恢复到 `{given}`，而这不是 PyTorch 认识的设备名"
    "（`map_location` 是字符串时，这个名字就来自它）。请传入 `map_location=\"cuda\"`、`\"cuda:0\"`、`\"cpu\"` "
    "或一个 `torch.device`；第 07 章讲如何把检查点加载到正确的设备上。",
)

MPS_MISSING_OP = _declined(
    "mps_missing_operator",
    "01-devices",
    (r"is not (?:currently )?(?:implemented|supported) (?:for|on) the MPS (?:device|backend)",
     r"PYTORCH_ENABLE_MPS_FALLBACK"),
    "NotImplementedError: The operator 'aten::_linalg_solve_ex.result' is not currently implemented for the MPS "
    "device.",
    "Not a placement mix-up between tensors: this operation has no kernel on Apple's MPS device yet. Set the "
    "environment variable `PYTORCH_ENABLE_MPS_FALLBACK=1` before starting Python to run it on the CPU, or run the "
    "model on the CPU; chapter 01 shows how to choose the device.",
    "不是张量之间放错了设备：这个运算在 Apple 的 MPS 设备上还没有内核。在启动 Python 之前设置环境变量 "
    "`PYTORCH_ENABLE_MPS_FALLBACK=1`，让它在 CPU 上运行，或者把模型放在 CPU 上运行；第 01 章讲如何选择设备。",
)

AMP_NEEDS_GPU = _declined(
    "amp_needs_accelerator",
    "08-amp",
    (r"(?:fp16|bf16|[Hh]alf|[Mm]ixed) (?:mixed )?precision (?:training )?(?:requires|needs|is only supported on|only "
     r"works on) (?:a |an )?(?:GPU|CUDA|cuda)",),
    "ValueError: fp16 mixed precision requires a GPU (not 'mps').",
    "Not a placement mix-up between tensors: the library was asked for mixed precision on a device where it does not "
    "offer it. Turn mixed precision off on this machine, or use the precision the device supports; chapter 08 shows "
    "`torch.amp` on CUDA, the CPU and MPS.",
    "不是张量之间放错了设备：库被要求在一个它不支持混合精度的设备上使用混合精度。请在这台机器上关闭混合精度，"
    "或者使用该设备支持的精度；第 08 章介绍 `torch.amp` 在 CUDA、CPU 和 MPS 上的用法。",
)

OFFLOADED_MOVE = _declined(
    "offloaded_model_moved",
    "07-checkpoints",
    (r"move a model that has some modules offloaded to (?:cpu|disk)",
     r"shouldn't move a model (?:when it is|that is) dispatched on multiple devices",
     # transformers: a quantized model the loader placed; diffusers: a pipeline with sequential CPU offload
     r"\.to`? is not supported for `?(?:4|8)-bit`? or `?(?:4|8)-bit`? bitsandbytes models",
     r"activated sequential model offloading by calling `?enable_sequential_cpu_offload`?, but are now attempting to "
     r"move the pipeline to GPU"),
    "RuntimeError: You can't move a model that has some modules offloaded to cpu or disk.",
    "Not a placement mix-up between tensors: the model was loaded with a `device_map` that spread it over several "
    "places (some modules on the CPU or on disk), and something then moved it as one piece, which the loader refuses. "
    "Load it onto one device (`device_map={'': device}`) when it fits there, or leave its placement to the loader and "
    "move only the inputs; chapter 07 covers loading onto the right device.",
    "不是张量之间放错了设备：模型加载时用的 `device_map` 把它分散放到了几个地方（部分模块在 CPU 或磁盘上），"
    "之后又有代码把它当作一个整体移动，加载器拒绝这样做。放得下时就把它加载到同一个设备上"
    "（`device_map={'': device}`），否则就让加载器决定它的位置，只移动输入；第 07 章讲如何把模型加载到正确的设备上。",
)

# A loader's device map that left some modules on the CPU or on disk, met by a part of the library that needs every
# module on the GPU (a quantized kernel, training a quantized model): "Found modules on cpu/disk", "Some modules are
# dispatched on the CPU or the disk", "a device_map that contains a CPU or disk device".
OFFLOADED_MODULES = _declined(
    "modules_offloaded",
    "07-checkpoints",
    (r"\b(?:cpu|CPU)(?: ?/ ?| or (?:the )?)disk\b",),
    "ValueError: Found modules on cpu/disk. Using Exllama backend requires all the modules to be on GPU.",
    "Not a placement mix-up between tensors: the loader's device map put some of the model's modules on the CPU or on "
    "disk (the GPU could not hold them all), and this part of the library needs every module on the GPU. Make the "
    "model fit on the GPU (a smaller or more strongly quantized model, more GPU memory, `max_memory`), or turn off "
    "the feature that needs it (the message names it); chapter 07 covers loading onto the right device.",
    "不是张量之间放错了设备：加载器的设备映射把模型的部分模块放到了 CPU 或磁盘上（GPU 放不下全部模块），"
    "而库的这一部分要求所有模块都在 GPU 上。请让模型能完整放进 GPU（换更小或量化程度更高的模型、更大的显存、"
    "设置 `max_memory`），或者关掉需要这样做的功能（报错里写着是哪个）；第 07 章讲如何把模型加载到正确的设备上。",
)

INCOMPLETE_DEVICE_MAP = _declined(
    "device_map_incomplete",
    "07-checkpoints",
    (r"device_map (?:provided |given |passed )?does not (?:give|assign) any device",
     r"no device (?:was )?(?:given|assigned|set) (?:to|for) (?:the following )?(?:parameters|modules|weights)"),
    "ValueError: The device_map provided does not give any device for the following parameters: lm_head.weight",
    "Not a placement mix-up between tensors: the device map given to the loader (`device_map` in transformers' "
    "`from_pretrained`, accelerate's `dispatch_model` or `load_checkpoint_and_dispatch`) leaves some of the model's "
    "parameters without a device. Give every module a device in the map (or use `device_map=\"auto\"`), and check "
    "that the map's module names are the model's own; chapter 07 covers loading onto the right device.",
    "不是张量之间放错了设备：交给加载器的设备映射（transformers `from_pretrained` 的 `device_map`，或 accelerate 的 "
    "`dispatch_model`、`load_checkpoint_and_dispatch`）没有给模型的部分参数指定设备。请在映射里给每个模块都指定设备"
    "（或者用 `device_map=\"auto\"`），并核对映射里的模块名是否与模型自己的一致；"
    "第 07 章讲如何把模型加载到正确的设备上。",
)

NO_GPU_BUILD = _declined(
    "extension_without_gpu",
    None,
    (r"Not compiled with GPU support", r"Not compiled with CUDA support"),
    "RuntimeError: Not compiled with GPU support",
    "Not a placement mix-up: an extension (detection or attention operators, for example) was built without CUDA. "
    "Reinstall it built for your CUDA and torch versions.",
    "不是张量放错了设备：某个扩展（例如检测或注意力算子）在编译时没有启用 CUDA。"
    "请重新安装与你的 CUDA 和 torch 版本匹配的构建。",
)

CUDA_FORK = _declined(
    "cuda_fork",
    None,
    (r"Cannot re-initialize CUDA in forked subprocess",),
    "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start "
    "method",
    "Not a device-placement error: a DataLoader worker (or another forked process) touched CUDA. Keep the dataset on "
    "the CPU and move batches in the training loop, or use the 'spawn' start method.",
    "不是设备错误：DataLoader 的工作进程（或其他 fork 出来的进程）用到了 CUDA。让数据集留在 CPU 上、在训练循环里"
    "移动批次，或者使用 'spawn' 启动方式。",
)

ALL = (
    SAME_DEVICE, CONV, DATAPARALLEL, DDP, INDICES_CURRENT, RNN, CAT, ADVANCED_INDEX, META, GENERATOR, PIN, NUMPY,
    DESERIALIZE, LEGACY_BACKEND, SPARSE_ASSERT, TRITON_POINTER, SPARSE_INDICES, CONTAINER_TO, CUSTOM_OP,
    PACKED_LENGTHS, GRADIENT_DEVICE, LEGACY_ARGUMENTS, HAND_WRITTEN, TWO_DEVICES, TWO_PLACES_IN_WORDS, REPLICA,
    AUTOCAST_DEVICE_TYPE,
    STATE_DICT_PREFIX, WEIGHTS_ONLY, DTYPE, SHAPE, OOM, SHARED_GPU, CUDA_FAULT, NO_CUDA, INVALID_ORDINAL, DEVICE_STRING,
    NO_GPU_BUILD, CUDA_FORK, LOCATION_TAG, MPS_MISSING_OP, AMP_NEEDS_GPU, OFFLOADED_MOVE, OFFLOADED_MODULES,
    INCOMPLETE_DEVICE_MAP,
    AMP_FAILURE,
)
