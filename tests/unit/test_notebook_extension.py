"""`%load_ext devicelab` in a real kernel: a device error is explained under its untouched traceback, in the chosen
language, with the chapter's address; other errors are left alone; `%unload_ext devicelab` undoes it."""

from __future__ import annotations

import queue

import pytest

from devicelab.explain import chapter_url

# A real device error on any machine: a CPU layer given an input on `meta` (the stand-in for a GPU).
DEVICE_ERROR = "import torch\ntorch.nn.Linear(3, 3)(torch.randn(2, 3, device='meta'))\n"


@pytest.fixture(scope="module")
def kernel():
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    yield client
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def run(client, code: str) -> tuple[str, list[str]]:
    """What a cell printed, and the traceback lines of its error (empty when it raised none)."""
    printed: list[str] = []
    traceback: list[str] = []

    def hook(msg):
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            traceback.extend(msg["content"]["traceback"] or [msg["content"]["evalue"]])

    try:
        client.execute_interactive(code, output_hook=hook, timeout=120)
    except queue.Empty:
        pytest.fail("the cell did not finish")
    return "".join(printed), traceback


def test_without_the_extension_nothing_is_added(kernel):
    printed, traceback = run(kernel, DEVICE_ERROR)
    assert traceback and "meta" in "".join(traceback)
    assert "05 ·" not in printed and "01 ·" not in printed and chapter_url("01-devices", "en") not in printed


def test_a_device_error_is_explained_under_its_traceback_in_the_chosen_language(kernel):
    run(kernel, "%load_ext devicelab")
    printed, traceback = run(kernel, DEVICE_ERROR)
    assert traceback and "RuntimeError" in "".join(traceback)  # the traceback is still shown
    assert "A device-placement error" in printed and "https://" in printed

    run(kernel, "import devicelab; devicelab.install(lang='zh')")
    printed, traceback = run(kernel, DEVICE_ERROR)
    assert traceback and "这是设备错误" in printed and "/zh/" in printed


def test_an_error_a_chapter_covers_that_is_not_a_device_error_is_explained_too(kernel):
    """The page says: device errors, and the other errors a chapter covers (a dtype mismatch here), are explained."""
    run(kernel, "%load_ext devicelab")
    run(kernel, "import devicelab; devicelab.install(lang='en')")
    printed, traceback = run(kernel, "import torch\ntorch.nn.Linear(3, 3)(torch.randn(2, 3).half())\n")
    assert traceback and "dtype" in "".join(traceback).lower() + printed.lower()
    assert chapter_url("08-amp", "en") in printed


def test_other_errors_are_left_alone(kernel):
    run(kernel, "%load_ext devicelab")
    printed, traceback = run(kernel, "1 / 0")
    assert "ZeroDivisionError" in "".join(traceback) and printed == ""
    printed, traceback = run(kernel, "print('fine')")
    assert printed == "fine\n" and not traceback


def test_unload_ext_undoes_it(kernel):
    run(kernel, "%load_ext devicelab")
    run(kernel, "%unload_ext devicelab")
    printed, traceback = run(kernel, DEVICE_ERROR)
    assert traceback and printed == ""
