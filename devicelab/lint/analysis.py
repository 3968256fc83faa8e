"""Reading a script with the standard library's `ast`: imports, a small type inference, and the rules.

Precision over recall: a rule fires only when the code itself shows the mistake (a name is a tensor because it
was made by a tensor factory, a model was built here and never moved, ...). Whatever cannot be known (a
function's parameter, an object from another module) is "unknown", and no rule fires on an unknown.
"""

from __future__ import annotations

import ast
import builtins
from collections import ChainMap
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from .checkpoints import CheckpointOrigins

# --- what the names of torch mean ---------------------------------------------------------------------------

FACTORIES = frozenset(
    "zeros ones empty full arange range linspace logspace rand randn randint randperm eye tensor as_tensor "
    "from_numpy empty_strided tril_indices triu_indices".split()
)
LEGACY_TYPES = frozenset(
    "Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor ShortTensor CharTensor "
    "ByteTensor BoolTensor".split()
)
# torch.<name>(...) calls that return a tensor on the device of their tensor arguments
TENSOR_FUNCTIONS = frozenset(
    "cat concat concatenate stack hstack vstack exp log log1p sqrt rsqrt sin cos tanh sigmoid relu abs clamp clip "
    "where einsum matmul mm bmm addmm outer mean sum prod cumsum cumprod softmax log_softmax flatten reshape "
    "tril triu transpose permute squeeze unsqueeze gather index_select masked_fill pow maximum minimum "
    "zeros_like ones_like empty_like full_like rand_like randn_like randint_like diag argmax argmin norm "
    "logsumexp sign round floor ceil multinomial bincount cdist dist".split()
)
# methods of a tensor that return a tensor on the same device
TENSOR_METHODS = frozenset(
    "detach clone contiguous float double half bfloat16 long int short bool byte char view view_as reshape "
    "reshape_as expand expand_as repeat flatten unflatten squeeze unsqueeze permute transpose t mean sum std var "
    "prod max min amax amin argmax argmin abs exp log sqrt sigmoid tanh relu softmax log_softmax clamp clip "
    "masked_fill masked_select index_select gather scatter narrow pow matmul mm bmm mul add sub div neg "
    "cumsum triu tril norm type_as round floor ceil sign sin cos roll flip new_zeros new_ones new_empty "
    "new_full new_tensor pin_memory requires_grad_ detach_ float_ repeat_interleave where".split()
)
DEVICE_MOVES = frozenset({"to", "cuda", "cpu"})
# attributes only a tensor (or an array) has, never a module: a parameter used with one of them is a tensor
TENSOR_EVIDENCE = frozenset(
    "shape size view reshape unsqueeze squeeze dim ndim numel item tolist dtype argmax softmax permute transpose "
    "contiguous detach masked_fill new_zeros new_ones numpy is_cuda".split()
)
MODULE_METHODS = frozenset({"float", "double", "half", "bfloat16", "requires_grad_", "type", "train", "eval"})
BUILTINS = frozenset(dir(builtins))
DTYPES = frozenset(
    f"torch.{name}" for name in
    "float float32 float64 double half float16 bfloat16 long int64 int int32 int16 int8 uint8 bool short "
    "complex64 complex128".split()
)
# layers that own parameters or buffers (a parameterless one, nn.ReLU(), built in forward is no device bug)
PARAMETER_LAYERS = frozenset(
    "Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LazyConv1d "
    "LazyConv2d LazyConv3d Embedding EmbeddingBag BatchNorm1d BatchNorm2d BatchNorm3d SyncBatchNorm LayerNorm "
    "GroupNorm RMSNorm LocalResponseNorm_ InstanceNorm1d InstanceNorm2d InstanceNorm3d RNN LSTM GRU RNNCell "
    "LSTMCell GRUCell MultiheadAttention Transformer TransformerEncoder TransformerDecoder "
    "TransformerEncoderLayer TransformerDecoderLayer PReLU".split()
)
PAIRS = frozenset(f"torch.{name}" for name in ("max", "min", "sort", "topk", "kthvalue", "median", "mode"))
MODULE_FACTORIES = ("timm.create_model", "torchvision.models.")
DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                           "torch.nn.parallel.data_parallel.DataParallel"})
LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
DEPRECATED_AMP = {
    "torch.cuda.amp.autocast": ("torch.amp.autocast(\"cuda\", ...)", "cuda"),
    "torch.cuda.amp.GradScaler": ("torch.amp.GradScaler(\"cuda\", ...)", "cuda"),
    "torch.cpu.amp.autocast": ("torch.amp.autocast(\"cpu\", ...)", "cpu"),
    "torch.cpu.amp.GradScaler": ("torch.amp.GradScaler(\"cpu\", ...)", "cpu"),
    "torch.cuda.amp.custom_fwd": ("torch.amp.custom_fwd(..., device_type=\"cuda\")", ""),
    "torch.cuda.amp.custom_bwd": ("torch.amp.custom_bwd(..., device_type=\"cuda\")", ""),
}
MODULE_BASES = ("torch.nn.", "pytorch_lightning.", "lightning.")
HARMLESS_CALLS = frozenset({"print", "len", "isinstance", "type", "id", "repr", "str", "hasattr", "getattr", "next",
                            "iter", "format", "vars", "dir", "callable", "issubclass", "sorted", "list", "dict",
                            "enumerate", "zip"})


# what a tensor hands to Python, not to the device (DL501 leaves a factory alone when only these read it)
PYTHON_ONLY_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "is_cuda", "device", "requires_grad"})
PYTHON_ONLY_METHODS = frozenset({"item", "tolist", "size", "numel", "dim", "nelement", "element_size"})
PYTHON_ONLY_CALLS = frozenset({"int", "float", "bool", "len", "range", "list", "tuple", "print", "str", "repr",
                               "isinstance"})

# Load, Store, Add, Not, Eq...: one instance shared by every node of a parsed tree, so not nodes of their own
SHARED_NODES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


# --- values --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    """What the linter knows about a name: a tensor, a module, an optimizer, a loader, a tuple of those."""

    kind: str  # tensor | module | optimizer | loader | tuple | param | instance
    device: bool = False  # a tensor that may live on an accelerator; a module moved with .to()/.cuda()
    scalar: bool = False  # a 0-dim tensor made from a Python number
    created: bool = False  # a module built in this scope (not handed in from elsewhere)
    items: tuple = ()  # the items of a tuple
    name: str = ""  # a parameter's name; an optimizer's model; a class's name
    known: bool = True  # whether `device` is known (a parameter annotated Tensor may be anywhere)

    def item(self, index: int) -> Value | None:
        """The value of one item, when this is a tuple of known length."""
        return self.items[index] if self.kind == "tuple" and index < len(self.items) else None



@dataclass
class Finding:
    """One mistake found: where, which rule, and the words to fill into the rule's message."""

    code: str
    line: int
    col: int
    params: dict[str, str] = field(default_factory=dict)
    fix: dict[str, object] | None = None  # what --fix needs: kind and where


# --- helpers over the tree -----------------------------------------------------------------------------------

