"""Claims tests for chapter 9 (a debugging method): each test proves one statement the chapter makes about PyTorch.

The audit's and the locator's own behaviour is unit-tested with devicelab.debug; these tests are about PyTorch.
CPU tests use the ``meta`` device, a real device on every machine, as the stand-in for a GPU; where the page
quotes a CUDA wording, the CPU test triggers the CUDA kernel's own check with a redispatch (DESIGN.md §8: it
prints ``meta`` where a GPU prints ``cuda:0``). Tests marked ``gpu`` run on a CUDA GPU only.
"""

import math
import warnings

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from devicelab.chapters.debugging import (
    BUILD_MODEL_SOURCE,
    FIXED_ATTENTION_SOLUTION,
    FIXED_EMBED_SOLUTION,
    MYSTERY_SOURCE,
    RESUME_SOLUTION,
    START_TRAINING_SOURCE,
)

META = torch.device("meta")
CUDA_ONLY = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)


def lab_namespace() -> dict:
    """The lab's mystery model, the colleague's resume, and the course's three fixes, run from their sources."""
    namespace = {"math": math, "torch": torch, "nn": nn}
    for code in (MYSTERY_SOURCE, START_TRAINING_SOURCE, FIXED_EMBED_SOLUTION, FIXED_ATTENTION_SOLUTION,
                 BUILD_MODEL_SOURCE, RESUME_SOLUTION):
        exec(code, namespace)
    return namespace


def error_of(run) -> str:
    with pytest.raises(RuntimeError) as info:
        run()
    return str(info.value)


def laptop_checkpoint(namespace: dict, path: str) -> tuple[nn.Module, torch.optim.Optimizer]:
    """The lab's laptop run in small: the mystery model and Adam after one step on the CPU, saved to `path`."""
    torch.manual_seed(0)
    model = namespace["MysteryModel"]()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    ids = torch.randint(0, namespace["VOCAB"], (4, 11))
    nn.functional.cross_entropy(model(ids), torch.tensor([0, 1, 0, 1])).backward()
    optimizer.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
    return model, optimizer


class Ops(TorchDispatchMode):
    """Records the ATen operations run inside it."""

    def __init__(self):
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


# --------------------------------------------------------------------------------------------- CPU


def test_model_to_leaves_the_plain_position_table_behind_and_a_buffer_fixes_it():
    """`model.to()` leaves a plain tensor attribute (Embed.pos) behind; a buffer, persistent or not, moves with it.

    zh: `model.to()` 会把普通张量属性（Embed.pos）留在原地；缓冲区（无论是否 persistent）则随模型移动。
    """
    ns = lab_namespace()
    model = ns["MysteryModel"]().to(META)
    assert model.embed.tok.weight.device == META and model.embed.pos.device.type == "cpu"
    fixed = ns["FixedEmbed"](16, 8, 6).to(META)
    assert fixed.pos.device == META
    persistent = ns["FixedEmbed"](16, 8, 6)
    persistent.register_buffer("pos", persistent.pos, persistent=True)
    assert persistent.to(META).pos.device == META


def test_a_checkpoint_without_the_table_loads_into_a_non_persistent_buffer_but_not_a_persistent_one():
    """A checkpoint without `embed.pos` loads strictly if `pos` is persistent=False; a persistent `pos` is "Missing".

    zh: 不含 `embed.pos` 的检查点能严格加载到 `pos` 为 persistent=False 的模型里；persistent 的则报 "Missing key(s)"。
    """
    ns = lab_namespace()
    old = ns["MysteryModel"]().state_dict()
    assert "embed.pos" not in old  # a plain attribute is not saved
    result = ns["build_model"]().load_state_dict(old)
    assert not result.missing_keys and not result.unexpected_keys
    persistent = ns["build_model"]()
    persistent.embed.register_buffer("pos", persistent.embed.pos, persistent=True)
    with pytest.raises(RuntimeError, match=r"Missing key\(s\) in state_dict: \"embed.pos\""):
        persistent.load_state_dict(old)


def test_a_to_in_forward_hides_the_error_and_leaves_the_attribute_behind():
    """A `.to(ids.device)` in forward makes the error go away, and the attribute itself stays on the CPU.

    zh: 在 forward 里写 `.to(ids.device)` 能让报错消失，但这个属性本身仍留在 CPU 上。
    """
    ns = lab_namespace()

    class Patched(ns["Embed"]):
        def forward(self, ids):
            return self.tok(ids) + self.pos[: ids.shape[1]].to(ids.device)

    part = Patched(16, 8, 6).to(META)
    assert part(torch.zeros(2, 5, dtype=torch.long, device=META)).device == META
    assert part.pos.device.type == "cpu"


