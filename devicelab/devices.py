"""Picking a device, and describing the machine a lab runs on."""

from __future__ import annotations

import os
import platform
import sys

import torch

FORCE_ENV = "DEVICELAB_DEVICE"
ACCELERATOR_TYPES = ("cuda", "mps")


def _accelerator_from_torch_accelerator() -> torch.device | None:
    # torch.accelerator exists since 2.6; check_available= since 2.7. On a CUDA build
    # without a GPU the plain current_accelerator() still answers "cuda", so it is
    # only trusted together with an availability check.
    acc = getattr(torch, "accelerator", None)
    if acc is None or not hasattr(acc, "current_accelerator"):
        return None
    try:
        found = acc.current_accelerator(check_available=True)
    except TypeError:
        found = acc.current_accelerator()
        is_available = getattr(acc, "is_available", None)
        if found is not None and (is_available is None or not is_available()):
            found = None
    if found is None or found.type not in ACCELERATOR_TYPES:
        return None
    return torch.device(found.type)


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def pick_device() -> torch.device:
    """Return the device a lab should use: CUDA, then Apple MPS, then the CPU."""
    forced = os.environ.get(FORCE_ENV, "").strip()
    if forced:
        return torch.device(forced)
    found = _accelerator_from_torch_accelerator()
    if found is not None:
        return found
    if torch.cuda.is_available():
        return torch.device("cuda")
    if _mps_available():
        return torch.device("mps")
    return torch.device("cpu")


def is_accelerator(device: torch.device | str) -> bool:
    """True for a device whose tensors live apart from the CPU's (CUDA, MPS)."""
    return torch.device(device).type in ACCELERATOR_TYPES


def same_device(a: torch.device | str, b: torch.device | str) -> bool:
    """Compare devices the way PyTorch places tensors: 'cuda' means the current CUDA device."""
    a, b = torch.device(a), torch.device(b)
    if a.type != b.type:
        return False
    if a.index is None or b.index is None:
        if a.type != "cuda":
            return True
        current = torch.cuda.current_device() if torch.cuda.is_available() else 0
        return (a.index if a.index is not None else current) == (
            b.index if b.index is not None else current
        )
    return a.index == b.index


def tensors_off(module: torch.nn.Module, device: torch.device | str) -> list[torch.Tensor]:
    """The parameters and buffers of `module` that are not on `device`."""
    return [t for t in (*module.parameters(), *module.buffers()) if not same_device(t.device, device)]


def on_colab() -> bool:
    """True when running inside Google Colab."""
    return "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ


def environment_report(device: torch.device | None = None) -> dict[str, str]:
    """The facts a setup cell prints: torch version, device, GPU name, Colab or not."""
    device = device if device is not None else pick_device()
    report = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "device": str(device),
        "gpu": "-",
        "cuda": str(torch.version.cuda or "-"),
        "colab": "yes" if on_colab() else "no",
    }
    if device.type == "cuda" and torch.cuda.is_available():
        report["gpu"] = torch.cuda.get_device_name(device)
    elif device.type == "mps":
        report["gpu"] = f"Apple MPS ({platform.machine()})"
    return report
