"""The rules of `devicelab lint`, one module each, over the shared analysis (analysis.py, flow.py). Their codes,
messages (both languages) and chapters are in the catalogue (catalogue.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalogue import REASONS, RULES, Rule
from .base import Check
from .dl101_discarded_move import DiscardedMove
from .dl102_device_tensor_to_numpy import DeviceTensorToNumpy
from .dl103_cuda_without_check import CudaWithoutCheck
from .dl104_unguarded_cuda import UnguardedCuda
from .dl105_branch_moves import BranchMoves
from .dl106_fixed_device_meets_inputs import FixedDeviceMeetsInputs
from .dl201_dataparallel_unmoved import DataParallelUnmoved
from .dl301_cpu_input import CpuInput
from .dl501_factory_in_forward import FactoryInForward
from .dl502_plain_tensor_attribute import PlainTensorAttribute
from .dl503_layer_in_forward import LayerInForward
from .dl504_factory_meets_device import FactoryMeetsDevice
from .dl505_factory_meets_inputs import FactoryMeetsInputs
from .dl601_ddp_placement import DdpPlacement
from .dl603_nccl_cpu_tensor import NcclCpuTensor
from .dl604_nccl_without_set_device import NcclWithoutSetDevice
from .dl701_load_without_map_location import LoadWithoutMapLocation
from .dl702_optimizer_state_before_move import OptimizerStateBeforeMove
from .dl801_deprecated_amp import DeprecatedAmp

if TYPE_CHECKING:
    from ..analysis import Analysis

CHECKS: tuple[type[Check], ...] = (
    DiscardedMove, DeviceTensorToNumpy, CudaWithoutCheck, UnguardedCuda, BranchMoves, DataParallelUnmoved, CpuInput,
    FactoryInForward, PlainTensorAttribute, LayerInForward, FactoryMeetsDevice, DdpPlacement, NcclCpuTensor,
    NcclWithoutSetDevice, LoadWithoutMapLocation, OptimizerStateBeforeMove, DeprecatedAmp,
    FactoryMeetsInputs, FixedDeviceMeetsInputs,  # last: they leave out what DL501/DL502/DL504 report
)

__all__ = ["CHECKS", "REASONS", "RULES", "Check", "Rule", "checks_for"]


def checks_for(analysis: Analysis) -> list[Check]:
    """A fresh instance of every rule, for one file."""
    return [check(analysis) for check in CHECKS]