def scope_walk(nodes: list[ast.AST] | ast.AST) -> Iterator[ast.AST]:
    """Every node under `nodes`, not descending into nested functions, lambdas and classes."""
    stack = list(nodes) if isinstance(nodes, list) else [nodes]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    """The value of keyword argument `name`, if given."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def has_double_star(call: ast.Call) -> bool:
    """Whether the call passes **kwargs (anything may be in it)."""
    return any(kw.arg is None for kw in call.keywords)


def is_number(node: ast.expr) -> bool:
    """A literal number (or a negated one)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex, bool))


def is_literal_data(node: ast.expr) -> bool:
    """Literal data for torch.tensor: numbers, or lists and tuples of them."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(is_literal_data(e) for e in node.elts)
    return is_number(node)


def self_attribute(node: ast.AST, self_name: str) -> str | None:
    """`attr` when node is `self.attr`."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
        return node.attr
    return None


class Imports:
    """The dotted names that the file's imports bind: `nn` -> torch.nn, `zeros` -> torch.zeros."""

    def __init__(self, tree: ast.AST, nodes: list[ast.AST] | None = None) -> None:
        self.names: dict[str, str] = {}
        for node in nodes if nodes is not None else ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.names[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        self.names[root] = root
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted name an expression such as `nn.Linear` or `F.relu` stands for, when it comes from an import."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.names:
            return None
        return ".".join([self.names[node.id], *reversed(parts)])


def canonical(name: str | None) -> str | None:
    """torch.nn.modules.linear.Linear -> torch.nn.Linear; torch.functional.F -> itself."""
    if name and name.startswith("torch.nn.modules."):
        return "torch.nn." + name.rsplit(".", 1)[1]
    return name


# --- the analysis of one file ----------------------------------------------------------------------------------

@dataclass
class ClassInfo:
    """A class of the file: its node, its bases (dotted names from imports, or local names) and its methods."""

    node: ast.ClassDef
    bases: list[str]  # resolved dotted names, or local class names
    methods: dict[str, ast.FunctionDef]


class Analysis:
    """Run every rule over one parsed file (a script, or a notebook's cells joined in order)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.nodes: list[ast.AST] = []
        self.of_type: dict[type, list[ast.AST]] = {}  # the nodes of each kind, in the order of self.nodes
        # the calls of each statement's own expressions (not of its nested blocks, not inside a lambda)
        self.calls_of: dict[int, list[ast.Call]] = {}
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
            inner_lambda = in_lambda or isinstance(node, ast.Lambda)
            for name in node._fields:  # ast.iter_child_nodes, without a generator per node
                value = getattr(node, name, None)
                for child in value if isinstance(value, list) else (value,):
                    if isinstance(child, ast.AST) and not isinstance(child, SHARED_NODES):
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
        self._stores: dict[str, tuple[set[int], dict[str, list[int]]]] | None = None
        self._family: dict[str, set[str]] | None = None
        self._inits: dict[str, list[str]] | None = None  # a class -> its local subclasses that use its __init__
        self._checkpoints: CheckpointOrigins | None = None
        imports = sorted(self.nodes_of(ast.Import, ast.ImportFrom), key=lambda n: self._index[id(n)])
        self.imports = Imports(tree, imports)  # in the order they run: a later import rebinds a name
        self.findings: list[Finding] = []
        self.classes: dict[str, ClassInfo] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        for node in sorted(self.nodes_of(ast.ClassDef), key=lambda n: n.lineno):
            if isinstance(node, ast.ClassDef):
                bases = [self.resolve(b) or (b.id if isinstance(b, ast.Name) else "?") for b in node.bases]
                methods = {m.name: m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
                self.classes[node.name] = ClassInfo(node, bases, methods)
        self.owner_of = {id(m): name for name, info in self.classes.items() for m in info.methods.values()}
        for node in tree.body if isinstance(tree, ast.Module) else []:
            self._collect_functions(node)
        self._returns: dict[str, Value | None] = {}
        self._returning: set[str] = set()
        self.call_sites: dict[str, list[list[tuple[str | int, Value | None]]]] = {}
        self.module_env: dict[str, Value | None] = {}
        self.default_device = self._sets_default_device()

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """`node` and every node under it (what ast.walk gives, in another order), without walking the tree."""
        start = self._index.get(id(node))
        if start is None or self.nodes[start] is not node:
            return list(ast.walk(node))
        return self.nodes[start:self._end[start] + 1]

    def _collect_functions(self, node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.functions[node.name] = node
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for child in ast.iter_child_nodes(node):
                self._collect_functions(child)

    def resolve(self, node: ast.AST) -> str | None:
        return canonical(self.imports.resolve(node))

    def checkpoints(self) -> CheckpointOrigins:
        """What the file saves, buffers and downloads (DL701's exceptions), read at the first torch.load."""
        if self._checkpoints is None:
            self._checkpoints = CheckpointOrigins(self)
        return self._checkpoints

    def nodes_of(self, *kinds: type) -> list[ast.AST]:
        """The nodes of these kinds (kind by kind)."""
        return [node for kind in kinds for node in self.of_type.get(kind, ())]

    def _sets_default_device(self) -> bool:
        for node in self.nodes_of(ast.Call):
            if isinstance(node.func, (ast.Attribute, ast.Name)) and (
                    getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "set_default_device" and (
                    self.resolve(node.func) == "torch.set_default_device"):
                return True
        return False

    # --- classes ---------------------------------------------------------------------------------------------

    def is_module_class(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether a local class is (transitively) an nn.Module subclass."""
        info = self.classes.get(name)
        if info is None or name in seen:
            return False
        for base in info.bases:
            if base.startswith(MODULE_BASES) and base.rsplit(".", 1)[-1] in ("Module", "LightningModule") or (
                    base.startswith("torch.nn.") and base.rsplit(".", 1)[-1] in PARAMETER_LAYERS | {
                        "Sequential", "ModuleList", "ModuleDict"}):
                return True
            if self.is_module_class(base, seen | {name}):
                return True
        return False

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
        """forward, and every method of the class that forward calls through self (transitively)."""
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
                    name = self_attribute(node.func, self_name)
                    found = self.method(cls, name) if name else None
                    if found and found[1] not in seen:
                        todo.append(found[1])
        return seen

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

    # --- values of expressions -------------------------------------------------------------------------------

    def returns(self, name: str) -> Value | None:
        """What a local function returns, when every return statement agrees."""
        if name in self._returns:
            return self._returns[name]
        if name in self._returning:
            return None
        self._returning.add(name)
        fn = self.functions[name]
        env = self.scope(fn)
        walker = Walker(self, env, report=False)
        walker.block(fn.body)
        values = walker.returned
        result = None
        if values and all(v is not None for v in values):
            first = values[0]
            if all(v.kind == first.kind and v.kind != "tuple" for v in values):
                device = any(v.device for v in values)
                # a device that may come from an argument: the caller's call decides, which is not followed
                result = replace(first, device=device, scalar=False, known=all(v.known for v in values) and not device)
                if result.kind == "module":
                    result = replace(result, created=all(v.created for v in values))
            elif all(v.kind == "tuple" and len(v.items) == len(first.items) for v in values):
                result = replace(first, items=tuple(
                    replace(v, known=v.known and not v.device) if v is not None else None for v in first.items)) \
                    if len(values) == 1 else None
        self._returning.discard(name)
        self._returns[name] = result
        return result

    def parameter_values(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Value | None]:
        """A function's parameters: unknown, except where an annotation says Tensor, or the body uses a parameter
        the way only a tensor can be used (x.shape, x.view(...)): then a tensor, on a device nobody knows."""
        if id(fn) not in self._parameter_values:
            self._parameter_values[id(fn)] = self._parameters(fn)
        return dict(self._parameter_values[id(fn)])

    def scope(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ChainMap[str, Value | None]:
        """The names a function sees: its parameters, then the module's stable globals (not copied: a long file
        has many globals and many functions)."""
        return ChainMap(self.parameter_values(fn), self._stable)

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
        for arg in args:
            env[arg.arg] = Value("param", name=arg.arg)
            annotation = self.resolve(arg.annotation) if arg.annotation is not None else None
            if annotation in ("torch.Tensor", "torch.FloatTensor") or (arg.arg in evidence and annotation is None):
                env[arg.arg] = Value("tensor", known=False)
        for arg in (fn.args.vararg, fn.args.kwarg):
            if arg is not None:
                env[arg.arg] = None
        owner = self.owner_of.get(id(fn))
        plain_method = not any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                               for d in fn.decorator_list)
        if owner and plain_method and fn.name != "__init__" and fn.args.args:
            env[fn.args.args[0].arg] = Value("instance", name=owner)  # self: its attributes are known
        return env

    def attribute_value(self, cls: str, attr: str) -> Value | None:
        """What `self.attr` holds in the methods of a local class: what __init__ gave it, when no other method
        (nor code outside the class) assigns it."""
        key = (cls, attr)
        if key in self._attributes:
            return self._attributes[key]
        self._attributes[key] = None  # while it is being worked out (an attribute defined from itself)
        info = self.classes.get(cls)
        init = info.methods.get("__init__") if info else None
        if init is None or not init.args.args:
            return None
        wild, by_owner = self._attribute_stores().get(attr, (set(), {}))
        own = {id(n) for n in self.walk(init) if isinstance(n, ast.Attribute) and n.attr == attr}
        if wild - own or any(set(by_owner.get(c, ())) - own for c in self._relatives(cls) if c in by_owner):
            return None  # set again elsewhere: by this class, a relative, or code outside
        self_name = init.args.args[0].arg
        found: list[Value | None] = []
        analysis = self

        class InitReader(Walker):
            def statement(self, stmt: ast.stmt) -> None:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and self_attribute(
                        stmt.targets[0], self_name) == attr:
                    found.append(analysis.value(stmt.value, self.env))
                super().statement(stmt)

        env = self.scope(init)
        InitReader(self, env, report=False).block(init.body)
        result = found[-1] if len(found) == 1 else None
        self._attributes[key] = result
        return result

    def _attribute_stores(self) -> dict[str, tuple[set[int], dict[str, list[int]]]]:
        """Every `x.attr = ...` / `del x.attr` of the file, by attribute name (built once, so that asking about
        one class does not read the whole file again): those outside any method, or on something else than the
        method's own `self` ("wild"), and those on `self`, by the class of the method."""
        if self._stores is None:
            self._stores = {}
            for n in self.nodes_of(ast.Attribute):
                if isinstance(n.ctx, (ast.Store, ast.Del)):
                    wild, by_owner = self._stores.setdefault(n.attr, (set(), {}))
                    method = self._enclosing_function(n)
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
        """What the linter knows about an expression's value (None: unknown)."""
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
            if base is not None and base.kind == "tuple" and isinstance(node.slice, ast.Constant) and isinstance(
                    node.slice.value, int):
                return base.item(node.slice.value)
            return None
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left, env), self.value(node.right, env)
            tensors = [v for v in (left, right) if v is not None and v.kind == "tensor"]
            if tensors and all((v is not None and v.kind == "tensor") or self._is_plain_number(n)
                               for v, n in ((left, node.left), (right, node.right))):
                return Value("tensor", device=any(v.device for v in tensors),
                             scalar=all(v.scalar for v in tensors), known=all(v.known for v in tensors))
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
            base = self.value(node.value, env)
            if base is not None and base.kind == "tensor" and node.attr in ("data", "grad", "T", "mT", "H", "real",
                                                                             "imag"):
                return replace(base, scalar=False)
            if base is not None and base.kind == "instance" and base.name in self.classes:
                found = self.attribute_value(base.name, node.attr)
                return found if found is not None and found.kind in ("tensor", "sequence", "cpu_device") else None
        return None

    @staticmethod
    def _is_plain_number(node: ast.expr) -> bool:
        return is_number(node) or isinstance(node, ast.Name) and node.id.isupper()

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
        return self.resolve(node) in DTYPES

    def move_target(self, call: ast.Call, env: dict[str, Value | None] | None = None) -> tuple[bool, bool]:
        """For x.to(...)/.cuda()/.cpu(): (does it name a device at all, is that device certainly the CPU)."""
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if method == "cpu":
            return True, True
        if method == "cuda":
            return True, False
        target = keyword(call, "device") or (call.args[0] if call.args else None)
        if target is None or self.is_dtype(target):
            other = keyword(call, "other")
            return (other is not None, False) if other is not None else (False, False)
        return True, self.is_cpu(target, env)

    def call_value(self, call: ast.Call, env: dict[str, Value | None]) -> Value | None:
        name = self.resolve(call.func)
        if name:
            short = name.rsplit(".", 1)[-1]
            if name.startswith("torch.") and name.count(".") == 1 and (short in FACTORIES or short in LEGACY_TYPES):
                device = keyword(call, "device")
                # torch.tensor(x) is 0-dim unless x is a list (or a tensor): a 0-dim CPU tensor acts as a number
                scalar = short in ("tensor", "as_tensor") and not (call.args and self._sequence(call.args[0], env))
                return Value("tensor", device=device is not None and not self.is_cpu(device, env), scalar=scalar)
            if name.startswith("torch.") and name.count(".") == 1 and short in TENSOR_FUNCTIONS or (
                    name.startswith("torch.nn.functional.")):
                flat = [e for a in call.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
                args = [self.value(a, env) for a in flat]
                tensors = [a for a in args if a is not None and a.kind == "tensor"]
                others = [v for v, node in zip(args, flat) if not (v is not None and v.kind == "tensor") and not (
                    self._is_plain_number(node))]
                return Value("tensor", device=any(a.device for a in tensors),
                             known=bool(tensors) and all(a.known for a in tensors) and not others)
            if name in PAIRS and call.args:  # torch.max(x, 1): (values, indices) on x's device
                first = self.value(call.args[0], env)
                if first is not None and first.kind == "tensor":
                    single = replace(first, scalar=False)
                    if len(call.args) > 1 or keyword(call, "dim") is not None or short in ("sort", "topk"):
                        return Value("tuple", items=(single, single))
                    return single
                return None
            if name in DATA_PARALLEL or name in ("torch.nn.parallel.DistributedDataParallel",):
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
                return Value("loader") if keyword(call, "collate_fn") is None else None
            return None
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in self.classes:
                if self.is_module_class(func.id):
                    return Value("module", created=True, name=func.id)
                return Value("instance", name=func.id)
            if func.id in self.functions:
                return self.returns(func.id)
            target = env.get(func.id)
            if target is not None and target.kind == "module":  # a model's output, or a loss
                return Value("tensor", device=target.device or self._device_input(call, env))
            if target is not None and target.kind == "moved":
                return Value("tensor", device=True, known=False)
            if (target is None or target.kind == "param") and func.id not in BUILTINS and self._device_input(
                    call, env):
                return Value("tensor", device=True, known=False)  # a model fed inputs on the device
            if func.id == "next" and call.args:  # next(iter(loader)): one batch
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
            if owner is None:
                if method in ("to", "cuda"):
                    names_device, cpu = self.move_target(call, env)
                    return Value("moved", device=True) if names_device and not cpu else None
                if method not in DEVICE_MOVES and self._device_input(call, env):
                    return Value("tensor", device=True, known=False)  # self.model(x.to(device))
                return None
            if owner.kind == "moved":
                if method in TENSOR_METHODS and method not in MODULE_METHODS:
                    return Value("tensor", device=True, known=False)
                return None
            if owner.kind == "tensor":
                if method in DEVICE_MOVES:
                    names_device, cpu = self.move_target(call, env)
                    if not names_device:
                        return owner
                    return Value("tensor", device=not cpu, scalar=owner.scalar)
                if method in TENSOR_METHODS:
                    return replace(owner, scalar=owner.scalar and method in ("float", "double", "half", "long",
                                                                             "int", "detach", "clone"))
                return None
            if owner.kind == "module":
                if method in ("to", "cuda"):
                    names_device, cpu = self.move_target(call, env)
                    return replace(owner, device=owner.device or (names_device and not cpu))
                if method in ("cpu",):
                    return replace(owner, device=False)
                if method in ("train", "eval", "float", "double", "half", "requires_grad_"):
                    return owner
                return None
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
        models = {node.func.value.id for node in self.walk(params) if isinstance(node, ast.Call) and isinstance(
            node.func, ast.Attribute) and node.func.attr in ("parameters", "named_parameters") and isinstance(
            node.func.value, ast.Name)} if params is not None else set()
        return models.pop() if len(models) == 1 else ""

    # --- running ----------------------------------------------------------------------------------------------

    def run(self) -> list[Finding]:
        """Every finding in the file, in order."""
        # module level first (it gives the globals functions read), then every function, then the classes
        self._stable = {}
        walker = Walker(self, {}, report=True, module_level=True)
        walker.block(self.tree.body)
        self.module_env = walker.env
        self._stable = dict(walker.stable)
        owners = {id(m): name for name, info in self.classes.items() for m in info.methods.values()}
        functions = sorted(self.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef),
                           key=lambda n: (n.lineno, n.col_offset))
        for node in functions:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                env = self.scope(node)
                inner = Walker(self, env, report=True)
                if node.name == "__init__":
                    inner.owner_class = owners.get(id(node))
                inner.block(node.body)
        self.check_decorators()
        reached: list[ast.FunctionDef] = []
        for name in self.classes:
            if self.is_module_class(name):
                reached += self.check_module_class(name)
        self.check_forward_helpers(reached)
        unique: dict[tuple[str, int, int], Finding] = {}
        for finding in self.findings:
            unique.setdefault((finding.code, finding.line, finding.col), finding)
        return sorted(unique.values(), key=lambda f: (f.line, f.col, f.code))

    def deprecated_amp(self, node: ast.expr, name: str) -> None:
        """DL801, with the fix when the call spells torch.cuda.amp.X(keywords only) in full."""
        new, device_type = DEPRECATED_AMP[name]
        fix = None
        func = node.func if isinstance(node, ast.Call) else None
        if device_type and isinstance(node, ast.Call) and not node.args and not has_double_star(node) and (
                isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute)
                and func.value.attr == "amp" and isinstance(func.value.value, ast.Attribute)):
            fix = {"kind": "amp", "device_type": device_type}
        self.add("DL801", node, fix, call=name, new=new)

    def check_decorators(self) -> None:
        """Deprecated amp decorators: @torch.cuda.amp.custom_fwd, @torch.cuda.amp.autocast()."""
        for node in self.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            if node.decorator_list:
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    name = self.resolve(target)
                    if name in DEPRECATED_AMP:
                        self.deprecated_amp(decorator, name)

    def add(self, code: str, node: ast.AST, fix: dict[str, object] | None = None, **params: str) -> None:
        self.findings.append(Finding(code, node.lineno, node.col_offset + 1, params, fix))

    # --- rules on a module class (chapter 05) ----------------------------------------------------------------

    def check_module_class(self, cls: str) -> list[ast.FunctionDef]:
        info = self.classes[cls]
        forward_fns = [fn for fn in self.forward_methods(cls) if fn in info.methods.values()]
        if not forward_fns:
            return []
        self.check_factories(cls, forward_fns)
        self.check_layers_in_forward(forward_fns)
        self.check_plain_attributes(cls, forward_fns)
        return forward_fns

    def check_forward_helpers(self, reached: list[ast.FunctionDef]) -> None:
        """Module-level functions that only forward (and what it calls) calls: their factories run in forward."""
        calls: dict[str, list[ast.AST | None]] = {}
        for node in self.nodes_of(ast.Call, ast.Name):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
                calls.setdefault(node.func.id, []).append(self._enclosing_function(node))
            elif isinstance(node, ast.Name) and node.id in self.functions and isinstance(node.ctx, ast.Load) and (
                    not isinstance(self._parent(self.tree, node), ast.Call)
                    or self._parent(self.tree, node).func is not node):
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
        if helpers:
            self.check_factories("", helpers, reached + helpers)

    def _enclosing_function(self, node: ast.AST) -> ast.AST | None:
        parent = self._parent(self.tree, node)
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            parent = self._parent(self.tree, parent)
        return parent

    def check_factories(self, cls: str, fns: list[ast.FunctionDef],
                        callers: list[ast.FunctionDef] | None = None) -> None:
        """DL501: a tensor factory in forward (or what it calls) without device=. Not flagged: a factory whose
        result goes to the device at once (`.to(x.device)`, `.type_as(x)`) or later, only indexes (`x[idx]`), is
        filled and returned, or only feeds Python (`if`, `while`, `range`, `len`, `int`, `.item()`, a `for`, its
        `.shape`); one under `with torch.device(...)` or `torch.set_default_device`; torch.tensor of a number."""
        if self.default_device:
            return
        for fn in fns:
            if fn.name != "forward" and self._result_moved_by_callers(fn, callers or fns):
                continue  # a helper that builds on the CPU for callers that move what it returns
            input_name = self._tensor_input(fn) if fn.name == "forward" else None
            moved_names = self._names_moved_later(fn)
            device_contexts = self._device_context_lines(fn)
            for node in self.walk(fn):
                if not isinstance(node, ast.Call):
                    continue
                name = self.resolve(node.func) or ""
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
                parent = self._parent(fn, node)
                if self._moved_at_once(fn, node) or self._only_indexes(fn, node, parent, moved_names) or (
                        self._feeds_python_only(fn, node)):
                    continue
                fix = None
                if input_name and short not in LEGACY_TYPES and short != "from_numpy":
                    fix = {"kind": "device", "input": input_name}
                label = "torch." + short if name == f"torch.{short}" else name
                self.add("DL501", node, fix, call=label)

    def leaves_unmoved(self, call: ast.Call, names: set[str], depth: int = 0) -> bool:
        """Whether a call of a local function neither moves nor hands on the `names` it is given: train(net, ...)
        where train only calls net(x), net.train(), net.parameters()."""
        func = call.func
        fn = self.functions.get(func.id) if isinstance(func, ast.Name) else None
        if fn is None or depth > 2 or any(isinstance(a, ast.Starred) for a in call.args) or has_double_star(call):
            return False
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        named = set(params) | {a.arg for a in fn.args.kwonlyargs}
        given = [(i, a) for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id in names]
        given_kw = [kw.arg for kw in call.keywords if isinstance(kw.value, ast.Name) and kw.value.id in names]
        if any(i >= len(params) for i, _ in given) or any(k not in named for k in given_kw):
            return False  # into *args or **kwargs: followed no further
        inside = {params[i] for i, _ in given} | set(given_kw)
        for node in self.walk(fn):
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
                    isinstance(n, ast.Name) and n.id in inside for n in self.walk(node.value))):
                return False
            if isinstance(node, (ast.Assign, ast.AugAssign)) and any(
                    isinstance(t, ast.Attribute) for t in (node.targets if isinstance(node, ast.Assign)
                                                           else [node.target])) and any(
                    isinstance(n, ast.Name) and n.id in inside for n in self.walk(node.value)):
                return False  # stored somewhere (self.model = model): followed no further
        return True

    def _result_moved_by_callers(self, fn: ast.FunctionDef, callers: list[ast.FunctionDef]) -> bool:
        """Every call of `fn` (self.fn(...) or fn(...)) moves the result: `.to(device)` at once, or later."""
        sites: list[tuple[ast.AST, ast.Call]] = []
        for caller in callers:
            for node in self.walk(caller):
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
        if args[0].annotation is not None and self.resolve(args[0].annotation) not in ("torch.Tensor",):
            return None
        for node in self.walk(fn):
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
            parent = self._parent(fn, node)
            if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name) and (
                    parent.func.id in ("int", "float", "bool", "len")):
                return True  # a Python number: no device
            if isinstance(parent, ast.Attribute) and parent.value is node:
                grand = self._parent(fn, parent)
                if parent.attr in ("to", "cuda", "type_as", "item", "tolist") and isinstance(grand, ast.Call):
                    return True
                if isinstance(grand, ast.Call) and grand.func is parent and (
                        parent.attr in TENSOR_METHODS or parent.attr.endswith("_")):  # .view(...), .uniform_(...)
                    node = grand
                    continue
            if isinstance(parent, ast.Call) and node in parent.args and (
                    self.resolve(parent.func) or "").removeprefix("torch.") in TENSOR_FUNCTIONS:
                node = parent  # torch.exp(torch.empty(1).uniform_(a, b)).item(): where the result goes decides
                continue
            if isinstance(parent, ast.Compare):
                return self._a_condition(fn, parent)  # `if torch.rand(1) < self.p:` asks for a Python bool
            return False

    def _feeds_python_only(self, fn: ast.AST, node: ast.AST, depth: int = 0) -> bool:
        """A CPU tensor that never meets the device: only Python control flow reads it (the test of an `if`,
        `while` or `assert`; `range(...)`, `len(...)`, `int(...)`; `.item()`, `.tolist()`; a `for` over it) or its
        shape (`.shape`, `.size()`, `.numel()`), at once, through its own methods (`t.sum().item()`), or through a
        name that is read only so."""
        while True:
            parent = self._parent(fn, node)
            if isinstance(parent, ast.Attribute) and parent.value is node:
                if parent.attr in PYTHON_ONLY_ATTRIBUTES:
                    return True
                grand = self._parent(fn, parent)
                if isinstance(grand, ast.Call) and grand.func is parent and parent.attr in PYTHON_ONLY_METHODS:
                    return True
                if isinstance(grand, ast.Call) and grand.func is parent and (
                        parent.attr in TENSOR_METHODS or parent.attr in ("any", "all")):
                    node = grand  # t.long(), t.sum(), (t > 0).any(): where the result goes decides
                    continue
                return False
            if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name) and (
                    parent.func.id in PYTHON_ONLY_CALLS):
                return True
            if isinstance(parent, ast.Compare) and all(
                    is_number(other) for other in [parent.left, *parent.comparators] if other is not node):
                node = parent  # t > 0.5: a comparison with a number stays on the tensor's device
                continue
            if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
                return True  # `for i in torch.arange(n)`: Python's loop, over 0-dim tensors
            if isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)) and parent.test is node or (
                    isinstance(parent, (ast.BoolOp, ast.UnaryOp)) and self._a_condition(fn, parent)):
                return True
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(
                    parent.targets[0], ast.Name) and depth < 2:
                name = parent.targets[0].id
                loads = [n for n in self.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(
                    n.ctx, ast.Load)]
                return bool(loads) and all(self._feeds_python_only(fn, load, depth + 1) for load in loads)
            return False

    def _a_condition(self, fn: ast.AST, node: ast.AST) -> bool:
        """Whether an expression is (part of) the test of an if, while, assert or conditional expression."""
        while True:
            parent = self._parent(fn, node)
            if isinstance(parent, (ast.BoolOp,)) or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
                node = parent
                continue
            return isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)) and parent.test is node

    def _names_moved_later(self, fn: ast.AST) -> set[str]:
        """Names that the function moves somewhere: `mask = mask.to(x.device)`, `t.cuda()`."""
        moved = set()
        for node in self.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "to", "cuda", "type_as") and isinstance(node.func.value, ast.Name):
                moved.add(node.func.value.id)
        return moved

    def _device_context_lines(self, fn: ast.AST) -> set[int]:
        """Lines inside `with torch.device(...)` (a factory there is born on that device)."""
        lines: set[int] = set()
        for node in self.walk(fn):
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                    isinstance(item.context_expr, ast.Call) and self.resolve(item.context_expr.func) == "torch.device"
                    for item in node.items):
                for inner in self.walk(node):
                    if hasattr(inner, "lineno"):
                        lines.add(inner.lineno)
        return lines

    def _only_indexes(self, fn: ast.AST, call: ast.Call, parent: ast.AST | None, moved: set[str]) -> bool:
        """A CPU index tensor indexing another tensor is allowed: x[torch.arange(n), labels]."""
        if self._in_subscript_slice(fn, call):
            return True
        statement: ast.AST | None = call
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = self._parent(fn, statement)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name) \
                and parent.targets[0].id in moved:
            return True
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
                statement.targets[0], ast.Name):
            name = statement.targets[0].id
            loads = [n for n in self.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(
                n.ctx, ast.Load)]
            if loads and all(self._in_subscript_slice(fn, n) for n in loads):
                return True
            if loads and parent is statement and all(self._filled_or_returned(fn, n) for n in loads):
                return True  # a CPU result the method fills and hands back: no device meets it here
        return self._flows_into_a_move(fn, call, moved)

    def _filled_or_returned(self, fn: ast.AST, name: ast.Name) -> bool:
        """`out[i] = ...` (filling it) or `return out` / `return out, other`."""
        parent = self._parent(fn, name)
        if isinstance(parent, ast.Subscript) and parent.value is name and isinstance(parent.ctx, ast.Store):
            return True
        if isinstance(parent, ast.Tuple):
            parent = self._parent(fn, parent)
        return isinstance(parent, ast.Return)

    def _flows_into_a_move(self, fn: ast.AST, call: ast.Call, moved: set[str]) -> bool:
        """The CPU tensor only feeds values that the function later moves: `t = ...; table[...] = t ...;
        return table.to(device)` builds on the CPU and moves the result."""
        statement: ast.AST | None = call
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = self._parent(fn, statement)
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
            return False
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        tainted = {n.id for t in targets for n in self.walk(t) if isinstance(n, ast.Name)}
        later = sorted((n for n in self.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                        and n.lineno > (statement.end_lineno or statement.lineno)), key=lambda n: n.lineno)
        for node in later:
            if node.value is None or not any(
                    isinstance(n, ast.Name) and n.id in tainted for n in self.walk(node.value)):
                continue
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                base = target
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                tainted |= {n.id for n in self.walk(base) if isinstance(n, ast.Name)}
        end = statement.end_lineno or statement.lineno
        moved_after = {node.func.value.id for node in self.walk(fn) if isinstance(node, ast.Call) and isinstance(
            node.func, ast.Attribute) and node.func.attr in ("to", "cuda", "type_as") and isinstance(
            node.func.value, ast.Name) and node.lineno > end}
        return bool(tainted & moved & moved_after)

    def _in_subscript_slice(self, fn: ast.AST, target: ast.AST) -> bool:
        node = target
        while True:
            parent = self._parent(fn, node)
            if parent is None or isinstance(parent, (ast.stmt,)):
                return False
            if isinstance(parent, ast.Subscript) and parent.slice is node:
                return True
            if isinstance(parent, ast.Tuple):
                node = parent
                continue
            if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in TENSOR_METHODS:
                grand = self._parent(fn, parent)
                if isinstance(grand, ast.Call) and grand.func is parent:  # idx.long(), idx.view(-1)
                    node = grand
                    continue
            return False

    def check_layers_in_forward(self, fns: list[ast.FunctionDef]) -> None:
        for fn in fns:
            for node in self.walk(fn):
                if not isinstance(node, ast.Call):
                    continue
                name = self.resolve(node.func) or ""
                short = name.rsplit(".", 1)[-1]
                label = None
                if name.startswith("torch.nn.") and short in PARAMETER_LAYERS and self._layer_has_state(short, node):
                    label = "nn." + short
                elif isinstance(node.func, ast.Name) and node.func.id in self.classes and self.is_module_class(
                        node.func.id) and self.class_has_parameters(node.func.id):
                    label = node.func.id
                if label and not self._lazily_built_on_the_device(fn, node):
                    self.add("DL503", node, call=label)

    def _lazily_built_on_the_device(self, fn: ast.AST, call: ast.Call) -> bool:
        """`self.head = nn.Linear(n, k).to(x.device)` in forward: built once, where the input is."""
        parent = self._parent(fn, call)
        if not (isinstance(parent, ast.Attribute) and parent.attr in ("to", "cuda")):
            return False
        moved = self._parent(fn, parent)
        statement = self._parent(fn, moved) if isinstance(moved, ast.Call) else None
        return isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
            for t in statement.targets)

    @staticmethod
    def _layer_has_state(short: str, call: ast.Call) -> bool:
        def false(name: str) -> bool:
            value = keyword(call, name)
            return isinstance(value, ast.Constant) and value.value is False

        def true(name: str) -> bool:
            value = keyword(call, name)
            return isinstance(value, ast.Constant) and value.value is True

        if short in ("LayerNorm", "RMSNorm"):
            return not false("elementwise_affine")
        if short == "GroupNorm":
            return not false("affine")
        if short.startswith("InstanceNorm"):
            return true("affine") or true("track_running_stats")
        if short.startswith("BatchNorm") or short == "SyncBatchNorm":
            return not (false("affine") and false("track_running_stats"))
        return True

    def check_plain_attributes(self, cls: str, fns: list[ast.FunctionDef]) -> None:
        info = self.classes[cls]
        init = info.methods.get("__init__")
        if init is None or not init.args.args or any(m in info.methods for m in ("_apply", "to", "cuda")):
            return
        self_name = init.args.args[0].arg
        used: set[str] = set()
        moved: set[str] = set()
        for fn in fns:
            fn_self = fn.args.args[0].arg if fn.args.args else "self"
            for node in self.walk(fn):
                attr = self_attribute(node, fn_self)
                if attr and isinstance(node.ctx, ast.Load):
                    used.add(attr)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                        "to", "cuda", "type_as"):
                    attr = self_attribute(node.func.value, fn_self)
                    if attr:
                        moved.add(attr)
        registered = self._registered_names(cls)
        env = self.scope(init)
        walker = Walker(self, env, report=False)
        analysis = self

        class InitWalker(Walker):
            def statement(self, stmt: ast.stmt) -> None:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    target = stmt.targets[0]
                    attr = self_attribute(target, self_name)
                    if attr and attr in used and attr not in moved and attr not in registered:
                        if analysis._is_tensor_attribute(cls, stmt.value, self.env):
                            analysis.add("DL502", target, name=attr)
                super().statement(stmt)

        InitWalker(self, walker.env, report=False).block(init.body)

    def _registered_names(self, cls: str) -> set[str]:
        names: set[str] = set()
        for node in self.walk(self.classes[cls].node):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "register_buffer", "register_parameter") and node.args and isinstance(
                    node.args[0], ast.Constant):
                names.add(str(node.args[0].value))
        return names

    def _is_tensor_attribute(self, cls: str, expr: ast.expr, env: dict[str, Value | None]) -> bool:
        if isinstance(expr, ast.Call) and keyword(expr, "device") is not None:
            return False
        if isinstance(expr, ast.Name) and isinstance(env.get(expr.id), Value) and env[expr.id].kind == "param":
            return self.argument_is_tensor(cls, env[expr.id].name)
        value = self.value(expr, env)
        return value is not None and value.kind == "tensor" and not value.scalar and not value.device and value.known

    def argument_is_tensor(self, cls: str, param: str, depth: int = 0) -> bool:
        """Whether every call that builds `cls` in this file passes a tensor for `param` (and there is one)."""
        if depth > 4:
            return False
        sites = [site for name in self._subclasses_using_init(cls) for site in self.call_sites.get(name, [])]
        found = self.method(cls, "__init__")
        if not sites or found is None:
            return False
        params = [a.arg for a in found[1].args.args[1:]]
        on_cpu = False
        for site in sites:
            value = None
            for key, val in site:
                if key == param or (isinstance(key, int) and key < len(params) and params[key] == param):
                    value = val
            if value is None:
                return False
            if value.kind == "param" and value.items:
                owner = value.items[0]
                if not (isinstance(owner, str) and self.argument_is_tensor(owner, value.name, depth + 1)):
                    return False
                on_cpu = True
            elif value.kind != "tensor" or value.scalar:
                return False
            on_cpu = on_cpu or (not value.device and value.known)
        return on_cpu

    def _subclasses_using_init(self, cls: str) -> list[str]:
        """cls, and its local subclasses that inherit its __init__."""
        if self._inits is None:
            self._inits = {}
            for name, info in self.classes.items():
                found = self.method(name, "__init__") if "__init__" not in info.methods else None
                if found:
                    self._inits.setdefault(found[0], []).append(name)
        return [cls, *(name for name in self._inits.get(cls, ()) if name != cls)]


