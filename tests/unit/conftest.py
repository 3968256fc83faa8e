"""Shared fixtures: a fresh CPU-only session per test, and real PyTorch device errors raised without a GPU."""

import pytest
import torch

from devicelab import messages

# Redispatching an op to its CUDA kernel runs the generated same-device check (the first thing a CUDA
# kernel does) on a machine without a GPU. A meta tensor stands in for the GPU tensor: the check prints
# `meta` where a GPU prints `cuda:0`, and it raises before any CUDA call.
CUDA_ONLY = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)


def addmm_on_cuda_kernel() -> None:
    """addmm's CUDA kernel given a CPU bias and mat1 and a meta mat2."""
    torch.ops.aten.addmm.default.redispatch(
        CUDA_ONLY, torch.randn(2), torch.randn(2, 2), torch.randn(2, 2, device="meta")
    )


def nll_loss_on_cuda_kernel() -> None:
    """nll_loss's CUDA kernel given meta logits and targets and a CPU class-weight tensor."""
    torch.ops.aten.nll_loss_forward.default.redispatch(
        CUDA_ONLY,
        torch.randn(4, 3, device="meta"),
        torch.zeros(4, dtype=torch.long, device="meta"),
        torch.ones(3),
        1,
        -100,
    )


def add_on_cuda_kernel() -> None:
    """add's CUDA kernel: an elementwise op, checked by TensorIterator instead of the generated check."""
    torch.ops.aten.add.Tensor.redispatch(CUDA_ONLY, torch.randn(3), torch.randn(3, device="meta"))


def message_of(raise_it) -> str:
    """The text of the RuntimeError that `raise_it()` raises."""
    with pytest.raises(RuntimeError) as error:
        raise_it()
    return str(error.value)


@pytest.fixture
def addmm_device_error():
    """A callable that raises the real generated CUDA device check of addmm."""
    return addmm_on_cuda_kernel


@pytest.fixture
def nll_loss_device_error():
    """A callable that raises the real generated CUDA device check of nll_loss (the class-weight case)."""
    return nll_loss_on_cuda_kernel


@pytest.fixture
def elementwise_device_error():
    """A callable that raises the real TensorIterator device check of a CUDA elementwise op."""
    return add_on_cuda_kernel


@pytest.fixture
def real_message():
    """message_of, as a fixture: the text of the error a callable raises."""
    return message_of


@pytest.fixture(autouse=True)
def fresh_cpu_session(monkeypatch):
    """Every test starts like a new notebook on a CPU-only machine: English, nothing forced, no GPU."""
    for name in ("DEVICELAB_DEVICE", "DEVICELAB_STRICT", "DEVICELAB_CAPTURE_LOG", "COLAB_RELEASE_TAG"):
        monkeypatch.delenv(name, raising=False)
    # Also on a machine that has a GPU: nn.DataParallel and pick_device must behave as on CI. (MPS is
    # patched in test_devices only: torch._dynamo, imported lazily by optimizers, needs its __wrapped__.)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    messages.set_language("en")
    yield
    messages.set_language("en")
