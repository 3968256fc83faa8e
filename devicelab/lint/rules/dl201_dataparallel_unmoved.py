"""DL201: `nn.DataParallel(model)` around a model that is never moved to the GPU (chapter 02).

Flagged when the model was built in the same scope (or in the call itself: `nn.DataParallel(Net())`), is not moved
before the wrap, and neither it nor its wrapper is moved, handed to other code (except a local function that only
calls it) or returned after. Not flagged:
`device_ids=[one id]` (DataParallel then moves the model itself), a model handed in, a model moved in either
branch of an `if`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..tree import FUNCTIONS, assigned_names, has_double_star, header, keyword, scope_walk
from ..vocabulary import DATA_PARALLEL, HARMLESS_CALLS
from .base import Check

if TYPE_CHECKING:
    from ..flow import Walker


class DataParallelUnmoved(Check):
    """With two GPUs or more, a model left on the CPU fails inside DataParallel."""

    code = "DL201"
    calls = DATA_PARALLEL

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name not in DATA_PARALLEL or not call.args:
            return
        ids = keyword(call, "device_ids")
        if isinstance(ids, (ast.List, ast.Tuple)) and len(ids.elts) == 1:
            return  # with a single device id, DataParallel moves the model itself
        model: str | None
        if isinstance(call.args[0], ast.Name):
            model = call.args[0].id
            value = walker.env.get(model)
        elif isinstance(call.args[0], ast.Call):  # nn.DataParallel(Net()): a model built right there
            model = None
            value = self.a.value(call.args[0], walker.env)
        else:
            return
        if value is None or value.kind != "module" or not value.created or value.device:
            return
        wrapper = None
        if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name):
            wrapper = stmt.targets[0].id
        elif model is None or not (isinstance(stmt, ast.Expr) and stmt.value is call):
            return  # the wrapper goes somewhere the linter does not follow
        shown = model or ast.unparse(call.args[0])
        if len(shown) > 40:
            shown = shown[:37] + "..."
        walker.state(self).setdefault("wraps", []).append((call, model, wrapper, stmt, shown))

    def block_end(self, walker: Walker) -> None:
        for call, model, wrapper, stmt, shown in walker.state(self).pop("wraps", []):
            if self.never_moved_after(walker, stmt, model, wrapper):
                self.a.add(self.code, call, name=shown)

    def never_moved_after(self, walker: Walker, stmt: ast.stmt, model: str | None, wrapper: str | None) -> bool:
        """After `stmt`, neither the model nor its wrapper is moved, handed to other code or returned."""
        try:
            start = walker.statements.index(stmt)
        except ValueError:
            return False
        live = ({model} if model else set()) | ({wrapper} if wrapper else set())
        for later in walker.statements[start + 1:]:
            if isinstance(later, ast.ClassDef):
                continue
            if isinstance(later, FUNCTIONS):
                arguments = later.args
                own = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
                if own & live:
                    continue  # its own parameter of the same name
                roots: list[ast.AST] = [*later.body, *later.decorator_list]
            else:
                roots = header(later)
            for node in scope_walk(roots):
                if isinstance(node, ast.Call):
                    func = node.func
                    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (
                            func.value.id in live) and func.attr in ("to", "cuda"):
                        names_device, cpu = self.a.move_target(node, walker.env)
                        if names_device and not cpu:
                            return False
                    callee = func.id if isinstance(func, ast.Name) else ""
                    passed = [*node.args, *(kw.value for kw in node.keywords)]
                    if callee not in HARMLESS_CALLS and any(
                            isinstance(p, ast.Name) and p.id in live for p in passed) and not (
                            self.leaves_unmoved(node, live)):
                        return False
                if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None and any(
                        isinstance(n, ast.Name) and n.id in live for n in self.a.walk(node.value)):
                    return False
                if isinstance(node, ast.Global):
                    return False
            for target in assigned_names(later):
                live.discard(target)
            if not live:
                return True
        return True

    def leaves_unmoved(self, call: ast.Call, names: set[str], depth: int = 0) -> bool:
        """Whether a call of a local function neither moves nor hands on the `names` it is given: train(net, ...)
        where train only calls net(x), net.train(), net.parameters()."""
        func = call.func
        fn = self.a.functions.get(func.id) if isinstance(func, ast.Name) else None
        if fn is None or depth > 2 or any(isinstance(a, ast.Starred) for a in call.args) or has_double_star(call):
            return False
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        named = set(params) | {a.arg for a in fn.args.kwonlyargs}
        given = [(i, a) for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id in names]
        given_kw = [kw.arg for kw in call.keywords if isinstance(kw.value, ast.Name) and kw.value.id in names]
        if any(i >= len(params) for i, _ in given) or any(k not in named for k in given_kw):
            return False  # into *args or **kwargs: followed no further
        inside = {params[i] for i, _ in given} | set(given_kw)
        for node in self.a.walk(fn):
            if isinstance(node, ast.Call):
                method = node.func
                if isinstance(method, ast.Attribute) and isinstance(method.value, ast.Name) and (
                        method.value.id in inside) and method.attr in ("to", "cuda"):
                    return False
                passed = [*node.args, *(kw.value for kw in node.keywords)]
                callee = method.id if isinstance(method, ast.Name) else ""
                if callee not in HARMLESS_CALLS and any(isinstance(p, ast.Name) and p.id in inside for p in passed) \
                        and not self.leaves_unmoved(node, inside, depth + 1):
                    return False
            if isinstance(node, (ast.Return, ast.Yield, ast.Global, ast.Nonlocal)) and (
                    not isinstance(node, (ast.Return, ast.Yield)) or node.value is not None and any(
                    isinstance(n, ast.Name) and n.id in inside for n in self.a.walk(node.value))):
                return False
            if isinstance(node, (ast.Assign, ast.AugAssign)) and any(
                    isinstance(t, ast.Attribute) for t in (node.targets if isinstance(node, ast.Assign)
                                                           else [node.target])) and any(
                    isinstance(n, ast.Name) and n.id in inside for n in self.a.walk(node.value)):
                return False  # stored somewhere (self.model = model): followed no further
        return True
