"""Claims tests for chapter 2 (nn.DataParallel): each test proves one statement the chapter makes.

Every test fails if its statement is false on the installed torch. CPU tests use honest stand-ins for a
device move where they must: a dtype conversion goes through the same ``Module._apply`` as ``.to("cuda")``,
and the ``meta`` device is a real device on every machine. Tests marked ``gpu`` run on a CUDA GPU only.
"""

import re
import socket
import subprocess
import sys

import pytest
import torch
from torch import nn
from torch.torch_version import TorchVersion

SAME_DEVICE = "Expected all tensors to be on the same device"
CONV_TYPE_MISMATCH = (
    "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same"
)
DP_MODULE_ON_CPU = (
    "module must have its parameters and buffers on device cuda:0 (device_ids[0]) "
    "but found one of them on device: cpu"
)


def _train_step(model, optimizer, dtype=torch.float32, device="cpu"):
    optimizer.zero_grad()
    model(torch.randn(4, 3, dtype=dtype, device=device)).sum().backward()
    optimizer.step()


def _snapshot(params):
    return [p.detach().clone() for p in params]


@pytest.fixture
def overwrite_params_on_conversion():
    old = torch.__future__.get_overwrite_module_params_on_conversion()
    torch.__future__.set_overwrite_module_params_on_conversion(True)
    try:
        yield
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(old)


# --------------------------------------------------------------------------------------------- CPU


def test_module_to_moves_in_place_and_returns_the_same_module():
    """Module.to() converts the module in place and returns the same module object.

    zh: Module.to() 原地转换模块，并返回同一个模块对象。
    """
    model = nn.Linear(3, 2)
    returned = model.to(torch.float64)
    assert returned is model
    assert all(p.dtype == torch.float64 for p in model.parameters())


def test_module_to_keeps_the_same_parameter_objects():
    """Module.to() keeps the same Parameter objects and only replaces their .data.

    zh: Module.to() 保留同一批 Parameter 对象，只替换它们的 .data。
    """
    model = nn.Linear(3, 2)
    params_before = list(model.parameters())
    data_before = [p.data for p in params_before]
    model.to(torch.float64)
    for old, new, old_data in zip(params_before, model.parameters(), data_before):
        assert new is old
        assert new.dtype == torch.float64
        assert new.data is not old_data and old_data.dtype == torch.float32


def test_optimizer_built_before_module_to_still_updates_the_converted_parameters():
    """An optimizer built before model.to() still updates the converted parameters.

    zh: 在 model.to() 之前创建的优化器，仍会更新转换后的参数。
    """
    model = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.to(torch.float64)
    assert all(a is b for a, b in zip(optimizer.param_groups[0]["params"], model.parameters()))
    before = _snapshot(model.parameters())
    _train_step(model, optimizer, dtype=torch.float64)
    for old, new in zip(before, model.parameters()):
        assert new.dtype == torch.float64
        assert not torch.equal(old, new)


def test_overwrite_flag_replaces_parameters_so_an_earlier_optimizer_no_longer_updates_the_model(
    overwrite_params_on_conversion,
):
    """With set_overwrite_module_params_on_conversion(True), an optimizer built before .to() goes stale.

    zh: 开启 set_overwrite_module_params_on_conversion(True) 后，在 .to() 之前创建的优化器就失效了。
    """
    model = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    old_params = list(model.parameters())
    model.to(torch.float64)
    new_params = list(model.parameters())
    assert all(o is not n for o, n in zip(old_params, new_params))
    assert all(a is o for a, o in zip(optimizer.param_groups[0]["params"], old_params))
    before = _snapshot(new_params)
    _train_step(model, optimizer, dtype=torch.float64)
    assert all(p.grad is not None for p in new_params)
    assert all(p.grad is None for p in old_params)  # the optimizer's parameters got no gradient
    assert all(torch.equal(b, p) for b, p in zip(before, model.parameters()))  # model not updated


def test_adagrad_state_is_created_in_init_and_does_not_follow_a_later_conversion():
    """Adagrad creates its 'sum' state in __init__, so the state stays behind when the model is converted.

    zh: Adagrad 在 __init__ 里就创建 'sum' 状态，所以模型转换时这份状态留在原处。
    """
    model = nn.Linear(3, 2)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
    assert all("sum" in optimizer.state[p] for p in model.parameters())  # before any step()
    model.to(torch.float64)
    for p in model.parameters():
        assert p.dtype == torch.float64
        assert optimizer.state[p]["sum"].dtype == torch.float32


