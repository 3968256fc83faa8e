"""Where a function's tensors come from, read one function at a time: from its inputs (tensor parameters, the
module's own parameters and buffers, what is computed from them), or made inside it on the CPU (a factory without
`device=`) or on a fixed device (`.cuda()`, `device="cuda"`). DL505, DL506 and DL106 read it.

A library function (a loss, a layer's helper, a box conversion, an optimizer's step) does not know where the
tensors it is given live: whoever calls it decides. A tensor it makes itself lives on the CPU, or on the device
written in the code; when that tensor meets the inputs (arithmetic, a comparison, `torch.cat`, a method given
both, one indexing the other) the function works only while the caller's tensors happen to be there too.

This is a small forward pass over each function's statements, separate from flow.py's: names get one of
- "input": a tensor from the function's inputs (where the caller put them);
- "param": a parameter or what is unpacked from one, not yet seen used as a tensor;
- "born": a tensor made here on the CPU by a factory without `device=`;
- "fixed": a tensor made here and sent to a device named in the code (`.cuda()`, "cuda", `device="cuda"`);
- "py": a Python value (a size, a number, a list of numbers);
and anything else is unknown. Unknown stays unknown: nothing is reported about it."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .tree import FUNCTIONS
from .vocabulary import BUILTINS, FACTORIES, LEGACY_TYPES, TENSOR_EVIDENCE

if TYPE_CHECKING:
    from .analysis import Analysis

# functions that do CPU-side data work (their tensors come from a loader or a file, before any move), or tests
CPU_SIDE = re.compile(r"collate|transform|augment|preprocess|load|dataset|^test_|numpy|plot|visuali[sz]e|draw|"
                      r"__getitem__|__len__|__iter__|__next__|__init__|__repr__|__str__|^_?init_|reset_param|"
                      r"weight_init|init_weight")
# classes whose methods do CPU-side data work (a transform's __call__)
CPU_CLASSES = re.compile(r"transform|augment|compose|dataset|collat|loader|sampler|tokeni[sz]er|processor", re.I)
PYTHON_METHODS = frozenset({"item", "tolist", "size", "numel", "dim", "nelement", "element_size", "numpy",
                            "ndimension", "stride", "data_ptr", "get_device", "is_floating_point", "is_contiguous",
                            "__len__", "keys", "values", "items"})
PYTHON_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "is_cuda", "device", "requires_grad", "layout",
                               "is_sparse", "names"})
MOVES = frozenset({"to", "type_as", "cuda", "cpu", "type"})
SAME_PLACE = frozenset({"detach", "clone", "contiguous", "float", "double", "half", "bfloat16", "long", "int",
                        "short", "bool", "byte", "char", "view", "view_as", "reshape", "reshape_as", "expand",
                        "expand_as", "repeat", "flatten", "unflatten", "squeeze", "unsqueeze", "permute",
                        "transpose", "t", "mean", "sum", "std", "var", "prod", "max", "min", "amax", "amin", "argmax",
                        "argmin", "abs", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "softmax",
                        "log_softmax", "clamp", "clamp_", "clip", "narrow", "pow", "neg", "cumsum", "triu", "tril",
                        "norm", "round", "floor", "ceil", "sign", "sin", "cos", "roll", "flip", "repeat_interleave",
                        "requires_grad_", "detach_", "fill_", "zero_", "uniform_", "normal_", "bernoulli_",
                        "masked_fill_", "masked_fill", "unsqueeze_", "squeeze_", "sort", "topk", "nonzero", "any",
                        "all", "long_", "chunk", "split", "unbind", "T", "mT", "data", "grad", "real", "imag",
                        "logical_not", "cumprod", "diag", "diagonal", "fill_diagonal_", "__getitem__", "float_"})
# methods that take another tensor which must be on the receiver's device
JOINING = frozenset({"add", "sub", "mul", "div", "matmul", "mm", "bmm", "where", "eq", "ne", "lt", "le", "gt", "ge",
                     "maximum", "minimum", "pow", "add_", "sub_", "mul_", "div_", "addcmul_", "addcdiv_", "lerp_",
                     "lerp", "index_select", "gather", "scatter", "scatter_", "scatter_add", "scatter_add_",
                     "scatter_reduce", "scatter_reduce_", "index_add", "index_add_", "index_copy_", "index_fill_",
                     "masked_scatter_", "remainder", "fmod", "dot", "cross",
                     "logical_and", "logical_or", "bitwise_and", "bitwise_or", "masked_select", "take_along_dim",
                     "floor_divide", "true_divide", "atan2", "hypot", "max", "min", "clamp", "clamp_", "outer",
                     "kron", "cdist", "dist", "put_", "index_put_", "masked_fill", "masked_fill_", "baddbmm", "addmm",
                     "addbmm", "bucketize", "searchsorted"})
# torch functions that return nothing device-related, or take no tensors
NOT_TENSORS = frozenset({"is_tensor", "numel", "is_floating_point", "manual_seed", "get_default_dtype",
                         "set_grad_enabled", "no_grad", "enable_grad", "is_grad_enabled", "device", "Size",
                         "finfo", "iinfo", "save", "load"})
# what else only a tensor (or an array) has
MORE_EVIDENCE = frozenset({"grad", "data", "is_sparse", "new_tensor", "new_full", "new_empty", "type_as", "float",
                           "long", "bool", "half", "double", "clone", "sum", "mean", "max", "min", "sort", "flatten",
                           "expand", "repeat", "exp", "sqrt", "unbind", "nonzero", "abs", "t", "T", "norm",
                           "index_select", "gather", "scatter_add", "masked_select", "numel", "ndimension"})
OWN_TENSORS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "state_dict"})
SAFE_CALLS = BUILTINS | {"np", "numpy", "math"}
# where PyTorch takes a 0-dim CPU tensor beside CUDA tensors as a number (TensorIterator's CPU scalars)
SCALAR_OK = frozenset({"+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", "<=", ">", ">=", "+=", "-=", "*=", "/=",
                       "torch.maximum", "torch.minimum", "torch.add", "torch.sub", "torch.mul",
                       "torch.div", "torch.pow", "torch.fmod", "torch.remainder", "torch.atan2", ".add", ".sub",
                       ".mul", ".div", ".pow", ".maximum", ".minimum", ".add_", ".sub_", ".mul_", ".div_",
                       ".remainder", ".fmod", ".eq", ".ne", ".lt", ".le", ".gt", ".ge"})
OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
             ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
             ast.RShift: ">>", ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


@dataclass(frozen=True)
class Tag:
    kind: str  # input | param | born | fixed | py
    origin: ast.Call | None = None  # the factory (born, fixed)
    guard: str = ""  # fixed: "is_cuda" (under `if x.is_cuda:`), "available" (under `if torch.cuda.is_available()`)
    scalar: bool = False  # born: a 0-dim tensor of a Python value (torch.tensor(rtol), torch.zeros(()))


PY = Tag("py")
INPUT = Tag("input")


@dataclass
class Meeting:
    """A tensor made here meets one of the inputs (or, for "returned", is filled from them and returned)."""

    tag: Tag
    other: ast.expr | None
    how: str  # an operation ("+", "torch.cat", ".index_select") or "returned"
    model: bool = False  # in a method of a module or an optimizer: its inputs live where the model does


def _join(first: Tag | None, second: Tag | None) -> Tag | None:
    """What a name holds after an if: a tensor made here on either path stays made here (`if mask is None:
    mask = torch.ones(n)` is a CPU mask on that path, whatever the other path holds); else an input on either
    path is an input."""
    if first == second:
        return first
    for wanted in ("fixed", "born"):
        for tag in (first, second):
            if tag is not None and tag.kind == wanted:
                return tag
    kinds = {t.kind if t else None for t in (first, second)}
    if "input" in kinds:
        return INPUT
    return None


class InputFlow:
    """Every function of a file, read once: the meetings of tensors made there with the tensors it is given."""

    def __init__(self, analysis: Analysis) -> None:
        self.a = analysis
        self.meetings: dict[int, tuple[ast.AST, Meeting]] = {}  # id(factory) -> (function, first meeting)
        self._fn: ast.AST | None = None
        self._model = False
        self._evidence: set[str] = set()
        self._module_attrs: set[str] = set()
        self._guards: list[str] = []
        self._filled: dict[int, ast.expr] = {}  # factories a value from the inputs was written into: that value
        for fn in self.a.nodes_of(*FUNCTIONS):
            if self.wanted(fn):
                self.read(fn)

    # --- which functions ----------------------------------------------------------------------------------

    def wanted(self, fn: ast.AST) -> bool:
        name = getattr(fn, "name", "")
        if CPU_SIDE.search(name.lower()) or self.a.in_dataset(fn) or self.a.default_device:
            return False
        owner = self.a.owner_of.get(id(fn))
        if owner is not None and CPU_CLASSES.search(owner):
            return False
        filename = getattr(self.a.path, "name", "") or ""
        if re.match(r"test_|conftest\.py$", filename) or filename.endswith("_test.py"):
            return False
        return True

    # --- reading one function -----------------------------------------------------------------------------

    def read(self, fn: ast.AST) -> None:
        self._fn = fn
        owner = self.a.owner_of.get(id(fn))
        self._model = owner is not None and (self.a.is_module_class(owner) or any(
            base.startswith("torch.optim") or base.rsplit(".", 1)[-1] == "Optimizer"
            for base in self.a.classes[owner].bases))
        self._evidence = self._tensor_names(fn)
        self._module_attrs = self._own_tensors(fn)
        self._guards = []
        self._cpu_inputs = False
        before = set(self.meetings)
        env: dict[str, Tag | None] = {}
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if arg.arg in ("self", "cls"):
                continue
            if arg.arg in defaults and self._number(defaults[arg.arg]) and arg.arg not in self._evidence:
                env[arg.arg] = PY  # rtol=0.05: a number
                continue
            annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
            if "Tensor" in annotation or arg.arg in self._evidence:
                env[arg.arg] = INPUT
            elif annotation and re.search(r"\b(int|float|str|bool)\b", annotation) and "Tensor" not in annotation:
                env[arg.arg] = PY
            else:
                env[arg.arg] = Tag("param")
        self.block(fn.body, env)
        if self._cpu_inputs:  # `.numpy()` straight on what the inputs give: they are CPU tensors
            for key in set(self.meetings) - before:
                del self.meetings[key]

    def _tensor_names(self, fn: ast.AST) -> set[str]:
        """Names the function uses as only a tensor can be used (x.shape, x.view(...), torch.sigmoid(x))."""
        out: set[str] = set()
        for node in self.a.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                    node.attr in TENSOR_EVIDENCE or node.attr in MORE_EVIDENCE):
                out.add(node.value.id)
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name) and (
                    (self.a.resolve(node.func) or "").startswith(("torch.", "torch.nn.functional."))) and (
                    (short := (self.a.resolve(node.func) or "").rsplit(".", 1)[-1]) not in NOT_TENSORS) and (
                    short not in FACTORIES and short not in LEGACY_TYPES and not short.endswith("_window")):
                out.add(node.args[0].id)  # torch.sigmoid(x): a tensor; torch.arange(n), torch.zeros(n): a size
        return out

    def _own_tensors(self, fn: ast.AST) -> set[str]:
        """`self.<name>` attributes that are the module's parameters or buffers (they move with the module)."""
        owner = self.a.owner_of.get(id(fn))
        if owner is None:
            return set()
        info = self.a.classes[owner]
        if any(base.startswith("torch.optim") or base.rsplit(".", 1)[-1] == "Optimizer" for base in info.bases):
            return {"param_groups"}  # an optimizer's parameters live where the model does
        if not self.a.is_module_class(owner):
            return set()
        out: set[str] = set()
        for node in self.a.walk(info.node):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and (
                    self.a.resolve(node.value.func) or "").endswith("Parameter"):
                out |= {t.attr for t in node.targets if isinstance(t, ast.Attribute)}
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                    node.func.attr in ("register_buffer", "register_parameter")) and node.args and isinstance(
                    node.args[0], ast.Constant):
                out.add(str(node.args[0].value))
        return out

    def block(self, body: list[ast.stmt], env: dict[str, Tag | None]) -> None:
        for stmt in body:
            self.statement(stmt, env)

    def statement(self, stmt: ast.stmt, env: dict[str, Tag | None]) -> None:
        if isinstance(stmt, (*FUNCTIONS, ast.ClassDef)):
            return  # read on its own
        if isinstance(stmt, ast.Assign):
            tag = self.expr(stmt.value, env)
            for target in stmt.targets:
                self.assign(target, tag, stmt.value, env)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.expr(stmt.value, env), stmt.value, env)
        elif isinstance(stmt, ast.AugAssign):
            right = self.expr(stmt.value, env)
            left = self.expr(stmt.target, env) if isinstance(stmt.target, (ast.Name, ast.Subscript)) else None
            self.meet(left, right, stmt.target, stmt.value, OPERATORS.get(type(stmt.op), "") + "=")
            if isinstance(stmt.target, ast.Name) and left is not None and right is not None and (
                    right.kind == "input" and left.kind == "param"):
                env[stmt.target.id] = INPUT
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            tag = self.expr(stmt.value, env)
            if tag is not None and tag.kind == "born" and tag.origin is not None and id(tag.origin) in self._filled:
                self.record(tag, self._filled[id(tag.origin)], "returned")
        elif isinstance(stmt, ast.Expr):
            self.expr(stmt.value, env)
        elif isinstance(stmt, ast.If):
            self.expr(stmt.test, env)
            guard = self._guard(stmt.test)
            first, second = dict(env), dict(env)
            self._guards.append(guard)
            self.block(stmt.body, first)
            self._guards.pop()
            self.block(stmt.orelse, second)
            for name in set(first) | set(second):
                one, other = first.get(name), second.get(name)
                if guard == "is_cuda" and one is None and other is not None and other.kind == "born":
                    env[name] = None  # moved to the input's device where the input is on a GPU, else both CPU
                else:
                    env[name] = _join(one, other)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.assign(stmt.target, self._item(stmt.iter, env), None, env)
            self.block(stmt.body, env)
            self.block(stmt.orelse, env)
        elif isinstance(stmt, ast.While):
            self.expr(stmt.test, env)
            self.block(stmt.body, env)
            self.block(stmt.orelse, env)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            if any(isinstance(item.context_expr, ast.Call) and (
                    self.a.resolve(item.context_expr.func) or "") == "torch.device" for item in stmt.items):
                return  # factories under `with torch.device(...)` are made there
            for item in stmt.items:
                self.expr(item.context_expr, env)
            self.block(stmt.body, env)
        elif isinstance(stmt, ast.Try):
            self.block(stmt.body, env)
            for handler in stmt.handlers:
                self.block(handler.body, env)
            self.block(stmt.orelse, env)
            self.block(stmt.finalbody, env)

    def _guard(self, test: ast.expr) -> str:
        text = ast.unparse(test)
        if ".is_cuda" in text or ".device.type" in text:
            return "is_cuda"
        if "cuda.is_available" in text:
            return "available"
        return ""

    def _item(self, node: ast.expr, env: dict[str, Tag | None]) -> Tag | None:
        """What a `for` over `node` gives each time."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("zip", "enumerate"):
            tags = [self.expr(arg, env) for arg in node.args]
            return INPUT if any(t is not None and t.kind == "input" for t in tags) else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            self.expr(node, env)
            return PY
        tag = self.expr(node, env)
        if tag is not None and tag.kind in ("input", "param"):
            return tag
        return None

    def assign(self, target: ast.expr, tag: Tag | None, value: ast.expr | None, env: dict[str, Tag | None]) -> None:
        if isinstance(target, ast.Name):
            if tag is not None and tag.kind == "param" and target.id in self._evidence and (
                    value is None or isinstance(value, (ast.Name, ast.Attribute, ast.Subscript))):
                tag = INPUT  # `features = batch[0]` and then `features.size(0)`: a tensor from the inputs
            env[target.id] = tag
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(
                target.elts) else None
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    element = element.value
                if items is not None:
                    self.assign(element, self.expr(items[index], env, count=False), None, env)
                else:
                    self.assign(element, tag if tag is not None and tag.kind in ("input", "param") else None, None,
                                env)
        elif isinstance(target, ast.Subscript):
            base = self.expr(target.value, env)
            index = self._index_tag(target.slice, env)
            if base is not None and base.kind in ("born", "fixed") and index is not None and index.kind == "input":
                self.record(base, target.slice, "[...]")
            elif base is not None and base.kind == "born" and tag is not None and tag.kind == "input" and (
                    base.origin is not None):
                self._filled.setdefault(id(base.origin), value if value is not None else target)
            key = self._key(target)
            if key is not None:
                env[key] = tag
        elif isinstance(target, ast.Attribute):
            self.expr(target.value, env)

    @staticmethod
    def _key(node: ast.Subscript) -> str | None:
        """`state['exp_avg']` as one name (an optimizer's state, a cache)."""
        if isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant) and isinstance(
                node.slice.value, str):
            return f"{node.value.id}[{node.slice.value!r}]"
        return None

    def _index_tag(self, node: ast.expr, env: dict[str, Tag | None]) -> Tag | None:
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        tags = [self.expr(p, env) for p in parts if not isinstance(p, ast.Slice)]
        for p in parts:
            if isinstance(p, ast.Slice):
                for bound in (p.lower, p.upper, p.step):
                    if bound is not None:
                        self.expr(bound, env)
        return INPUT if any(t is not None and t.kind == "input" for t in tags) else None

    # --- expressions ----------------------------------------------------------------------------------------

    def expr(self, node: ast.expr, env: dict[str, Tag | None], count: bool = True) -> Tag | None:
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.Constant):
            return PY
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return INPUT if node.attr in self._module_attrs else None
            if self._model and node.attr in ("weight", "bias") and isinstance(node.value, ast.Attribute) and (
                    isinstance(node.value.value, ast.Name) and node.value.value.id == "self"):
                return INPUT  # self.fc.weight: where the model is
            base = self.expr(node.value, env)
            if node.attr in PYTHON_ATTRIBUTES:
                return PY if base is not None else None
            if base is not None and base.kind in ("input", "born", "fixed") and node.attr in SAME_PLACE:
                return base
            if base is not None and base.kind == "param":
                return Tag("param")
            return None
        if isinstance(node, ast.Subscript):
            key = self._key(node)
            if key is not None and key in env:
                self._index_tag(node.slice, env)
                return env[key]
            base = self.expr(node.value, env)
            index = self._index_tag(node.slice, env)
            if base is not None and base.kind in ("born", "fixed") and index is not None and index.kind == "input":
                self.record(base, node.slice, "[...]")
            if base is not None and base.kind in ("input", "born", "fixed", "param"):
                return base
            return None
        if isinstance(node, ast.BinOp):
            left, right = self.expr(node.left, env), self.expr(node.right, env)
            self.meet(left, right, node.left, node.right, OPERATORS.get(type(node.op), "operator"))
            return self._combine(left, right)
        if isinstance(node, ast.UnaryOp):
            return self.expr(node.operand, env)
        if isinstance(node, ast.Compare):
            tags = [self.expr(node.left, env), *(self.expr(c, env) for c in node.comparators)]
            if not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                operands = [node.left, *node.comparators]
                for i in range(len(tags) - 1):
                    self.meet(tags[i], tags[i + 1], operands[i], operands[i + 1],
                              OPERATORS.get(type(node.ops[i]), "=="))
                return self._combine(*tags)
            return PY
        if isinstance(node, ast.BoolOp):
            tags = [self.expr(v, env) for v in node.values]
            return tags[-1]
        if isinstance(node, ast.IfExp):
            self.expr(node.test, env)
            return _join(self.expr(node.body, env), self.expr(node.orelse, env))
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, (ast.Tuple, ast.List)):
            tags = [self.expr(e.value if isinstance(e, ast.Starred) else e, env) for e in node.elts]
            if any(t is not None and t.kind == "input" for t in tags):
                return INPUT
            return PY if all(t is not None and t.kind == "py" for t in tags) else None
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp, ast.Lambda, ast.Dict)):
            return None
        if isinstance(node, ast.JoinedStr):
            return PY
        if isinstance(node, ast.Starred):
            return self.expr(node.value, env)
        return None

    @staticmethod
    def _combine(*tags: Tag | None) -> Tag | None:
        kinds = [t.kind if t is not None else None for t in tags]
        if "input" in kinds:
            return INPUT
        for wanted in ("fixed", "born"):
            for tag in tags:
                if tag is not None and tag.kind == wanted:
                    return tag
        if all(k == "py" for k in kinds):
            return PY
        if "param" in kinds and all(k in ("param", "py") for k in kinds):
            return Tag("param")
        return None

    def call(self, node: ast.Call, env: dict[str, Tag | None]) -> Tag | None:
        func = node.func
        name = self.a.resolve(func) or ""
        short = name.rsplit(".", 1)[-1] if name else (func.attr if isinstance(func, ast.Attribute) else "")
        arg_nodes = [a.value if isinstance(a, ast.Starred) else a for a in node.args]
        kw = {k.arg: k.value for k in node.keywords}
        # a factory
        if name.startswith("torch.") and name.count(".") == 1 and (short in FACTORIES or short in LEGACY_TYPES):
            for a in arg_nodes:
                self.expr(a, env)
            for value in kw.values():
                self.expr(value, env)
            if None in kw or "out" in kw:
                return None
            if "device" in kw:
                return self._fixed(node, kw["device"])
            if short in ("empty", "zeros", "ones") and len(arg_nodes) == 1 and ast.unparse(arg_nodes[0]) in (
                    "0", "[0]", "(0,)"):
                return None  # an empty placeholder
            if short in ("tensor", "as_tensor", "Tensor") and arg_nodes and self._number(arg_nodes[0]):
                return PY  # a 0-dim tensor of a number mixes with any device
            if short in ("tensor", "as_tensor") and arg_nodes and not isinstance(
                    arg_nodes[0], (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)) and (
                    (t := self.expr(arg_nodes[0], env)) is not None and t.kind == "py"):
                return Tag("born", node, scalar=True)  # torch.tensor(rtol): 0-dim
            if short in ("zeros", "ones", "empty", "full") and arg_nodes and ast.unparse(arg_nodes[0]) in (
                    "()", "[]"):
                return Tag("born", node, scalar=True)
            if short in ("tensor", "as_tensor", "from_numpy") and arg_nodes and (
                    (t := self.expr(arg_nodes[0], env)) is not None and t.kind == "input"):
                return None  # made from the inputs: it depends on what they are
            return Tag("born", node)
        if isinstance(func, ast.Attribute) and not name and self._model and isinstance(func.value, ast.Name) and (
                func.value.id == "self") and func.attr in OWN_TENSORS:
            return INPUT  # self.parameters(), self.state_dict(): where the model is
        if isinstance(func, ast.Attribute) and not name:
            receiver = self.expr(func.value, env)
            method = func.attr
            args = [self.expr(a, env) for a in arg_nodes]
            kwargs = {k: self.expr(v, env) for k, v in kw.items() if k is not None}
            if method in PYTHON_METHODS:
                if method == "numpy" and receiver is not None and receiver.kind == "input":
                    self._cpu_inputs = True
                return PY if receiver is not None else None
            if method in MOVES:
                if receiver is not None and receiver.kind in ("born", "fixed") and receiver.origin is not None:
                    if method == "cpu":
                        return receiver
                    if method == "cuda" and not arg_nodes and "device" not in kw or method in (
                            "to", "type") and self._names_cuda(arg_nodes, kw):
                        return Tag("fixed", receiver.origin, self._current_guard())
                    if method == "to" and not arg_nodes and set(kw) <= {"dtype", "non_blocking", "copy"}:
                        return receiver  # .to(dtype=...) stays where it is
                    if method == "to" and arg_nodes and (self._dtype(arg_nodes[0])):
                        return receiver
                    return None  # moved to where something else is
                if receiver is not None and receiver.kind == "input" and (method == "cpu" or method == "type" and (
                        arg_nodes and (self.a.resolve(arg_nodes[0]) or "").startswith("torch.")
                        and "cuda" not in (self.a.resolve(arg_nodes[0]) or ""))):
                    return None  # .cpu(), .type(torch.LongTensor): on the CPU now
                return receiver if receiver is not None and receiver.kind in ("input", "param") else None
            if method in ("new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"):
                return receiver if receiver is not None and receiver.kind in ("input", "born", "fixed") else None
            others = [*zip(arg_nodes, args), *((kw[k], t) for k, t in kwargs.items())]
            if receiver is not None and receiver.kind in ("input", "born", "fixed"):
                if method in JOINING or method.endswith("_") and method[:-1] in JOINING:
                    for other_node, other in others:
                        self.meet(receiver, other, func.value, other_node, f".{method}")
                if method in SAME_PLACE or method in JOINING:
                    return receiver
                return receiver if receiver.kind == "input" else None
            if receiver is not None and receiver.kind == "param":
                if any(t is not None and t.kind == "input" for t in args):
                    return INPUT
                return Tag("param") if method in SAME_PLACE else None
            # a method of something else (self.sub(x), obj.method(x)): what it gives follows the inputs
            if any(t is not None and t.kind == "input" for t in [*args, *kwargs.values()]):
                return INPUT
            return None
        args = [self.expr(a, env) for a in arg_nodes]
        kwargs = {k: self.expr(v, env) for k, v in kw.items() if k is not None}
        every = [*args, *kwargs.values()]
        if name.startswith("torch."):
            if short in ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                         "randint_like"):
                return args[0] if args and args[0] is not None and args[0].kind == "input" else None
            if short in NOT_TENSORS:
                return PY
            nodes = [*arg_nodes, *(kw[k] for k in kwargs)]
            flat: list[tuple[ast.expr, Tag | None]] = []
            for n, t in zip(nodes, every):
                if isinstance(n, (ast.List, ast.Tuple)):
                    flat += [(e, self.expr(e, env, count=False)) for e in n.elts]
                else:
                    flat.append((n, t))
            born = [(n, t) for n, t in flat if t is not None and t.kind in ("born", "fixed")]
            there = [(n, t) for n, t in flat if t is not None and t.kind == "input"]
            if born and there:
                self.meet(born[0][1], there[0][1], born[0][0], there[0][0], name)
            return self._combine(*(t for _, t in flat)) if flat else None
        if name.startswith("math."):
            return PY
        if isinstance(func, ast.Name) and func.id in SAFE_CALLS or name.startswith("numpy."):
            if isinstance(func, ast.Name) and func.id in ("list", "tuple", "sorted", "reversed") and args:
                return args[0] if args[0] is not None and args[0].kind in ("input", "param") else None
            numbers = ("len", "int", "float", "bool", "str", "round", "abs", "min", "max", "sum")
            return PY if isinstance(func, ast.Name) and func.id in numbers else None
        # another package's function given both (scatter_add(ones, index)): they must share a device
        if name and not name.startswith(("torch.", "builtins.")) and "." in name and (
                name.split(".")[0] not in self.a.classes and name.split(".")[0] not in self.a.functions):
            pairs = [(n, t) for n, t in zip([*arg_nodes, *(kw[k] for k in kwargs)], every)]
            born = [(n, t) for n, t in pairs if t is not None and t.kind in ("born", "fixed")]
            ecosystem = name.split(".")[0].startswith("torch")
            there = [(n, t) for n, t in pairs if t is not None and (
                t.kind == "input" or ecosystem and t.kind == "param")]
            if born and there:
                self.meet(born[0][1], INPUT, born[0][0], there[0][0], name)
        if any(t is not None and t.kind == "input" for t in every):
            return INPUT
        return None

    @staticmethod
    def _number(node: ast.expr) -> bool:
        if isinstance(node, ast.UnaryOp):
            node = node.operand
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
            return True
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
            "float", "int", "bool")

    def _dtype(self, node: ast.expr) -> bool:
        return (self.a.resolve(node) or "").startswith("torch.") and (
            self.a.resolve(node) or "").rsplit(".", 1)[-1] in ("float", "float32", "float16", "half", "double",
                                                               "float64", "long", "int64", "int", "int32", "bool",
                                                               "bfloat16", "uint8", "int8")

    def _names_cuda(self, args: list[ast.expr], kw: dict) -> bool:
        for node in [*args[:1], kw.get("device")]:
            if node is None:
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("cuda"):
                return True
            if isinstance(node, ast.Call) and (self.a.resolve(node.func) or "") == "torch.device" and node.args and (
                    isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("cuda")):
                return True
        return False

    def _fixed(self, factory: ast.Call, device: ast.expr) -> Tag | None:
        if self._names_cuda([device], {}):
            return Tag("fixed", factory, self._current_guard())
        return None

    def _current_guard(self) -> str:
        for guard in reversed(self._guards):
            if guard:
                return guard
        return ""

    # --- meetings -------------------------------------------------------------------------------------------

    def meet(self, first: Tag | None, second: Tag | None, first_node: ast.expr | None, second_node: ast.expr | None,
             how: str) -> None:
        for made, other, node in ((first, second, second_node), (second, first, first_node)):
            if made is not None and made.kind in ("born", "fixed") and other is not None and other.kind == "input":
                if made.scalar and how in SCALAR_OK:
                    continue  # a 0-dim CPU tensor is a number to these
                self.record(made, node, how)

    def record(self, tag: Tag, other: ast.expr | None, how: str) -> None:
        if tag.origin is None or id(tag.origin) in self.meetings:
            return
        self.meetings[id(tag.origin)] = (self._fn, Meeting(tag, other, how, self._model))


def input_name(node: ast.expr | None, analysis: Analysis | None = None) -> str:
    """How a finding names the input a new tensor meets: `pred` for `pred.view(-1)[mask].float()`,
    `outputs["boxes"]` for `outputs["boxes"][i]`, the expression itself when short, else the first name in it
    that is no imported module (`s_feat` in `mmd.cmmd(s_feat, t_feat)`)."""
    if node is None:
        return "x"
    start = node
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SAME_PLACE:
            node = node.func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(
                node.slice.value, str) and isinstance(node.value, ast.Name):
            return ast.unparse(node)
        elif isinstance(node, ast.Subscript) or isinstance(node, ast.Attribute) and node.attr in ("T", "mT", "data"):
            node = node.value
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return ast.unparse(node)
        else:
            text = ast.unparse(start)
            if len(text) <= 40 and analysis is None:
                return text
            for inner in ast.walk(start):
                if isinstance(inner, ast.Name) and (analysis is None or analysis.resolve(inner) is None) and (
                        inner.id not in ("self", "cls")):
                    return inner.id
            return "x"
