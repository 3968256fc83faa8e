"""Readings learned from the development half of the eighth batch of real pastes (tests/errors/README.md): an
out-of-tree backend's names in torch.compile's FakeTensor check, the commonest message cut off inside its head (once
"to be" shows which message it is), and a bare AssertionError under a failed `assert` on a tensor's device. The paste
page reads them the same way (tests/site/test_explain_page.py)."""

from __future__ import annotations

import pytest

from devicelab.errors import diagnose

FAKE = ("torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node with fake tensors: got RuntimeError("
        "'Unhandled FakeTensor Device Propagation for aten.add.Tensor, found two different devices {a}, {b}')")
SCALER = ('  File "/opt/conda/lib/python3.10/site-packages/torch/cuda/amp/grad_scaler.py", line 161, in scale\n'
          "    assert outputs.is_cuda or outputs.device.type == 'xla'\n"
          "AssertionError")


def chapters(text: str) -> list[str]:
    return [r.chapter for r in diagnose(text).ranking]


def test_the_fake_tensor_check_is_read_with_any_backends_device_names():
    d = diagnose(FAKE.format(a="spyre:0", b="cpu"))
    assert d.device_error and d.chapter == "05-inside"
    assert chapters(FAKE.format(a="spyre:0", b="cpu"))[0] == chapters(FAKE.format(a="cuda:0", b="cpu"))[0]


@pytest.mark.parametrize("cut", ["RuntimeError: Expected all tensors to be",
                                 "RuntimeError: Expected all tensors to be o",
                                 "RuntimeError: Expected all tensors to be on the sa",
                                 "RuntimeError: Expected all tensors to be on the same devic"])
def test_the_commonest_message_cut_off_inside_its_head_is_still_read(cut):
    d = diagnose(cut)
    assert d.device_error and d.kind == "same_device"


@pytest.mark.parametrize("text", ["RuntimeError: Expected all tenso",  # vmap's "... to have the same size" too
                                  "RuntimeError: Expected all tensors to"
                                  "RuntimeError: Expected all tensors to have the same dtype",
                                  "Expected all tens\nbut the rest of the paste goes on about shapes and sizes"])
def test_a_different_message_or_a_cut_in_the_middle_is_not_that_message(text):
    assert diagnose(text).kind != "same_device"


def test_a_bare_assertion_error_under_a_failed_assert_on_a_device_is_a_device_error():
    d = diagnose(SCALER)
    assert d.device_error and d.chapter == "08-amp"  # GradScaler's frame chooses the chapter
    assert diagnose("    assert x.device == y.device\nAssertionError").device_error


@pytest.mark.parametrize("text", ["    assert torch.cuda.is_available()\nAssertionError",
                                  "    assert x.shape == y.shape\nAssertionError",
                                  "    assert len(devices) == 2\nAssertionError"])
def test_an_assert_on_anything_else_is_no_device_error(text):
    assert not diagnose(text).device_error
