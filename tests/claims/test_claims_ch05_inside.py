"""Claims tests for chapter 5 (tensors born inside the model): each test proves one statement the chapter makes.

CPU tests use the ``meta`` device, a real device on every machine, as the stand-in for a GPU; where the page
quotes a CUDA wording, the CPU test triggers the CUDA kernel's own check with a redispatch (DESIGN.md §8: it
prints ``meta`` where a GPU prints ``cuda:0``). Tests marked ``gpu`` run on a CUDA GPU only.
"""

import re

import pytest
import torch
from torch import nn

from devicelab.chapters.inside import (
    CLASSIFIER_SOLUTION,
    FEATURES,
    STANDARDIZE_SOLUTION,
    START_STATE_SOLUTION,
    probe_on_meta,
)
from devicelab.errors import lookup, match_kind

META = torch.device("meta")
CUDA_ONLY = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
RNNS = (nn.RNN, nn.LSTM, nn.GRU)


class ThreeWays(nn.Module):
    """The lab's module: a parameter, a buffer, a non-persistent buffer, a plain attribute and a 0-dim one."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(3))
        self.register_buffer("saved", torch.ones(3))
        self.register_buffer("scratch", torch.ones(3), persistent=False)
        self.plain = torch.ones(3)
        self.scalar = torch.tensor(2.0)


def solution_namespace() -> dict:
    """The course's Standardize, start_state and SequenceClassifier, as the page and the solution show them."""
    namespace = {"torch": torch, "nn": nn, "FEATURES": FEATURES}
    for code in (STANDARDIZE_SOLUTION, START_STATE_SOLUTION, CLASSIFIER_SOLUTION):
        exec(code, namespace)
    return namespace


def hidden_for(cls, batch: int, size: int, device: str = "cpu"):
    h = torch.zeros(1, batch, size, device=device)
    return (h, torch.zeros(1, batch, size, device=device)) if cls is nn.LSTM else h


def error_of(run) -> str:
    with pytest.raises(RuntimeError) as info:
        run()
    return str(info.value)


# --------------------------------------------------------------------------------------------- CPU


def test_to_moves_parameters_and_buffers_but_not_plain_tensor_attributes():
    """`model.to()` moves parameters and buffers (persistent or not), and leaves plain tensor attributes behind.

    zh: `model.to()` 会移动参数和缓冲区（无论是否 persistent），普通张量属性则被留在原地。
    """
    moved = ThreeWays().to(META)
    assert moved.weight.device == META and moved.saved.device == META and moved.scratch.device == META
    assert moved.plain.device.type == "cpu" and moved.scalar.device.type == "cpu"
    assert [name for name, _ in moved.named_parameters()] == ["weight"]  # buffers are never trained


def test_a_non_persistent_buffer_is_left_out_of_the_state_dict_and_not_restored():
    """A buffer with persistent=False is not in state_dict(); load_state_dict neither expects nor restores it.

    zh: 用 persistent=False 注册的缓冲区不在 state_dict() 里，load_state_dict 既不要求它，也不恢复它。
    """
    source = ThreeWays()
    assert list(source.state_dict()) == ["weight", "saved"]
    source.scratch.fill_(7.0)
    target = ThreeWays()
    result = target.load_state_dict(source.state_dict())  # strict: would raise on a missing key
    assert not result.missing_keys and not result.unexpected_keys
    assert torch.equal(target.scratch, torch.ones(3))


def test_a_persistent_buffer_is_required_by_a_strict_load_state_dict():
    """load_state_dict (strict) raises "Missing key(s)" for a persistent buffer the checkpoint lacks.

    zh: 检查点里缺少一个 persistent 缓冲区时，（严格模式的）load_state_dict 报 "Missing key(s)"。
    """
    state = ThreeWays().state_dict()
    del state["saved"]
    with pytest.raises(RuntimeError, match=r"Missing key\(s\) in state_dict: \"saved\""):
        ThreeWays().load_state_dict(state)