def test_a_tensor_made_in_forward_without_device_is_born_on_the_cpu_wherever_the_model_is():
    """torch.ones(...) in forward without device= makes a CPU tensor, even when the model and input are elsewhere.

    zh: forward 里不带 device= 的 torch.ones(...) 创建的是 CPU 张量，即使模型和输入都在别处。
    """
    born = []

    class Probe(nn.Module):
        def forward(self, x):
            born.append(torch.ones(3, 3, dtype=torch.bool).triu(1))
            return x

    Probe().to(META)(torch.ones(2, 3, device=META))
    assert born[0].device.type == "cpu"


def test_on_meta_the_mystery_model_fails_at_the_table_then_at_the_mask():
    """On meta the mystery model fails at the table's add, then (table moved) at masked_fill, in meta's own wording.

    zh: 在 meta 上，神秘模型先在位置表的加法处报错，移好位置表后又在 masked_fill 处报错，措辞是 meta 自己的。

    The two messages: "Tensor on device cpu is not on the expected device meta!", then "Tensor on device meta is not
    on the expected device cpu!".
    """
    ns = lab_namespace()
    model = ns["MysteryModel"]().to(META)
    ids = torch.zeros(2, 11, dtype=torch.long, device=META)
    assert error_of(lambda: model(ids)) == "Tensor on device cpu is not on the expected device meta!"
    model.embed.pos = model.embed.pos.to(META)
    ops = Ops()
    with pytest.raises(RuntimeError) as info, ops:
        model(ids)
    assert str(info.value) == "Tensor on device meta is not on the expected device cpu!"
    assert ops.ops[-1].startswith("aten.masked_fill")


def test_the_fixed_model_runs_on_meta_and_on_the_cpu():
    """With the buffer, the mask made on x.device and everything moved, the model runs on meta and on the CPU.

    zh: 用上缓冲区、在 x.device 上创建掩码并把一切移好之后，模型在 meta 和 CPU 上都能运行。
    """
    ns = lab_namespace()
    for device in (META, torch.device("cpu")):
        model = ns["build_model"]().to(device)
        out = model(torch.zeros(2, 11, dtype=torch.long, device=device))
        assert out.device == device and tuple(out.shape) == (2, 2)


def test_element_wise_ops_print_tensoriterators_short_check_on_a_gpu():
    """CUDA add and mul of a GPU tensor and a CPU table print "found at least two devices, <GPU> and cpu!", no argument.

    zh: GPU 张量与 CPU 上的表做 CUDA 加法、乘法时打印 "found at least two devices, <GPU> and cpu!"，不点名参数。
    """
    x, table = torch.ones(2, 11, 8, device=META), torch.ones(11, 8)
    for op in (torch.ops.aten.add.Tensor, torch.ops.aten.mul.Tensor):
        for a, b in ((x, table), (table, x)):
            message = error_of(lambda: op.redispatch(CUDA_ONLY, a, b))  # noqa: B023
            assert message == ("Expected all tensors to be on the same device, but found at least two devices, "
                               "meta and cpu!")


def test_torch_cat_names_its_operation_wrapper_cuda_cat():
    """torch.cat of a GPU tensor and a CPU tensor names `tensors` in method wrapper_CUDA_cat.

    zh: torch.cat 拼接 GPU 张量和 CPU 张量时，点名 `tensors`，方法是 wrapper_CUDA_cat。
    """
    message = error_of(lambda: torch.ops.aten.cat.default.redispatch(
        CUDA_ONLY, [torch.ones(2, 3, device=META), torch.ones(2, 1)], -1))
    assert message.endswith("(when checking argument in method wrapper_CUDA_cat)")
    assert "got tensors is on cpu" in message


def test_masked_fill_on_a_gpu_has_its_own_check_naming_self_and_mask():
    """CUDA masked_fill_ with a CPU mask says "expected self and mask to be on the same device, but got mask on cpu…".

    zh: CUDA 的 masked_fill_ 收到 CPU 上的掩码时报 "expected self and mask to be on the same device, …"。

    In full: "expected self and mask to be on the same device, but got mask on cpu and self on cuda:0".
    """
    scores, mask = torch.ones(2, 4, 3, 3, device=META), torch.ones(3, 3, dtype=torch.bool).triu(1)
    message = error_of(lambda: torch.ops.aten.masked_fill_.Scalar.redispatch(CUDA_ONLY, scores, mask, -1.0))
    assert message == "expected self and mask to be on the same device, but got mask on cpu and self on meta"


