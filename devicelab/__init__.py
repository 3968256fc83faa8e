"""Helpers for the PyTorch device-errors lab course: device picking, reproduce, checks, error index.

The error reader (`explain`, `lookup`) is imported at once and needs no torch; everything else is imported on
first use, so that `python -m devicelab.explain` answers without loading PyTorch.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import lookup
from .explain import explain
from .notebook import install, load_ipython_extension, uninstall, unload_ipython_extension

_LAZY = {
    "____": "checks",
    "BrokenLabError": "reproduce",
    "Lab": "lab",
    "audit": "debug",
    "environment_report": "devices",
    "locate": "debug",
    "pick_device": "devices",
    "reproduce": "reproduce",
    "same_device": "devices",
    "start_lab": "lab",
}

__all__ = [
    "____",
    "BrokenLabError",
    "Lab",
    "audit",
    "environment_report",
    "explain",
    "install",
    "load_ipython_extension",
    "locate",
    "lookup",
    "pick_device",
    "reproduce",
    "same_device",
    "start_lab",
    "uninstall",
    "unload_ipython_extension",
]
__version__ = "0.2.0"  # semantic versioning: CHANGELOG.md


def __getattr__(name: str) -> Any:
    """Import the helper that defines `name` on first use (PEP 562)."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