def test_a_0_dim_cpu_tensor_acts_as_a_scalar_but_a_1_dim_one_raises():
    """In an element-wise op with tensors on another device, a 0-dim CPU tensor acts as a number; 1-dim raises.

    zh: 0 维 CPU 张量与其他设备上的张量做逐元素运算时被当作一个数；一维的则会报错。
    """
    x = torch.ones(2, 3, device=META)
    assert (x * torch.tensor(2.0)).device == META
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device meta!"):
        x * torch.ones(3)


def test_cat_and_stack_raise_for_a_0_dim_cpu_tensor_beside_another_device():
    """Only element-wise ops forgive a 0-dim CPU tensor: `torch.cat` and `torch.stack` raise the device error for it.

    zh: 只有逐元素运算放过 0 维 CPU 张量：`torch.cat` 和 `torch.stack` 对它照样报设备错误。
    """
    x, scale = torch.ones(3, device=META), torch.tensor(2.0)
    for join in (lambda: torch.cat([x, scale]), lambda: torch.stack([x[0], scale])):
        with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device meta!"):
            join()


def test_indexing_with_cpu_indices_and_copies_between_devices_do_not_raise():
    """A tensor on another device can be indexed with CPU indices, and copies between devices work: the exceptions.

    zh: 另一设备上的张量可以用 CPU 上的索引来取，跨设备的复制也可以：这是两个例外。
    """
    x, cpu = torch.zeros(4, 3, device=META), torch.ones(4, 3)
    assert x[torch.tensor([0, 2])].device == META
    x[:] = cpu[0]
    x.copy_(cpu)
    assert x.device == META


def test_moving_the_input_inside_forward_leaves_the_labels_and_the_other_tensors_behind():
    """`x = x.to(self.weight.device)` in forward moves only x: labels and tensors made later in forward stay on the CPU.

    zh: 在 forward 里写 `x = x.to(self.weight.device)` 只移动 x：标签和 forward 里后面创建的张量都留在 CPU 上。
    """

    class MovesItsInput(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(3))

        def forward(self, x):
            x = x.to(self.weight.device)
            return x * self.weight + torch.zeros(3)  # made later, without device=

    model = MovesItsInput().to(META)
    x, y = torch.ones(2, 3), torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device meta!"):
        model(x)
    model.forward = lambda x: x.to(model.weight.device) * model.weight  # without the later tensor
    out = model(x)
    assert out.device == META and y.device == torch.device("cpu")
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device meta!"):
        nn.functional.mse_loss(out, y) + out.sum()  # the labels reach the loss on the CPU


def test_an_element_wise_op_prints_tensoriterators_short_check():
    """An element-wise op's CUDA check (x - mean) prints "found at least two devices, <GPU> and cpu!", GPU first.

    zh: 逐元素运算（x - mean）的 CUDA 检查打印 "found at least two devices, <GPU> and cpu!"，GPU 在前。
    """
    x, mean = torch.ones(2, 3, device=META), torch.ones(3)
    for a, b in ((x, mean), (mean, x)):  # the other device comes first, whatever the order of the operands
        message = error_of(lambda: torch.ops.aten.sub.Tensor.redispatch(CUDA_ONLY, a, b))  # noqa: B023
        assert message == "Expected all tensors to be on the same device, but found at least two devices, meta and cpu!"
    found = match_kind("same_device", message.replace("meta", "cuda:0"))
    assert found is not None and found.chapter == "01-devices"


