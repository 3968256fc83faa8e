"""The shared analysis of one file: one walk of its tree, its imports, classes and functions, and what each
expression may be (a tensor and where it lives, a module and whether it moved). The rules (rules/) read it.

Precision over recall: a rule fires only when the code itself shows the mistake (a name is a tensor because it
was made by a tensor factory, a model was built here and never moved, ...). Whatever cannot be known (a
function's parameter nobody calls here, an object from another package) is "unknown", and no rule fires on an
unknown.
"""

from __future__ import annotations

import ast
from collections import ChainMap
from dataclasses import dataclass, replace
from functools import reduce
from pathlib import Path

from .checkpoints import CheckpointOrigins
from .flow import Walker
from .tree import FUNCTIONS, Imports, canonical, has_double_star, held_name, is_cuda_literal, keyword, self_attribute
from .values import Finding, Value, join
from .vocabulary import (
    BUILTINS,
    DATA_PARALLEL,
    DISTRIBUTED_DATA_PARALLEL,
    DTYPES,
    FACTORIES,
    LEGACY_TYPES,
    LOADERS,
    MODULE_BASES,
    MODULE_FACTORIES,
    PAIRS,
    PARAMETER_LAYERS,
    TENSOR_DATASETS,
    TENSOR_EVIDENCE,
    TENSOR_FUNCTIONS,
    TENSOR_METHODS,
)

# a model's own tensors: read from a model moved to a device, they are there too
MODULE_TENSORS = frozenset({"weight", "bias", "running_mean", "running_var", "weight_orig", "in_proj_weight",
                            "in_proj_bias"})
MODULE_TENSOR_METHODS = frozenset({"parameters", "buffers", "named_parameters", "named_buffers", "state_dict"})