@pytest.mark.parametrize(
    ("make", "state_keys"),
    [
        (lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9), ["momentum_buffer"]),
        (lambda params: torch.optim.Adam(params, lr=0.1), ["exp_avg", "exp_avg_sq"]),
    ],
    ids=["sgd-momentum", "adam"],
)
def test_optimizer_state_created_by_a_step_before_the_conversion_stays_behind(make, state_keys):
    """State an optimizer created by a step() before model.to() is not converted with the model.

    zh: 优化器在 model.to() 之前通过 step() 创建的状态，不会随模型一起转换。
    """
    model = nn.Linear(3, 2)
    optimizer = make(model.parameters())
    _train_step(model, optimizer)  # creates the state, in float32
    model.to(torch.float64)
    for p in model.parameters():
        assert p.dtype == torch.float64
        assert all(optimizer.state[p][key].dtype == torch.float32 for key in state_keys)


def test_the_generated_check_names_weight_whichever_side_is_misplaced():
    """nll_loss's device check names `weight` both when the weights and when the logits are misplaced.

    zh: 无论放错设备的是权重还是 logits，nll_loss 的设备检查报出的都是 `weight`。
    """
    cuda_keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
    gpu = "meta"  # stands in for cuda:0
    weights_left_behind = (torch.randn(4, 3, device=gpu), torch.zeros(4, dtype=torch.long, device=gpu), torch.ones(3))
    logits_left_behind = (torch.randn(4, 3), torch.zeros(4, dtype=torch.long), torch.ones(3, device=gpu))
    messages = []
    for logits, target, weight in (weights_left_behind, logits_left_behind):
        with pytest.raises(RuntimeError) as excinfo:
            torch.ops.aten.nll_loss_forward.default.redispatch(cuda_keys, logits, target, weight, 1, -100)
        messages.append(str(excinfo.value))
    assert all(SAME_DEVICE in m for m in messages)
    if TorchVersion(torch.__version__) >= (2, 8):
        assert "got weight is on cpu, different from other tensors on meta" in messages[0]
        assert "got weight is on meta, different from other tensors on cpu" in messages[1]
    else:
        assert all("argument weight" in m for m in messages)


def test_batchnorm_in_eval_mode_uses_running_statistics_and_momentum_none_keeps_a_plain_average():
    """BatchNorm in eval mode normalises with its running statistics; momentum=None makes them a plain average.

    zh: eval 模式下的 BatchNorm 用滑动统计量做归一化；momentum=None 时这些统计量是简单平均。
    """
    norm = nn.BatchNorm1d(3, affine=False)
    norm.reset_running_stats()
    norm.momentum = None
    batches = [torch.randn(16, 3) * 2 + 1, torch.randn(16, 3) - 3]
    with torch.no_grad():
        for batch in batches:
            norm(batch)  # train mode: normalises with the batch's own statistics and updates the running ones
    expected_mean = torch.stack([b.mean(0) for b in batches]).mean(0)
    expected_var = torch.stack([b.var(0, unbiased=True) for b in batches]).mean(0)
    assert torch.allclose(norm.running_mean, expected_mean, atol=1e-5)
    assert torch.allclose(norm.running_var, expected_var, atol=1e-5)
    norm.eval()
    x = torch.randn(4, 3)
    by_running = (x - norm.running_mean) / torch.sqrt(norm.running_var + norm.eps)
    assert torch.allclose(norm(x), by_running, atol=1e-5)
    assert not torch.allclose(norm(x), (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=False) + norm.eps), atol=1e-3)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the claim is about a machine without CUDA")
def test_dataparallel_without_cuda_is_a_pass_through():
    """On a machine without CUDA, nn.DataParallel(model) has no device ids and just calls the model.

    zh: 在没有 CUDA 的机器上，nn.DataParallel(model) 没有设备编号，只是直接调用模型。
    """
    model = nn.Linear(3, 2)
    wrapped = nn.DataParallel(model)
    assert wrapped.device_ids == []
    assert wrapped.module is model
    x = torch.randn(4, 3)
    assert torch.equal(wrapped(x), model(x))


def test_cross_entropy_loss_without_weight_holds_no_tensors_and_with_weight_holds_a_movable_buffer():
    """CrossEntropyLoss() holds no tensors, so .to() changes nothing; its weight= is a buffer .to() moves.

    zh: CrossEntropyLoss() 不持有张量，所以 .to() 什么也不改变；它的 weight= 是一个会被 .to() 移动的缓冲区。
    """
    plain = nn.CrossEntropyLoss()
    assert list(plain.parameters()) == [] and list(plain.buffers()) == []
    assert plain.state_dict() == {}
    assert plain.to("meta") is plain and list(plain.buffers()) == []

    weighted = nn.CrossEntropyLoss(weight=torch.ones(3))
    assert list(weighted.parameters()) == []
    assert [name for name, _ in weighted.named_buffers()] == ["weight"]
    weighted.to(torch.float64)
    assert weighted.weight.dtype == torch.float64
    weighted.to("meta")
    assert weighted.weight.device.type == "meta"


