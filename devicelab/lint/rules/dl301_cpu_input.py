"""DL301: a tensor left on the CPU given to a model on the device, or to a loss beside tensors on the device
(chapter 03).

Flagged: a moved model (a name, `self.model` of a trainer, a model handed to a function by callers that all
moved it) called with CPU tensors only; an RNN on the device given a CPU initial state; a loss given a CPU
tensor beside one on the device. Not flagged: a CPU tensor beside one on the device in a model call (RNN lengths
are meant to stay on the CPU), a 0-dim tensor, a model whose forward moves its inputs itself, DataParallel
(it scatters CPU inputs), CTC losses (their lengths live on the CPU), tensors of unknown origin (the output of a
model handed in, or of a submodule, which moves with its owner)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..values import Value
from .base import Check

if TYPE_CHECKING:
    from ..flow import Walker


class CpuInput(Check):
    """Inputs and labels move with the model."""

    code = "DL301"

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        a = self.a
        args = [arg for arg in call.args if not isinstance(arg, ast.Starred)]
        values = [a.value(arg, walker.env) for arg in args]
        cpu = [arg for arg, v in zip(args, values) if v is not None and v.on_cpu and not v.scalar]
        if not cpu:
            return
        model = None
        if isinstance(call.func, (ast.Name, ast.Attribute)) and name is None:
            model = a.value(call.func, walker.env)
            if model is not None and model.kind == "moved" and isinstance(call.func, ast.Attribute):
                model = Value("module", device=True)  # a thing moved with .to() and called: a model
        on_device = any(v is not None and v.kind == "tensor" and v.device for v in values)
        is_model = model is not None and model.kind == "module" and model.device
        if is_model and model.name in ("RNN", "GRU", "LSTM") and len(values) > 1 and cpu[0] is args[1]:
            a.add(self.code, cpu[0], name=ast.unparse(cpu[0]))  # the initial hidden state, left on the CPU
            return
        if is_model and model.name != "parallel" and not on_device and not self._forward_moves_inputs(model.name):
            # every tensor it is given is on the CPU (a CPU tensor beside a moved one may be meant: RNN lengths)
            a.add(self.code, cpu[0], name=ast.unparse(cpu[0]))
            return
        is_loss = bool(name) and (name.startswith("torch.nn.functional.") and (
            name.endswith(("_loss", "cross_entropy", "nll_loss", "binary_cross_entropy_with_logits"))) and (
            not name.endswith("ctc_loss"))) or (
            model is not None and model.kind == "module" and model.name.endswith("Loss") and model.name != "CTCLoss")
        if is_loss and any(v is not None and v.kind == "tensor" and v.device and v.known for v in values):
            a.add(self.code, cpu[0], name=ast.unparse(cpu[0]))

    def _forward_moves_inputs(self, cls: str) -> bool:
        """Whether a local model class moves its inputs in forward itself (x.to(...) on a parameter)."""
        analysis = self.a
        found = analysis.method(cls, "forward") if cls else None
        if found is None and cls and analysis.foreign(cls) is not None:
            analysis, there = analysis.foreign(cls)  # a model class of the project's own modules
            found = analysis.method(there, "forward")
        if found is None:
            return False
        params = {arg.arg for arg in found[1].args.args[1:]}
        return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "to", "cuda") and isinstance(node.func.value, ast.Name) and node.func.value.id in params
                   for node in analysis.walk(found[1]))
