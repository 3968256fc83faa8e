"""DL108: a call that needs a CUDA GPU (`torch.cuda.synchronize()`, `current_device()`, `get_device_name()`,
`get_device_properties()`, `set_device()`, `torch.cuda.Stream()` / `Event()`...) on a path that runs whatever the
device, in a program that also runs without CUDA (chapter 01):

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ...
    for frame in frames:
        output = upsampler.enhance(frame)
        torch.cuda.synchronize(device)          # DL108: raises on a machine without CUDA

These calls start CUDA and raise without it (unlike `torch.cuda.is_available()`, `device_count()`,
`empty_cache()`, `manual_seed()` or the memory counters, which answer or do nothing there). Flagged when the
program shows a CPU path: the call is given a device the caller picks (`torch.cuda.synchronize(device)`, `device`
a parameter), or the file falls back to the CPU (a test or conditional expression on `torch.cuda.is_available()`,
`"cpu"` picked in a conditional expression); and the call is neither under an `if`, a conditional expression or a
`try`, nor after an early exit (`if not torch.cuda.is_available(): return`), nor in a function about the GPU (its
name says cuda, gpu or nccl) or one that commits to CUDA (a `.cuda()` that always runs in it).

Not flagged: code written for CUDA (no CPU path in the file), multi-GPU programs (an NCCL process group, a
process's GPU picked with `set_device`: DL604's and DL605's business), `torch.cuda.set_device` itself, `with
torch.cuda.device(...)` blocks, calls under any `if` (the linter does not judge what a test means: `if
args.benchmark:` may be a GPU-only option)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..machines import DEVICE_SETTING, function_commits_to_cuda
from ..tree import FUNCTIONS, keyword
from .base import Check
from .ddp import nccl_backend, picks_process_device

if TYPE_CHECKING:
    from ..flow import Walker

NEEDS_CUDA = frozenset(f"torch.cuda.{name}" for name in (
    "synchronize", "current_device", "get_device_name", "get_device_properties", "get_device_capability",
    "Stream", "Event", "current_stream", "default_stream", "mem_get_info", "stream", "graph",
    "CUDAGraph"))
ABOUT_GPU = ("cuda", "gpu", "nccl")


class CudaRuntimeCall(Check):
    """A call that starts CUDA, on a path that also runs on the CPU."""

    code = "DL108"
    calls = NEEDS_CUDA

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name not in NEEDS_CUDA or not (self._handed_device(call, walker) or self._falls_back()):
            return
        if nccl_backend(self.a) or picks_process_device(self.a):
            return  # a multi-GPU program
        fn = walker.function
        if fn is not None and (any(word in getattr(fn, "name", "").lower() for word in ABOUT_GPU) or (
                function_commits_to_cuda(fn.body))):
            return
        if self._guarded(call) or self._after_exit(call, fn):
            return
        self.a.add(self.code, call, call=name + "()")

    @staticmethod
    def _handed_device(call: ast.Call, walker: Walker) -> bool:
        """`torch.cuda.synchronize(device)` with a device the caller picks (a parameter): maybe the CPU."""
        arg = call.args[0] if call.args else keyword(call, "device")
        if not isinstance(arg, ast.Name) or not DEVICE_SETTING.match(arg.id):
            return False
        held = walker.env.get(arg.id)
        return held is not None and held.kind == "param"

    def _falls_back(self) -> bool:
        """Whether the file runs on the CPU where there is no CUDA: a test or a conditional expression that asks
        `torch.cuda.is_available()` (`"cuda" if torch.cuda.is_available() else "cpu"`), or a `"cpu"` device
        picked in a conditional expression."""
        if not hasattr(self, "_fallback"):
            found = False
            for node in self.a.nodes_of(ast.If, ast.IfExp):
                if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == (
                        "is_available") and self.a.resolve(n.func) == "torch.cuda.is_available"
                       for n in ast.walk(node.test)):
                    found = True
                    break
                if isinstance(node, ast.IfExp) and any(isinstance(arm, ast.Constant) and arm.value == "cpu"
                                                       for arm in (node.body, node.orelse)):
                    found = True
                    break
            self._fallback = found
        return self._fallback

    def _guarded(self, node: ast.AST) -> bool:
        parent = self.a.parent(node)
        while parent is not None and not isinstance(parent, (*FUNCTIONS, ast.Lambda)):
            if isinstance(parent, (ast.If, ast.IfExp, ast.Try, ast.BoolOp)):
                return True
            if isinstance(parent, (ast.With, ast.AsyncWith)) and any(
                    isinstance(item.context_expr, ast.Call) and (self.a.resolve(
                        item.context_expr.func) or "").startswith("torch.cuda.") for item in parent.items):
                return True
            parent = self.a.parent(parent)
        return False

    def _after_exit(self, call: ast.Call, fn: ast.AST | None) -> bool:
        """An earlier `if ...: return` (or raise) in the same body: the call runs only where that test failed."""
        body = fn.body if fn is not None else self.a.tree.body
        for stmt in body:
            if stmt.lineno >= call.lineno:
                break
            if isinstance(stmt, ast.If) and stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                return True
            if isinstance(stmt, ast.Assert):
                return True
        return False