def test_torch_cat_names_the_argument_tensors_in_wrapper_cuda_cat():
    """torch.cat of a GPU and a CPU tensor prints "got tensors is on cpu, ..." in method wrapper_CUDA_cat.

    zh: torch.cat 拼接 GPU 张量和 CPU 张量时打印 "got tensors is on cpu, ..."，方法是 wrapper_CUDA_cat。
    """
    x, time = torch.ones(2, 3, device=META), torch.ones(2, 1)
    message = error_of(lambda: torch.ops.aten.cat.default.redispatch(CUDA_ONLY, [x, time], -1))
    assert message == (
        "Expected all tensors to be on the same device, but got tensors is on cpu, different from other "
        "tensors on meta (when checking argument in method wrapper_CUDA_cat)"
    )
    assert lookup(message.replace("meta", "cuda:0"))[0].chapter == "05-inside"


@pytest.mark.parametrize("cls", RNNS, ids=lambda c: c.__name__)
def test_an_rnn_with_a_cpu_hidden_state_has_its_own_wording(cls):
    """RNN, LSTM and GRU fed a CPU hidden state say "Input and hidden tensors are not at the same device, ...".

    zh: RNN、LSTM 和 GRU 收到 CPU 上的隐藏状态时报 "Input and hidden tensors are not at the same device, ..."。
    """
    rnn = cls(FEATURES, 5, batch_first=True).to(META)
    x = torch.ones(2, 4, FEATURES, device=META)
    message = error_of(lambda: rnn(x, hidden_for(cls, 2, 5)))
    assert message == (
        "Input and hidden tensors are not at the same device, found input tensor at meta and hidden tensor at cpu"
    )
    found = match_kind("rnn_hidden_device", message)
    assert found is not None and found.chapter == "05-inside"


@pytest.mark.parametrize("cls", RNNS, ids=lambda c: c.__name__)
def test_an_rnn_left_on_the_cpu_fed_a_moved_input_names_its_parameters(cls):
    """An RNN left on the CPU fed an input elsewhere says "Input and parameter tensors are not at the same device".

    zh: 留在 CPU 上的 RNN 收到其他设备上的输入时报 "Input and parameter tensors are not at the same device"。
    """
    rnn = cls(FEATURES, 5, batch_first=True)
    x = torch.ones(2, 4, FEATURES, device=META)
    message = error_of(lambda: rnn(x))
    assert re.search(r"Input and parameter tensors are not at the same device, found input tensor at meta and "
                     r"parameter tensor at cpu", message), message
    assert match_kind("rnn_hidden_device", message) is not None


@pytest.mark.parametrize("cls", (nn.RNN, nn.GRU), ids=lambda c: c.__name__)
def test_an_rnn_without_a_hidden_state_starts_from_zeros_on_the_inputs_device(cls):
    """Called without a hidden state, an RNN or GRU starts from zeros on the input's device.

    zh: 不传隐藏状态时，RNN 或 GRU 从输入所在设备上的全零状态开始。
    """
    torch.manual_seed(0)
    rnn = cls(FEATURES, 5, batch_first=True)
    x = torch.randn(2, 4, FEATURES)
    assert torch.equal(rnn(x)[1], rnn(x, torch.zeros(1, 2, 5))[1])
    assert rnn.to(META)(x.to(META))[1].device == META


@pytest.mark.parametrize("make", [
    lambda: torch.zeros(3), lambda: torch.ones(3), lambda: torch.randn(3), lambda: torch.arange(3),
    lambda: torch.tensor([1.0, 2.0]), lambda: torch.empty(3),
], ids=["zeros", "ones", "randn", "arange", "tensor", "empty"])
def test_factory_functions_without_device_make_cpu_tensors(make):
    """torch.zeros, ones, randn, arange, tensor and empty without device= make CPU tensors (default device unset).

    zh: 没有 device= 时（且未设置默认设备），torch.zeros、ones、randn、arange、tensor 和 empty 创建的都是 CPU 张量。
    """
    assert make().device.type == "cpu"


