"""Claims tests for chapter 8 (mixed precision): each test proves one statement the chapter makes.

The dtype errors happen on one device, so the CPU shows them for real; the messages are the installed
PyTorch's own. The ``meta`` device stands in for a GPU where a second device is needed. Tests marked
``gpu`` run on a CUDA GPU only (tools/gpu_check.py); they hold the CUDA wordings the page labels as expected.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from devicelab.chapters.amp import AMP_STEP_SOLUTION, AUTOCAST_FOR_SOLUTION
from devicelab.errors import match_kind

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "en" / "08-amp.md"
META = torch.device("meta")
CUDA_ONLY = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)


def error_of(run) -> str:
    with pytest.raises((RuntimeError, ValueError)) as info:
        run()
    return str(info.value)


def images(dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.rand(2, 1, 8, 8).to(dtype)


def recorded(run) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [f"{w.category.__name__}: {w.message}" for w in caught]


# --------------------------------------------------------------------------- dtype errors on the CPU


def test_a_half_batch_into_a_float_conv_on_the_cpu_names_the_input_and_the_bias():
    """On the CPU, a float16 batch into a float32 Conv2d prints `Input type (c10::Half) and bias type (float)`.

    zh: 在 CPU 上，把 float16 批次送进 float32 的 Conv2d，会打印 `Input type (c10::Half) and bias type (float)`。
    """
    conv = nn.Conv2d(1, 4, 3)
    assert error_of(lambda: conv(images(torch.float16))) == (
        "Input type (c10::Half) and bias type (float) should be the same")
    assert error_of(lambda: conv(images(torch.bfloat16))) == (
        "Input type (c10::BFloat16) and bias type (float) should be the same")


ONEDNN_HALF_WORDING = ("Input type (torch.HalfTensor) and weight type (torch.FloatTensor) should be the same or input "
                       "should be a MKLDNN tensor and weight is a dense tensor")


def test_a_conv_without_bias_says_expected_scalar_type():
    """On the CPU, a Conv2d without bias fed float16 says `expected scalar type Half but found Float`; on a CPU whose
    oneDNN runs half precision (AVX-512 FP16, AMX) it is oneDNN that answers, with the `Input type ... and weight
    type ...` wording.

    zh: 在 CPU 上，没有偏置的 Conv2d 收到 float16 输入时会说 `expected scalar type Half but found Float`；
    在 oneDNN 支持半精度的 CPU 上（AVX-512 FP16、AMX），回答的是 oneDNN，措辞是 `Input type ... and weight type ...`。
    """
    conv = nn.Conv2d(1, 4, 3, bias=False)
    with torch.backends.mkldnn.flags(enabled=False):  # PyTorch's own CPU kernel
        assert error_of(lambda: conv(images(torch.float16))) == "expected scalar type Half but found Float"
    assert error_of(lambda: conv(images(torch.float16))) in (
        "expected scalar type Half but found Float", ONEDNN_HALF_WORDING)


def test_bmm_of_two_dtypes_says_expected_scalar_type():
    """`torch.bmm` of float32 and bfloat16 says `expected scalar type Float but found BFloat16`.

    zh: 对 float32 和 bfloat16 做 `torch.bmm`，会说 `expected scalar type Float but found BFloat16`。
    """
    a, b = torch.randn(1, 2, 3), torch.randn(1, 3, 2).bfloat16()
    assert error_of(lambda: torch.bmm(a, b)) == "expected scalar type Float but found BFloat16"


def test_a_half_batch_into_a_float_linear_says_mat1_and_mat2():
    """A float16 batch into a float32 nn.Linear says `mat1 and mat2 must have the same dtype, but got Half and Float`.

    zh: float16 批次送进 float32 的 nn.Linear，报 `mat1 and mat2 must have the same dtype, but got Half and Float`。
    """
    linear = nn.Linear(4, 2)
    assert error_of(lambda: linear(torch.randn(3, 4).half())) == (
        "mat1 and mat2 must have the same dtype, but got Half and Float")
    assert error_of(lambda: linear(torch.randn(3, 4).bfloat16())) == (
        "mat1 and mat2 must have the same dtype, but got BFloat16 and Float")


def test_a_linear_without_bias_and_matmul_say_m1_and_m2():
    """On the CPU, a Linear without bias (or a matmul) of two dtypes says `expected m1 and m2 to have the same dtype`.

    zh: 在 CPU 上，没有偏置的 Linear（或 matmul）遇到两种 dtype，会说 `expected m1 and m2 to have the same dtype`。
    """
    linear = nn.Linear(4, 2, bias=False)
    assert error_of(lambda: linear(torch.randn(3, 4).bfloat16())) == (
        "expected m1 and m2 to have the same dtype, but got: c10::BFloat16 != float")


def test_a_half_model_fed_float_input_fails_the_other_way_round():
    """A model cast with `.half()` fed float32 input fails the same way, with the two types swapped.

    zh: 用 `.half()` 转换过的模型收到 float32 输入，也会以同样的方式出错，只是两个类型对调了。
    """
    assert error_of(lambda: nn.Conv2d(1, 4, 3).half()(images())) == (
        "Input type (float) and bias type (c10::Half) should be the same")
    assert error_of(lambda: nn.Linear(4, 2).half()(torch.randn(3, 4))) == (
        "mat1 and mat2 must have the same dtype, but got Float and Half")


def test_raw_uint8_pixels_into_a_conv_name_unsigned_char():
    """uint8 pixels into a float32 Conv2d print `Input type (unsigned char) and bias type (float)`.

    zh: 把 uint8 像素送进 float32 的 Conv2d，会打印 `Input type (unsigned char) and bias type (float)`。
    """
    conv = nn.Conv2d(1, 4, 3)
    pixels = torch.randint(0, 256, (2, 1, 8, 8), dtype=torch.uint8)
    assert error_of(lambda: conv(pixels)) == "Input type (unsigned char) and bias type (float) should be the same"


def test_int32_labels_into_cross_entropy_say_long_or_byte():
    """int32 labels into cross_entropy print `expected target dtype to be Long or Byte, but got Int`.

    zh: 把 int32 标签送进 cross_entropy，会打印 `expected target dtype to be Long or Byte, but got Int`。
    """
    scores, labels = torch.randn(3, 2), torch.tensor([0, 1, 1], dtype=torch.int32)
    assert error_of(lambda: nn.functional.cross_entropy(scores, labels)) == (
        "expected target dtype to be Long or Byte, but got Int")


# --------------------------------------------------------------------------- autocast and devices


def test_autocast_changes_dtypes_and_moves_nothing():
    """Inside autocast a CPU conv computes in bfloat16 on the CPU; its weights stay float32 where they were.

    zh: 在 autocast 里，CPU 上的卷积以 bfloat16 在 CPU 上计算；它的权重仍是 float32，也还在原来的位置。
    """
    conv, x = nn.Conv2d(1, 4, 3), images()
    with torch.autocast(device_type="cpu"):
        out = conv(x)
    assert out.dtype == torch.bfloat16 and out.device.type == "cpu"
    assert conv.weight.dtype == torch.float32 and conv.weight.device.type == "cpu"
    assert x.dtype == torch.float32


def test_a_batch_left_on_the_cpu_fails_the_same_way_inside_autocast():
    """A layer on another device (meta) fed a CPU batch fails with the same device error inside autocast as outside.

    zh: 层在另一个设备（meta）上、批次在 CPU 上时，autocast 里外报的是同一个设备错误。
    """
    head, batch = nn.Linear(128, 2).to(META), torch.zeros(4, 128)
    outside = error_of(lambda: head(batch))
    with torch.autocast(device_type="cpu"):
        inside = error_of(lambda: head(batch))
    assert outside == inside == "Tensor on device meta is not on the expected device cpu!"


def test_the_cuda_addmm_kernel_names_mat1_when_the_batch_is_on_the_cpu():
    """The CUDA addmm kernel's check names `mat1` when the batch is on the CPU and the layer is not.

    zh: 批次在 CPU 上、层不在时，CUDA addmm 内核的检查报出的是 `mat1`。
    """
    bias, weight_t = torch.randn(2, device=META), torch.randn(128, 2, device=META)
    message = error_of(lambda: torch.ops.aten.addmm.default.redispatch(
        CUDA_ONLY, bias, torch.zeros(4, 128), weight_t))
    if torch.torch_version.TorchVersion(torch.__version__) >= (2, 8):
        assert message == ("Expected all tensors to be on the same device, but got mat1 is on cpu, different from "
                           "other tensors on meta (when checking argument in method wrapper_CUDA_addmm)")
    assert match_kind("same_device", message.replace("meta", "cuda:0")) is not None


def test_autocast_only_changes_operations_of_its_own_device_type():
    """Autocast for the CPU leaves a layer on another device (meta) in float32.

    zh: 针对 CPU 的 autocast 不会改变另一个设备（meta）上的层，它仍以 float32 计算。
    """
    head = nn.Linear(4, 2).to(META)
    with torch.autocast(device_type="cpu"):
        out = head(torch.zeros(3, 4, device=META))
    assert out.dtype == torch.float32


def test_autocast_for_cuda_leaves_a_cpu_model_in_float32():
    """`torch.autocast("cuda")` around a model on the CPU leaves it in float32, on any machine.

    zh: 用 `torch.autocast("cuda")` 包住 CPU 上的模型，它仍以 float32 计算，在任何机器上都一样。
    """
    conv = nn.Conv2d(1, 4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autocast(device_type="cuda"):
            out = conv(images())
    assert out.dtype == torch.float32


def test_without_cuda_autocast_for_cuda_turns_itself_off_with_a_warning():
    """Without CUDA, `torch.autocast("cuda")` warns `CUDA is not available ... Disabling autocast.` and turns off.

    zh: 没有 CUDA 时，`torch.autocast("cuda")` 会警告 `CUDA is not available ... Disabling autocast.` 并自行关闭。
    """
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert recorded(lambda: torch.autocast("cuda")) == [
        "UserWarning: CUDA is not available or torch_xla is imported. Disabling autocast."]


def test_autocast_defaults_are_bfloat16_on_cpu_and_float16_on_cuda():
    """By default autocast uses bfloat16 on the CPU and float16 on CUDA.

    zh: autocast 默认在 CPU 上使用 bfloat16，在 CUDA 上使用 float16。
    """
    assert torch.get_autocast_dtype("cpu") == torch.bfloat16
    assert torch.get_autocast_dtype("cuda") == torch.float16


def test_torch_autocast_is_torch_amp_autocast_and_wants_a_string():
    """`torch.autocast` is `torch.amp.autocast`; it wants the device type as a string, not a `torch.device`.

    zh: `torch.autocast` 就是 `torch.amp.autocast`；它要的设备类型是字符串，而不是 `torch.device`。
    """
    assert torch.autocast is torch.amp.autocast
    with pytest.raises(ValueError, match=r"^Expected `device_type` of type `str`"):
        torch.autocast(torch.device("cpu"))


def test_autocast_does_not_cast_a_float64_batch():
    """Autocast does not cast float64 inputs: a float64 batch still fails inside it.

    zh: autocast 不会转换 float64 输入：float64 的批次在 autocast 里照样出错。
    """
    linear = nn.Linear(4, 2)
    with torch.autocast(device_type="cpu"):
        message = error_of(lambda: linear(torch.randn(3, 4).double()))
    assert message == "mat1 and mat2 must have the same dtype, but got Double and BFloat16"


def test_a_hand_cast_half_batch_runs_inside_autocast_and_fails_outside():
    """A batch cast to float16 by hand runs inside CPU autocast and fails outside it (e.g. in evaluation).

    zh: 手动转成 float16 的批次在 CPU 的 autocast 里能运行，出了 autocast（比如评估时）就会出错。
    """
    conv, x = nn.Conv2d(1, 4, 3), images(torch.float16)
    with torch.autocast(device_type="cpu"):
        assert conv(x).dtype == torch.bfloat16
    error_of(lambda: conv(x))


def test_the_courses_autocast_for_follows_the_device_type():
    """The page's `torch.autocast(device_type=device.type)` gives each device type its own context.

    zh: 页面上的 `torch.autocast(device_type=device.type)` 会为每种设备类型给出各自的上下文。
    """
    namespace = {"torch": torch}
    exec(AUTOCAST_FOR_SOLUTION, namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("cpu", "cuda", "cuda:0", "mps"):
            assert namespace["autocast_for"](torch.device(name)).device == torch.device(name).type


# --------------------------------------------------------------------------- deprecated names


def test_torch_cuda_amp_autocast_and_gradscaler_emit_a_future_warning():
    """`torch.cuda.amp.autocast()` and `torch.cuda.amp.GradScaler()` emit a FutureWarning naming the torch.amp form.

    zh: `torch.cuda.amp.autocast()` 和 `torch.cuda.amp.GradScaler()` 会发出 FutureWarning，指明 torch.amp 的写法。
    """
    assert ("FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.") in recorded(lambda: torch.cuda.amp.autocast())
    assert ("FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cuda', args...)` instead.") in recorded(lambda: torch.cuda.amp.GradScaler())


def test_torch_cpu_amp_autocast_and_gradscaler_emit_a_future_warning():
    """`torch.cpu.amp.autocast()` and `torch.cpu.amp.GradScaler()` emit the same FutureWarning, for 'cpu'.

    zh: `torch.cpu.amp.autocast()` 和 `torch.cpu.amp.GradScaler()` 会发出同样的 FutureWarning，指明 'cpu'。
    """
    assert recorded(lambda: torch.cpu.amp.autocast()) == [
        "FutureWarning: `torch.cpu.amp.autocast(args...)` is deprecated. Please use "
        "`torch.amp.autocast('cpu', args...)` instead."]
    assert recorded(lambda: torch.cpu.amp.GradScaler()) == [
        "FutureWarning: `torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
        "`torch.amp.GradScaler('cpu', args...)` instead."]


def test_the_torch_amp_forms_emit_no_future_warning():
    """`torch.amp.autocast("cpu")` and `torch.amp.GradScaler("cpu")` emit no warning.

    zh: `torch.amp.autocast("cpu")` 和 `torch.amp.GradScaler("cpu")` 不会发出任何警告。
    """
    assert recorded(lambda: (torch.amp.autocast("cpu"), torch.amp.GradScaler("cpu"))) == []


def test_without_cuda_a_cuda_gradscaler_turns_itself_off():
    """Without CUDA, `torch.amp.GradScaler("cuda")` warns and turns itself off.

    zh: 没有 CUDA 时，`torch.amp.GradScaler("cuda")` 会发出警告并自行关闭。
    """
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = torch.amp.GradScaler("cuda")
    assert not scaler.is_enabled()
    assert [str(w.message) for w in caught] == [
        "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."]


# --------------------------------------------------------------------------- GradScaler


def tiny_setup(**scaler_options):
    model = nn.Linear(2, 1, bias=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, optimizer, torch.amp.GradScaler("cpu", **scaler_options)


def one_step(model, optimizer, scaler, inputs) -> bool:
    before = model.weight.detach().clone()
    scaler.scale(model(torch.tensor([inputs])).sum()).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
    return not torch.equal(before, model.weight)


def test_float16_loses_a_tiny_gradient_that_scaling_or_bfloat16_keeps():
    """1e-8 becomes 0 in float16; multiplied by 65536 it survives; bfloat16 keeps it as it is.

    zh: 1e-8 在 float16 里会变成 0；乘上 65536 后能保留下来；bfloat16 则能直接保留它。
    """
    tiny = torch.tensor(1e-8)
    assert tiny.half().item() == 0.0
    assert (tiny * 65536).half().item() > 0.0
    assert tiny.bfloat16().item() > 0.0


def test_the_gradscaler_defaults():
    """GradScaler starts at a scale of 65536, halves it on inf, doubles it after 2000 clean steps.

    zh: GradScaler 的初始缩放因子是 65536，遇到 inf 减半，连续 2000 个正常步骤后翻倍。
    """
    scaler = torch.amp.GradScaler("cpu")
    assert (scaler.get_scale(), scaler.get_backoff_factor(), scaler.get_growth_factor(),
            scaler.get_growth_interval()) == (65536.0, 0.5, 2.0, 2000)


def test_a_cpu_gradscaler_skips_a_step_with_inf_and_halves_the_scale():
    """`torch.amp.GradScaler("cpu")` skips a step whose gradient holds inf and halves the scale; clean steps train.

    zh: `torch.amp.GradScaler("cpu")` 会跳过梯度含有 inf 的步骤并把缩放因子减半；正常的步骤照常训练。
    """
    model, optimizer, scaler = tiny_setup(init_scale=1024.0)
    assert one_step(model, optimizer, scaler, [1.0, 2.0]) and scaler.get_scale() == 1024.0
    assert not one_step(model, optimizer, scaler, [float("inf"), 1.0]) and scaler.get_scale() == 512.0
    assert torch.isfinite(model.weight).all()
    assert one_step(model, optimizer, scaler, [1.0, 2.0]) and scaler.get_scale() == 512.0


def test_a_cpu_gradscaler_skips_a_step_with_nan_too():
    """A gradient holding NaN is skipped the same way as inf: no step, and the scale is halved.

    zh: 梯度里出现 NaN 时也一样：跳过这一步，缩放因子减半。
    """
    model, optimizer, scaler = tiny_setup(init_scale=1024.0)
    before = model.weight.detach().clone()
    assert not one_step(model, optimizer, scaler, [float("nan"), 1.0]) and scaler.get_scale() == 512.0
    assert torch.equal(model.weight.detach(), before)


def test_the_scale_grows_after_growth_interval_clean_steps():
    """After `growth_interval` clean steps in a row, update() doubles the scale.

    zh: 连续 `growth_interval` 个正常步骤之后，update() 会把缩放因子翻倍。
    """
    model, optimizer, scaler = tiny_setup(init_scale=1024.0, growth_interval=3)
    scales = []
    for _ in range(3):
        one_step(model, optimizer, scaler, [1.0, 2.0])
        scales.append(scaler.get_scale())
    assert scales == [1024.0, 1024.0, 2048.0]


def test_unscale_gives_back_the_true_gradients():
    """After `scaler.scale(loss).backward()` the gradients are multiplied by the scale; `unscale_` divides them back.

    zh: `scaler.scale(loss).backward()` 之后，梯度都乘上了缩放因子；`unscale_` 会把它们除回去。
    """
    model, optimizer, scaler = tiny_setup(init_scale=1024.0)
    scaler.scale(model(torch.tensor([[3.0, 4.0]])).sum()).backward()
    assert torch.equal(model.weight.grad, torch.tensor([[3.0 * 1024, 4.0 * 1024]]))
    scaler.unscale_(optimizer)
    assert torch.equal(model.weight.grad, torch.tensor([[3.0, 4.0]]))


def test_the_scaler_refuses_a_wrong_order():
    """Two step() or two unscale_() calls without update() raise, and so does update() with no inf check recorded.

    zh: 两次 step() 或两次 unscale_() 之间没有 update() 会报错；没有记录任何 inf 检查就调用 update() 也会报错。
    """
    model, optimizer, scaler = tiny_setup()
    scaler.scale(model(torch.ones(1, 2)).sum()).backward()
    scaler.step(optimizer)
    assert error_of(lambda: scaler.step(optimizer)) == "step() has already been called since the last update()."
    model, optimizer, scaler = tiny_setup()
    scaler.scale(model(torch.ones(1, 2)).sum()).backward()
    scaler.unscale_(optimizer)
    assert error_of(lambda: scaler.unscale_(optimizer)) == (
        "unscale_() has already been called on this optimizer since the last update().")
    model, optimizer, scaler = tiny_setup()
    scaler.scale(model(torch.ones(1, 2)).sum()).backward()
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update."):
        scaler.update()


def test_the_courses_amp_step_clips_the_true_gradient_and_skips_inf():
    """The page's step order clips the unscaled gradient, and skips a step with inf.

    zh: 页面上的步骤顺序裁剪的是还原后的梯度，并会跳过含有 inf 的步骤。
    """
    namespace = {"torch": torch}
    exec(AMP_STEP_SOLUTION, namespace)
    model, optimizer, scaler = tiny_setup(init_scale=1024.0)
    with torch.no_grad():
        model.weight.zero_()
    namespace["amp_step"](model, optimizer, scaler, model(torch.tensor([[3.0, 4.0]])).sum(), 1.0)
    assert torch.allclose(model.weight, torch.tensor([[-0.06, -0.08]]), atol=1e-6)
    before = model.weight.detach().clone()
    namespace["amp_step"](model, optimizer, scaler, model(torch.tensor([[float("inf"), 1.0]])).sum(), 1.0)
    assert torch.equal(model.weight, before) and scaler.get_scale() == 512.0


def python_blocks(page: Path) -> list[str]:
    """The ```python blocks of a page."""
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)


def test_a_numpy_float64_batch_says_double_and_float():
    """NumPy arrays are float64, and a float64 batch into a float32 nn.Linear says `but got Double and Float`.

    zh: NumPy 数组是 float64，把 float64 批次送进 float32 的 nn.Linear，会报 `but got Double and Float`。
    """
    batch = torch.from_numpy(np.random.rand(3, 4))
    assert batch.dtype == torch.float64
    assert error_of(lambda: nn.Linear(4, 2)(batch)) == (
        "mat1 and mat2 must have the same dtype, but got Double and Float")


def test_the_pages_fix_trains_with_autocast_on_the_cpu():
    """The page's fixed loop runs on the CPU (bfloat16 autocast, scaler off) and lowers the loss; its scaler step clips.

    zh: 页面上修好的训练循环能在 CPU 上运行（bfloat16 autocast，scaler 关闭），损失会下降；它的 scaler 步骤会裁剪梯度。
    """
    fix, scaler_block = python_blocks(PAGE)[:2]
    torch.manual_seed(0)
    x = torch.randn(256, 4)
    y = (x[:, 0] > 0).to(torch.int32)  # int32 labels: the fix's .long() converts them
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    namespace = {"torch": torch, "device": torch.device("cpu"), "model": model,
                 "loader": [(x[i:i + 32].double(), y[i:i + 32]) for i in range(0, 256, 32)] * 5,
                 "criterion": nn.CrossEntropyLoss(), "optimizer": torch.optim.Adam(model.parameters(), lr=0.01)}
    first = namespace["criterion"](model(x), y.long()).item()
    dtypes = []
    model[-1].register_forward_hook(lambda module, args, out: dtypes.append(out.dtype))
    exec(fix, namespace)
    assert set(dtypes[:40]) == {torch.bfloat16}  # the training steps ran the layers in bfloat16
    assert not namespace["scaler"].is_enabled()
    assert namespace["criterion"](model(x), y.long()).item() < 0.5 * first
    model, optimizer, scaler = tiny_setup(init_scale=1024.0)
    with torch.no_grad():
        model.weight.zero_()
    loss = model(torch.tensor([[3.0, 4.0]])).sum()
    exec(scaler_block, {"torch": torch, "model": model, "optimizer": optimizer, "scaler": scaler, "loss": loss,
                        "max_norm": 1.0})
    assert torch.allclose(model.weight, torch.tensor([[-0.06, -0.08]]), atol=1e-6)  # the clipped true gradient


def test_clipping_before_unscale_makes_an_sgd_step_scale_times_too_small():
    """Clipping before `unscale_` clips the scaled gradients: with SGD the step comes out about scale times too small.

    zh: 在 `unscale_` 之前裁剪，裁剪的是缩放后的梯度：用 SGD 时，更新出来的步长只有应有大小的约 1/缩放因子。
    """
    steps = {}
    for order in ("unscale first", "clip first"):
        model, optimizer, scaler = tiny_setup(init_scale=1024.0)
        with torch.no_grad():
            model.weight.zero_()
        scaler.scale(model(torch.tensor([[3.0, 4.0]])).sum()).backward()
        if order == "unscale first":
            scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        steps[order] = model.weight.detach().norm().item()
    assert steps["unscale first"] == pytest.approx(0.1, rel=1e-4)
    assert steps["clip first"] == pytest.approx(0.1 / 1024, rel=1e-3)


def test_clipping_before_unscale_clips_the_true_gradients_at_max_norm_over_scale():
    """Clipping before `unscale_` in effect clips the true gradients at max_norm / scale, far below the threshold.

    zh: 在 `unscale_` 之前裁剪，实际效果是把真实梯度裁剪到 max_norm / 缩放因子，远低于设定的阈值。
    """
    torch.manual_seed(0)
    model = nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=65536.0)
    scaler.scale((model(torch.randn(16, 8) * 3) ** 2).mean()).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # before unscale_: the mistake
    scaler.unscale_(optimizer)
    norm = torch.cat([p.grad.flatten() for p in model.parameters()]).norm().item()
    assert norm == pytest.approx(1.0 / 65536.0, rel=1e-3)


def adam_trained(order: str, max_norm: float, steps: int = 30) -> torch.Tensor:
    """The parameters of a small Linear after `steps` Adam steps through a GradScaler, clipping in `order`."""
    torch.manual_seed(0)
    model = nn.Linear(8, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=65536.0, growth_interval=10**6)
    data = torch.Generator().manual_seed(1)
    for _ in range(steps):  # new data each step: gradients of varying size, true norms mostly above 1
        x, y = torch.randn(16, 8, generator=data) * 3, torch.randn(16, 2, generator=data)
        scaler.scale(((model(x) - y) ** 2).mean()).backward()
        if order == "unscale first":
            scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def test_with_adam_clipping_before_unscale_makes_the_chosen_threshold_stop_mattering():
    """With Adam, clipping before `unscale_` makes the threshold stop mattering: every gradient is cut to one norm.

    zh: 用 Adam 时，在 `unscale_` 之前裁剪，设定的阈值就不再起作用：每一步的梯度都被裁到同一个范数。
    """
    right = (adam_trained("unscale first", 1.0) - adam_trained("unscale first", 5.0)).norm().item()
    wrong = (adam_trained("clip first", 1.0) - adam_trained("clip first", 5.0)).norm().item()
    assert right > 0.01  # clipped in the right order, the threshold changes the training
    assert wrong < right / 5  # clipped first, thresholds 1 and 5 train (almost) the same model


def test_with_adam_in_a_large_model_clipping_before_unscale_shrinks_the_steps():
    """With a million parameters, clipping before `unscale_` brings gradients near Adam's eps: the step shrinks by half.

    zh: 在一个有一百万个参数的模型里，在 `unscale_` 之前裁剪会让梯度接近 Adam 的 eps：步长缩小到约一半。
    """
    steps = {}
    for order in ("unscale first", "clip first"):
        torch.manual_seed(0)
        model = nn.Linear(1000, 1000)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        scaler = torch.amp.GradScaler("cpu", init_scale=65536.0)
        before = [p.detach().clone() for p in model.parameters()]
        scaler.scale((model(torch.randn(8, 1000)) ** 2).mean()).backward()
        if order == "unscale first":
            scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        steps[order] = torch.cat([(p - b).flatten() for p, b in zip(model.parameters(), before)]).norm().item()
    assert 0.3 < steps["clip first"] / steps["unscale first"] < 0.7


def test_autocast_on_mps_defaults_to_float16_and_gradscaler_exists_for_mps():
    """Autocast on MPS defaults to float16, and `torch.amp.GradScaler("mps")` exists (PyTorch PR #150255).

    zh: MPS 上的 autocast 默认用 float16，而且有 `torch.amp.GradScaler("mps")`（PyTorch PR #150255）。
    """
    assert torch.get_autocast_dtype("mps") == torch.float16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a machine without MPS may say so
        scaler = torch.amp.GradScaler("mps")
    assert scaler._device == "mps"


def test_the_pages_fix_enables_the_scaler_for_cuda_and_mps_only():
    """The page's fix turns the scaler on for CUDA and MPS (float16 by default), off for the CPU (bfloat16).

    zh: 页面上的修复在 CUDA 和 MPS 上开启梯度缩放器（默认 float16），在 CPU 上关闭（bfloat16）。
    """
    fix = python_blocks(PAGE)[0]
    scaler_line = next(line for line in fix.splitlines() if "GradScaler(" in line)
    for device_type, enabled in (("cuda", True), ("mps", True), ("cpu", False)):
        value = eval(scaler_line.split("enabled=", 1)[1].rsplit(")", 1)[0], {"device_type": device_type})
        assert value is enabled, device_type


def test_bfloat16_has_the_range_of_float32():
    """bfloat16 keeps float32's range (its largest value is about 3.4e38); float16 stops at 65504.

    zh: bfloat16 的数值范围与 float32 相同（最大值约 3.4e38）；float16 最大只到 65504。
    """
    assert torch.finfo(torch.bfloat16).max == pytest.approx(torch.finfo(torch.float32).max, rel=0.01)
    assert torch.finfo(torch.float16).max == 65504.0


# --------------------------------------------------------------------------- on a CUDA GPU


@pytest.mark.gpu
def test_on_cuda_a_half_batch_into_a_float_conv_names_two_cuda_types(cuda):
    """On CUDA, a float16 batch into a float32 Conv2d prints `Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same`.

    zh: 在 CUDA 上，把 float16 批次送进 float32 的 Conv2d，会打印 `Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same`。
    """  # noqa: E501 - the message is quoted whole
    conv = nn.Conv2d(1, 4, 3).to(cuda)
    message = error_of(lambda: conv(images(torch.float16).to(cuda)))
    assert message.startswith("Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) "
                              "should be the same")


@pytest.mark.gpu
def test_on_cuda_a_half_batch_into_a_float_linear_says_mat1_and_mat2(cuda):
    """On CUDA, a float16 batch into a float32 nn.Linear says `mat1 and mat2 must have the same dtype`.

    zh: 在 CUDA 上，把 float16 批次送进 float32 的 nn.Linear，会说 `mat1 and mat2 must have the same dtype`。
    """
    linear = nn.Linear(4, 2).to(cuda)
    message = error_of(lambda: linear(torch.randn(3, 4, device=cuda).half()))
    assert message.startswith("mat1 and mat2 must have the same dtype")


@pytest.mark.gpu
def test_on_cuda_a_batch_left_on_the_cpu_fails_the_same_way_inside_autocast(cuda):
    """On CUDA, a CPU batch into a CUDA Linear prints the same device error inside autocast as outside (mat1, addmm).

    zh: 在 CUDA 上，把 CPU 批次送进 CUDA 上的 Linear，autocast 里外打印的是同一个设备错误（mat1、addmm）。
    """
    head, batch = nn.Linear(128, 2).to(cuda), torch.zeros(4, 128)
    outside = error_of(lambda: head(batch))
    with torch.autocast(device_type="cuda"):
        inside = error_of(lambda: head(batch))
    assert inside == outside
    assert match_kind("same_device", inside) is not None and "mat1" in inside
    if torch.torch_version.TorchVersion(torch.__version__) >= (2, 8):
        assert inside == ("Expected all tensors to be on the same device, but got mat1 is on cpu, different from "
                          "other tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)")


@pytest.mark.gpu
def test_on_cuda_autocast_runs_a_linear_in_float16_and_moves_nothing(cuda):
    """On CUDA, autocast runs a Linear in float16 on the GPU; the weights stay float32.

    zh: 在 CUDA 上，autocast 让 Linear 在 GPU 上以 float16 运行；权重仍是 float32。
    """
    linear = nn.Linear(4, 2).to(cuda)
    with torch.autocast(device_type="cuda"):
        out = linear(torch.randn(3, 4, device=cuda))
    assert out.dtype == torch.float16 and out.device.type == "cuda" and linear.weight.dtype == torch.float32


@pytest.mark.gpu
def test_on_cuda_a_cuda_gradscaler_skips_a_step_with_inf(cuda):
    """On CUDA, `torch.amp.GradScaler("cuda")` skips a step whose gradient holds inf and halves the scale.

    zh: 在 CUDA 上，`torch.amp.GradScaler("cuda")` 会跳过梯度含有 inf 的步骤，并把缩放因子减半。
    """
    model = nn.Linear(2, 1, bias=False).to(cuda)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)
    before = model.weight.detach().clone()
    scaler.scale(model(torch.tensor([[float("inf"), 1.0]], device=cuda)).sum()).backward()
    scaler.step(optimizer)
    scaler.update()
    assert torch.equal(model.weight, before) and scaler.get_scale() == 512.0
