"""pick_device, same_device and environment_report, with the machine's hardware mocked."""

from __future__ import annotations

import sys

import pytest
import torch

from devicelab.devices import environment_report, is_accelerator, pick_device, same_device


class Accelerator27:
    """torch.accelerator as in torch >= 2.7: check_available=True answers None without a usable device."""

    def __init__(self, device: str | None, available: bool) -> None:
        self.device = device
        self.available = available

    def current_accelerator(self, check_available: bool = False) -> torch.device | None:
        if self.device is None or (check_available and not self.available):
            return None
        return torch.device(self.device)

    def is_available(self) -> bool:
        return self.available


class Accelerator26(Accelerator27):
    """torch.accelerator as in torch 2.6: no check_available, and it names the build's accelerator."""

    def current_accelerator(self) -> torch.device | None:  # a check_available= call raises TypeError
        return None if self.device is None else torch.device(self.device)


class Accelerator26WithoutIsAvailable:
    """A torch.accelerator with only the plain current_accelerator()."""

    def current_accelerator(self) -> torch.device:
        return torch.device("cuda")


@pytest.fixture(autouse=True)
def no_mps(monkeypatch):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


@pytest.fixture
def cuda_present(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


@pytest.fixture
def mps_present(monkeypatch):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)


# --- torch >= 2.7 -------------------------------------------------------------------------------


def test_cuda_is_picked_when_torch_accelerator_reports_a_usable_gpu(monkeypatch):
    monkeypatch.setattr(torch, "accelerator", Accelerator27("cuda", available=True))
    assert pick_device() == torch.device("cuda")


def test_mps_is_picked_when_it_is_the_only_accelerator(monkeypatch):
    monkeypatch.setattr(torch, "accelerator", Accelerator27("mps", available=True))
    assert pick_device() == torch.device("mps")


def test_cpu_is_picked_on_a_cuda_build_without_a_gpu(monkeypatch):
    monkeypatch.setattr(torch, "accelerator", Accelerator27("cuda", available=False))
    assert pick_device() == torch.device("cpu")


def test_cpu_is_picked_on_a_cpu_only_build(monkeypatch):
    monkeypatch.setattr(torch, "accelerator", Accelerator27(None, available=False))
    assert pick_device() == torch.device("cpu")


def test_an_accelerator_the_labs_do_not_teach_is_not_picked(monkeypatch):
    monkeypatch.setattr(torch, "accelerator", Accelerator27("xpu", available=True))
    assert pick_device() == torch.device("cpu")


def test_the_installed_torch_picks_cpu_on_this_cpu_only_machine():
    assert pick_device() == torch.device("cpu")


# --- DEVICELAB_DEVICE ---------------------------------------------------------------------------


def test_the_env_var_forces_a_device_even_when_a_gpu_is_available(monkeypatch):
    monkeypatch.setattr(torch, "accelerator", Accelerator27("cuda", available=True))
    monkeypatch.setenv("DEVICELAB_DEVICE", "cpu")
    assert pick_device() == torch.device("cpu")


def test_the_env_var_forces_a_device_that_is_not_detected(monkeypatch):
    monkeypatch.setenv("DEVICELAB_DEVICE", " cuda:1 ")
    assert pick_device() == torch.device("cuda:1")


def test_an_empty_env_var_forces_nothing(monkeypatch):
    monkeypatch.setattr(torch, "accelerator", Accelerator27("mps", available=True))
    monkeypatch.setenv("DEVICELAB_DEVICE", "  ")
    assert pick_device() == torch.device("mps")


# --- torch 2.6: current_accelerator() without check_available ----------------------------------


def test_torch_26_plain_current_accelerator_is_not_trusted_without_a_gpu(monkeypatch):
    fake = Accelerator26("cuda", available=False)
    with pytest.raises(TypeError):
        fake.current_accelerator(check_available=True)
    assert fake.current_accelerator() == torch.device("cuda")  # what 2.6 answers on a GPU-less CUDA build
    monkeypatch.setattr(torch, "accelerator", fake)
    assert pick_device() == torch.device("cpu")


def test_torch_26_current_accelerator_is_used_when_is_available_confirms_it(monkeypatch):
    monkeypatch.setattr(torch, "accelerator", Accelerator26("cuda", available=True))
    assert pick_device() == torch.device("cuda")


def test_torch_26_without_is_available_falls_back_to_torch_cuda(monkeypatch):
    monkeypatch.setattr(torch, "accelerator", Accelerator26WithoutIsAvailable())
    assert pick_device() == torch.device("cpu")


