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
    process then sees one GPU, cuda:0); or it calls a function of the project's own modules that calls
    set_device (`utils.init_distributed_mode(args)`)."""
    for node in analysis.nodes_of(ast.Attribute):
        if node.attr in SETS_DEVICE:
            return True
    if _helper_sets_device(analysis):
        return True
    for node in analysis.nodes_of(ast.With, ast.AsyncWith):
        for item in node.items:
            if isinstance(item.context_expr, ast.Call) and analysis.resolve(item.context_expr.func) == (
                    "torch.cuda.device"):
                return True
    return any(isinstance(n.value, str) and "CUDA_VISIBLE_DEVICES" in n.value
               for n in analysis.nodes_of(ast.Constant))


def _helper_sets_device(analysis: Analysis) -> bool:
    """A call of a function defined in one of the project's modules (`import utils; utils.setup(args)`,
    `from utils import setup`) whose body calls set_device."""
    if analysis.path is None:
        return False
    from ..project import module_file, read_module

    for call in analysis.nodes_of(ast.Call):
        name = analysis.resolve(call.func) or ""
        if "." not in name or name.startswith("torch."):
            continue
        module, function = name.rsplit(".", 1)
        target = module_file(analysis.path, module, 0)
        other = read_module(target, analysis.depth + 1) if target is not None else None
        fn = other.functions.get(function) if other is not None else None
        if fn is not None and any(isinstance(node, ast.Attribute) and node.attr in SETS_DEVICE
                                  for node in other.walk(fn)):
            return True
    return False


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
