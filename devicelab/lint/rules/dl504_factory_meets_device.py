"""DL504: a tensor made without `device=` in a function (a loss, a metric, NMS, validation, a training step)
that then meets a tensor on the device in an operation (chapter 05).

A factory (`torch.zeros/ones/full/arange/eye/rand...`, `torch.tensor([...])`, `torch.from_numpy`, the legacy
`torch.FloatTensor(...)`) without `device=` makes a CPU tensor. It is flagged, at the factory, when the flow
shows it meeting, before any move, a tensor on the device in arithmetic, a comparison, `torch.cat/stack/where`
and the like, a functional loss (its `weight=` too), a method such as `.gather(...)`, or as the tensor indexed by
one on the device. "On the device" means: moved there (`x.to(device)`, `.cuda()`), the output of a moved model,
a parameter that some call of the function in the file gives a tensor on the device, or — in a function whose
name says it works on a model's outputs (loss, criterion, metric, accuracy, iou, nms, box, anchor, decode,
postprocess, predict, score, dice, step, sample, generate, infer, forward) — a parameter the body uses as a
tensor (`pred.shape`, `pred.view(...)`) that no call in the file gives a CPU tensor, unless the function itself
shows its parameters are CPU tensors: it calls `.numpy()` straight on one of them (`logits.numpy()`, which fails
on a GPU tensor), so the name says nothing about where they live.

Not flagged: `device=` given, `*_like` and `x.new_*` forms; a 0-dim `torch.tensor(number)`; a result moved
before it meets anything (`t = t.to(x.device)`); one that only feeds Python (`.item()`, `if`, shapes) or
NumPy; a CPU index into a tensor on the device (`x[torch.arange(n)]` works); factories in a model's forward
(DL501's), under `with torch.device(...)` or `torch.set_default_device`; functions that do CPU-side data work
(a Dataset's methods, `collate`, `transform`, `augment`, `preprocess`, `load` in the name; tests named `test_`).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from ..tree import header
from ..values import Value
from ..vocabulary import FACTORIES, JOINING_FUNCTIONS, JOINING_METHODS, LEGACY_TYPES, TENSOR_METHODS
from .base import Check

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..flow import Walker

# a function that computes on a model's outputs: its tensor parameters live where the model does
ON_OUTPUTS = re.compile(r"loss|criterion|metric|accuracy|(^|_)acc($|_)|iou|nms|box|anchor|decode|postprocess|"
                        r"post_process|predict|score|dice|(^|_)step$|sample|generate|infer|forward|logits")
CPU_SIDE = re.compile(r"collate|transform|augment|preprocess|load|dataset|^test_|numpy|plot|__getitem__|__len__|"
                      r"__iter__|__next__")


class FactoryMeetsDevice(Check):
    """Born on the CPU, used with tensors on the device."""

    code = "DL504"

    def __init__(self, analysis: Analysis) -> None:
        super().__init__(analysis)
        self.candidates: dict[int, tuple[ast.Call, ast.expr | None]] = {}
        self._with_factories: set[int] | None = None
        self._bare: set[int] = set()  # factory calls without device=

    def statement(self, walker: Walker, stmt: ast.stmt) -> None:
        fn = walker.function
        if fn is None or self.a.default_device or id(fn) not in self.functions_with_factories():
            return
        state = walker.state(self)
        if "suspect" not in state:
            name = getattr(fn, "name", "")
            state["skip"] = bool(CPU_SIDE.search(name)) or self.a.in_dataset(fn)
            state["suspect"] = bool(ON_OUTPUTS.search(name.lower())) and not self._parameter_to_numpy(fn)
        if state["skip"]:
            return
        nodes = [node for root in header(stmt) for node in self.a.walk(root)]
        env = walker.env
        if not any(id(node) in self._bare or isinstance(node, ast.Name) and (
                (held := env.get(node.id)) is not None and held.origin is not None) for node in nodes):
            return  # nothing born on the CPU here
        for node in nodes:
            if isinstance(node, (ast.BinOp, ast.AugAssign, ast.Compare, ast.Call, ast.Subscript)):
                self.meet(walker, node, state["suspect"])

    def _parameter_to_numpy(self, fn: ast.AST) -> bool:
        """The function calls `.numpy()` straight on one of its parameters (`logits.numpy()`, no `.cpu()` first):
        it is given CPU tensors."""
        args = getattr(fn, "args", None)
        if args is None:
            return False
        params = {arg.arg for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]} - {"self", "cls"}
        for node in self.a.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy":
                inner = node.func.value
                while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and (
                        inner.func.attr in ("detach", "float", "double", "long", "int", "squeeze", "clone")):
                    inner = inner.func.value
                if isinstance(inner, ast.Name) and inner.id in params:
                    return True
        return False

    def functions_with_factories(self) -> set[int]:
        """The functions that hold a factory call without device= (the others have nothing to flag)."""
        if self._with_factories is None:
            found: set[int] = set()
            for call in self.a.nodes_of(ast.Call):
                func = call.func
                short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if (short in FACTORIES or short in LEGACY_TYPES) and not any(
                        kw.arg in ("device", None, "out") for kw in call.keywords) and (
                        self.a.resolve(func) or "").startswith("torch."):
                    self._bare.add(id(call))
                    fn = self.a.enclosing_function(call)
                    while fn is not None:  # a nested function's factory may reach its outer function
                        found.add(id(fn))
                        fn = self.a.enclosing_function(fn)
            self._with_factories = found | self._readers_of_module_factories()
        return self._with_factories

    def _readers_of_module_factories(self) -> set[int]:
        """Functions that read a module-level name holding a CPU tensor from a factory."""
        names = {name for name, value in self.a.module_env.items() if value is not None and value.origin is not None}
        if not names:
            return set()
        return {id(fn) for node in self.a.nodes_of(ast.Name) if node.id in names
                and (fn := self.a.enclosing_function(node)) is not None}

    def meet(self, walker: Walker, node: ast.AST, suspect: bool) -> None:
        """Whether a CPU tensor from a factory meets a tensor on the device at this node."""
        env = walker.env
        value = self.a.value
        if isinstance(node, ast.Subscript):
            if not isinstance(node.ctx, ast.Load):
                return
            indexes = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            base = value(node.value, env)
            if self._from_factory(base) and any(self._on_device(value(i, env), suspect) for i in indexes):
                self._record(base.origin, next(i for i in indexes if self._on_device(value(i, env), suspect)))
            return
        if isinstance(node, ast.BinOp):
            operands = [node.left, node.right]
        elif isinstance(node, ast.AugAssign):
            operands = [node.target, node.value] if isinstance(node.target, ast.Name) else []
        elif isinstance(node, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return
            operands = [node.left, *node.comparators]
        else:
            name = self.a.resolve(node.func) or ""
            if name.startswith("torch.nn.functional.") or name.startswith("torch.") and (
                    name.removeprefix("torch.") in JOINING_FUNCTIONS):
                operands = [e for a in node.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
                if name.startswith("torch.nn.functional."):
                    operands += [kw.value for kw in node.keywords if kw.arg in ("weight", "pos_weight", "target")]
            elif isinstance(node.func, ast.Attribute) and node.func.attr in JOINING_METHODS and not name:
                # `x.index_select(0, i)` and `x.index_select(dim=0, index=i)` alike
                operands = [node.func.value, *node.args, *(kw.value for kw in node.keywords if kw.arg)]
            else:
                return
        values = [(operand, value(operand, env)) for operand in operands if not isinstance(operand, ast.Starred)]
        born = [v for _, v in values if self._from_factory(v)]
        there = [operand for operand, v in values if self._on_device(v, suspect)]
        if born and there:
            self._record(born[0].origin, there[0])

    @staticmethod
    def _from_factory(value: Value | None) -> bool:
        return value is not None and value.kind == "tensor" and value.origin is not None and not value.device and (
            not value.scalar)

    @staticmethod
    def _on_device(value: Value | None, suspect: bool) -> bool:
        if value is None:
            return False
        if value.kind in ("tensor", "moved") and value.device:
            return True
        # a parameter used as a tensor, in a function that works on a model's outputs
        return suspect and value.kind == "tensor" and not value.known and bool(value.name)

    def _record(self, factory: ast.Call, other: ast.expr) -> None:
        if id(factory) not in self.candidates:
            self.candidates[id(factory)] = (factory, other)

    def file(self) -> None:
        own, helpers = self.a.forward_reach()
        in_forward = {id(fn) for fns in own.values() for fn in fns} | {id(fn) for fn in helpers}
        for factory, other in self.candidates.values():
            if id(self.a.enclosing_function(factory)) in in_forward or self._under_device_context(factory):
                continue  # DL501 reads a model's forward
            short = (self.a.resolve(factory.func) or "").rsplit(".", 1)[-1]
            root = self._root(other)
            fix = None
            if root is not None and short in FACTORIES and short != "from_numpy":
                fix = {"kind": "device", "input": root}
            label = f"torch.{short}" if short else ast.unparse(factory.func)
            self.a.add(self.code, factory, fix, call=label, other=root or ast.unparse(other))

    @staticmethod
    def _root(node: ast.expr) -> str | None:
        """The tensor an expression is read from on its device: `pred` for `pred.view(-1)[mask].float()`."""
        while True:
            if isinstance(node, ast.Name):
                return node.id
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                    node.func.attr in TENSOR_METHODS):
                node = node.func.value
            elif isinstance(node, ast.Subscript) or isinstance(node, ast.Attribute) and node.attr in (
                    "T", "mT", "data"):
                node = node.value
            else:
                return None

    def _under_device_context(self, node: ast.AST) -> bool:
        parent = self.a.parent(node)
        while parent is not None:
            if isinstance(parent, (ast.With, ast.AsyncWith)) and any(
                    isinstance(item.context_expr, ast.Call) and self.a.resolve(item.context_expr.func) == "torch.device"
                    for item in parent.items):
                return True
            parent = self.a.parent(parent)
        return False
