"""DL601 and DL602: where DistributedDataParallel's model lives (chapter 06).

DL601: `DistributedDataParallel(model, device_ids=[...])` around a model built in the same scope and still on
the CPU: DDP raises at once (device_ids only work with a module on a GPU). DL602: the model was moved with a
bare `.cuda()` / `.to("cuda")` (the process's current GPU, cuda:0 in every process) while `device_ids` names
the rank's GPU, and the file never picks each process's GPU (`torch.cuda.set_device(local_rank)`,
`torch.accelerator.set_device_index`, `with torch.cuda.device(...)`, CUDA_VISIBLE_DEVICES; also in a function of
the project's own modules that the file calls, such as `utils.init_distributed_mode(args)`).

Not flagged: no `device_ids` (or `None`: CPU and multi-device modules), a model handed in, moved in either branch
of an `if`, or moved to a named device (`model.to(local_rank)`, `.cuda(local_rank)`); `device_ids=[0]`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..tree import keyword
from ..vocabulary import DISTRIBUTED_DATA_PARALLEL
from .base import Check
from .ddp import picks_process_device

if TYPE_CHECKING:
    from ..flow import Walker


class DdpPlacement(Check):
    """Each process puts its model on its own GPU before wrapping it."""

    code = "DL601"
    calls = DISTRIBUTED_DATA_PARALLEL

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name not in DISTRIBUTED_DATA_PARALLEL:
            return
        ids = keyword(call, "device_ids")
        model = call.args[0] if call.args else keyword(call, "module")
        if ids is None or isinstance(ids, ast.Constant) or not isinstance(model, ast.Name):
            return
        value = walker.env.get(model.id)
        if value is None or value.kind != "module":
            return
        if value.created and not value.device:
            self.a.add("DL601", call, name=model.id, ids=ast.unparse(ids))
        elif value.current and not self._literal_zero(ids) and not picks_process_device(self.a):
            self.a.add("DL602", call, name=model.id, ids=ast.unparse(ids))

    @staticmethod
    def _literal_zero(ids: ast.expr) -> bool:
        return isinstance(ids, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and e.value == 0 for e in ids.elts)