# --- torch < 2.6: no torch.accelerator ----------------------------------------------------------


def test_without_torch_accelerator_cuda_is_found_by_torch_cuda(monkeypatch, cuda_present):
    monkeypatch.delattr(torch, "accelerator")
    assert pick_device() == torch.device("cuda")


def test_without_torch_accelerator_mps_is_found_by_torch_backends(monkeypatch, mps_present):
    monkeypatch.delattr(torch, "accelerator")
    assert pick_device() == torch.device("mps")


def test_without_torch_accelerator_cuda_comes_before_mps(monkeypatch, cuda_present, mps_present):
    monkeypatch.delattr(torch, "accelerator")
    assert pick_device() == torch.device("cuda")


def test_without_torch_accelerator_and_nothing_available_cpu_is_picked(monkeypatch):
    monkeypatch.delattr(torch, "accelerator")
    assert pick_device() == torch.device("cpu")


def test_a_torch_without_the_mps_backend_gives_cpu(monkeypatch):
    monkeypatch.delattr(torch, "accelerator")
    monkeypatch.delattr(torch.backends, "mps")
    assert pick_device() == torch.device("cpu")


# --- is_accelerator, same_device ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("device", "expected"), [("cuda", True), ("cuda:1", True), ("mps", True), ("cpu", False), ("meta", False)]
)
def test_is_accelerator_is_true_only_for_cuda_and_mps(device, expected):
    assert is_accelerator(device) is expected
    assert is_accelerator(torch.device(device)) is expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("cuda", "cuda:0", True),
        ("cuda:0", "cuda", True),
        ("cuda:0", "cuda:0", True),
        ("cuda:0", "cuda:1", False),
        ("cuda", "cuda:1", False),
        ("cpu", "cuda", False),
        ("cpu", "cuda:0", False),
        ("meta", "cpu", False),
        ("cpu", "cpu", True),
        ("cpu", "cpu:0", True),
        ("mps", "mps:0", True),
        ("mps", "cpu", False),
    ],
)
def test_same_device_compares_devices_the_way_tensors_are_placed(a, b, expected):
    assert same_device(a, b) is expected
    assert same_device(torch.device(a), torch.device(b)) is expected
    assert same_device(b, a) is expected


def test_same_device_reads_plain_cuda_as_the_current_cuda_device(monkeypatch, cuda_present):
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    assert same_device("cuda", "cuda:1")
    assert not same_device("cuda", "cuda:0")


def test_same_device_accepts_a_tensor_device():
    assert same_device(torch.zeros(1).device, "cpu")
    assert not same_device(torch.zeros(1, device="meta").device, "cpu")


# --- environment_report -------------------------------------------------------------------------


@pytest.fixture
def not_colab(monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)


def test_environment_report_has_the_facts_a_setup_cell_prints(not_colab):
    report = environment_report(torch.device("cpu"))
    assert set(report) == {"python", "torch", "device", "gpu", "cuda", "colab"}
    assert all(isinstance(value, str) and value for value in report.values())
    assert report["torch"] == torch.__version__
    assert report["device"] == "cpu"
    assert report["gpu"] == "-"
    assert report["cuda"] == str(torch.version.cuda or "-")
    assert report["colab"] == "no"


def test_environment_report_picks_the_device_when_none_is_given(monkeypatch, not_colab):
    monkeypatch.setenv("DEVICELAB_DEVICE", "meta")
    assert environment_report()["device"] == "meta"


def test_colab_is_detected_by_its_release_tag(monkeypatch, not_colab):
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab_20251101-060000_RC00")
    assert environment_report(torch.device("cpu"))["colab"] == "yes"


def test_colab_is_detected_by_its_module(monkeypatch, not_colab):
    monkeypatch.setitem(sys.modules, "google.colab", object())
    assert environment_report(torch.device("cpu"))["colab"] == "yes"


def test_environment_report_names_the_gpu(monkeypatch, cuda_present):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "Tesla T4")
    assert environment_report(torch.device("cuda"))["gpu"] == "Tesla T4"


def test_environment_report_names_no_gpu_for_a_forced_cuda_without_one():
    assert environment_report(torch.device("cuda"))["gpu"] == "-"


def test_environment_report_names_apple_mps():
    assert environment_report(torch.device("mps"))["gpu"].startswith("Apple MPS")