def test_new_zeros_and_zeros_like_take_device_and_dtype_from_the_tensor():
    """x.new_zeros and torch.zeros_like take device and dtype from x; torch.zeros(..., device=x.device) only the device.

    zh: x.new_zeros(...) 和 torch.zeros_like(x) 沿用 x 的设备和 dtype；torch.zeros(..., device=x.device) 只沿用设备。
    """
    x = torch.ones(2, 3, dtype=torch.float64, device=META)
    for made in (x.new_zeros(1, 2, 5), torch.zeros_like(x)):
        assert made.device == META and made.dtype == torch.float64
    made = torch.zeros(1, 2, 5, device=x.device)
    assert made.device == META and made.dtype == torch.float32


def test_a_layer_built_in_forward_is_new_at_every_call_and_never_a_parameter():
    """A layer built inside forward gets new random weights at every call and is not among the model's parameters.

    zh: 在 forward 里构造的层每次调用都得到新的随机权重，也不在模型的参数里。
    """

    class LayerInForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 4)

        def forward(self, x):
            return nn.Linear(4, 2)(self.body(x))

    model = LayerInForward()
    x = torch.ones(1, 4)
    assert not torch.equal(model(x), model(x))
    assert [name for name, _ in model.named_parameters()] == ["body.weight", "body.bias"]


def test_a_cpu_linear_fed_a_gpu_input_names_mat1_on_the_gpu():
    """A CPU nn.Linear fed a GPU input prints "got mat1 is on <GPU>, different from other tensors on cpu" (addmm).

    zh: CPU 上的 nn.Linear 收到 GPU 输入时打印 "got mat1 is on <GPU>, different from other tensors on cpu"（addmm）。
    """
    layer = nn.Linear(4, 2)
    h = torch.ones(3, 4, device=META)
    message = error_of(lambda: torch.ops.aten.addmm.default.redispatch(CUDA_ONLY, layer.bias, h, layer.weight.t()))
    assert message == (
        "Expected all tensors to be on the same device, but got mat1 is on meta, different from other tensors "
        "on cpu (when checking argument in method wrapper_CUDA_addmm)"
    )


def test_meta_stands_in_for_the_gpu_for_each_mistake_of_the_first_draft():
    """On meta, each tensor the first draft leaves on the CPU (statistics, time feature, hidden state) is caught.

    zh: 在 meta 上，初稿留在 CPU 上的每个张量（统计量、时间特征、隐藏状态）都会被发现。
    """
    ns = solution_namespace()
    x = torch.zeros(2, 5, FEATURES, device=META)

    class Plain(nn.Module):
        def __init__(self, mean, std):
            super().__init__()
            self.mean, self.std = mean, std

        def forward(self, x):
            return (x - self.mean) / self.std

    model = ns["SequenceClassifier"](torch.zeros(FEATURES), torch.ones(FEATURES))
    model.standardize = Plain(torch.zeros(FEATURES), torch.ones(FEATURES))
    assert probe_on_meta(lambda: model.to(META)(x))[0] == "left_on_cpu"
    ns["start_state"] = lambda x, size: torch.zeros(1, x.shape[0], size)
    model = ns["SequenceClassifier"](torch.zeros(FEATURES), torch.ones(FEATURES)).to(META)
    assert probe_on_meta(lambda: model(x))[0] == "hidden_cpu"
    ns = solution_namespace()
    exec(CLASSIFIER_SOLUTION.replace(", device=x.device", ""), ns)
    model = ns["SequenceClassifier"](torch.zeros(FEATURES), torch.ones(FEATURES)).to(META)
    assert probe_on_meta(lambda: model(x))[0] == "left_on_cpu"
    model = solution_namespace()["SequenceClassifier"](torch.zeros(FEATURES), torch.ones(FEATURES)).to(META)
    assert probe_on_meta(lambda: model(x)) == (None, {})


