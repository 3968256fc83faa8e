"""DL501: a tensor factory without `device=` in a model's forward, or in what forward calls (chapter 05).

Only where the code shows the mistake: the model is moved to a device (an instance of the class, or of a class that
builds it, in the file or in the project's files near it; machines.py, `classes_on_device`), and the factory's
result meets forward's inputs or the model's tensors (arithmetic, a comparison, a torch function or a method given
both, a submodule's input, indexed by one of them; a helper's result is followed to its callers). A model never
moved, or a result that meets nothing of the model, is unknown and not flagged.

Not flagged: a factory whose result goes to the device at once (`.to(x.device)`, `.type_as(x)`) or later (also
through its methods: `t.float().to(device)`; not a bare `.cuda()` under `if x.is_cuda:`, which goes to the current
GPU rather than x's), only indexes (`x[idx]`), is filled and returned, or only feeds
Python or NumPy (`if`, `while`, `range`, `len`, `int`, `all`, `zip`, `.item()`, `.numpy()`, a `for`, its
`.shape`, a comparison with a number or with a parameter that is no tensor) or a log (detached into a dict display:
`{"p_loss": p_loss.detach().mean()}`); one under `with torch.device(...)`
or `torch.set_default_device`; torch.tensor of a number; a helper whose callers all move what it returns; a
model defined and run in a `__main__` block that never moves anything to a device (a CPU demo)."""

from __future__ import annotations

import ast

from ..machines import classes_on_device
from ..tree import FUNCTIONS, has_double_star, is_literal_data, is_number, keyword
from ..vocabulary import (
    FACTORIES,
    LEGACY_TYPES,
    PYTHON_ONLY_ATTRIBUTES,
    PYTHON_ONLY_CALLS,
    PYTHON_ONLY_METHODS,
    TENSOR_FUNCTIONS,
    TENSOR_METHODS,
)
from .base import Check

COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})