def test_layer_norm_runs_native_layer_norm_whose_check_names_weight_whichever_side_is_misplaced():
    """nn.LayerNorm runs native_layer_norm, whose CUDA check names `weight` whether the layer or the input is left.

    zh: nn.LayerNorm 运行 native_layer_norm；无论留在 CPU 上的是层还是输入，它的 CUDA 检查报出的都是 `weight`。
    """
    ops = Ops()
    with ops:
        nn.LayerNorm(4)(torch.ones(2, 4))
    assert "aten.native_layer_norm.default" in ops.ops
    on_cpu, on_meta = nn.LayerNorm(4), nn.LayerNorm(4).to(META)
    layer_left = error_of(lambda: torch.ops.aten.native_layer_norm.default.redispatch(
        CUDA_ONLY, torch.ones(2, 4, device=META), [4], on_cpu.weight, on_cpu.bias, 1e-5))
    input_left = error_of(lambda: torch.ops.aten.native_layer_norm.default.redispatch(
        CUDA_ONLY, torch.ones(2, 4), [4], on_meta.weight, on_meta.bias, 1e-5))
    assert layer_left == ("Expected all tensors to be on the same device, but got weight is on cpu, different from "
                          "other tensors on meta (when checking argument in method wrapper_CUDA__native_layer_norm)")
    assert input_left == ("Expected all tensors to be on the same device, but got weight is on meta, different from "
                          "other tensors on cpu (when checking argument in method wrapper_CUDA__native_layer_norm)")


def test_a_linear_layer_runs_addmm_for_2d_and_3d_inputs():
    """nn.Linear with a bias runs aten.addmm (wrapper_CUDA_addmm on a GPU) for 2-D and 3-D inputs alike.

    zh: 带偏置的 nn.Linear 对二维和三维输入都运行 aten.addmm（在 GPU 上即 wrapper_CUDA_addmm）。
    """
    layer = nn.Linear(4, 3)
    for shape in ((2, 4), (2, 5, 4)):
        ops = Ops()
        with ops:
            layer(torch.ones(shape))
        assert "aten.addmm.default" in ops.ops


def test_a_linear_layer_without_bias_runs_mm_not_addmm():
    """nn.Linear without a bias runs aten.mm (wrapper_CUDA_mm on a GPU), not addmm, for 2-D and 3-D inputs.

    zh: 不带偏置的 nn.Linear 运行的是 aten.mm（在 GPU 上即 wrapper_CUDA_mm），不是 addmm，二维、三维输入都一样。
    """
    layer = nn.Linear(4, 3, bias=False)
    for shape in ((2, 4), (2, 5, 4)):
        ops = Ops()
        with ops:
            layer(torch.ones(shape))
        assert "aten.mm.default" in ops.ops and "aten.addmm.default" not in ops.ops


def test_embedding_and_convolution_kernels_do_not_check_devices_on_meta():
    """On meta, embedding and convolution kernels do not check devices: a CPU weight beside a meta input raises nothing.

    zh: 在 meta 上，embedding 和卷积不检查设备：CPU 上的权重配 meta 上的输入，什么错都不报。
    """
    nn.Embedding(5, 4)(torch.zeros(2, 3, dtype=torch.long, device=META))  # no error (and no meaningful output)
    nn.Embedding(5, 4).to(META)(torch.zeros(2, 3, dtype=torch.long))
    nn.Conv1d(3, 3, 1)(torch.ones(2, 3, 5, device=META))
    with pytest.raises(RuntimeError, match="is not on the expected device"):
        nn.Linear(4, 4)(torch.ones(2, 4, device=META))  # most other kernels do


def test_optimizer_load_state_dict_puts_the_state_where_each_parameter_is_at_load_time():
    """Optimizer.load_state_dict puts Adam's averages where each parameter is when it is called; a CPU step stays there.

    zh: Optimizer.load_state_dict 在被调用时把 Adam 的滑动平均放到各个参数所在的设备上；CPU 上的 step 留在 CPU 上。
    """
    source = nn.Linear(4, 2)
    optimizer = torch.optim.Adam(source.parameters(), lr=3e-3)
    source(torch.ones(3, 4)).sum().backward()
    optimizer.step()
    moved = nn.Linear(4, 2).to(META)
    resumed = torch.optim.Adam(moved.parameters(), lr=3e-3)
    resumed.load_state_dict(optimizer.state_dict())
    state = resumed.state[moved.weight]
    assert state["exp_avg"].device == META and state["exp_avg_sq"].device == META
    assert state["step"].device.type == "cpu" and state["step"].dim() == 0