def test_the_state_dict_brings_the_statistics_back_into_a_fresh_model():
    """Loading the state_dict into a model built with other statistics restores the buffers: same scores.

    zh: 把 state_dict 加载到用别的统计量构造的模型里，缓冲区会被恢复：两个模型给出相同的分数。
    """
    ns = solution_namespace()
    torch.manual_seed(0)
    model = ns["SequenceClassifier"](torch.full((FEATURES,), 5.0), torch.full((FEATURES,), 2.0)).eval()
    fresh = ns["SequenceClassifier"](torch.zeros(FEATURES), torch.ones(FEATURES)).eval()
    fresh.load_state_dict(model.state_dict())
    x = torch.randn(4, 6, FEATURES)
    assert torch.equal(model(x), fresh(x))
    assert torch.equal(fresh.standardize.mean, torch.full((FEATURES,), 5.0))


def test_old_cat_wordings_go_to_this_chapter():
    """The error index sends the PyTorch 1.x torch.cat wordings quoted on the page to this chapter.

    zh: 错误索引把页面引用的 PyTorch 1.x torch.cat 报错措辞指向本章。
    """
    for message in (
        "All input tensors must be on the same device. Received cuda:0 and cpu",
        "Expected object of backend CUDA but got backend CPU for sequence element 1 in sequence argument at "
        "position #1 'tensors'",
    ):
        assert [m.chapter for m in lookup(message)] == ["05-inside"]


# --------------------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
def test_gpu_a_plain_attribute_left_on_the_cpu_prints_the_short_form(cuda):
    """On a GPU, x - mean with mean on the CPU prints "found at least two devices, cuda:0 and cpu!".

    zh: 在 GPU 上，mean 是留在 CPU 上的普通属性时，(x - self.mean) 打印 "found at least two devices, cuda:0 and cpu!"。
    """
    x = torch.ones(2, 3, device=cuda)
    message = error_of(lambda: x - torch.ones(3))
    assert message == "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    assert (x * torch.tensor(2.0)).device.type == "cuda"


def test_a_tensor_on_another_device_accepts_indices_on_the_cpu():
    """CPU indices are accepted by a tensor on a device other than the CPU (here the meta device; the GPU test below
    checks CUDA), so when a tensor on a GPU refuses its indices, they are on another accelerator (the error reader's
    reading of "indices should be either on cpu or on the same device as the indexed tensor (cuda:1)").

    zh: 不在 CPU 上的张量（这里是 meta 设备；下面的 GPU 测试检查 CUDA）也接受 CPU 上的索引，
    所以 GPU 上的张量拒绝索引时，这些索引在另一块加速器上。
    """
    picked = torch.zeros(4, 3, device="meta")[torch.tensor([0, 2])]
    assert picked.shape == (2, 3) and picked.device.type == "meta"


@pytest.mark.gpu
def test_gpu_indexing_a_cuda_tensor_with_cpu_indices_works(cuda):
    """On a GPU, x_cuda[cpu_indices] works and x_cuda[:] = cpu_tensor copies; a CPU tensor indexed with CUDA ids fails.

    zh: 在 GPU 上，x_cuda[CPU 上的索引] 可以运行，x_cuda[:] = cpu_tensor 会复制；CPU 张量用 CUDA 上的索引来取则会报错。
    """
    x = torch.arange(12.0, device=cuda).reshape(4, 3)
    assert torch.equal(x[torch.tensor([0, 2])].cpu(), torch.arange(12.0).reshape(4, 3)[[0, 2]])
    x[:] = torch.ones(3)
    assert torch.equal(x.cpu(), torch.ones(4, 3))
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device"):
        torch.ones(4, 3)[torch.tensor([0, 2], device=cuda)]


@pytest.mark.gpu
def test_gpu_a_non_blocking_copy_from_pinned_memory_inside_forward_returns_before_the_copy(cuda):
    """Inside forward, x.to(device, non_blocking=True) from pinned memory returns before the copy, as in a loop.

    zh: 在 forward 里，从锁页内存调用 x.to(device, non_blocking=True) 也会在复制完成前返回，和在训练循环里一样。
    """
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is None:
        pytest.skip("this torch has no torch.cuda._sleep")

    class MovesItsInput(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(1 << 20))

        def forward(self, x):
            return x.to(self.weight.device, non_blocking=True) * self.weight

    model = MovesItsInput().to(cuda)
    pinned = torch.full((1 << 20,), 1.0).pin_memory()
    torch.cuda.synchronize()
    sleep(1 << 28)  # keep the GPU busy: a copy queued now cannot have run when the call returns
    out = model(pinned)
    assert not torch.cuda.current_stream().query()  # forward returned while the copy still waits
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), torch.full((1 << 20,), 1.0))


