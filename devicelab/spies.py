"""Stand-ins that checks hand to a learner's training code, to see where its tensors arrive."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.overrides import TorchFunctionMode

from .devices import same_device


class SpyModel(nn.Module):
    """Stands in for the learner's model: records the device and dtype of each input, and never fails."""

    def __init__(self, classes: int, features: int = 4) -> None:
        super().__init__()
        self.head = nn.Linear(features, classes)
        self.seen: list[tuple[torch.device, torch.dtype]] = []

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        self.seen.append((inputs.device, inputs.dtype))
        # Computes from constants on its own device, so a batch on the wrong device is recorded, not raised.
        features = torch.ones(inputs.shape[0], self.head.in_features, device=self.head.weight.device)
        return self.head(features)


class SpyLoss(nn.Module):
    """Stands in for the criterion: records the device and dtype of each label tensor, and never fails."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[torch.device, torch.dtype]] = []

    def forward(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        self.seen.append((labels.device, labels.dtype))
        targets = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
        return nn.functional.cross_entropy(logits, targets)


@dataclass(frozen=True)
class Move:
    """One copy of a tensor to another device, as the code asked for it."""

    source: torch.device
    target: torch.device
    non_blocking: bool


class MoveRecorder(TorchFunctionMode):
    """While active, records every tensor the code inside copies to another device (`.to()`, `.cuda()`, `.cpu()`,
    `copy_`), whether it asked for the copy not to block, and nothing else: every call runs as it would."""

    def __init__(self) -> None:
        super().__init__()
        self.moves: list[Move] = []

    def towards(self, device: torch.device | str) -> list[Move]:
        """The recorded moves to `device`."""
        device = torch.device(device)
        return [m for m in self.moves if same_device(m.target, device)]

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204 - torch's protocol
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        try:
            self._record(func, args, kwargs)
        except Exception:  # noqa: BLE001, S110 - an odd call is not a move: recording must never change what runs
            pass
        return result

    def _record(self, func, args, kwargs) -> None:  # noqa: ANN001
        if not args or not isinstance(args[0], torch.Tensor):
            return
        source = args[0].device
        if func is torch.Tensor.to:
            target, _, non_blocking, _ = torch._C._nn._parse_to(*args[1:], **kwargs)
        elif func is torch.Tensor.cuda:
            target, non_blocking = torch.device("cuda"), bool(kwargs.get("non_blocking", args[2:3] == (True,)))
        elif func is torch.Tensor.cpu:
            target, non_blocking = torch.device("cpu"), False
        elif func is torch.Tensor.copy_ and len(args) > 1 and isinstance(args[1], torch.Tensor):
            source, target = args[1].device, args[0].device
            non_blocking = bool(kwargs.get("non_blocking", args[2] if len(args) > 2 else False))
        else:
            return
        if target is not None and not same_device(source, target):
            self.moves.append(Move(source, torch.device(target), bool(non_blocking)))


def foreign_module(error: BaseException, *ours: nn.Module) -> nn.Module | None:
    """The outermost module, other than `ours` and their submodules, whose code was running when `error` was raised.

    A learner's function that runs a notebook variable (`model_ft`) instead of the model a check hands it fails
    inside that other model: the traceback says which one.
    """
    known = {id(m) for module in ours for m in module.modules()}
    traceback = error.__traceback__
    while traceback is not None:
        owner = traceback.tb_frame.f_locals.get("self")
        if isinstance(owner, nn.Module) and id(owner) not in known:
            return owner
        traceback = traceback.tb_next
    return None


class StepCounter:
    """While active, counts the steps taken by `optimizer` and by every other optimizer (PyTorch's step hooks)."""

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.optimizer = optimizer
        self.own = self.others = 0
        self._handle = None

    def _count(self, optimizer: torch.optim.Optimizer, args: object, kwargs: object) -> None:
        if optimizer is self.optimizer:
            self.own += 1
        else:
            self.others += 1

    def __enter__(self) -> StepCounter:
        self._handle = register_optimizer_step_post_hook(self._count)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.remove()
