"""DL107: inside a function, a tensor of its own moved to the GPU because the machine has one (`if
torch.cuda.is_available(): t = t.cuda()`), where it meets a tensor the function is handed (chapter 01):

    def __call__(self, model_outputs):
        box = torch.tensor(self.box)
        if torch.cuda.is_available():
            box = box.cuda()                                       # DL107
        return box_iou(box, model_outputs["boxes"])

Whether the machine has a GPU says nothing about where the caller keeps its tensors: a model run on the CPU of a
CUDA machine (to save GPU memory, or in a test) hands this function CPU tensors, and the two meet on different
devices. Flagged at the move (`.cuda()`, `.to("cuda")`, `.to("mps")`) under an `if` whose test asks whether the
machine has an accelerator (`torch.cuda.is_available()`, `torch.backends.mps.is_available()`, `device_count()`),
when the flow shows the moved tensor meeting, in the same function, a tensor the function is handed (a parameter
used as a tensor, or read from one: see DL504), in arithmetic, `torch.cat/stack/mm...`, a method such as
`.scatter_(...)`; or given, in `torch.cat/stack...` or a kernel of a tensor package
(`torchvision.ops.box_iou`), beside something read out of a parameter (`outputs["boxes"]`). The fix: follow
the input (`.to(x.device)`).

Not flagged: moves guarded by the inputs themselves (`if x.is_cuda:`), by an option (`if args.cuda:`), moves to
`x.device`, a function whose callers in the file all hand it tensors on the device, a model's forward, module-level
code (a script picks its device for everything it makes)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..tree import header, is_cuda_literal
from ..values import Value
from ..vocabulary import HOST_LIBRARIES, JOINING_FUNCTIONS, JOINING_METHODS
from .base import Check

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..flow import Walker

AVAILABILITY = frozenset({"is_available", "device_count"})


class AvailableBesideInputs(Check):
    """The machine's GPU is not the caller's device."""

    code = "DL107"

    def __init__(self, analysis: Analysis) -> None:
        super().__init__(analysis)
        self.candidates: dict[int, tuple[ast.Call, ast.AST, str]] = {}

    def statement(self, walker: Walker, stmt: ast.stmt) -> None:
        fn = walker.function
        if fn is None:
            return
        moved: dict[str, ast.Call] = walker.state(self).setdefault("moved", {})
        if moved:
            for root in header(stmt):
                for node in self.a.walk(root):
                    if isinstance(node, (ast.BinOp, ast.Call)):
                        self.meet(walker, node, moved, fn)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            move = self._machine_move(stmt.value, name, stmt)
            if move is not None:
                moved.setdefault(name, move)
            elif not self._moves(stmt.value, name):
                moved.pop(name, None)

    def _moves(self, node: ast.expr, name: str) -> bool:
        """`name.to(...)` / `name.cuda()`: another move of the same tensor (an `elif` for MPS)."""
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "to", "cuda") and isinstance(node.func.value, ast.Name) and node.func.value.id == name

    def _machine_move(self, node: ast.expr, name: str, stmt: ast.stmt) -> ast.Call | None:
        """`t = t.cuda()` / `t.to("cuda")` / `t.to("mps")` under an `if` about the machine's accelerator."""
        if not self._moves(node, name):
            return None
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        if node.func.attr == "to":
            target = node.args[0] if node.args else None
            if not (is_cuda_literal(target) or isinstance(target, ast.Constant) and target.value == "mps"):
                return None
        elif any(not isinstance(arg, ast.Constant) for arg in node.args):
            return None
        parent = self.a.parent(stmt)
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if isinstance(parent, ast.If) and self._asks_machine(parent.test):
                return node
            parent = self.a.parent(parent)
        return None

    def _asks_machine(self, test: ast.expr) -> bool:
        return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
            node.func.attr in AVAILABILITY) and (self.a.resolve(node.func) or "").startswith("torch.")
                   for node in ast.walk(test))

    def meet(self, walker: Walker, node: ast.AST, moved: dict[str, ast.Call], fn: ast.AST) -> None:
        kernel = False
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
        else:
            assert isinstance(node, ast.Call)
            name = self.a.resolve(node.func) or ""
            if name.startswith("torch.") and name.removeprefix("torch.") in JOINING_FUNCTIONS | {"mul", "mm"}:
                operands = [e for a in node.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
                kernel = True
            elif isinstance(node.func, ast.Attribute) and node.func.attr in JOINING_METHODS and not name:
                operands = [node.func.value, *node.args]
            elif "." in name and not name.startswith("torch.") and name.split(".")[0] not in HOST_LIBRARIES and (
                    name.split(".")[0].startswith("torch")):
                operands, kernel = list(node.args), True  # torchvision.ops.box_iou(a, b): one device
            else:
                return
        made = [moved[op.id] for op in operands if isinstance(op, ast.Name) and op.id in moved]
        if not made:
            return
        for operand in operands:
            value = self.a.value(operand, walker.env)
            if _handed_in(value):
                self.candidates.setdefault(id(made[0]), (made[0], fn, value.name))
                return
            if kernel and self._read_from_parameter(operand, walker):
                self.candidates.setdefault(id(made[0]), (made[0], fn, ast.unparse(operand)))
                return

    def _read_from_parameter(self, node: ast.expr, walker: Walker) -> bool:
        """`outputs["boxes"]`, `batch.pos`: read out of a parameter of the function (not `self`)."""
        if not isinstance(node, (ast.Subscript, ast.Attribute)):
            return False
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        if not isinstance(node, ast.Name):
            return False
        held = walker.env.get(node.id)
        fn = walker.function
        first = fn.args.args[0].arg if fn is not None and fn.args.args and self.a.owner_of.get(id(fn)) else None
        return held is not None and held.kind == "param" and node.id != first

    def file(self) -> None:
        own, helpers = self.a.forward_reach()
        in_forward = {id(fn) for fns in own.values() for fn in fns} | {id(fn) for fn in helpers}
        for call, fn, other in self.candidates.values():
            if id(fn) in in_forward:
                continue
            self.a.add(self.code, call, call=ast.unparse(call.func).rsplit(".", 1)[-1], other=other)


def _handed_in(value: Value | None) -> bool:
    return value is not None and value.kind == "tensor" and not value.known and not value.device and bool(value.name)