@pytest.mark.gpu
def test_gpu_torch_cat_with_a_cpu_tensor(cuda):
    """On a GPU, torch.cat([gpu, cpu]) prints "got tensors is on cpu, different from other tensors on cuda:0".

    zh: 在 GPU 上，torch.cat([gpu, cpu]) 打印 "got tensors is on cpu, different from other tensors on cuda:0"。
    """
    message = error_of(lambda: torch.cat([torch.ones(2, 3, device=cuda), torch.ones(2, 1)], dim=-1))
    assert message == (
        "Expected all tensors to be on the same device, but got tensors is on cpu, different from other "
        "tensors on cuda:0 (when checking argument in method wrapper_CUDA_cat)"
    )


@pytest.mark.gpu
@pytest.mark.parametrize("cls", RNNS, ids=lambda c: c.__name__)
def test_gpu_an_rnn_with_a_cpu_hidden_state(cuda, cls):
    """On a GPU, RNN, LSTM and GRU fed a CPU hidden state say "found input tensor at cuda:0 and hidden tensor at cpu".

    zh: 在 GPU 上，RNN、LSTM 和 GRU 收到 CPU 隐藏状态时报 "found input tensor at cuda:0 and hidden tensor at cpu"。
    """
    rnn = cls(FEATURES, 5, batch_first=True).to(cuda)
    x = torch.ones(2, 4, FEATURES, device=cuda)
    message = error_of(lambda: rnn(x, hidden_for(cls, 2, 5)))
    assert message == (
        "Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu"
    )


@pytest.mark.gpu
def test_gpu_a_cpu_linear_fed_a_gpu_input(cuda):
    """On a GPU, a CPU nn.Linear fed a GPU input prints "got mat1 is on cuda:0, different from other tensors on cpu".

    zh: 在 GPU 上，CPU 上的 nn.Linear 收到 GPU 输入时打印 "got mat1 is on cuda:0, different from other tensors on cpu"。
    """
    message = error_of(lambda: nn.Linear(4, 2)(torch.ones(3, 4, device=cuda)))
    assert message == (
        "Expected all tensors to be on the same device, but got mat1 is on cuda:0, different from other tensors "
        "on cpu (when checking argument in method wrapper_CUDA_addmm)"
    )


@pytest.mark.gpu
def test_gpu_the_course_model_runs_and_its_hidden_state_is_born_on_the_gpu(cuda):
    """On a GPU, the fixed SequenceClassifier runs with its input on cuda:0 and returns scores there.

    zh: 在 GPU 上，修好的 SequenceClassifier 在输入位于 cuda:0 时正常运行，并在那里返回分数。
    """
    ns = solution_namespace()
    model = ns["SequenceClassifier"](torch.zeros(FEATURES), torch.ones(FEATURES)).to(cuda)
    assert model(torch.randn(4, 6, FEATURES, device=cuda)).device.type == "cuda"


@pytest.mark.gpu
def test_gpu_torch_stack_with_a_cpu_tensor_fails_with_the_generated_check(cuda):
    """On a GPU, torch.stack of a GPU tensor and a CPU tensor fails with the generated device check.

    zh: 在 GPU 上，torch.stack 把 GPU 张量和 CPU 张量堆叠在一起时，报的是自动生成的设备检查。
    """
    message = error_of(lambda: torch.stack([torch.ones(2, 3, device=cuda), torch.ones(2, 3)]))
    assert match_kind("same_device", message) is not None, message
