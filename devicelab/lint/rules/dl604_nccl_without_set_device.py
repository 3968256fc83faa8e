"""DL604: a process group started with the NCCL backend in a program that never picks each process's GPU
(chapter 06). Without `torch.cuda.set_device(local_rank)`, the current GPU of every process is cuda:0: NCCL's
communicators, barriers and whatever `.cuda()` makes land there too, which fills GPU 0 or hangs.

Flagged at the line that names the process's GPU from its rank after the group starts (`device =
f"cuda:{local_rank}"`: `set_device` belongs right after it), or else at `dist.init_process_group(...)`, when
its backend is "nccl" written as a literal (or a name that the file only ever assigns "nccl"), or "nccl" whenever
the machine has a GPU (`"nccl" if torch.cuda.is_available() else "gloo"`: NCCL is exactly where the GPUs are). The
line that names the rank's GPU may be in another function of the file (`def dev(): return
torch.device(f"cuda:{rank % GPUS_PER_NODE}")`). Not flagged: a backend chosen at run time otherwise, gloo,
`device_id=` given to init_process_group, and a file that picks each process's GPU (`torch.cuda.set_device`,
`torch.accelerator.set_device_index`, `with torch.cuda.device(...)`, CUDA_VISIBLE_DEVICES), itself or in a
function of the project's own modules that it calls (ddp.py)."""

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
        backend = call.args[0] if call.args else keyword(call, "backend")
        if backend is None or not self._nccl(backend) or picks_process_device(self.a):
            return
        self.a.add(self.code, self._rank_device(call) or call)

    def _rank_device(self, call: ast.Call) -> ast.stmt | None:
        """Where the program names its process's GPU from the rank (`device = f"cuda:{local_rank}"`,
        `torch.device("cuda", local_rank)`) after starting the group: the line `set_device` belongs after."""
        fn = self.a.enclosing_function(call)
        named = [node for node in sorted(self.a.nodes_of(ast.Assign, ast.Return), key=lambda n: n.lineno)
                 if node.value is not None and self._names_rank_gpu(node.value)]
        same = [node for node in named if node.lineno > call.lineno and self.a.enclosing_function(node) is fn]
        if same:
            return same[0]
        # elsewhere in the file: a helper that gives the rank's device
        return next((node for node in named if self.a.enclosing_function(node) is not fn), None)

    @staticmethod
    def _names_rank_gpu(value: ast.expr) -> bool:
        inner = list(ast.walk(value))
        names = [n.id if isinstance(n, ast.Name) else n.attr for n in inner if isinstance(n, (ast.Name, ast.Attribute))]
        return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("cuda")
                   for n in inner) and any("rank" in name.lower() for name in names)

    def _nccl(self, backend: ast.expr) -> bool:
        """"nccl" written here, "nccl" whenever there is a GPU, or a name the file only ever assigns one of
        those."""
        if isinstance(backend, ast.Constant):
            return backend.value == "nccl"
        if isinstance(backend, ast.Attribute):
            return backend.attr == "NCCL"
        if isinstance(backend, ast.IfExp):
            return self._nccl_with_gpus(backend)
        if isinstance(backend, ast.Name):
            values = [node.value for node in self.a.nodes_of(ast.Assign) if any(
                isinstance(t, ast.Name) and t.id == backend.id for t in node.targets)]
            return bool(values) and all(isinstance(v, ast.Constant) and v.value == "nccl" or isinstance(
                v, ast.IfExp) and self._nccl_with_gpus(v) for v in values)
        return False

    def _nccl_with_gpus(self, choice: ast.IfExp) -> bool:
        """`"nccl" if torch.cuda.is_available() else "gloo"` (or the other way round, with `not`)."""
        arms = [choice.body, choice.orelse]
        if not all(isinstance(arm, ast.Constant) and arm.value in ("nccl", "gloo") for arm in arms):
            return False
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in (
            "is_available", "device_count") and (self.a.resolve(n.func) or "").startswith("torch.cuda.")
                   for n in ast.walk(choice.test))