# fields that never hold a node of its own: names and text, and Load/Store/Add/Eq... (one instance shared by
# every node of a tree, see SHARED_NODES)
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "arg", "attr", "kind", "type_comment", "conversion", "is_async",
                          "simple", "level", "module", "asname"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that may hold child nodes."""
    leaves = set(_LEAF_FIELDS)
    if kind is ast.Constant:
        leaves.add("value")
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias, ast.ExceptHandler):
        leaves.add("name")
    if kind in (ast.Global, ast.Nonlocal):
        leaves.add("names")
    return tuple(f for f in kind._fields if f not in leaves)


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """ast.iter_child_nodes without a generator per node, nor the fields that hold no node (names, operators)."""
    fields = _CHILD_FIELDS.get(type(node))
    if fields is None:
        fields = _CHILD_FIELDS[type(node)] = child_fields(type(node))
    out: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(child for child in value if isinstance(child, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


HOOKS = ("statement", "call", "expression_statement", "moved", "bound", "block_end")


@dataclass
class ClassInfo:
    """A class of the file: its node, its bases (dotted names from imports, or local names) and its methods."""

    node: ast.ClassDef
    bases: list[str]  # resolved dotted names, or local class names
    methods: dict[str, ast.FunctionDef]


class Analysis:
    """One parsed file (a script, or a notebook's cells joined in order); `run()` applies every rule to it."""

    def __init__(self, tree: ast.Module, path: str | Path | None = None, depth: int = 0) -> None:
        self.tree = tree
        self.path = Path(path) if path and Path(path).is_file() else None
        self.depth = depth  # 0: the file linted; 1, 2: a module of its project that it imports
        self.nodes: list[ast.AST] = []
        self.of_type: dict[type, list[ast.AST]] = {}  # the nodes of each kind, in the order of self.nodes
        # the calls of each statement's own expressions (not of its nested blocks, not inside a lambda)
        self.calls_of: dict[int, list[ast.Call]] = {}
        self.with_comprehensions: set[int] = set()  # the statements whose own expressions hold a comprehension
        parent_of: list[int] = []
        stack: list[tuple[ast.AST, ast.AST | None, bool, int]] = [(tree, None, False, -1)]
        while stack:  # one walk of the tree: every node, each node's parent, each statement's calls
            node, statement, in_lambda, parent = stack.pop()
            index = len(self.nodes)
            self.nodes.append(node)
            parent_of.append(parent)
            self.of_type.setdefault(type(node), []).append(node)
            if isinstance(node, ast.Call) and statement is not None and not in_lambda:
                self.calls_of.setdefault(id(statement), []).append(node)
            elif isinstance(node, _COMPREHENSIONS) and statement is not None:
                self.with_comprehensions.add(id(statement))
            inner_lambda = in_lambda or isinstance(node, ast.Lambda)
            fields = _CHILD_FIELDS.get(type(node))
            if fields is None:
                fields = _CHILD_FIELDS[type(node)] = child_fields(type(node))
            for name in fields:  # ast.iter_child_nodes, without a generator per node, nor the fields of text
                value = getattr(node, name, None)
                for child in value if isinstance(value, list) else (value,):
                    if isinstance(child, ast.AST):
                        if isinstance(child, ast.stmt):
                            stack.append((child, child, False, index))
                        else:
                            stack.append((child, statement, inner_lambda, index))
        for calls in self.calls_of.values():
            calls.sort(key=lambda c: (c.lineno, c.col_offset))
        # the walk above is depth-first: every node's subtree is the run of nodes that follows it; where each run
        # ends lets the rules read a function's nodes as a slice instead of walking the tree again
        self._index = {id(node): i for i, node in enumerate(self.nodes)}
        self._end = list(range(len(self.nodes)))
        self._parent_of = parent_of
        end = self._end
        for i in range(len(self.nodes) - 1, 0, -1):
            if end[i] > end[parent_of[i]]:
                end[parent_of[i]] = end[i]
        self._parameter_values: dict[int, dict[str, Value | None]] = {}
        self._attributes: dict[tuple[str, str], Value | None] = {}
        self._self_stores: dict[int, dict[str, list[Value | None]]] = {}
        self._stores: dict[str, tuple[set[int], dict[str, list[int]]]] | None = None
        self._family: dict[str, set[str]] | None = None
        self._checkpoints: CheckpointOrigins | None = None
        self._project: dict[str, tuple[Analysis, str]] | None = None
        self._forward: tuple[dict[str, list[ast.FunctionDef]], list[ast.FunctionDef]] | None = None
        self._resolved: dict[int, str | None] = {}
        self._memo: dict[int, Value | None] = {}
        self._memo_env: object = None
        imports = sorted(self.nodes_of(ast.Import, ast.ImportFrom), key=lambda n: self._index[id(n)])
        self.imports = Imports(tree, imports)  # in the order they run: a later import rebinds a name
        self.findings: list[Finding] = []
        self.shared: dict[str, object] = {}  # what several rules read once (inputs.py's InputFlow)
        self.classes: dict[str, ClassInfo] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        for node in sorted(self.nodes_of(ast.ClassDef), key=lambda n: n.lineno):
            bases = [self.resolve(b) or (b.id if isinstance(b, ast.Name) else "?") for b in node.bases]
            methods = {m.name: m for m in node.body if isinstance(m, FUNCTIONS)}
            self.classes[node.name] = ClassInfo(node, bases, methods)
        self.owner_of = {id(m): name for name, info in self.classes.items() for m in info.methods.values()}
        for node in tree.body if isinstance(tree, ast.Module) else []:
            self._collect_functions(node)
        self._returns: dict[str, Value | None] = {}
        self._returning: set[str] = set()
        self.call_sites: dict[str, list[list[tuple[str | int, Value | None]]]] = {}  # local class -> each call
        self.function_sites: dict[str, list[list[tuple[str | int, Value | None]]]] = {}  # local function -> ...
        self.module_env: dict[str, Value | None] = {}
        self._stable: dict[str, Value | None] = {}
        self.hooks: dict[str, list] = {hook: [] for hook in HOOKS}
        self.calls_named: dict[str, list] = {}  # the rules that look at calls of one function (torch.load)
        self.methods_named: dict[str, list] = {}  # ... or of one method (.numpy())
        self.default_device = self._sets_default_device()

    # --- the tree ---------------------------------------------------------------------------------------------

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """`node` and every node under it (what ast.walk gives, in another order), without walking the tree."""
        start = self._index.get(id(node))
        if start is None or self.nodes[start] is not node:
            return list(ast.walk(node))
        return self.nodes[start:self._end[start] + 1]

    def parent(self, target: ast.AST) -> ast.AST | None:
        """The node that holds `target`."""
        index = self._index.get(id(target))
        if index is None or self.nodes[index] is not target or self._parent_of[index] < 0:
            return None
        return self.nodes[self._parent_of[index]]

    def _parent(self, root: ast.AST, target: ast.AST) -> ast.AST | None:
        return self.parent(target)

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        """The function (or lambda) `node` is in; None at module level."""
        parent = self.parent(node)
        while parent is not None and not isinstance(parent, (*FUNCTIONS, ast.Lambda)):
            parent = self.parent(parent)
        return parent

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The statement an expression is part of."""
        while node is not None and not isinstance(node, ast.stmt):
            node = self.parent(node)
        return node

    def nodes_of(self, *kinds: type) -> list[ast.AST]:
        """The nodes of these kinds (kind by kind)."""
        return [node for kind in kinds for node in self.of_type.get(kind, ())]

    def _collect_functions(self, node: ast.AST) -> None:
        if isinstance(node, FUNCTIONS):
            self.functions[node.name] = node
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for child in ast.iter_child_nodes(node):
                self._collect_functions(child)

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted name an expression stands for through the file's imports (torch.nn.Linear for nn.Linear)."""
        key = id(node)
        if key in self._resolved:
            return self._resolved[key]
        found = self._resolved[key] = canonical(self.imports.resolve(node))
        return found

    def checkpoints(self) -> CheckpointOrigins:
        """What the file saves, buffers and downloads (DL701's exceptions), read at the first torch.load."""
        if self._checkpoints is None:
            self._checkpoints = CheckpointOrigins(self)
        return self._checkpoints

    def _sets_default_device(self) -> bool:
        for node in self.nodes_of(ast.Call):
            if isinstance(node.func, (ast.Attribute, ast.Name)) and (
                    getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "set_default_device" and (
                    self.resolve(node.func) == "torch.set_default_device"):
                return True
        return False

    def add(self, code: str, node: ast.AST, fix: dict[str, object] | None = None, **params: str) -> None:
        """Report rule `code` at `node`."""
        self.findings.append(Finding(code, node.lineno, node.col_offset + 1, params, fix))

    # --- the project's own modules ----------------------------------------------------------------------------

    def project(self) -> dict[str, tuple[Analysis, str]]:
        """Names this file imports from the project's own modules (found beside it): local name -> (that
        module's analysis, the name there)."""
        if self._project is None:
            from .project import imported_names

            self._project = imported_names(self) if self.path is not None and self.depth < 2 else {}
        return self._project

    def foreign(self, name: str) -> tuple[Analysis, str] | None:
        """Where a name imported from the project's own modules is defined (a class or a function there)."""
        if name in self.classes or name in self.functions:
            return None
        found = self.project().get(name)
        if found is None and "." in name:
            found = self.project().get(name.rsplit(".", 1)[-1])
        return found

    # --- classes ---------------------------------------------------------------------------------------------

    def is_module_class(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether a class of the file (or one it imports from its project) is (transitively) an nn.Module."""
        info = self.classes.get(name)
        if info is None or name in seen:
            found = self.foreign(name) if info is None and not seen else None
            return found is not None and found[0].is_module_class(found[1])
        for base in info.bases:
            if base.startswith(MODULE_BASES) and base.rsplit(".", 1)[-1] in ("Module", "LightningModule") or (
                    base.startswith("torch.nn.") and base.rsplit(".", 1)[-1] in PARAMETER_LAYERS | {
                        "Sequential", "ModuleList", "ModuleDict"}):
                return True
            if self.is_module_class(base, seen | {name}):
                return True
            found = self.foreign(base) if base not in self.classes else None
            if found is not None and found[0].is_module_class(found[1]):
                return True
        # a class with its own `forward`, built on a class of another package (or of a module of the project that
        # cannot be read): nn.Module's protocol, taken for a model
        return "forward" in info.methods and any(self._unread_base(base) for base in info.bases)

    def _unread_base(self, base: str) -> bool:
        """A base class the linter cannot read: imported from a package that is not torch, nor found beside."""
        if base in self.classes or base == "?" or base.startswith("torch.") or "." not in base and (
                base not in self.imports.names):
            return False
        return self.foreign(base) is None and self.foreign(base.rsplit(".", 1)[-1]) is None

    def method(self, cls: str, name: str, seen: frozenset[str] = frozenset()) -> tuple[str, ast.FunctionDef] | None:
        """Where method `name` of a local class is defined (the class itself or a local base)."""
        info = self.classes.get(cls)
        if info is None or cls in seen:
            return None
        if name in info.methods:
            return cls, info.methods[name]
        for base in info.bases:
            found = self.method(base, name, seen | {cls})
            if found:
                return found
        return None

    def forward_methods(self, cls: str) -> list[ast.FunctionDef]:
        """forward, and every method of the class that forward calls through self, or through the class's own
        name (a static method: `Cls.helper(...)`), transitively."""
        start = self.method(cls, "forward")
        if start is None:
            return []
        todo, seen = [start[1]], []
        while todo:
            fn = todo.pop()
            if fn in seen:
                continue
            seen.append(fn)
            self_name = fn.args.args[0].arg if fn.args.args else "self"
            for node in self.walk(fn):
                if isinstance(node, ast.Call):
                    name = self_attribute(node.func, self_name) or self_attribute(node.func, cls)  # Cls.helper()
                    found = self.method(cls, name) if name else None
                    if found and found[1] not in seen:
                        todo.append(found[1])
        return seen

    def forward_reach(self) -> tuple[dict[str, list[ast.FunctionDef]], list[ast.FunctionDef]]:
        """What runs inside a model's forward: each module class's own forward methods (forward and the methods
        it calls), and the module-level functions that only those (or each other) call."""
        if self._forward is not None:
            return self._forward
        own: dict[str, list[ast.FunctionDef]] = {}
        reached: list[ast.FunctionDef] = []
        for name, info in self.classes.items():
            if self.is_module_class(name):
                fns = [fn for fn in self.forward_methods(name) if fn in info.methods.values()]
                if fns:
                    own[name] = fns
                    reached += fns
        calls: dict[str, list[ast.AST | None]] = {}
        for node in self.nodes_of(ast.Call, ast.Name):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
                calls.setdefault(node.func.id, []).append(self.enclosing_function(node))
            elif isinstance(node, ast.Name) and node.id in self.functions and isinstance(node.ctx, ast.Load) and (
                    not isinstance(self.parent(node), ast.Call) or self.parent(node).func is not node):
                calls.setdefault(node.id, []).append(None)  # passed around: called from who knows where
        inside = {id(fn) for fn in reached}
        helpers: list[ast.FunctionDef] = []
        changed = True
        while changed:
            changed = False
            for name, fn in self.functions.items():
                sites = calls.get(name, [])
                if id(fn) not in inside and sites and all(site is not None and id(site) in inside for site in sites):
                    inside.add(id(fn))
                    helpers.append(fn)
                    changed = True
        self._forward = (own, helpers)
        return self._forward

    def class_has_parameters(self, cls: str) -> bool:
        """Whether a local module class builds a layer with parameters (or a Parameter) in its __init__."""
        found = self.method(cls, "__init__")
        if found is None:
            return False
        for node in self.walk(found[1]):
            if isinstance(node, ast.Call):
                name = self.resolve(node.func) or ""
                if name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") or (
                        name.startswith("torch.nn.") and name.rsplit(".", 1)[-1] in PARAMETER_LAYERS):
                    return True
                if isinstance(node.func, ast.Attribute) and node.func.attr == "register_buffer":
                    return True
        return False

    def in_dataset(self, fn: ast.AST) -> bool:
        """A method of a Dataset subclass (CPU-side data work)."""
        owner = self.owner_of.get(id(fn))
        if owner is None:
            return False
        todo, seen = [owner], set()
        while todo:
            name = todo.pop()
            if name in seen or name not in self.classes:
                continue
            seen.add(name)
            for base in self.classes[name].bases:
                if base.startswith("torch.utils.data") or base.rsplit(".", 1)[-1] in ("Dataset", "IterableDataset"):
                    return True
                todo.append(base)
        return False

    # --- values of expressions -------------------------------------------------------------------------------

    def returns(self, name: str) -> Value | None:
        """What a local function returns, when every return statement agrees."""
        if name in self._returns:
            return self._returns[name]
        if name in self._returning:
            return None
        self._returning.add(name)
        fn = self.functions[name]
        walker = Walker(self, self.scope(fn), report=False, function=fn)
        walker.block(fn.body)
        values = walker.returned
        result = None
        if values and all(v is not None for v in values):
            first = values[0]
            if all(v.kind == first.kind and v.kind != "tuple" for v in values):
                device = any(v.device for v in values)
                # a device that may come from an argument: the caller's call decides, which is not followed
                result = replace(first, device=device, scalar=False, known=all(v.known for v in values) and not device,
                                 origin=None)
                if result.kind == "module":
                    result = replace(result, created=all(v.created for v in values))
            elif all(v.kind == "tuple" and len(v.items) == len(first.items) for v in values):
                result = replace(first, items=tuple(
                    replace(v, known=v.known and not v.device, origin=None) if v is not None else None
                    for v in first.items)) if len(values) == 1 else None
        self._returning.discard(name)
        self._returns[name] = result
        return result

    def parameter_values(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Value | None]:
        """A function's parameters: unknown, except where an annotation says Tensor, or the body uses a parameter
        the way only a tensor can be used (x.shape, x.view(...)): then a tensor, on a device nobody knows."""
        if id(fn) not in self._parameter_values:
            self._parameter_values[id(fn)] = self._parameters(fn)
        return dict(self._parameter_values[id(fn)])

    def scope(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, sites: bool = False) -> ChainMap:
        """The names a function sees: its parameters (with `sites`, what every call of it in the file passes),
        then the module's stable globals (not copied: a long file has many globals and many functions)."""
        params = self.parameter_values(fn)
        if sites:
            params.update(self.passed(fn))
        return ChainMap(params, self._stable)

    def passed(self, fn: ast.AST) -> dict[str, Value]:
        """What the calls of a module-level function give its parameters, where every call of it in the file was
        seen and they agree on the kind: `train(model, loader)` with a moved model -> model is a moved module."""
        name = getattr(fn, "name", "")
        if self.functions.get(name) is not fn:
            return {}
        sites = self.function_sites.get(name, [])
        if not sites or len(sites) != self.call_count().get(name, -1):
            return {}
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        named = set(params) | {a.arg for a in fn.args.kwonlyargs}
        out: dict[str, Value] = {}
        for param in named:
            values = []
            for site in sites:
                value = None
                for key, given in site:
                    if key == param or isinstance(key, int) and key < len(params) and params[key] == param:
                        value = given
                values.append(value)
            joined = reduce(join, values) if all(v is not None for v in values) else None
            if joined is not None and joined.kind in ("tensor", "module", "loader", "moved", "cpu_device", "batch"):
                out[param] = replace(joined, created=False, origin=None, name=param if joined.kind == "tensor"
                                     else joined.name)
        return out

    def call_count(self) -> dict[str, int]:
        """How often each module-level function is called by name (-1: also passed around, so called anywhere)."""
        if not hasattr(self, "_call_count"):
            counts: dict[str, int] = {}
            for node in self.nodes_of(ast.Name):
                if node.id in self.functions and isinstance(node.ctx, ast.Load):
                    parent = self.parent(node)
                    if isinstance(parent, ast.Call) and parent.func is node and counts.get(node.id, 0) >= 0:
                        counts[node.id] = counts.get(node.id, 0) + 1
                    else:
                        counts[node.id] = -1
            self._call_count = counts
        return self._call_count

    def _parameters(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Value | None]:
        env: dict[str, Value | None] = {}
        args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        names = {arg.arg for arg in args}
        evidence: set[str] = set()
        if fn.name != "__init__":
            for node in self.walk(fn):
                if isinstance(node, ast.Attribute) and node.attr in TENSOR_EVIDENCE and isinstance(
                        node.value, ast.Name) and node.value.id in names:
                    evidence.add(node.value.id)
                elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name) and (
                        node.args[0].id in names) and isinstance(node.func, ast.Attribute) and self._tensor_function(
                        self.resolve(node.func)):
                    evidence.add(node.args[0].id)  # torch.sigmoid(x), F.log_softmax(x): x is a tensor
        for arg in args:
            env[arg.arg] = Value("param", name=arg.arg)
            annotation = self.resolve(arg.annotation) if arg.annotation is not None else None
            if annotation in ("torch.Tensor", "torch.FloatTensor") or (arg.arg in evidence and annotation is None):
                env[arg.arg] = Value("tensor", known=False, name=arg.arg)
        for arg in (fn.args.vararg, fn.args.kwarg):
            if arg is not None:
                env[arg.arg] = None
        owner = self.owner_of.get(id(fn))
        plain_method = not any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                               for d in fn.decorator_list)
        if owner and plain_method and fn.name != "__init__" and fn.args.args:
            env[fn.args.args[0].arg] = Value("instance", name=owner)  # self: its attributes are known
        return env

    @staticmethod
    def _tensor_function(name: str | None) -> bool:
        return bool(name) and (name.startswith("torch.nn.functional.") or name.startswith("torch.") and (
            name.count(".") == 1 and name[6:] in TENSOR_FUNCTIONS))

    def attribute_value(self, cls: str, attr: str) -> Value | None:
        """What `self.attr` holds in the methods of a local class: what its methods assign to it (all of them
        agreeing: a model built in __init__, or a model handed in and moved), when no code outside the class (or
        a relative of it) assigns it; `self.attr.to(device)` anywhere in the class counts as a move."""
        key = (cls, attr)
        if key in self._attributes:
            return self._attributes[key]
        self._attributes[key] = None  # while it is being worked out (an attribute defined from itself)
        info = self.classes.get(cls)
        if info is None:
            return None
        wild, by_owner = self._attribute_stores().get(attr, (set(), {}))
        if wild or any(c in by_owner for c in self._relatives(cls) if c != cls):
            return None  # set elsewhere: by a relative, or by code outside the class
        values: list[Value | None] = []
        for method in info.methods.values():
            values += self.self_stores(method).get(attr, [])
        if not values:
            return None
        result = reduce(join, values)
        moved = self._moved_in_class(cls, attr)
        if result is not None and result.kind in ("module", "moved") and moved:
            result = replace(result, device=True, created=False)
        elif result is None and moved == "statement":
            result = Value("module", device=True)  # `self.model.to(device)` as a statement: a module, moved
        self._attributes[key] = result
        return result

    def self_stores(self, method: ast.FunctionDef) -> dict[str, list[Value | None]]:
        """What a method assigns to `self.<attr>`, each value as the method's flow sees it at that point."""
        if id(method) in self._self_stores:
            return self._self_stores[id(method)]
        self._self_stores[id(method)] = {}
        if not method.args.args or not any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                                           for n in self.walk(method)):
            return {}
        self_name = method.args.args[0].arg
        found: dict[str, list[Value | None]] = {}
        def read(walker: Walker, stmt: ast.stmt) -> None:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    attr = self_attribute(target, self_name)
                    if attr:
                        found.setdefault(attr, []).append(self.value(stmt.value, walker.env))
                    elif not isinstance(target, ast.Name):
                        for node in ast.walk(target):
                            attr = self_attribute(node, self_name)
                            if attr and isinstance(node.ctx, ast.Store):
                                found.setdefault(attr, []).append(None)  # unpacked: not followed

        Walker(self, self.scope(method), report=False, function=method, before=read).block(method.body)
        self._self_stores[id(method)] = found
        return found

    def _moved_in_class(self, cls: str, attr: str) -> str:
        """"statement" when a method moves `self.attr` in place (`self.model.to(device)` alone on its line),
        "call" when it calls .to()/.cuda() on it otherwise, "" when no method does."""
        found = ""
        test_case = any(base.rsplit(".", 1)[-1] == "TestCase" for base in self.classes[cls].bases)
        for method in self.classes[cls].methods.values():
            if test_case and method.name not in ("setUp", "setUpClass", "__init__"):
                continue  # each test starts from setUp: what another test moves does not carry over
            self_name = method.args.args[0].arg if method.args.args else "self"
            for node in self.walk(method):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                        "to", "cuda") and self_attribute(node.func.value, self_name) == attr and (
                        self.destination(node, {}) or (False, False))[0]:
                    if isinstance(self.parent(node), ast.Expr):
                        return "statement"
                    found = "call"
        return found

    def _attribute_stores(self) -> dict[str, tuple[set[int], dict[str, list[int]]]]:
        """Every `x.attr = ...` / `del x.attr` of the file, by attribute name (built once, so that asking about
        one class does not read the whole file again): those outside any method, or on something else than the
        method's own `self` ("wild"), and those on `self`, by the class of the method."""
        if self._stores is None:
            self._stores = {}
            for n in self.nodes_of(ast.Attribute):
                if isinstance(n.ctx, (ast.Store, ast.Del)):
                    wild, by_owner = self._stores.setdefault(n.attr, (set(), {}))
                    method = self.enclosing_function(n)
                    owner = self.owner_of.get(id(method)) if method is not None else None
                    if owner is None or not (isinstance(n.value, ast.Name) and method.args.args
                                             and n.value.id == method.args.args[0].arg):
                        wild.add(id(n))
                    else:
                        by_owner.setdefault(owner, []).append(id(n))
        return self._stores

    def _relatives(self, cls: str) -> set[str]:
        """The class, its local bases and its local subclasses (transitively)."""
        if self._family is None:
            ancestors: dict[str, set[str]] = {}

            def up(name: str, seen: frozenset[str]) -> set[str]:
                if name in ancestors:
                    return ancestors[name]
                found: set[str] = set()
                for base in self.classes[name].bases:
                    if base in self.classes and base not in seen:
                        found |= {base} | up(base, seen | {name})
                ancestors[name] = found
                return found

            self._family = {name: {name} for name in self.classes}
            for name in self.classes:
                for base in up(name, frozenset()):
                    self._family[name].add(base)
                    self._family[base].add(name)
        return self._family.get(cls, {cls})

    def value(self, node: ast.expr, env: dict[str, Value | None]) -> Value | None:
        """What the linter knows about an expression's value (None: unknown). Remembered until the scope's names
        change: the flow and several rules ask about the same expression."""
        if env is not self._memo_env:
            self._memo_env, self._memo = env, {}
        memo = self._memo
        key = id(node)
        if key in memo:
            return memo[key]
        found = self._value(node, env)
        if self._memo_env is env:
            self._memo[key] = found
        return found

    def forget(self) -> None:
        """The names of the scope being walked changed: what was remembered of its expressions is stale."""
        self._memo_env = None

    def _value(self, node: ast.expr, env: dict[str, Value | None]) -> Value | None:
        if isinstance(node, ast.Name):
            found = env.get(node.id)
            return None if found is not None and found.kind == "param" else found
        if isinstance(node, ast.Tuple):
            return Value("tuple", items=tuple(self.value(e, env) for e in node.elts))
        if isinstance(node, (ast.List, ast.ListComp)):
            return Value("sequence")
        if isinstance(node, ast.Subscript):
            base = self.value(node.value, env)
            if base is not None and base.kind == "tensor":
                return replace(base, scalar=False)
            if base is not None and base.kind == "batch":
                return Value("tensor", known=base.known)
            if base is not None and base.kind == "device_tensors":  # model.state_dict()["fc.weight"]
                return Value("tensor", device=True, known=False)
            if base is not None and base.kind == "tuple" and isinstance(node.slice, ast.Constant) and isinstance(
                    node.slice.value, int):
                return base.item(node.slice.value)
            return None
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left, env), self.value(node.right, env)
            tensors = [v for v in (left, right) if v is not None and v.kind == "tensor"]
            if not tensors:
                return None
            device = any(v.device for v in tensors)
            origins = [v.origin for v in tensors if v.origin is not None]
            origin = origins[0] if origins and not device else None
            if all((v is not None and v.kind == "tensor") or self._is_plain_number(n)
                   for v, n in ((left, node.left), (right, node.right))):
                known = all(v.known for v in tensors)
                return Value("tensor", device=device, scalar=all(v.scalar for v in tensors), known=known,
                             origin=origin, name="" if known else next((v.name for v in tensors if v.name), ""))
            if len(tensors) == 1 and None in (left, right):  # t ** gamma: where t is (or an error)
                single = tensors[0]
                return Value("tensor", device=single.device, known=single.known and single.device,
                             origin=single.origin, name=single.name)
            return None
        if isinstance(node, ast.Compare):
            left = self.value(node.left, env)
            if left is not None and left.kind == "tensor" and len(node.ops) == 1 and not isinstance(
                    node.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                return replace(left, scalar=False)
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and self.is_cpu(node):
            return Value("cpu_device")
        if isinstance(node, ast.Call):
            if self.resolve(node.func) == "torch.device" and self.is_cpu(node):
                return Value("cpu_device")
            return self.call_value(node, env)
        if isinstance(node, ast.Attribute):
            if node.attr in MODULE_TENSORS and self._in_moved_module(node.value, env):
                return Value("tensor", device=True, known=False)  # `model.fc.weight` of a model moved to a device
            base = self.value(node.value, env)
            if base is not None and base.kind == "tensor" and node.attr in ("data", "grad", "T", "mT", "H", "real",
                                                                             "imag"):
                return replace(base, scalar=False)
            if base is not None and base.kind == "instance" and base.name in self.classes:
                found = self.attribute_value(base.name, node.attr)
                if found is not None and found.kind in ("module", "moved"):
                    return replace(found, created=False)
                return found if found is not None and found.kind in ("tensor", "sequence", "cpu_device") else None
        return None

    def _in_moved_module(self, node: ast.expr, env: dict[str, Value | None]) -> bool:
        """`model`, `model.fc`, `model.layers[0]`: a model moved to a device, or a submodule of one."""
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        if not isinstance(node, ast.Name):
            return False
        found = env.get(node.id)
        return found is not None and found.kind in ("module", "moved") and found.device

    @staticmethod
    def _is_plain_number(node: ast.expr) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) or (
            isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant)) or (
            isinstance(node, ast.Name) and node.id.isupper())

    def _sequence(self, node: ast.expr, env: dict[str, Value | None]) -> bool:
        """Data that makes a tensor with at least one dimension: a list or tuple display, a comprehension, a tensor."""
        if isinstance(node, (ast.List, ast.Tuple, ast.ListComp)):
            return True
        value = self.value(node, env)
        return value is not None and (value.kind == "tensor" and not value.scalar or value.kind == "sequence")

    def is_cpu(self, node: ast.expr | None, env: dict[str, Value | None] | None = None) -> bool:
        """A literal "cpu" device: "cpu", torch.device("cpu"), or a name that holds one here."""
        if isinstance(node, ast.Name):
            found = (env or {}).get(node.id)
            return found is not None and found.kind == "cpu_device"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.split(":")[0] == "cpu"
        if isinstance(node, ast.Call) and self.resolve(node.func) == "torch.device" and node.args:
            return self.is_cpu(node.args[0])
        return False

    def is_dtype(self, node: ast.expr) -> bool:
        """torch.float32 and the like."""
        return self.resolve(node) in DTYPES

    def move_target(self, call: ast.Call, env: dict[str, Value | None] | None = None) -> tuple[bool, bool]:
        """For x.to(...)/.cuda()/.cpu(): (does it name a device at all, is that device certainly the CPU)."""
        destination = self.destination(call, env or {})
        if destination is None:
            return False, False
        device, known, _ = destination
        return True, known and not device

    def destination(self, call: ast.Call, env: dict[str, Value | None]) -> tuple[bool, bool, bool] | None:
        """Where x.to(...)/.cuda()/.cpu() puts x: (on an accelerator, whether that is known, the process's current
        GPU); None when it names no device (`x.to(torch.float16)`). `x.to(y.device)` and `x.to(y)` put x where y
        is: the CPU, the device, or nobody knows."""
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if method == "cpu":
            return False, True, False
        target = keyword(call, "device") or (call.args[0] if call.args else None)
        if method == "cuda":
            return True, True, target is None
        if method == "type_as":
            target = call.args[0] if call.args else None
            followed = self.value(target, env) if target is not None else None
            return (followed.device, followed.known, False) if followed is not None and followed.kind == "tensor" \
                else (False, False, False)
        if target is None or self.is_dtype(target):
            other = keyword(call, "other")
            return (False, False, False) if other is not None else None
        if self.is_cpu(target, env):
            return False, True, False
        followed = None
        if isinstance(target, ast.Attribute) and target.attr == "device":
            followed = self.value(target.value, env)
            if followed is None or followed.kind not in ("tensor", "module"):
                return False, False, False  # the device of something the linter does not know
        elif isinstance(target, ast.Name):
            followed = self.value(target, env)
            if followed is not None and followed.kind != "tensor":
                followed = None
        if followed is not None:
            return followed.device, followed.known, False
        current = is_cuda_literal(target) and ":" not in target.value or (
            isinstance(target, ast.Call) and self.resolve(target.func) == "torch.device" and len(target.args) == 1
            and is_cuda_literal(target.args[0]) and ":" not in target.args[0].value)
        return True, True, current

    def call_value(self, call: ast.Call, env: dict[str, Value | None]) -> Value | None:
        """What a call returns."""
        func = call.func
        if isinstance(func, ast.Name) and func.id not in env and func.id not in self.classes and (
                func.id not in self.functions) and self.project():
            from .project import definition

            found = definition(self, func.id)
            if found is not None:  # a class or a function of the project's own modules
                other, there = found
                if there in other.classes:
                    return Value("module", created=True, name=func.id) if other.is_module_class(there) else None
                returned = other.returns(there)
                return replace(returned, origin=None) if returned is not None else None
        name = self.resolve(call.func)
        if name:
            return self._library_call(call, name, env)
        if isinstance(func, ast.Name):
            if func.id in self.classes:
                if self.is_module_class(func.id):
                    return Value("module", created=True, name=func.id)
                return Value("instance", name=func.id)
            if func.id in self.functions:
                return self.returns(func.id)
        target = self.value(func, env) if isinstance(func, (ast.Name, ast.Attribute)) else None
        if isinstance(func, ast.Name) or target is not None and target.kind in ("module", "moved"):
            if target is not None and target.kind == "module":  # a model's output, or a loss
                # on the CPU only when the model is known to be there: built in this scope and never moved (a
                # model handed in, or a submodule, moves with whoever owns it)
                device = target.device or self._device_input(call, env)
                return Value("tensor", device=device, known=device or target.created)
            if target is not None and target.kind == "moved":
                return Value("tensor", device=True, known=False)
            if isinstance(func, ast.Name) and (target is None or target.kind == "param") and (
                    func.id not in BUILTINS) and self._device_input(call, env):
                return Value("tensor", device=True, known=False)  # a model fed inputs on the device
            if isinstance(func, ast.Name) and func.id == "next" and call.args:  # next(iter(loader)): one batch
                inner = call.args[0]
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "iter" and (
                        inner.args):
                    source = self.value(inner.args[0], env)
                    if source is not None and source.kind == "loader":
                        return Value("batch")
            return None
        if isinstance(func, ast.Attribute):
            owner = self.value(func.value, env)
            method = func.attr
            if owner is None or owner.kind == "instance":
                if method in ("to", "cuda") and owner is None:
                    destination = self.destination(call, env)
                    return Value("moved", device=True) if destination is not None and destination[0] and (
                        destination[1]) else None
                if method not in ("to", "cuda", "cpu") and self._device_input(call, env):
                    return Value("tensor", device=True, known=False)  # self.model(x.to(device))
                return None
            if owner.kind == "moved":
                if method in TENSOR_METHODS and method not in ("float", "double", "half", "bfloat16",
                                                               "requires_grad_", "type", "train", "eval"):
                    return Value("tensor", device=True, known=False)
                return None
            if owner.kind == "tensor":
                if method in ("to", "cuda", "cpu", "type_as"):
                    destination = self.destination(call, env)
                    if destination is None:
                        return owner
                    return Value("tensor", device=destination[0], known=destination[1], scalar=owner.scalar)
                if method in TENSOR_METHODS:
                    return replace(owner, scalar=owner.scalar and method in ("float", "double", "half", "long",
                                                                             "int", "detach", "clone"))
                return None
            if owner.kind in ("module", "moved") and owner.device and method in MODULE_TENSOR_METHODS:
                return Value("device_tensors", device=True, name=method)  # the tensors of a moved model
            if owner.kind == "device_tensors" and method == "values":
                return owner
            if owner.kind == "module":
                if method in ("to", "cuda"):
                    destination = self.destination(call, env)
                    if destination is None:
                        return owner
                    moved = destination[0] or not destination[1]
                    return replace(owner, device=owner.device or moved, current=destination[2] and moved)
                if method in ("cpu",):
                    return replace(owner, device=False)
                if method in ("train", "eval", "float", "double", "half", "requires_grad_"):
                    return owner
                return None
        return None

    def _library_call(self, call: ast.Call, name: str, env: dict[str, Value | None]) -> Value | None:
        """What a call of torch (or timm, torchvision) returns."""
        short = name.rsplit(".", 1)[-1]
        if name == "torch.autograd.Variable" and len(call.args) == 1:  # the old wrapper: the tensor itself
            given = self.value(call.args[0], env)
            return given if given is not None and given.kind == "tensor" else None
        if name == "torch.nn.utils.parameters_to_vector" and call.args:
            given = self.value(call.args[0], env)
            return Value("tensor", device=True, known=False) if given is not None and (
                given.kind == "device_tensors") else None
        if name.startswith("torch.") and name.count(".") == 1 and (short in FACTORIES or short in LEGACY_TYPES):
            device = keyword(call, "device")
            if short in ("tensor", "as_tensor") and call.args and device is None:
                given = self.value(call.args[0], env)
                if given is not None and given.kind == "tensor":  # torch.tensor(t) keeps t's device
                    return replace(given, origin=None)
            # torch.tensor(x) is 0-dim unless x is a list (or a tensor): a 0-dim CPU tensor acts as a number
            scalar = short in ("tensor", "as_tensor") and not (call.args and self._sequence(call.args[0], env))
            on_device = device is not None and not self.is_cpu(device, env)
            bare = device is None and not has_double_star(call) and keyword(call, "out") is None
            return Value("tensor", device=on_device, scalar=scalar, origin=call if bare and not scalar else None)
        if name.startswith("torch.") and name.count(".") == 1 and short in TENSOR_FUNCTIONS or (
                name.startswith("torch.nn.functional.")):
            flat = [e for a in call.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
            args = [self.value(a, env) for a in flat]
            tensors = [a for a in args if a is not None and a.kind == "tensor"]
            others = [v for v, node in zip(args, flat) if not (v is not None and v.kind == "tensor") and not (
                self._is_plain_number(node))]
            known = bool(tensors) and all(a.known for a in tensors) and not others
            return Value("tensor", device=any(a.device for a in tensors), known=known,
                         name="" if known else next((a.name for a in tensors if a.name and not a.known), ""))
        if name in PAIRS and call.args:  # torch.max(x, 1): (values, indices) on x's device
            first = self.value(call.args[0], env)
            if first is not None and first.kind == "tensor":
                single = replace(first, scalar=False)
                if len(call.args) > 1 or keyword(call, "dim") is not None or short in ("sort", "topk"):
                    return Value("tuple", items=(single, single))
                return single
            return None
        if name in DATA_PARALLEL or name in DISTRIBUTED_DATA_PARALLEL:
            inner = self.value(call.args[0], env) if call.args else None  # it scatters CPU inputs itself
            return Value("module", device=inner is not None and inner.device, created=True, name="parallel")
        if name.startswith("torch.nn.") and short[:1].isupper() and short not in ("Parameter",):
            return Value("module", created=True, name=short)
        if name.startswith(MODULE_FACTORIES):
            return Value("module", created=True)
        if name.startswith("torch.optim.") and short[:1].isupper():
            return Value("optimizer", name=self._optimized_model(call))
        if name in LOADERS:
            # a collate_fn may move each batch itself
            if keyword(call, "collate_fn") is not None:
                return None
            dataset = call.args[0] if call.args else keyword(call, "dataset")
            held = self.value(dataset, env) if dataset is not None else None
            # a TensorDataset of tensors already on the device hands out batches there
            return Value("loader", device=held is not None and held.kind == "dataset" and held.device)
        if name in TENSOR_DATASETS:
            given = [self.value(arg, env) for arg in call.args]
            return Value("dataset", device=bool(given) and all(v is not None and v.kind in ("tensor", "moved")
                                                                and v.device for v in given))
        return None

    def _device_input(self, call: ast.Call, env: dict[str, Value | None]) -> bool:
        """Whether a call is given a positional argument that is on the device (a tensor, or a thing moved there)."""
        for arg in call.args:
            value = self.value(arg, env)
            if value is not None and value.kind in ("tensor", "moved") and value.device and value.known:
                return True
        return False

    def _optimized_model(self, call: ast.Call) -> str:
        params = call.args[0] if call.args else keyword(call, "params")
        if params is None:
            return ""
        models = {held_name(node.func.value) for node in self.walk(params) if isinstance(node, ast.Call) and isinstance(
            node.func, ast.Attribute) and node.func.attr in ("parameters", "named_parameters")}
        only = models.pop() if len(models) == 1 else None  # one model (None: one the linter cannot name)
        return only or ""

    # --- running ----------------------------------------------------------------------------------------------

    def function_order(self) -> list[ast.AST]:
        """Every function of the file, callers before the functions they call (so that what a call passes is
        known when the function is read); a cycle is broken in the order of the file."""
        functions = sorted(self.nodes_of(*FUNCTIONS), key=lambda n: (n.lineno, n.col_offset))
        callees: dict[int, list[ast.AST]] = {}
        for node in self.nodes_of(ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in self.functions:
                caller = self.enclosing_function(node)
                if caller is not None:
                    callees.setdefault(id(caller), []).append(self.functions[node.func.id])
        if not callees:
            return functions
        called = {id(fn) for targets in callees.values() for fn in targets}
        order: list[ast.AST] = []
        done: set[int] = set()
        for root in [fn for fn in functions if id(fn) not in called] + functions:
            stack = [(root, iter(callees.get(id(root), ())))]
            if id(root) in done:
                continue
            done.add(id(root))
            while stack:  # depth first, without recursion: a function after all that it calls
                fn, children = stack[-1]
                child = next(children, None)
                if child is None:
                    stack.pop()
                    order.append(fn)
                elif id(child) not in done:
                    done.add(id(child))
                    stack.append((child, iter(callees.get(id(child), ()))))
        order.reverse()
        return order

    def run(self) -> list[Finding]:
        """Every finding in the file, in order."""
        from .rules import Check, checks_for

        checks = checks_for(self)
        for hook in HOOKS:  # each rule is called only where it looks
            self.hooks[hook] = [getattr(c, hook) for c in checks if getattr(type(c), hook) is not getattr(Check, hook)]
        self.hooks["call"] = [c.call for c in checks
                              if type(c).call is not Check.call and not c.calls and not c.methods]
        for check in checks:
            for name in check.calls:
                self.calls_named.setdefault(name, []).append(check.call)
            for method in check.methods:
                self.methods_named.setdefault(method, []).append(check.call)
        # module level first (it gives the globals functions read), then every function, callers first
        walker = Walker(self, {}, report=True, module_level=True)
        walker.block(self.tree.body)
        self.module_env = walker.env
        self._stable = dict(walker.stable)
        for node in self.function_order():
            inner = Walker(self, self.scope(node, sites=True), report=True, function=node)
            if node.name == "__init__":
                inner.owner_class = self.owner_of.get(id(node))
            inner.block(node.body)
        for check in checks:
            check.file()
        # the rules and the checkpoints' reader point back at the analysis: without these cycles, the tree is freed
        # as soon as the caller drops it, instead of waiting for the collector to walk its millions of nodes
        self.hooks, self.calls_named, self.methods_named = {}, {}, {}
        self._checkpoints, self._memo, self._memo_env = None, {}, None
        unique: dict[tuple[str, int, int], Finding] = {}
        for finding in self.findings:
            unique.setdefault((finding.code, finding.line, finding.col), finding)
        return sorted(unique.values(), key=lambda f: (f.line, f.col, f.code))