def moved_name(call: ast.Call) -> str | None:
    """The name a call moves to a device: `t` for `t.to(device)`, `t.cuda()`, `t.type_as(x)`,
    `t.float().to(device)`."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr in ("to", "cuda", "type_as")):
        return None
    node = call.func.value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in TENSOR_METHODS:
        node = node.func.value
    return node.id if isinstance(node, ast.Name) else None


class FactoryInForward(Check):
    """Born on the CPU when the model is on the GPU."""

    code = "DL501"

    def file(self) -> None:
        own, helpers = self.a.forward_reach()
        on_device = classes_on_device(self.a.tree, self.a.path, self.a)
        own = {cls: fns for cls, fns in own.items() if cls in on_device}  # a model never moved: unknown, silent
        for cls, fns in own.items():
            if not self._cpu_demo(cls):
                self.check_factories(cls, fns)
        reached = [fn for fns in own.values() for fn in fns]
        helpers = [fn for fn in helpers if self._called_from(fn, reached + helpers)]
        if helpers:
            self.check_factories("", helpers, reached + helpers)

    def _called_from(self, fn: ast.FunctionDef, callers: list[ast.FunctionDef]) -> bool:
        return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == fn.name
                   for caller in callers if caller is not fn for node in self.a.walk(caller))

    def check_factories(self, cls: str, fns: list[ast.FunctionDef],
                        callers: list[ast.FunctionDef] | None = None) -> None:
        """DL501: a tensor factory in forward (or what it calls) without device=. Not flagged: a factory whose
        result goes to the device at once (`.to(x.device)`, `.type_as(x)`) or later, only indexes (`x[idx]`), is
        filled and returned, or only feeds Python (`if`, `while`, `range`, `len`, `int`, `.item()`, a `for`, its
        `.shape`); one under `with torch.device(...)` or `torch.set_default_device`; torch.tensor of a number."""
        if self.a.default_device:
            return
        for fn in fns:
            if fn.name != "forward" and self._result_moved_by_callers(fn, callers or fns):
                continue  # a helper that builds on the CPU for callers that move what it returns
            input_name = self._tensor_input(fn) if fn.name == "forward" else None
            moved_names = self._names_moved_later(fn)
            device_contexts = self._device_context_lines(fn)
            for node in self.a.walk(fn):
                if not isinstance(node, ast.Call):
                    continue
                name = self.a.resolve(node.func) or ""
                short = name.rsplit(".", 1)[-1]
                if not (name.startswith("torch.") and name.count(".") == 1 and (
                        short in FACTORIES or short in LEGACY_TYPES)):
                    continue
                if keyword(node, "device") is not None or has_double_star(node) or keyword(node, "out") is not None:
                    continue
                if short in ("tensor", "as_tensor") and not (node.args and is_literal_data(node.args[0])):
                    continue  # torch.tensor(x) of a tensor keeps its device
                if short in ("tensor", "as_tensor") and is_number(node.args[0]):
                    continue  # a 0-dim CPU tensor acts as a number in element-wise operations
                if short == "Tensor" and not node.args:
                    continue
                if node.lineno in device_contexts:
                    continue
                parent = self.a._parent(fn, node)
                if self._moved_at_once(fn, node) or self._only_indexes(fn, node, parent, moved_names) or (
                        self._feeds_python_only(fn, node)):
                    continue
                if not self._meets_model_tensor(fn, node, callers or fns):
                    continue  # it never meets the inputs or the model's tensors here: no mismatch shown
                fix = None
                if input_name and short not in LEGACY_TYPES and short != "from_numpy":
                    fix = {"kind": "device", "input": input_name}
                label = "torch." + short if name == f"torch.{short}" else name
                self.a.add(self.code, node, fix, call=label)

    def _cpu_demo(self, cls: str) -> bool:
        """A model class defined inside `if __name__ == "__main__":` whose block never moves anything to a device
        (no `.cuda()`, no `.to(...)`, no `device=`): a demo that runs on the CPU."""
        node: ast.AST | None = self.a.classes[cls].node
        while node is not None and not (isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)):
            node = self.a.parent(node)
        if node is None:
            return False
        return not any(isinstance(n, ast.Call) and (isinstance(n.func, ast.Attribute) and n.func.attr in (
            "cuda", "to") or keyword(n, "device") is not None) for n in self.a.walk(node))

    def _result_moved_by_callers(self, fn: ast.FunctionDef, callers: list[ast.FunctionDef]) -> bool:
        """Every call of `fn` (self.fn(...) or fn(...)) moves the result: `.to(device)` at once, or later."""
        sites: list[tuple[ast.AST, ast.Call]] = []
        for caller in callers:
            for node in self.a.walk(caller):
                if isinstance(node, ast.Call) and (
                        isinstance(node.func, ast.Attribute) and node.func.attr == fn.name
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                        or isinstance(node.func, ast.Name) and node.func.id == fn.name):
                    sites.append((caller, node))
        return bool(sites) and all(self._moved_at_once(caller, call) or self._flows_into_a_move(
            caller, call, self._names_moved_later(caller)) for caller, call in sites)

    def _tensor_input(self, fn: ast.FunctionDef) -> str | None:
        """forward's first input, when the code shows it is a tensor (x.shape, x.device, x.size(), ...)."""
        args = fn.args.args[1:]
        if not args or fn.args.defaults and len(fn.args.defaults) >= len(args):
            return None
        name = args[0].arg
        if args[0].annotation is not None and self.a.resolve(args[0].annotation) not in ("torch.Tensor",):
            return None
        for node in self.a.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name and (
                    node.attr in ("shape", "size", "device", "dtype", "dim", "ndim", "view", "reshape", "unsqueeze",
                                  "new_zeros", "new_ones", "new_empty", "new_full", "flatten", "transpose")):
                return name
        return None

    def _parent(self, root: ast.AST, target: ast.AST) -> ast.AST | None:
        index = self._index.get(id(target))
        if index is None or self.nodes[index] is not target or self._parent_of[index] < 0:
            return None
        return self.nodes[self._parent_of[index]]

    def _moved_at_once(self, fn: ast.AST, call: ast.Call) -> bool:
        """torch.zeros(...).to(x.device), torch.arange(n).cuda(), torch.ones(...).type_as(x)."""
        node: ast.AST = call
        while True:
            parent = self.a._parent(fn, node)
            if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name) and (
                    parent.func.id in ("int", "float", "bool", "len")):
                return True  # a Python number: no device
            if isinstance(parent, ast.Attribute) and parent.value is node:
                grand = self.a._parent(fn, parent)
                if parent.attr in ("to", "cuda", "type_as", "item", "tolist") and isinstance(grand, ast.Call):
                    return True
                if isinstance(grand, ast.Call) and grand.func is parent and (
                        parent.attr in TENSOR_METHODS or parent.attr.endswith("_")):  # .view(...), .uniform_(...)
                    node = grand
                    continue
            if isinstance(parent, ast.Call) and node in parent.args and (
                    self.a.resolve(parent.func) or "").removeprefix("torch.") in TENSOR_FUNCTIONS:
                node = parent  # torch.exp(torch.empty(1).uniform_(a, b)).item(): where the result goes decides
                continue
            if isinstance(parent, ast.Compare):
                return self._a_condition(fn, parent)  # `if torch.rand(1) < self.p:` asks for a Python bool
            return False

    def _feeds_python_only(self, fn: ast.AST, node: ast.AST, depth: int = 0) -> bool:
        """A CPU tensor that never meets the device: only Python control flow reads it (the test of an `if`,
        `while` or `assert`; `range(...)`, `len(...)`, `int(...)`; `.item()`, `.tolist()`; a `for` over it) or its
        shape (`.shape`, `.size()`, `.numel()`), at once, through its own methods (`t.sum().item()`), or through a
        name that is read only so; or a value logged: detached and put into a dict display (`{"p_loss":
        p_loss.detach().mean()}`), which no computation of the step reads."""
        detached = False
        while True:
            parent = self.a._parent(fn, node)
            if isinstance(parent, ast.Dict) and detached and any(value is node for value in parent.values):
                return True
            if isinstance(parent, ast.Attribute) and parent.value is node:
                detached = detached or parent.attr == "detach"
                if parent.attr in PYTHON_ONLY_ATTRIBUTES:
                    return True
                grand = self.a._parent(fn, parent)
                if isinstance(grand, ast.Call) and grand.func is parent and parent.attr in PYTHON_ONLY_METHODS:
                    return True
                if isinstance(grand, ast.Call) and grand.func is parent and (
                        parent.attr in TENSOR_METHODS or parent.attr in ("any", "all") or parent.attr.endswith("_")):
                    node = grand  # t.long(), t.sum(), (t > 0).any(), t.uniform_(): where the result goes decides
                    continue
                if isinstance(grand, ast.Call) and grand.func is parent and parent.attr in COMPARISONS and all(
                        is_number(arg) or isinstance(arg, ast.Name) for arg in grand.args):
                    node = grand  # t.eq(i): compared with a number
                    continue
                return False
            if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name) and (
                    parent.func.id in PYTHON_ONLY_CALLS):
                return True
            if isinstance(parent, ast.Compare) and all(
                    is_number(other) or self._plain_parameter(fn, other)
                    for other in [parent.left, *parent.comparators] if other is not node):
                node = parent  # t > 0.5, t < p: a comparison with a number stays on the tensor's device
                continue
            if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Store):
                store = self.a.parent(parent)
                return isinstance(store, ast.Assign) and is_number(store.value)  # `t[i] = False`: filled in
            if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
                return True  # `for i in torch.arange(n)`: Python's loop, over 0-dim tensors
            if isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)) and parent.test is node or (
                    isinstance(parent, (ast.BoolOp, ast.UnaryOp)) and self._a_condition(fn, parent)):
                return True
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(
                    parent.targets[0], ast.Name) and depth < 2:
                loads = self._loads_after(fn, parent, parent.targets[0].id)
                return bool(loads) and all(self._feeds_python_only(fn, load, depth + 1) for load in loads)
            return False

    def _loads_after(self, fn: ast.AST, assign: ast.stmt, name: str) -> list[ast.Name]:
        """Where a name assigned here is read: after the assignment, or anywhere in a loop around it (a later
        turn), until the end of the function."""
        start = assign.lineno
        node: ast.AST | None = assign
        while node is not None and node is not fn and not isinstance(node, (*FUNCTIONS, ast.Lambda)):
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                start = min(start, node.lineno)
            node = self.a.parent(node)
        end = assign.end_lineno or assign.lineno
        return [n for n in self.a.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(
            n.ctx, ast.Load) and (n.lineno > end or start <= n.lineno < assign.lineno)]

    def _plain_parameter(self, fn: ast.AST, node: ast.AST) -> bool:
        """A parameter of the function that its body never uses as a tensor (`dropout` in `t < dropout`)."""
        if not isinstance(node, ast.Name) or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        value = self.a.parameter_values(fn).get(node.id, "absent")
        return value != "absent" and (value is None or value.kind == "param") and not any(
            isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Store) for n in self.a.walk(fn))

    def _a_condition(self, fn: ast.AST, node: ast.AST) -> bool:
        """Whether an expression is (part of) the test of an if, while, assert or conditional expression."""
        while True:
            parent = self.a._parent(fn, node)
            if isinstance(parent, (ast.BoolOp,)) or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
                node = parent
                continue
            return isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)) and parent.test is node

    def _names_moved_later(self, fn: ast.AST, after: int = 0) -> set[str]:
        """Names that the function moves somewhere (after line `after`): `mask = mask.to(x.device)`, `t.cuda()`,
        `t.float().to(device)`."""
        moved = set()
        for node in self.a.walk(fn):
            if isinstance(node, ast.Call) and node.lineno > after:
                name = moved_name(node)
                if name and not self._current_gpu_for_another(node):
                    moved.add(name)
        return moved

    def _current_gpu_for_another(self, call: ast.Call) -> bool:
        """`if mask.is_cuda: filler = filler.cuda()`: meant to follow `mask`, but a bare .cuda() goes to the
        current GPU, which need not be mask's (another GPU of a multi-GPU model): not a move to where mask is."""
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "cuda" and not call.args
                and keyword(call, "device") is None):
            return False
        node = self.a.parent(call)
        while node is not None and not isinstance(node, (*FUNCTIONS, ast.Lambda)):
            if isinstance(node, (ast.If, ast.IfExp)) and any(
                    isinstance(n, ast.Attribute) and n.attr == "is_cuda" for n in self.a.walk(node.test)):
                return True
            node = self.a.parent(node)
        return False

    def _device_context_lines(self, fn: ast.AST) -> set[int]:
        """Lines inside `with torch.device(...)` (a factory there is born on that device)."""
        lines: set[int] = set()
        for node in self.a.walk(fn):
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                    isinstance(item.context_expr, ast.Call) and self.a.resolve(item.context_expr.func) == "torch.device"
                    for item in node.items):
                for inner in self.a.walk(node):
                    if hasattr(inner, "lineno"):
                        lines.add(inner.lineno)
        return lines

    def _only_indexes(self, fn: ast.AST, call: ast.Call, parent: ast.AST | None, moved: set[str]) -> bool:
        """A CPU index tensor indexing another tensor is allowed: x[torch.arange(n), labels]."""
        if self._in_subscript_slice(fn, call):
            return True
        statement: ast.AST | None = call
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = self.a._parent(fn, statement)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name) \
                and parent.targets[0].id in moved:
            return True
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
                statement.targets[0], ast.Name):
            name = statement.targets[0].id
            loads = [n for n in self.a.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(
                n.ctx, ast.Load)]
            if loads and all(self._in_subscript_slice(fn, n) for n in loads):
                return True
            if loads and parent is statement and all(self._filled_or_returned(fn, n) for n in loads):
                return True  # a CPU result the method fills and hands back: no device meets it here
        return self._flows_into_a_move(fn, call, moved)

    def _filled_or_returned(self, fn: ast.AST, name: ast.Name) -> bool:
        """`out[i] = ...` (filling it) or `return out` / `return out, other`."""
        parent = self.a._parent(fn, name)
        if isinstance(parent, ast.Subscript) and parent.value is name and isinstance(parent.ctx, ast.Store):
            return True
        if isinstance(parent, ast.Tuple):
            parent = self.a._parent(fn, parent)
        return isinstance(parent, ast.Return)

    def _flows_into_a_move(self, fn: ast.AST, call: ast.Call, moved: set[str]) -> bool:
        """The CPU tensor only feeds values that the function later moves: `t = ...; table[...] = t ...;
        return table.to(device)` builds on the CPU and moves the result."""
        statement: ast.AST | None = call
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = self.a._parent(fn, statement)
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
            return False
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        tainted = {n.id for t in targets for n in self.a.walk(t) if isinstance(n, ast.Name)}
        later = sorted((n for n in self.a.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                        and n.lineno > (statement.end_lineno or statement.lineno)), key=lambda n: n.lineno)
        for node in later:
            if node.value is None or not any(
                    isinstance(n, ast.Name) and n.id in tainted for n in self.a.walk(node.value)):
                continue
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                base = target
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                tainted |= {n.id for n in self.a.walk(base) if isinstance(n, ast.Name)}
        moved_after = self._names_moved_later(fn, statement.end_lineno or statement.lineno)
        return bool(tainted & moved & moved_after)

    def _in_subscript_slice(self, fn: ast.AST, target: ast.AST) -> bool:
        node = target
        while True:
            parent = self.a._parent(fn, node)
            if parent is None or isinstance(parent, (ast.stmt,)):
                return False
            if isinstance(parent, ast.Subscript) and parent.slice is node:
                return True
            if isinstance(parent, ast.Tuple):
                node = parent
                continue
            if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in TENSOR_METHODS:
                grand = self.a._parent(fn, parent)
                if isinstance(grand, ast.Call) and grand.func is parent:  # idx.long(), idx.view(-1)
                    node = grand
                    continue
            return False

    # --- where the new tensor meets the model's tensors ------------------------------------------------------------

    NUMBER_ATTRIBUTES = frozenset({"shape", "device", "dtype", "ndim", "is_cuda", "requires_grad", "training"})
    NUMBER_METHODS = frozenset({"size", "dim", "numel", "item", "tolist", "get_device", "nelement", "stride"})
    NUMBER_CALLS = frozenset({"len", "int", "float", "bool", "range", "str", "isinstance", "getattr", "hasattr"})
    NO_MEETING = frozenset({"to", "type_as", "cuda", "cpu", "expand_as", "view_as", "reshape_as", "new_zeros",
                            "new_ones", "new_empty", "new_full", "new_tensor", "size", "dim"})

    def _meets_model_tensor(self, fn: ast.FunctionDef, call: ast.Call, callers: list[ast.FunctionDef],
                            depth: int = 0) -> bool:
        """Whether the factory's result (or a value computed from it) meets, in `fn`, a tensor that comes from
        forward's inputs or the model (its parameters, its submodules' outputs): arithmetic or a comparison with
        it, `cat`/`stack`/any torch function given both, a method of one given the other, a submodule given it,
        indexing it with such a tensor. A result returned by a helper is followed to the helper's callers."""
        derived = self._derived_names(fn)
        carried: set[str] = set()

        def carries(node: ast.AST) -> bool:
            return any(n is call or isinstance(n, ast.Name) and n.id in carried and isinstance(n.ctx, ast.Load)
                       for n in self._value_nodes(node))

        def from_model(node: ast.AST) -> bool:
            return any(isinstance(n, ast.Name) and n.id in derived and isinstance(n.ctx, ast.Load)
                       or self._submodule_call(n) for n in self._value_nodes(node))

        statements = sorted((n for n in self.a.walk(fn) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                             and n.value is not None), key=lambda n: (n.lineno, n.col_offset))
        for _ in range(2):  # a loop's later turn
            for stmt in statements:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names = {n.id for t in targets for n in ([*t.elts] if isinstance(t, (ast.Tuple, ast.List)) else [t])
                         if isinstance(n, ast.Name)}
                if carries(stmt.value):
                    carried |= names
                elif from_model(stmt.value):
                    derived |= names
        for node in self.a.walk(fn):
            if isinstance(node, (ast.BinOp, ast.Compare)):
                sides = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.left, *node.comparators]
                if any(carries(a) for a in sides) and any(from_model(b) and not carries(b) for b in sides):
                    return True
            elif isinstance(node, ast.Subscript) and carries(node.value) and from_model(node.slice):
                return True
            elif isinstance(node, ast.Call):
                args = [*node.args, *(k.value for k in node.keywords)]
                flat = [e for a in args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
                flat = [e.value if isinstance(e, ast.Starred) else e for e in flat]
                func = node.func
                if self._submodule_call(node) and any(carries(a) for a in flat):
                    return True
                if any(k.arg == "grad_outputs" and carries(k.value) for k in node.keywords):
                    return True
                if isinstance(func, ast.Attribute) and func.attr in self.NO_MEETING:
                    continue
                name = self.a.resolve(func) or ""
                if name.startswith("torch.") and any(carries(a) for a in flat) and any(
                        from_model(a) and not carries(a) for a in flat):
                    return True
                if isinstance(func, ast.Attribute) and not name.startswith("torch."):
                    if from_model(func.value) and not carries(func.value) and any(carries(a) for a in flat):
                        return True
                    if carries(func.value) and any(from_model(a) and not carries(a) for a in flat):
                        return True
        if depth < 2 and fn.name != "forward" and any(
                isinstance(n, ast.Return) and n.value is not None and carries(n.value) for n in self.a.walk(fn)):
            for caller in callers:
                for site in self.a.walk(caller):
                    if isinstance(site, ast.Call) and site is not call and (
                            isinstance(site.func, ast.Attribute) and site.func.attr == fn.name
                            or isinstance(site.func, ast.Name) and site.func.id == fn.name) and (
                            caller is not fn and self._meets_model_tensor(caller, site, callers, depth + 1)):
                        return True
        return False

    def _value_nodes(self, node: ast.AST) -> list[ast.AST]:
        """The nodes of an expression that give it its tensor value: not what only yields a Python number (a
        shape, a size, `len(...)`), not a lambda or a nested function."""
        out, stack = [], [node]
        while stack:
            current = stack.pop()
            if isinstance(current, ast.Attribute) and current.attr in self.NUMBER_ATTRIBUTES:
                continue
            if isinstance(current, ast.Call) and (
                    isinstance(current.func, ast.Attribute) and current.func.attr in self.NUMBER_METHODS
                    or isinstance(current.func, ast.Name) and current.func.id in self.NUMBER_CALLS):
                continue
            if isinstance(current, (ast.Lambda, *FUNCTIONS)):
                continue
            out.append(current)
            stack.extend(ast.iter_child_nodes(current))
        return out

    @staticmethod
    def _submodule_call(node: ast.AST) -> bool:
        """`self.fc(...)`, `self.blocks[i](...)`: a submodule of the model, on the model's device."""
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        while isinstance(func, ast.Subscript):
            func = func.value
        return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" and (
            func is not node.func or not func.attr.startswith("_"))

    def _derived_names(self, fn: ast.FunctionDef) -> set[str]:
        """The function's parameters that may be tensors (not `self`, not one with a number, string or None
        default or such an annotation)."""
        args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        if args and args[0].arg in ("self", "cls") and not any(
                isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
            args = args[1:]
        positional = [*fn.args.posonlyargs, *fn.args.args]
        defaults = dict(zip([a.arg for a in positional][len(positional) - len(fn.args.defaults):], fn.args.defaults))
        defaults.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None})
        out = set()
        for arg in args:
            default = defaults.get(arg.arg)
            if isinstance(default, ast.Constant):
                continue
            if isinstance(arg.annotation, ast.Name) and arg.annotation.id in ("int", "float", "bool", "str"):
                continue
            out.add(arg.arg)
        if fn.args.vararg:
            out.add(fn.args.vararg.arg)
        return out
