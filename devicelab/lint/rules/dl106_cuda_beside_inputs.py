"""DL106: a tensor put on the GPU with a bare `.cuda()` inside a function, where it meets a tensor the function is
handed, in a program that also runs without CUDA (chapter 01):

    def knn(train_features, train_labels, k):          # the caller moves them only `if args.use_cuda:`
        one_hot = torch.zeros(k, 10).cuda()             # DL106
        one_hot.scatter_(1, train_labels.view(-1, 1), 1)

The caller decides where its tensors live; the function decides for its own tensor, and decides CUDA. On the
machines (or with the options) where the caller keeps its tensors on the CPU, the two meet on different devices,
or the `.cuda()` stops the program.

Flagged at the `.cuda()`, when the flow shows its tensor (the name it is bound to, or the expression itself) meeting,
in the same function, a tensor the function is handed (a parameter used as a tensor, or one read from them: see
DL504) in arithmetic, a comparison, `torch.cat/stack/mm/mul...`, or a method such as `.scatter_(...)`; and the
file asks which device there is (an availability check, a `--cuda`/`--device` option, `args.use_cuda`, a device
parameter: machines.py). Not flagged: `.cuda()` under an `if` (a guarded move), `.to(x.device)` and other moves
to a device that follows a tensor, code written for CUDA (a file that never asks for a device), a function whose
callers in the file all hand it tensors on the device, a model's forward."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..machines import asks_for_device, bare_cuda
from ..tree import header
from ..values import Value
from ..vocabulary import JOINING_FUNCTIONS, JOINING_METHODS
from .base import Check

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..flow import Walker


class CudaBesideInputs(Check):
    """The function picks CUDA for its own tensor; its caller picks the device of the others."""

    code = "DL106"

    def __init__(self, analysis: Analysis) -> None:
        super().__init__(analysis)
        self._asks: bool | None = None
        self.candidates: dict[int, tuple[ast.Call, ast.AST, str]] = {}

    def statement(self, walker: Walker, stmt: ast.stmt) -> None:
        fn = walker.function
        if fn is None:
            return
        state = walker.state(self)
        if self._asks is None:
            self._asks = asks_for_device(self.a.nodes_of)
        if not self._asks:
            return
        cuda = state.setdefault("cuda", {})  # name -> the unguarded .cuda() call it was made with
        nodes = [node for root in header(stmt) for node in self.a.walk(root)]
        for node in nodes:
            if isinstance(node, (ast.BinOp, ast.Call)):
                self.meet(walker, node, cuda, fn)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            made = self._hard_cuda(stmt.value, stmt)
            if made is not None:
                cuda[stmt.targets[0].id] = made
            else:
                cuda.pop(stmt.targets[0].id, None)

    def _hard_cuda(self, node: ast.expr, stmt: ast.stmt) -> ast.Call | None:
        """The bare `.cuda()` an expression's value comes from (`torch.zeros(k, n).cuda()`), when no `if` guards it."""
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if bare_cuda(node):
                return None if self._guarded(stmt) else node
            node = node.func.value
        return None

    def _guarded(self, stmt: ast.AST) -> bool:
        parent = self.a.parent(stmt)
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if isinstance(parent, (ast.If, ast.IfExp, ast.Try)):
                return True
            parent = self.a.parent(parent)
        return False

    def meet(self, walker: Walker, node: ast.AST, cuda: dict[str, ast.Call], fn: ast.AST) -> None:
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
        else:
            name = self.a.resolve(node.func) or ""
            if name.startswith("torch.") and name.removeprefix("torch.") in JOINING_FUNCTIONS | {"mul", "mm", "matmul"}:
                operands = [e for a in node.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
            elif isinstance(node.func, ast.Attribute) and node.func.attr in JOINING_METHODS and not name:
                operands = [node.func.value, *node.args]
            else:
                return
        made = [c for c in (self._root_cuda(op, cuda) for op in operands) if c is not None]
        if not made:
            return
        for operand in operands:
            value = self.a.value(operand, walker.env)
            if _handed_in(value):
                self.candidates.setdefault(id(made[0]), (made[0], fn, value.name))
                return

    @staticmethod
    def _root_cuda(node: ast.expr, cuda: dict[str, ast.Call]) -> ast.Call | None:
        while True:
            if isinstance(node, ast.Name):
                return cuda.get(node.id)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                node = node.func.value
            elif isinstance(node, (ast.Subscript, ast.Attribute)):
                node = node.value
            else:
                return None

    def file(self) -> None:
        own, helpers = self.a.forward_reach()
        in_forward = {id(fn) for fns in own.values() for fn in fns} | {id(fn) for fn in helpers}
        for call, fn, other in self.candidates.values():
            if id(fn) in in_forward:
                continue
            self.a.add(self.code, call, call=".cuda()", other=other)


def _handed_in(value: Value | None) -> bool:
    return value is not None and value.kind == "tensor" and not value.known and not value.device and bool(value.name)
