"""What DistributedDataParallel's rules (DL601-DL603) ask of a file: where it picks each process's GPU."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..analysis import Analysis

SETS_DEVICE = frozenset({"set_device", "set_device_index", "set_device_idx"})


def picks_process_device(analysis: Analysis) -> bool:
    """Whether the file makes each process use its own GPU: torch.cuda.set_device(...),
    torch.accelerator.set_device_index(...), `with torch.cuda.device(rank)`, or CUDA_VISIBLE_DEVICES (each
    process then sees one GPU, cuda:0)."""
    for node in analysis.nodes_of(ast.Attribute):
        if node.attr in SETS_DEVICE:
            return True
    for node in analysis.nodes_of(ast.With, ast.AsyncWith):
        for item in node.items:
            if isinstance(item.context_expr, ast.Call) and analysis.resolve(item.context_expr.func) == (
                    "torch.cuda.device"):
                return True
    return any(isinstance(n.value, str) and "CUDA_VISIBLE_DEVICES" in n.value
               for n in analysis.nodes_of(ast.Constant))


def nccl_backend(analysis: Analysis) -> bool:
    """Whether the file starts its process group with the NCCL backend, written as a literal."""
    for call in analysis.nodes_of(ast.Call):
        if (analysis.resolve(call.func) or "").endswith("init_process_group"):
            backend = call.args[0] if call.args else next(
                (kw.value for kw in call.keywords if kw.arg == "backend"), None)
            if isinstance(backend, ast.Constant) and backend.value == "nccl" or (
                    isinstance(backend, ast.Attribute) and backend.attr == "NCCL"):
                return True
    return False
