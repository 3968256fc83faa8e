"""What the names of torch mean to the linter: factories, tensor functions and methods, layers, wrappers."""

from __future__ import annotations

import builtins

FACTORIES = frozenset(
    "zeros ones empty full arange range linspace logspace rand randn randint randperm eye tensor as_tensor "
    "from_numpy empty_strided tril_indices triu_indices".split()
)
LEGACY_TYPES = frozenset(
    "Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor ShortTensor CharTensor "
    "ByteTensor BoolTensor".split()
)
# torch.<name>(...) calls that return a tensor on the device of their tensor arguments
TENSOR_FUNCTIONS = frozenset(
    "cat concat concatenate stack hstack vstack exp log log1p sqrt rsqrt sin cos tanh sigmoid relu abs clamp clip "
    "where einsum matmul mm bmm addmm outer mean sum prod cumsum cumprod softmax log_softmax flatten reshape "
    "tril triu transpose permute squeeze unsqueeze gather index_select masked_fill pow maximum minimum "
    "zeros_like ones_like empty_like full_like rand_like randn_like randint_like diag argmax argmin norm "
    "logsumexp sign round floor ceil multinomial bincount cdist dist".split()
)
# torch.<name>(...) calls whose tensor arguments must share one device (a CPU tensor beside a CUDA one raises)
JOINING_FUNCTIONS = frozenset(
    "cat concat concatenate stack hstack vstack where einsum matmul mm bmm addmm outer maximum minimum cdist dist "
    "gather index_select masked_fill add sub mul div true_divide eq ne lt le gt ge max min".split()
)
# methods of a tensor that return a tensor on the same device
TENSOR_METHODS = frozenset(
    "detach clone contiguous float double half bfloat16 long int short bool byte char view view_as reshape "
    "reshape_as expand expand_as repeat flatten unflatten squeeze unsqueeze permute transpose t mean sum std var "
    "prod max min amax amin argmax argmin abs exp log sqrt sigmoid tanh relu softmax log_softmax clamp clip "
    "masked_fill masked_select index_select gather scatter narrow pow matmul mm bmm mul add sub div neg "
    "cumsum triu tril norm type_as round floor ceil sign sin cos roll flip new_zeros new_ones new_empty "
    "new_full new_tensor pin_memory requires_grad_ detach_ float_ repeat_interleave where".split()
)
# tensor methods whose tensor argument must be on the receiver's device
JOINING_METHODS = frozenset(
    "add sub mul div matmul mm bmm masked_fill where eq ne lt le gt ge maximum minimum pow add_ sub_ mul_ div_ "
    "masked_fill_ index_select gather".split()
)
DEVICE_MOVES = frozenset({"to", "cuda", "cpu"})
# attributes only a tensor (or an array) has, never a module: a parameter used with one of them is a tensor
TENSOR_EVIDENCE = frozenset(
    "shape size view reshape unsqueeze squeeze dim ndim numel item tolist dtype argmax softmax permute transpose "
    "contiguous detach masked_fill new_zeros new_ones numpy is_cuda".split()
)
MODULE_METHODS = frozenset({"float", "double", "half", "bfloat16", "requires_grad_", "type", "train", "eval"})
BUILTINS = frozenset(dir(builtins))
DTYPES = frozenset(
    f"torch.{name}" for name in
    "float float32 float64 double half float16 bfloat16 long int64 int int32 int16 int8 uint8 bool short "
    "complex64 complex128".split()
)
# layers that own parameters or buffers (a parameterless one, nn.ReLU(), built in forward is no device bug)
PARAMETER_LAYERS = frozenset(
    "Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LazyConv1d "
    "LazyConv2d LazyConv3d Embedding EmbeddingBag BatchNorm1d BatchNorm2d BatchNorm3d SyncBatchNorm LayerNorm "
    "GroupNorm RMSNorm LocalResponseNorm_ InstanceNorm1d InstanceNorm2d InstanceNorm3d RNN LSTM GRU RNNCell "
    "LSTMCell GRUCell MultiheadAttention Transformer TransformerEncoder TransformerDecoder "
    "TransformerEncoderLayer TransformerDecoderLayer PReLU".split()
)
PAIRS = frozenset(f"torch.{name}" for name in ("max", "min", "sort", "topk", "kthvalue", "median", "mode"))
MODULE_FACTORIES = ("timm.create_model", "torchvision.models.")
DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                           "torch.nn.parallel.data_parallel.DataParallel"})
DISTRIBUTED_DATA_PARALLEL = frozenset({"torch.nn.parallel.DistributedDataParallel",
                                       "torch.nn.parallel.distributed.DistributedDataParallel",
                                       "torch.nn.DistributedDataParallel"})
LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
DATASETS = frozenset({"torch.utils.data.Dataset", "torch.utils.data.IterableDataset",
                      "torch.utils.data.dataset.Dataset", "torch.utils.data.dataset.IterableDataset"})
DEPRECATED_AMP = {
    "torch.cuda.amp.autocast": ("torch.amp.autocast(\"cuda\", ...)", "cuda"),
    "torch.cuda.amp.GradScaler": ("torch.amp.GradScaler(\"cuda\", ...)", "cuda"),
    "torch.cpu.amp.autocast": ("torch.amp.autocast(\"cpu\", ...)", "cpu"),
    "torch.cpu.amp.GradScaler": ("torch.amp.GradScaler(\"cpu\", ...)", "cpu"),
    "torch.cuda.amp.custom_fwd": ("torch.amp.custom_fwd(..., device_type=\"cuda\")", ""),
    "torch.cuda.amp.custom_bwd": ("torch.amp.custom_bwd(..., device_type=\"cuda\")", ""),
}
MODULE_BASES = ("torch.nn.", "pytorch_lightning.", "lightning.")
HARMLESS_CALLS = frozenset({"print", "len", "isinstance", "type", "id", "repr", "str", "hasattr", "getattr", "next",
                            "iter", "format", "vars", "dir", "callable", "issubclass", "sorted", "list", "dict",
                            "enumerate", "zip"})

# what a tensor hands to Python, not to the device (a factory read only so is no device mistake)
PYTHON_ONLY_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "is_cuda", "device", "requires_grad"})
PYTHON_ONLY_METHODS = frozenset({"item", "tolist", "size", "numel", "dim", "nelement", "element_size", "numpy"})
# Python's own functions: they read numbers, or iterate a tensor into 0-dim tensors (which mix with any device)
PYTHON_ONLY_CALLS = frozenset({"int", "float", "bool", "len", "range", "list", "tuple", "print", "str", "repr",
                               "isinstance", "all", "any", "zip", "enumerate", "sorted"})