class Walker:
    """Goes through a block of statements in order, keeping what each name holds, and applies the scope rules."""

    def __init__(self, analysis: Analysis, env: dict[str, Value | None], report: bool,
                 module_level: bool = False) -> None:
        self.a = analysis
        self.env = env
        self.report = report
        self.module_level = module_level
        self.returned: list[Value | None] = []
        self.stable: dict[str, Value | None] = {}
        self._kinds: dict[str, set] = {}
        self.pending_loads: dict[str, list[tuple[ast.Call, str]]] = {}  # model -> optimizer loads before its move
        self.wraps: list[tuple[ast.Call, str, str | None, ast.stmt]] = []
        self.statements: list[ast.stmt] = []
        self.owner_class: str | None = None
        self._statement_calls: set[ast.AST] = set()

    # --- statements -------------------------------------------------------------------------------------------

    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)
        if self.report:
            self.finish_wraps()

    def statement(self, stmt: ast.stmt) -> None:
        self.statements.append(stmt)
        if isinstance(stmt, ast.Expr):
            self._statement_calls.add(stmt.value)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if self.module_level and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.bind(stmt.name, None)
            return
        self.expressions(stmt)
        if isinstance(stmt, ast.Assign):
            value = self.a.value(stmt.value, self.env)
            for target in stmt.targets:
                self.assign(target, value, stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.a.value(stmt.value, self.env), stmt.value)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            pass
        elif isinstance(stmt, ast.Expr):
            self.expression_statement(stmt.value)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            self.returned.append(self.a.value(stmt.value, self.env))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            source = self.a.value(stmt.iter, self.env)
            target = stmt.target
            if isinstance(stmt.iter, ast.Call) and isinstance(stmt.iter.func, ast.Name) and stmt.iter.func.id == (
                    "enumerate") and stmt.iter.args and isinstance(target, ast.Tuple) and len(target.elts) == 2:
                source = self.a.value(stmt.iter.args[0], self.env)
                self.assign(target.elts[0], None, None)
                target = target.elts[1]
            if source is not None and source.kind == "loader" and isinstance(target, ast.Tuple):
                for elt in target.elts:
                    self.assign(elt, Value("tensor"), None)
            elif source is not None and source.kind == "loader":
                self.assign(target, Value("batch"), None)
            elif source is None and self.loader_like(stmt.iter):
                # a name that says it is a loader: its batches are tensors, on the CPU unless the name says
                # it hands them out on a device (a device_loader, a gpu prefetcher)
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
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, None, None)
            for s in stmt.body:
                self.statement(s)
        elif isinstance(stmt, (ast.If, ast.While)):
            for s in [*stmt.body, *stmt.orelse]:
                self.statement(s)
        elif isinstance(stmt, ast.Try):
            for handler in stmt.handlers:
                if handler.name:
                    self.bind(handler.name, None)
            for s in [*stmt.body, *[x for h in stmt.handlers for x in h.body], *stmt.orelse, *stmt.finalbody]:
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

    def bind(self, name: str, value: Value | None) -> None:
        if self.pending_loads.get(name):
            self.pending_loads.pop(name)
        self.env[name] = value
        kinds = self._kinds.setdefault(name, set())
        kinds.add((value.kind, value.device) if value is not None else None)
        if len(kinds) == 1 and value is not None:
            self.stable[name] = value if value.kind != "module" else replace(value, created=False)
        else:
            self.stable.pop(name, None)

    def assign(self, target: ast.expr, value: Value | None, source: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            # `model = model.to(device)` moves the model the optimizer and the wrapper hold
            if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and source.func.attr in (
                    "to", "cuda") and isinstance(source.func.value, ast.Name) and source.func.value.id == target.id:
                self.moved(target.id, source)
                self.env[target.id] = value
                return
            self.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for index, elt in enumerate(target.elts):
                item = value.item(index) if value is not None else None
                if value is not None and value.kind == "batch":
                    item = Value("tensor", known=value.known)
                self.assign(elt, item, None)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, None, None)

    # --- expressions ------------------------------------------------------------------------------------------

    def expressions(self, stmt: ast.stmt) -> None:
        """Rules that look at calls anywhere in a statement (its own expressions, not nested blocks)."""
        for node in self.a.calls_of.get(id(stmt), ()):
            self.call(node, stmt)

    def call(self, call: ast.Call, stmt: ast.stmt) -> None:
        a = self.a
        name = a.resolve(call.func)
        if isinstance(call.func, ast.Name) and call.func.id in a.classes and self.report:
            a.call_sites.setdefault(call.func.id, []).append(self.arguments(call))
        if not self.report:
            self.track_moves(call)
            return
        if name == "torch.load" and keyword(call, "map_location") is None and len(call.args) < 2 and not (
                has_double_star(call)) and not a.checkpoints().known(call):
            a.add("DL701", call, {"kind": "map_location"})
        if name in DEPRECATED_AMP:
            new, device_type = DEPRECATED_AMP[name]
            a.deprecated_amp(call, name)
        if name in DATA_PARALLEL:
            self.wrap(call, stmt)
        self.check_cpu_input(call, name)
        if isinstance(call.func, ast.Attribute):
            method = call.func.attr
            if method == "numpy" and not call.args and not self._forced(call):
                owner = a.value(call.func.value, self.env)
                if owner is not None and owner.kind in ("tensor", "moved") and owner.device:
                    a.add("DL102", call)
            if method == "load_state_dict" and isinstance(call.func.value, ast.Name):
                owner = self.env.get(call.func.value.id)
                if owner is not None and owner.kind == "optimizer" and owner.name:
                    model = self.env.get(owner.name)
                    if model is not None and model.kind == "module" and not model.device:
                        self.pending_loads.setdefault(owner.name, []).append((call, call.func.value.id))
        self.track_moves(call)

    def check_cpu_input(self, call: ast.Call, name: str | None) -> None:
        """DL301: a model moved to a device called with a tensor left on the CPU; a loss given both kinds."""
        a = self.a
        args = [arg for arg in call.args if not isinstance(arg, ast.Starred)]
        values = [a.value(arg, self.env) for arg in args]
        cpu = [arg for arg, v in zip(args, values) if v is not None and v.kind == "tensor" and not v.device
               and not v.scalar and v.known]
        if not cpu:
            return
        model = a.value(call.func, self.env) if isinstance(call.func, ast.Name) else None
        on_device = any(v is not None and v.kind == "tensor" and v.device for v in values)
        if model is not None and model.kind == "module" and model.device and model.name in ("RNN", "GRU", "LSTM") and (
                len(values) > 1 and cpu and cpu[0] is args[1]):
            a.add("DL301", cpu[0], name=ast.unparse(cpu[0]))  # the initial hidden state, left on the CPU
            return
        if model is not None and model.kind == "module" and model.device and model.name != "parallel" and not (
                on_device) and not self._forward_moves_inputs(model.name):
            # every tensor it is given is on the CPU (a CPU tensor beside a moved one may be meant: RNN lengths)
            a.add("DL301", cpu[0], name=ast.unparse(cpu[0]))
            return
        is_loss = bool(name) and (name.startswith("torch.nn.functional.") and (
            name.endswith(("_loss", "cross_entropy", "nll_loss", "binary_cross_entropy_with_logits"))) and (
            not name.endswith("ctc_loss"))) or (
            model is not None and model.kind == "module" and model.name.endswith("Loss") and model.name != "CTCLoss")
        if is_loss and any(v is not None and v.kind == "tensor" and v.device and v.known for v in values):
            a.add("DL301", cpu[0], name=ast.unparse(cpu[0]))

    def _forward_moves_inputs(self, cls: str) -> bool:
        """Whether a local model class moves its inputs in forward itself (x.to(...) on a parameter)."""
        found = self.a.method(cls, "forward") if cls else None
        if found is None:
            return False
        params = {arg.arg for arg in found[1].args.args[1:]}
        return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "to", "cuda") and isinstance(node.func.value, ast.Name) and node.func.value.id in params
                   for node in self.a.walk(found[1]))

    @staticmethod
    def _forced(call: ast.Call) -> bool:
        force = keyword(call, "force")
        return force is not None and not (isinstance(force, ast.Constant) and force.value is False)

    def arguments(self, call: ast.Call) -> list[tuple[str | int, Value | None]]:
        """The values a call passes, by position and by keyword (a parameter of this scope stays a param)."""
        out: list[tuple[str | int, Value | None]] = []
        for index, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                return [("*", None)]
            out.append((index, self.argument_value(arg)))
        for kw in call.keywords:
            if kw.arg is not None:
                out.append((kw.arg, self.argument_value(kw.value)))
        return out

    def argument_value(self, node: ast.expr) -> Value | None:
        if isinstance(node, ast.Name):
            found = self.env.get(node.id)
            if found is not None and found.kind == "param":
                return replace(found, items=(self.owner_class,)) if self.owner_class else None
        return self.a.value(node, self.env)

    def track_moves(self, call: ast.Call) -> None:
        """`model.to(device)` / `model.cuda()` / `model.cpu()` move a module in place."""
        if not (isinstance(call.func, ast.Attribute) and call.func.attr in DEVICE_MOVES and isinstance(
                call.func.value, ast.Name)):
            return
        self.moved(call.func.value.id, call)

    def moved(self, name: str, call: ast.Call) -> None:
        names_device, cpu = self.a.move_target(call, self.env)
        if not names_device:
            return
        value = self.env.get(name)
        if value is not None and value.kind == "param" and call in self._statement_calls and not cpu:
            # `model.to(device)` as a statement on something handed in: a module (a tensor would be DL101's
            # business, and calling it afterwards shows it is a module)
            value = Value("module")
        if value is None or value.kind != "module":
            return
        self.env[name] = replace(value, device=not cpu)
        if self.module_level:  # moved in place: a function cannot tell whether it runs before or after
            self._kinds.setdefault(name, set()).add("moved in place")
            self.stable.pop(name, None)
        if not cpu:
            for load, optimizer in self.pending_loads.pop(name, []):
                if self.report:
                    self.a.add("DL702", load, optimizer=optimizer, model=name)

    def expression_statement(self, node: ast.expr) -> None:
        """DL101: `x.to(device)` on a tensor, its result thrown away."""
        self._statement_calls.add(node)
        if not (self.report and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return
        method = node.func.attr
        if method not in DEVICE_MOVES or node.keywords and keyword(node, "copy") is not None:
            return
        owner = self.a.value(node.func.value, self.env)
        if owner is None or owner.kind != "tensor":
            return
        names_device, _ = self.a.move_target(node, self.env)
        if method == "to" and not names_device:
            return
        receiver = node.func.value
        shown = ast.unparse(receiver) if isinstance(receiver, (ast.Name, ast.Attribute)) else "x"
        self.a.add("DL101", node, method=method, name=shown)

    # --- DataParallel (chapter 02) ----------------------------------------------------------------------------

    def wrap(self, call: ast.Call, stmt: ast.stmt) -> None:
        if not call.args or not isinstance(call.args[0], ast.Name):
            return
        ids = keyword(call, "device_ids")
        if isinstance(ids, (ast.List, ast.Tuple)) and len(ids.elts) == 1:
            return  # with a single device id, DataParallel moves the model itself
        model = call.args[0].id
        value = self.env.get(model)
        if value is None or value.kind != "module" or not value.created or value.device:
            return
        wrapper = None
        if isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name):
            wrapper = stmt.targets[0].id
        elif not (isinstance(stmt, ast.Expr) and stmt.value is call):
            return  # the wrapper goes somewhere the linter does not follow
        self.wraps.append((call, model, wrapper, stmt))

    def finish_wraps(self) -> None:
        wraps, self.wraps = self.wraps, []
        for call, model, wrapper, stmt in wraps:
            if not self.never_moved_after(stmt, model, wrapper):
                continue
            self.a.add("DL201", call, name=model)

    def never_moved_after(self, stmt: ast.stmt, model: str, wrapper: str | None) -> bool:
        """After `stmt`, neither the model nor its wrapper is moved, handed to other code or returned."""
        try:
            start = self.statements.index(stmt)
        except ValueError:
            return False
        live = {model} | ({wrapper} if wrapper else set())
        for later in self.statements[start + 1:]:
            if isinstance(later, ast.ClassDef):
                continue
            if isinstance(later, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = later.args
                own = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
                if own & live:
                    continue  # its own parameter of the same name
                roots: list[ast.AST] = [*later.body, *later.decorator_list]
            elif isinstance(later, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try)):
                roots = self._header(later)
            else:
                roots = [later]
            for node in scope_walk(roots):
                if isinstance(node, ast.Call):
                    func = node.func
                    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (
                            func.value.id in live) and func.attr in ("to", "cuda"):
                        names_device, cpu = self.a.move_target(node, self.env)
                        if names_device and not cpu:
                            return False
                    callee = func.id if isinstance(func, ast.Name) else ""
                    passed = [*node.args, *(kw.value for kw in node.keywords)]
                    if callee not in HARMLESS_CALLS and any(
                            isinstance(p, ast.Name) and p.id in live for p in passed) and not (
                            self.a.leaves_unmoved(node, live)):
                        return False
                if isinstance(node, (ast.Return, ast.Yield)) and node.value is not None and any(
                        isinstance(n, ast.Name) and n.id in live for n in self.a.walk(node.value)):
                    return False
                if isinstance(node, ast.Global):
                    return False
            for target in self._targets(later):
                live.discard(target)
            if not live:
                return True
        return True

    @staticmethod
    def _header(stmt: ast.stmt) -> list[ast.AST]:
        out: list[ast.AST] = []
        for name, child in ast.iter_fields(stmt):
            if name in ("body", "orelse", "finalbody", "handlers"):
                continue
            if isinstance(child, list):
                out.extend(c for c in child if isinstance(c, ast.AST))
            elif isinstance(child, ast.AST):
                out.append(child)
        return out

    @staticmethod
    def _targets(stmt: ast.stmt) -> list[str]:
        if isinstance(stmt, ast.Assign):
            return [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        if isinstance(stmt, (ast.AnnAssign,)) and isinstance(stmt.target, ast.Name):
            return [stmt.target.id]
        return []