def test_the_colleagues_order_leaves_the_optimizer_state_on_the_cpu(tmp_path):
    """Loading the optimizer's state before model.to() leaves it on the CPU: Module.to does not move it.

    zh: 在 model.to() 之前加载优化器状态，状态就留在 CPU 上：Module.to 不会移动它。
    """
    ns = lab_namespace()
    path = str(tmp_path / "laptop.pt")
    laptop_checkpoint(ns, path)
    _, optimizer = ns["start_training"](path, META)
    averages = [t for state in optimizer.state.values() for key, t in state.items() if key != "step"]
    assert averages and all(t.device.type == "cpu" for t in averages)


def test_the_courses_resume_puts_the_model_and_every_state_tensor_on_the_device(tmp_path):
    """Move the model, build Adam on it, then load both states: parameters and state all land on the device.

    zh: 先移动模型，再用它构造 Adam，最后加载两份状态：参数和状态全都落在目标设备上。
    """
    ns = lab_namespace()
    path = str(tmp_path / "laptop.pt")
    laptop, laptop_optimizer = laptop_checkpoint(ns, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loading into meta parameters warns that it is a no-op
        model, optimizer = ns["resume"](path, META)
    assert all(p.device == META for p in model.parameters())
    assert all(t.device == META for s in optimizer.state.values() for k, t in s.items() if k != "step")
    here, here_optimizer = ns["resume"](path, torch.device("cpu"))
    assert torch.equal(here.head.weight, laptop.head.weight)
    assert torch.equal(here_optimizer.state[here.head.weight]["exp_avg"],
                       laptop_optimizer.state[laptop.head.weight]["exp_avg"])


def test_moving_to_meta_replaces_parameter_objects_and_a_dtype_conversion_keeps_them():
    """Module.to(meta) replaces Parameter objects (an optimizer built before keeps the old ones); .to(float64) does not.

    zh: Module.to(meta) 会换掉 Parameter 对象（之前构造的优化器持有的是旧对象）；.to(float64) 则保留原对象。
    """
    model = nn.Linear(4, 2)
    weight = model.weight
    model.to(torch.float64)
    assert model.weight is weight
    optimizer = torch.optim.Adam(model.parameters())
    model.to(META)
    assert model.weight is not weight and optimizer.param_groups[0]["params"][0] is weight


def test_with_overwrite_on_conversion_every_to_replaces_parameter_objects():
    """With torch.__future__.set_overwrite_module_params_on_conversion(True), Module.to() replaces Parameter objects.

    zh: 打开 torch.__future__.set_overwrite_module_params_on_conversion(True) 后，Module.to() 会换掉 Parameter 对象。
    """
    before = torch.__future__.get_overwrite_module_params_on_conversion()
    torch.__future__.set_overwrite_module_params_on_conversion(True)
    try:
        model = nn.Linear(4, 2)
        weight = model.weight
        model.to(torch.float64)  # a conversion that keeps the objects without the flag
        assert model.weight is not weight
        weight = model.weight
        model.to(META)
        assert model.weight is not weight
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(before)


def test_a_default_device_moves_every_factory_call_without_device():
    """With set_default_device, factory functions called without device= create their tensors on that device.

    zh: 设置了 set_default_device 之后，不带 device= 调用的工厂函数都会在那个设备上创建张量。
    """
    torch.set_default_device(META)
    try:
        made = [torch.zeros(2), torch.ones(2), torch.empty(2), torch.arange(3), torch.randn(2), torch.full((2,), 1.0),
                torch.tensor([1.0, 2.0]), torch.eye(2), torch.linspace(0, 1, 3)]
    finally:
        torch.set_default_device(None)
    assert all(t.device == META for t in made)


def test_a_0_dim_cpu_tensor_is_accepted_beside_tensors_on_another_device():
    """An element-wise op accepts a 0-dim CPU tensor (such as Adam's step) beside tensors on another device.

    zh: 逐元素运算接受 0 维 CPU 张量（例如 Adam 的 step）与其他设备上的张量一起运算。
    """
    assert (torch.ones(3, device=META) * torch.tensor(2.0)).device == META


def test_numpy_refuses_a_tensor_on_another_device_with_a_typeerror():
    """`.numpy()` on a tensor that is not on the CPU raises TypeError "can't convert <device> device type tensor ...".

    zh: 对不在 CPU 上的张量调用 `.numpy()` 会抛出 TypeError "can't convert <device> device type tensor ..."。
    """
    with pytest.raises(TypeError) as info:
        torch.ones(2, device=META).numpy()
    assert str(info.value) == ("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                               "to host memory first.")


def test_numpy_also_refuses_a_tensor_that_requires_grad_and_detach_cpu_numpy_works():
    """`.numpy()` refuses a tensor that requires grad; `t.detach().cpu().numpy()` works.

    zh: `.numpy()` 不接受需要梯度的张量；`t.detach().cpu().numpy()` 可以。
    """
    t = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        t.numpy()
    assert t.detach().cpu().numpy().tolist() == [1.0, 1.0]


def test_a_default_device_moves_randperm_but_not_a_new_generator():
    """With set_default_device, torch.randperm without device= follows it, while torch.Generator() stays on the CPU.

    zh: 设置了 set_default_device 之后，不带 device= 的 torch.randperm 跟着它走，torch.Generator() 却仍在 CPU 上。
    """
    torch.set_default_device(META)
    try:
        generator = torch.Generator()
        drawn = torch.randperm(5, generator=generator)
    finally:
        torch.set_default_device(None)
    assert generator.device.type == "cpu" and drawn.device == META


def test_a_shuffling_dataloader_draws_its_order_with_randperm_and_a_generator():
    """A DataLoader with shuffle=True draws its order with torch.randperm(n, generator=...).

    zh: shuffle=True 的 DataLoader 用 torch.randperm(n, generator=...) 生成打乱顺序。
    """
    ops = Ops()
    with ops:
        list(torch.utils.data.DataLoader(range(8), shuffle=True, batch_size=4))
    assert "aten.randperm.generator" in ops.ops


# --------------------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
def test_gpu_the_mystery_model_prints_the_short_form_then_the_masked_fill_check(cuda):
    """On a GPU the mystery model prints the generated check's short form, then (table moved) masked_fill's check.

    zh: 在 GPU 上，神秘模型先打印自动生成的检查的简短形式，移好位置表后再打印 masked_fill 自己的检查。

    The two messages: "... found at least two devices, cuda:0 and cpu!", then "expected self and mask to be on the same
    device, but got mask on cpu and self on cuda:0".
    """
    ns = lab_namespace()
    model = ns["MysteryModel"]().to(cuda)
    ids = torch.zeros(2, 11, dtype=torch.long, device=cuda)
    assert error_of(lambda: model(ids)) == (
        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")
    model.embed.pos = model.embed.pos.to(cuda)
    assert error_of(lambda: model(ids)) == (
        "expected self and mask to be on the same device, but got mask on cpu and self on cuda:0")


@pytest.mark.gpu
def test_gpu_moving_to_a_gpu_keeps_parameter_objects_and_adam_then_fails_to_step(cuda, tmp_path):
    """On a GPU, model.to(cuda) keeps the Parameters; the colleague's Adam keeps its state on the CPU and step() fails.

    zh: 在 GPU 上，model.to(cuda) 保留 Parameter 对象；同事的 Adam 状态仍在 CPU 上，step() 报设备错误。
    """
    ns = lab_namespace()
    path = str(tmp_path / "laptop.pt")
    laptop_checkpoint(ns, path)
    model, optimizer = ns["start_training"](path, cuda)
    assert optimizer.param_groups[0]["params"][0] is next(model.parameters())
    assert optimizer.state[model.head.weight]["exp_avg"].device.type == "cpu"
    for parameter in model.parameters():
        parameter.grad = torch.ones_like(parameter)
    with pytest.raises(RuntimeError, match="device"):
        optimizer.step()


@pytest.mark.gpu
def test_gpu_numpy_on_a_gpu_tensor_names_cuda_0(cuda):
    """On a GPU, `.numpy()` says "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() ...".

    zh: 在 GPU 上，`.numpy()` 报 "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() ..."。
    """
    with pytest.raises(TypeError) as info:
        torch.ones(2, device=cuda).numpy()
    assert str(info.value).startswith("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu()")
    assert torch.ones(2, device=cuda, requires_grad=True).detach().cpu().numpy().tolist() == [1.0, 1.0]


@pytest.mark.gpu
def test_gpu_a_shuffling_loader_under_a_gpu_default_device_needs_a_gpu_generator(cuda):
    """Under a "cuda" default device a shuffling DataLoader says "Expected a 'cuda' device type for generator …".

    zh: 默认设备设为 "cuda" 时，打乱的 DataLoader 报 "Expected a 'cuda' device type for generator …"。

    In full: "Expected a 'cuda' device type for generator but found 'cpu'"; a generator on the GPU fixes it.
    """
    torch.set_default_device(cuda)
    try:
        with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
            list(torch.utils.data.DataLoader(range(8), shuffle=True, batch_size=4))
        order = list(torch.utils.data.DataLoader(range(8), shuffle=True, batch_size=4,
                                                 generator=torch.Generator(device=cuda)))
    finally:
        torch.set_default_device(None)
    assert len(order) == 2
