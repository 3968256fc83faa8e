"""DL603: a CPU tensor handed to a collective (`dist.all_reduce`, `broadcast`, `all_gather`, `reduce`, ...) in a
file that starts its process group with the NCCL backend, written as a literal (chapter 06). NCCL only moves
GPU memory.

Flagged: a tensor the flow knows is on the CPU (a factory without `device=`, `torch.tensor(loss.item())`,
`x.cpu()`). Not flagged: a backend chosen at run time (`backend=args.backend`, "gloo"), a tensor of unknown
origin, a tensor made with `device=` or moved."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .base import Check
from .ddp import nccl_backend

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..flow import Walker

# each collective, and the positions of the tensors it hands to the backend
COLLECTIVES = {
    "all_reduce": (0,), "broadcast": (0,), "reduce": (0,), "all_gather": (1,), "all_gather_into_tensor": (0, 1),
    "reduce_scatter_tensor": (0, 1), "all_to_all_single": (0, 1), "gather": (0,), "scatter": (0,),
    "send": (0,), "recv": (0,), "isend": (0,), "irecv": (0,),
}


class NcclCpuTensor(Check):
    """NCCL collectives take tensors on the GPU."""

    code = "DL603"
    calls = frozenset(f"torch.distributed.{name}" for name in COLLECTIVES)

    def __init__(self, analysis: Analysis) -> None:
        super().__init__(analysis)
        self._nccl: bool | None = None

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if not name or not name.startswith("torch.distributed."):
            return
        positions = COLLECTIVES.get(name.rsplit(".", 1)[-1])
        if positions is None:
            return
        if self._nccl is None:
            self._nccl = nccl_backend(self.a)
        if not self._nccl:
            return
        for position in positions:
            if position < len(call.args):
                arg = call.args[position]
                value = self.a.value(arg, walker.env)
                if value is not None and value.on_cpu:
                    self.a.add(self.code, arg, name=ast.unparse(arg), call=name.replace("torch.distributed.", "dist."))
                    return
