"""Helpers for the PyTorch device-errors lab course: device picking, reproduce, checks, error index."""

from .checks import ____
from .debug import audit, locate
from .devices import environment_report, pick_device, same_device
from .errors import lookup
from .explain import explain
from .lab import Lab, start_lab
from .reproduce import BrokenLabError, reproduce

__all__ = [
    "____",
    "BrokenLabError",
    "Lab",
    "audit",
    "environment_report",
    "explain",
    "locate",
    "lookup",
    "pick_device",
    "reproduce",
    "same_device",
    "start_lab",
]
__version__ = "0.1.0"