def test_cross_entropy_with_cpu_weight_raises_the_same_device_check_naming_weight():
    """A CPU weight with logits on another device raises the generated same-device check naming `weight`.

    zh: CPU 上的权重遇到另一设备上的 logits 时，会触发自动生成的设备检查，点名 `weight`。
    """
    cuda_keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
    logits = torch.randn(4, 3, device="meta")
    target = torch.zeros(4, dtype=torch.long, device="meta")
    with pytest.raises(RuntimeError) as excinfo:
        torch.ops.aten.nll_loss_forward.default.redispatch(cuda_keys, logits, target, torch.ones(3), 1, -100)
    message = str(excinfo.value)
    assert SAME_DEVICE in message
    assert "weight" in message


def test_cudnn_benchmark_is_a_boolean_flag_false_by_default():
    """torch.backends.cudnn.benchmark is a boolean flag and is False by default.

    zh: torch.backends.cudnn.benchmark 是一个布尔开关，默认为 False。
    """
    code = "import torch; b = torch.backends.cudnn.benchmark; print(type(b).__name__, b)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["bool", "False"]
    old = torch.backends.cudnn.benchmark
    try:
        torch.backends.cudnn.benchmark = True
        assert torch.backends.cudnn.benchmark is True
    finally:
        torch.backends.cudnn.benchmark = old


def test_timm_resnet_with_pretrained_false_downloads_nothing_and_trains_on_cpu(monkeypatch):
    """timm.create_model(..., pretrained=False) downloads nothing and the model trains on the CPU.

    zh: timm.create_model(..., pretrained=False) 不下载任何东西，模型可以在 CPU 上训练。
    """
    timm = pytest.importorskip("timm")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def no_network(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)

    torch.manual_seed(0)
    model = timm.create_model("resnet10t", pretrained=False, num_classes=4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    head_before = model.get_classifier().weight.detach().clone()
    logits = model(torch.randn(2, 3, 32, 32))
    assert logits.shape == (2, 4) and logits.device.type == "cpu"
    nn.functional.cross_entropy(logits, torch.tensor([0, 3])).backward()
    optimizer.step()
    assert not torch.equal(head_before, model.get_classifier().weight)


# --------------------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
def test_cpu_conv_fed_a_cuda_input_raises_input_type_and_weight_type_should_be_the_same(cuda):
    """A CPU conv model fed a CUDA input raises 'Input type (torch.cuda.FloatTensor) and weight type ...'.

    zh: CPU 上的卷积模型收到 CUDA 输入时，报 'Input type (torch.cuda.FloatTensor) and weight type ...'。
    """
    conv = nn.Conv2d(3, 4, kernel_size=3)
    with pytest.raises(RuntimeError, match=re.escape(CONV_TYPE_MISMATCH)):
        conv(torch.randn(1, 3, 8, 8, device=cuda))


@pytest.mark.gpu
def test_dataparallel_with_one_device_id_moves_the_wrapped_model_to_cuda0_in_place(cuda):
    """nn.DataParallel(model, device_ids=[0]) moves the wrapped model to cuda:0 in place.

    zh: nn.DataParallel(model, device_ids=[0]) 会把被包装的模型原地移到 cuda:0。
    """
    model = nn.Linear(3, 2)
    assert next(model.parameters()).device.type == "cpu"
    wrapped = nn.DataParallel(model, device_ids=[0])
    assert wrapped.module is model
    assert all(p.device == torch.device("cuda", 0) for p in model.parameters())
    out = wrapped(torch.randn(4, 3))  # a CPU input is fine: scatter copies it to cuda:0
    assert out.device == torch.device("cuda", 0)


@pytest.mark.gpu
def test_dataparallel_checks_the_module_device_before_calling_it_on_one_gpu(cuda):
    """DataParallel raises 'module must have its parameters and buffers on device cuda:0 ...' for CPU modules.

    zh: 模块在 CPU 上时，DataParallel 报 'module must have its parameters and buffers on device cuda:0 ...'。
    """
    model = nn.Linear(3, 2)
    wrapped = nn.DataParallel(model, device_ids=[0])
    model.cpu()  # on one GPU the wrapper moved the module: move it back to reach the check
    with pytest.raises(RuntimeError, match=re.escape(DP_MODULE_ON_CPU)):
        wrapped(torch.randn(4, 3))


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 or more CUDA GPUs")
def test_dataparallel_on_two_gpus_leaves_a_cpu_module_and_raises_module_must_have_its_parameters_on_cuda0(
    cuda,
):
    """With 2+ GPUs DataParallel leaves a CPU module where it is; calling it raises 'module must have ...'.

    zh: 有 2 块以上 GPU 时，DataParallel 让 CPU 上的模块留在原处；调用它会报 'module must have ...'。
    """
    model = nn.Linear(3, 2)
    wrapped = nn.DataParallel(model)
    assert len(wrapped.device_ids) >= 2
    assert all(p.device.type == "cpu" for p in model.parameters())
    with pytest.raises(RuntimeError, match=re.escape(DP_MODULE_ON_CPU)):
        wrapped(torch.randn(4, 3))
    model.to("cuda:0")
    out = wrapped(torch.randn(4, 3))  # CPU inputs are fine once the module is on cuda:0
    assert out.device == torch.device("cuda", 0)


@pytest.mark.gpu
def test_module_to_cuda_keeps_the_same_parameters_so_an_earlier_optimizer_updates_them(cuda):
    """model.to('cuda') keeps the same Parameter objects, so an optimizer built before the move works.

    zh: model.to('cuda') 保留同一批 Parameter 对象，所以移动之前创建的优化器照样有效。
    """
    model = nn.Linear(3, 2)
    params_before = list(model.parameters())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.to(cuda)
    assert all(a is b for a, b in zip(params_before, model.parameters()))
    assert all(p.is_cuda for p in model.parameters())
    before = _snapshot(model.parameters())
    _train_step(model, optimizer, device=cuda)
    assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters()))


