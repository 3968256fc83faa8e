"""The device flow through one scope: a Walker goes through its statements in order, keeping what each name may
hold (a CPU tensor, a tensor on an accelerator, a moved model, ...), joins the two branches of an `if`, and tells
the rules what it meets (calls, moves, statements)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import reduce
from typing import TYPE_CHECKING, Any

from .tree import FUNCTIONS, held_name, keyword
from .values import Value, join
from .vocabulary import DEVICE_MOVES

if TYPE_CHECKING:
    from .analysis import Analysis

_MISSING = object()
_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# calls that end the process: a branch that makes one does not reach what follows
_EXITS = frozenset({"exit", "quit", "sys.exit", "os._exit"})


class Walker:
    """Goes through a block of statements in order, keeping what each name holds, and calls the rules' hooks."""

    def __init__(self, analysis: Analysis, env: Any, report: bool, module_level: bool = False,
                 function: ast.AST | None = None, before: Callable[[Walker, ast.stmt], None] | None = None) -> None:
        self.a = analysis
        self.before = before  # called with each statement, before the walker reads it
        self.env = env
        self.report = report
        self.module_level = module_level
        self.function = function  # the function walked (None: the module)
        self.returned: list[Value | None] = []
        self.stable: dict[str, Value | None] = {}
        self._kinds: dict[str, set] = {}
        self.statements: list[ast.stmt] = []
        self.owner_class: str | None = None
        self.statement_calls: set[ast.AST] = set()
        self._log: dict[str, object] | None = None  # while in a branch: each name's value before it
        self._states: dict[int, dict] = {}
        self.hooks = analysis.hooks if report else None

    def state(self, check: object) -> dict:
        """A rule's own notes about this scope."""
        return self._states.setdefault(id(check), {})

    # --- statements -------------------------------------------------------------------------------------------

    def block(self, body: list[ast.stmt]) -> None:
        """Walk a scope's body, then let the rules finish what they noted in it."""
        for stmt in body:
            self.statement(stmt)
        if self.hooks is not None:
            for hook in self.hooks["block_end"]:
                hook(self)

    def statement(self, stmt: ast.stmt) -> None:
        """One statement: the rules see it and its calls, then what it binds is recorded."""
        if self.before is not None:
            self.before(self, stmt)
        self.statements.append(stmt)
        if isinstance(stmt, ast.Expr):
            self.statement_calls.add(stmt.value)
        if isinstance(stmt, (*FUNCTIONS, ast.ClassDef)):
            if self.module_level and isinstance(stmt, FUNCTIONS):
                self.bind(stmt.name, None)
            return
        if self.hooks is not None:
            for hook in self.hooks["statement"]:
                hook(self, stmt)
        calls = self.a.calls_of.get(id(stmt), ())
        inside = self.comprehension_names(stmt) if calls else {}
        for node in calls:
            bound = inside.get(id(node))
            if bound:  # a call inside a comprehension: its own names
                with self.names(bound):
                    self.call(node, stmt)
            else:
                self.call(node, stmt)
        if isinstance(stmt, ast.Assign):
            value = self.a.value(stmt.value, self.env)
            for target in stmt.targets:
                self.assign(target, value, stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.a.value(stmt.value, self.env), stmt.value)
        elif isinstance(stmt, ast.Expr):
            if self.hooks is not None:
                for hook in self.hooks["expression_statement"]:
                    hook(self, stmt.value)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            self.returned.append(self.a.value(stmt.value, self.env))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.loop(stmt)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, None, None)
            for s in stmt.body:
                self.statement(s)
        elif isinstance(stmt, ast.If):
            self.branches([stmt.body, stmt.orelse])
        elif isinstance(stmt, ast.While):
            for s in [*stmt.body, *stmt.orelse]:
                self.statement(s)
        elif isinstance(stmt, ast.Try):
            for handler in stmt.handlers:
                if handler.name:
                    self.bind(handler.name, None)
            for s in [*stmt.body, *[x for h in stmt.handlers for x in h.body], *stmt.orelse, *stmt.finalbody]:
                self.statement(s)

    def branches(self, bodies: list[list[ast.stmt]]) -> None:
        """Either branch of an if may run: each name afterwards holds what both branches say (a branch that
        returns, raises, breaks or continues does not reach what follows)."""
        outer = self._log
        after: list[dict[str, Value | None]] = []
        changed: set[str] = set()
        for body in bodies:
            self._log = {}
            for s in body:
                self.statement(s)
            log = self._log
            changed |= log.keys()
            if not (body and self.ends(body[-1])):
                after.append({name: self.env.get(name) for name in log})
            self.a.forget()
            for name, old in log.items():  # back to what it held before the branch
                if old is _MISSING:
                    self.env.pop(name, None)
                else:
                    self.env[name] = old
        self._log = outer
        for name in changed:
            values = [seen[name] if name in seen else self.env.get(name) for seen in after]
            if values:
                self.bind(name, reduce(join, values), joined=True)

    def comprehension_names(self, stmt: ast.stmt) -> dict[int, dict[str, Value | None]]:
        """For each call inside a comprehension of this statement (not of the blocks it holds): the comprehension's
        own names, a tensor on the device where its loop runs over one (or over a moved model's parameters), else
        unknown (a name of the scope with the same name is not the comprehension's)."""
        found: dict[int, dict[str, Value | None]] = {}
        if id(stmt) not in self.a.with_comprehensions:
            return found  # most statements hold none

        def visit(node: ast.AST, bound: dict[str, Value | None]) -> None:
            if isinstance(node, (*FUNCTIONS, ast.ClassDef, ast.Lambda)):
                return
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                inner = dict(bound)
                for generator in node.generators:
                    visit(generator.iter, inner)
                    with self.names(inner):
                        source = self.a.value(generator.iter, self.env)
                    if source is not None and (source.kind == "device_tensors" or (
                            source.kind == "tensor" and source.device)) and isinstance(generator.target, ast.Name):
                        inner[generator.target.id] = Value("tensor", device=True, known=False)
                    else:
                        for name in ast.walk(generator.target):
                            if isinstance(name, ast.Name):
                                inner[name.id] = None
                    for condition in generator.ifs:
                        visit(condition, inner)
                for part in ((node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)):
                    visit(part, inner)
                return
            if isinstance(node, ast.Call) and bound:
                found[id(node)] = bound
            for child in ast.iter_child_nodes(node):
                visit(child, bound)

        for field, value in ast.iter_fields(stmt):
            if field in ("body", "orelse", "finalbody", "handlers"):
                continue
            for node in value if isinstance(value, list) else [value]:
                if isinstance(node, ast.AST):
                    visit(node, {})
        return found

    @contextmanager
    def names(self, bound: dict[str, Value | None]) -> Iterator[None]:
        """The scope's names with a comprehension's own names over them, for a while (what the analysis remembered
        of the scope's expressions is set aside, then again on the way out)."""
        if not bound:
            yield
            return
        outer = self.env
        self.env = {**outer, **bound}
        self.a.forget()
        try:
            yield
        finally:
            self.env = outer
            self.a.forget()

    def ends(self, stmt: ast.stmt) -> bool:
        """A statement after which nothing of its block runs: return, raise, break, continue, or exit()."""
        if isinstance(stmt, _ENDS):
            return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            name = func.id if isinstance(func, ast.Name) else self.a.resolve(func)
            return name in _EXITS
        return False

    def loop(self, stmt: ast.For | ast.AsyncFor) -> None:
        """A for loop: what its target holds (a batch from a loader), then its body (run as if once)."""
        source = self.a.value(stmt.iter, self.env)
        target = stmt.target
        if isinstance(stmt.iter, ast.Call) and isinstance(stmt.iter.func, ast.Name) and stmt.iter.func.id == (
                "enumerate") and stmt.iter.args and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            source = self.a.value(stmt.iter.args[0], self.env)
            self.assign(target.elts[0], None, None)
            target = target.elts[1]
        if source is not None and source.kind == "loader" and source.device:
            # a loader over a TensorDataset of tensors on the device: its batches are there
            for elt in target.elts if isinstance(target, ast.Tuple) else [target]:
                self.assign(elt, Value("tensor", device=True, known=False), None)
        elif source is not None and source.kind == "loader" and isinstance(target, ast.Tuple):
            for elt in target.elts:
                self.assign(elt, Value("tensor"), None)
        elif source is not None and source.kind == "loader":
            self.assign(target, Value("batch"), None)
        elif source is not None and source.kind == "device_tensors":  # for p in model.parameters(): on the device
            tensor = Value("tensor", device=True, known=False)
            if isinstance(target, ast.Tuple) and len(target.elts) == 2 and source.name.startswith("named_"):
                self.assign(target.elts[0], None, None)
                self.assign(target.elts[1], tensor, None)
            else:
                self.assign(target, tensor, None)
        elif source is not None and source.kind == "tensor" and source.device and not isinstance(target, ast.Tuple):
            # the rows of a tensor, or the tensors a model fed on the device returns: where that tensor is
            self.assign(target, Value("tensor", device=True, known=False), None)
        elif source is None and self.loader_like(stmt.iter):
            # a name that says it is a loader: its batches are tensors, on the CPU unless the name says it hands
            # them out on a device (a device_loader, a gpu prefetcher)
            known = self.loader_like(stmt.iter) == "cpu"
            if isinstance(target, ast.Tuple):
                for elt in target.elts:
                    self.assign(elt, Value("tensor", known=known), None)
            else:
                self.assign(target, Value("batch", known=known), None)
        else:
            self.assign(stmt.target, None, None)
        for inner in (stmt.body, stmt.orelse):
            for s in inner:
                self.statement(s)

    def loader_like(self, node: ast.expr) -> str:
        """"cpu" for `loader`, `train_loader`, `self.val_dataloader`, `tqdm(loader)`, `enumerate(dl)`...;
        "device" for a `device_loader`, `gpu_loader`, `cuda_dl`; "" for anything else."""
        while isinstance(node, ast.Call) and node.args and (
                isinstance(node.func, ast.Name) and node.func.id in ("enumerate", "tqdm", "iter") or (
                    self.a.resolve(node.func) or "").startswith("tqdm")):
            node = node.args[0]
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        name = name.lower()
        if not (name.endswith("loader") or name == "dl" or name.endswith("_dl")):
            return ""
        return "device" if any(word in name for word in ("device", "gpu", "cuda", "prefetch", "accel")) else "cpu"

    # --- names ------------------------------------------------------------------------------------------------

    def set(self, name: str, value: Value | None) -> None:
        """Change what a name holds (remembering, inside a branch, what it held before)."""
        if self._log is not None and name not in self._log:
            self._log[name] = self.env[name] if name in self.env else _MISSING
        self.env[name] = value
        self.a.forget()

    def bind(self, name: str, value: Value | None, joined: bool = False) -> None:
        """A name assigned anew."""
        if self.hooks is not None and not joined:
            for hook in self.hooks["bound"]:
                hook(self, name)
        self.set(name, value)
        kinds = self._kinds.setdefault(name, set())
        kinds.add((value.kind, value.device) if value is not None else None)
        if len(kinds) == 1 and value is not None:
            self.stable[name] = value if value.kind != "module" else replace(value, created=False)
        else:
            self.stable.pop(name, None)

    def assign(self, target: ast.expr, value: Value | None, source: ast.expr | None) -> None:
        """`target = source`, whose value is `value`."""
        name = held_name(target)
        if name is not None:
            # `model = model.to(device)` moves the model the optimizer and the wrapper hold
            if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and source.func.attr in (
                    "to", "cuda") and held_name(source.func.value) == name:
                self.moved(name, source)
                self.set(name, value)
                return
            self.bind(name, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for index, elt in enumerate(target.elts):
                item = value.item(index) if value is not None else None
                if value is not None and value.kind == "batch":
                    item = Value("tensor", known=value.known)
                elif value is not None and value.kind == "tensor" and value.device:
                    # the outputs of a model fed on the device (`logits, feats = model(x)`), a tensor's rows
                    item = Value("tensor", device=True, known=False)
                self.assign(elt, item, None)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, None, None)

    # --- calls ------------------------------------------------------------------------------------------------

    def call(self, call: ast.Call, stmt: ast.stmt) -> None:
        """A call in a statement: where a local class or function is called, what it is given; then the rules."""
        a = self.a
        if self.report and isinstance(call.func, ast.Name):
            if call.func.id in a.classes:
                a.call_sites.setdefault(call.func.id, []).append(self.arguments(call))
            elif call.func.id in a.functions:
                a.function_sites.setdefault(call.func.id, []).append(self.arguments(call))
        if self.hooks is not None:
            name = a.resolve(call.func)
            for hook in self.hooks["call"]:
                hook(self, call, name, stmt)
            for hook in a.calls_named.get(name, ()) if name else ():
                hook(self, call, name, stmt)
            if isinstance(call.func, ast.Attribute):
                for hook in a.methods_named.get(call.func.attr, ()):
                    hook(self, call, name, stmt)
        if isinstance(call.func, ast.Attribute) and call.func.attr in DEVICE_MOVES:
            name = held_name(call.func.value)
            if name is not None:
                self.moved(name, call)

    def arguments(self, call: ast.Call) -> list[tuple[str | int, Value | None]]:
        """The values a call passes, by position and by keyword (a parameter of this scope stays a param)."""
        out: list[tuple[str | int, Value | None]] = []
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                return [("*", None)]
            out.append((index, self.argument_value(arg)))
        for kw in call.keywords:
            if kw.arg is None:
                return [("*", None)]
            out.append((kw.arg, self.argument_value(kw.value)))
        return out

    def argument_value(self, node: ast.expr) -> Value | None:
        """What an argument passes; a parameter of an __init__ passes itself (DL502 follows it one class up)."""
        if isinstance(node, ast.Name):
            found = self.env.get(node.id)
            if found is not None and found.kind == "param":
                return Value("param", name=found.name, items=(self.owner_class,)) if self.owner_class else None
        return self.a.value(node, self.env)

    def moved(self, name: str, call: ast.Call) -> None:
        """`model.to(device)` / `model.cuda()` / `model.cpu()` move a module in place."""
        destination = self.a.destination(call, self.env)
        if destination is None:
            return
        device, known, current = destination
        value = self.env.get(name)
        if value is not None and value.kind == "param" and call in self.statement_calls and (device or not known):
            # `model.to(device)` as a statement on something handed in: a module (a tensor would be DL101's
            # business, and calling it afterwards shows it is a module)
            value = Value("module")
        if value is None or value.kind != "module":
            return
        on_device = device or not known  # a model moved to where its input is: where the input is, the device
        self.set(name, replace(value, device=on_device, known=True, current=current and on_device))
        if self.module_level:  # moved in place: a function cannot tell whether it runs before or after
            self._kinds.setdefault(name, set()).add("moved in place")
            self.stable.pop(name, None)
        if on_device and self.hooks is not None:
            for hook in self.hooks["moved"]:
                hook(self, name, call)

    @staticmethod
    def forced(call: ast.Call) -> bool:
        """`.numpy(force=True)` copies to the CPU itself."""
        force = keyword(call, "force")
        return force is not None and not (isinstance(force, ast.Constant) and force.value is False)
