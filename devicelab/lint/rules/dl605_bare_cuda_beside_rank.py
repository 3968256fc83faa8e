"""DL605: a bare `.cuda()` in a file that places everything else on the process's own GPU by its rank
(`.cuda(rank)`, `.to(f"cuda:{local_rank}")`, `device_ids=[rank]`) and never makes that GPU the current one
(chapter 06):

    self.G.cuda(rank)                                            # the rank's GPU
    ...
    grad_outputs = torch.ones(t.size()).cuda()                   # DL605: cuda:0, in every process

A bare `.cuda()` (or `.cuda(0)`) puts a tensor on the process's *current* GPU, which is cuda:0 unless the program
calls `torch.cuda.set_device(rank)`. In a program that names each process's GPU by its rank, the process of rank
1 then meets a tensor on cuda:0 beside its own on cuda:1 (or piles memory on GPU 0). Flagged at each bare
`.cuda()` of the file when the file names a GPU by rank (a `.cuda(...)`, `.to(...)`, `torch.device(...)` or
`device_ids=` whose argument reads a name with `rank` in it, such as `rank`, `local_rank`, `self.rank`), and
never picks the process's GPU (`torch.cuda.set_device`, `torch.accelerator.set_device_index`, `with
torch.cuda.device(...)`, CUDA_VISIBLE_DEVICES; also in a function of the project's own modules that it calls:
ddp.py). The fix: name the GPU (`.cuda(rank)`, `.to(x.device)`) or set the current device once per process.

Not flagged: files that never name a GPU by rank (a single-GPU program, where cuda:0 is the GPU), a `.cuda()`
given a name (`.cuda(gpu)`), moves that follow a tensor (`.to(x.device)`), files that pick each process's GPU."""

from __future__ import annotations

import ast

from ..machines import bare_cuda
from .base import Check
from .ddp import picks_process_device


class BareCudaBesideRank(Check):
    """Each process's tensors go to its own GPU, not to the current one."""

    code = "DL605"

    def file(self) -> None:
        a = self.a
        bare = [call for call in a.nodes_of(ast.Call) if bare_cuda(call) and a.resolve(call.func) is None]
        if not bare or not self._names_rank_gpu() or picks_process_device(a):
            return
        for call in sorted(bare, key=lambda c: (c.lineno, c.col_offset)):
            self.a.add(self.code, call)

    def _names_rank_gpu(self) -> bool:
        for call in self.a.nodes_of(ast.Call):
            func = call.func
            named = isinstance(func, ast.Attribute) and func.attr in ("cuda", "to") or (
                self.a.resolve(func) == "torch.device")
            given = list(call.args[:2]) + [kw.value for kw in call.keywords if kw.arg in ("device", "device_ids")]
            if named and any(self._reads_rank(arg) for arg in given):
                return True
        return False

    @staticmethod
    def _reads_rank(node: ast.expr) -> bool:
        for inner in ast.walk(node):
            name = inner.id if isinstance(inner, ast.Name) else inner.attr if isinstance(inner, ast.Attribute) else ""
            if name and "rank" in name.lower() and name.lower() not in ("world_rank",):
                return True
        return False
