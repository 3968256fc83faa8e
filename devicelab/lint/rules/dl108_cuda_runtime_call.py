"""DL108: a call that needs a CUDA GPU (`torch.cuda.synchronize()`, `current_device()`, `get_device_name()`,
`get_device_properties()`, `set_device()`, `torch.cuda.Stream()` / `Event()`...) on a path that runs whatever the
device, in a program that also runs without CUDA (chapter 01):

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ...
    for frame in frames:
        output = upsampler.enhance(frame)
        torch.cuda.synchronize(device)          # DL108: raises on a machine without CUDA

These calls start CUDA and raise without it (unlike `torch.cuda.is_available()`, `device_count()`,
`empty_cache()`, `manual_seed()` or the memory counters, which answer or do nothing there). Flagged when the file
asks which device there is (an availability check, a `--device`/`--cuda` option, a device parameter:
machines.py), and the call is neither under an `if`, a conditional expression or a `try`, nor after an early exit
about the device (`if not torch.cuda.is_available(): return`), nor in a function about the GPU (its name says
cuda, gpu or nccl) or one that commits to CUDA (a `.cuda()` that always runs in it).

Not flagged: code written for CUDA (a file that never asks for a device), `with torch.cuda.device(...)` blocks,
calls under any `if` (the linter does not judge what a test means: `if args.benchmark:` may be a GPU-only
option)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..machines import asks_for_device, function_commits_to_cuda
from ..tree import FUNCTIONS
from .base import Check

if TYPE_CHECKING:
    from ..flow import Walker

NEEDS_CUDA = frozenset(f"torch.cuda.{name}" for name in (
    "synchronize", "current_device", "get_device_name", "get_device_properties", "get_device_capability",
    "set_device", "Stream", "Event", "current_stream", "default_stream", "mem_get_info", "stream", "graph",
    "CUDAGraph"))
ABOUT_GPU = ("cuda", "gpu", "nccl")


class CudaRuntimeCall(Check):
    """A call that starts CUDA, on a path that also runs on the CPU."""

    code = "DL108"
    calls = NEEDS_CUDA

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name not in NEEDS_CUDA or not self._asks():
            return
        fn = walker.function
        if fn is not None and (any(word in getattr(fn, "name", "").lower() for word in ABOUT_GPU) or (
                function_commits_to_cuda(fn.body))):
            return
        if self._guarded(call) or self._after_exit(call, fn):
            return
        self.a.add(self.code, call, call=name + "()")

    def _asks(self) -> bool:
        if not hasattr(self, "_asked"):
            self._asked = asks_for_device(self.a.nodes_of)
        return self._asked

    def _guarded(self, node: ast.AST) -> bool:
        parent = self.a.parent(node)
        while parent is not None and not isinstance(parent, (*FUNCTIONS, ast.Lambda)):
            if isinstance(parent, (ast.If, ast.IfExp, ast.Try, ast.BoolOp)):
                return True
            if isinstance(parent, (ast.With, ast.AsyncWith)) and any(
                    isinstance(item.context_expr, ast.Call) and (self.a.resolve(item.context_expr.func) or "").startswith(
                        "torch.cuda.") for item in parent.items):
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