@pytest.mark.gpu
def test_adagrad_built_before_module_to_cuda_keeps_state_on_cpu_and_step_fails(cuda):
    """Adagrad built before model.to('cuda') keeps its state on the CPU, and optimizer.step() then fails.

    zh: 在 model.to('cuda') 之前创建的 Adagrad 把状态留在 CPU 上，随后 optimizer.step() 会出错。
    """
    model = nn.Linear(3, 2)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
    model.to(cuda)
    assert all(optimizer.state[p]["sum"].device.type == "cpu" for p in model.parameters())
    with pytest.raises(RuntimeError, match="device"):
        _train_step(model, optimizer, device=cuda)


@pytest.mark.gpu
def test_cross_entropy_with_cpu_weight_on_cuda_logits_raises_naming_weight_until_moved(cuda):
    """CrossEntropyLoss(weight=cpu_tensor) on CUDA logits raises naming weight; after .to('cuda') it works.

    zh: CrossEntropyLoss(weight=CPU 张量) 遇到 CUDA 上的 logits 时报错并点名 weight；.to('cuda') 之后就正常了。
    """
    criterion = nn.CrossEntropyLoss(weight=torch.ones(3))
    logits = torch.randn(4, 3, device=cuda)
    target = torch.zeros(4, dtype=torch.long, device=cuda)
    with pytest.raises(RuntimeError) as excinfo:
        criterion(logits, target)
    assert SAME_DEVICE in str(excinfo.value) and "weight" in str(excinfo.value)
    criterion.to(cuda)
    assert criterion(logits, target).device.type == "cuda"


@pytest.mark.gpu
def test_zero_dim_cpu_tensor_combines_with_a_cuda_tensor(cuda):
    """A 0-dim CPU tensor combines with a CUDA tensor without error (it acts as a scalar).

    zh: 0 维的 CPU 张量可以和 CUDA 张量一起运算而不报错（它被当作标量）。
    """
    result = torch.tensor(2.0) * torch.ones(3, device=cuda)
    assert result.device.type == "cuda"
    assert torch.equal(result.cpu(), torch.full((3,), 2.0))


@pytest.mark.gpu
def test_cuda_conv_fed_a_cpu_input_adds_the_mkldnn_clause():
    """The reverse mistake (CPU input into a GPU conv) adds 'or input should be a MKLDNN tensor ...'.

    zh: 反过来的错误（CPU 输入送进 GPU 卷积）会多出 'or input should be a MKLDNN tensor ...'。
    """
    conv = nn.Conv2d(3, 4, 3).to("cuda")
    with pytest.raises(RuntimeError) as caught:
        conv(torch.randn(1, 3, 8, 8))
    assert "or input should be a MKLDNN tensor and weight is a dense tensor" in str(caught.value)


@pytest.mark.gpu
def test_sgd_momentum_buffer_created_before_module_to_cuda_stays_on_the_cpu(cuda):
    """SGD that stepped before model.to('cuda') keeps its momentum buffers on the CPU.

    zh: 在 model.to('cuda') 之前执行过 step() 的 SGD，把动量缓冲区留在 CPU 上。
    """
    model = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    _train_step(model, optimizer)
    model.to(cuda)
    for p in model.parameters():
        assert p.is_cuda
        assert optimizer.state[p]["momentum_buffer"].device.type == "cpu"
