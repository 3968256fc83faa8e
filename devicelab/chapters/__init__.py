"""The exercises of each chapter, one module per chapter, found by lab id.

Importing this package imports no torch (the grader's worker processes read `MODULES` and nothing else); a chapter's
module does, when `exercises_for` loads it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from ..checks import Exercise

MODULES = {
    "01-devices": "basics",
    "02-dataparallel": "dataparallel",
    "03-embedding": "embedding",
    "04-batches": "batches",
    "05-inside": "inside",
    "06-multigpu": "multigpu",
    "07-checkpoints": "checkpoints",
    "08-amp": "amp",
    "09-debugging": "debugging",
}


def exercises_for(lab: str, device: torch.device | str | None = None) -> list[Exercise]:
    """The exercises of a lab, in the order the notebook uses them, judging for the lab's `device`."""
    module = importlib.import_module(f"{__name__}.{MODULES[lab]}")
    return [cls(device) for cls in module.EXERCISES]
