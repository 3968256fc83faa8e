"""Stand-ins that checks hand to a learner's training code, to see where its tensors arrive."""

from __future__ import annotations

import torch
from torch import nn


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
