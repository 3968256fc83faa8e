"""DL604: a process group started with the NCCL backend in a program that never picks each process's GPU
(chapter 06). Without `torch.cuda.set_device(local_rank)`, the current GPU of every process is cuda:0: NCCL's
communicators, barriers and whatever `.cuda()` makes land there too, which fills GPU 0 or hangs.

Flagged at `dist.init_process_group(...)`, when its backend is "nccl" written as a literal (or a name that the
file only ever assigns "nccl"). Not flagged: a backend chosen at run time, gloo, `device_id=` given to
init_process_group, a group of one process (`world_size=1`), and a file that picks each process's GPU
(`torch.cuda.set_device`, `torch.accelerator.set_device_index`, `with torch.cuda.device(...)`,
CUDA_VISIBLE_DEVICES), itself or in a function of the project's own modules that it calls (ddp.py)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..tree import keyword
from .base import Check
from .ddp import picks_process_device

if TYPE_CHECKING:
    from ..flow import Walker


class NcclWithoutSetDevice(Check):
    """Each process of an NCCL group works on its own GPU."""

    code = "DL604"
    calls = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"})

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name not in self.calls or keyword(call, "device_id") is not None:
            return
        size = keyword(call, "world_size")
        if isinstance(size, ast.Constant) and size.value == 1:
            return  # a group of one process: one GPU, no other rank to share it with
        backend = call.args[0] if call.args else keyword(call, "backend")
        if backend is None or not self._nccl(backend) or picks_process_device(self.a):
            return
        self.a.add(self.code, call)

    def _nccl(self, backend: ast.expr) -> bool:
        """"nccl" written here, or a name the file only ever assigns "nccl"."""
        if isinstance(backend, ast.Constant):
            return backend.value == "nccl"
        if isinstance(backend, ast.Attribute):
            return backend.attr == "NCCL"
        if isinstance(backend, ast.Name):
            values = [node.value for node in self.a.nodes_of(ast.Assign) if any(
                isinstance(t, ast.Name) and t.id == backend.id for t in node.targets)]
            return bool(values) and all(isinstance(v, ast.Constant) and v.value == "nccl" for v in values)
        return False
