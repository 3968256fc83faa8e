"""Which machines code is written for, as far as the code shows it (DL103 and DL701 read this).

A file *asks for a device* when anything in it chooses or checks one: `torch.cuda.is_available()` /
`device_count()`, `torch.accelerator` or `torch.backends.mps`, a command-line option or setting about the device
(`--cuda`, `--device`, `args.gpu`, `cfg.device`, `use_cuda`, `no_cuda`), a function parameter named for a
device (`device`, `gpu`, `local_rank`: the caller picks it), CUDA_VISIBLE_DEVICES, a distributed process group.

Code *demands CUDA* when it stops without it: `assert torch.cuda.is_available()`, or
`if not torch.cuda.is_available(): raise ...` (or `sys.exit(...)`), at the top level of a module (which then
cannot even be imported without a GPU) or of the function that runs the code.

Code is *written for CUDA* when it moves things with a bare `.cuda()` and nothing asks for a device: in one
function (a `.cuda()` statement of its own body, not under an `if`), in a whole file, or in a whole folder (some
script or notebook of the folder calls `.cuda()`, and none of them asks for a device: research code that calls
`.cuda()` everywhere). A folder is read once per run, each of its `.py` and `.ipynb` files parsed on its own.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

from .tree import FUNCTIONS, keyword

DEVICE_SETTING = re.compile(r"^(use_|no_|has_|with_|n)?(cuda|gpu|gpus|gpu_ids?|device|devices|cpu|local_rank)$",
                            re.IGNORECASE)
DEVICE_CHECKS = frozenset({"is_available", "device_count", "current_accelerator", "is_built", "accelerator",
                           "init_process_group", "mps"})
SETTINGS = frozenset({"args", "opt", "opts", "cfg", "config", "conf", "hparams", "hp", "params", "flags", "FLAGS",
                      "options", "self", "settings"})
_FOLDERS: dict[tuple[str, tuple[tuple[str, int], ...]], tuple[bool, int, int]] = {}
_LARGEST = 10_000_000  # a bigger file beside the one linted is not read for this


def asks_for_device(nodes_of: Callable[..., Iterable[ast.AST]]) -> bool:
    """Whether code asks which device there is (see the module's docstring); `nodes_of(*kinds)` gives its nodes
    of those kinds."""
    for node in nodes_of(ast.Attribute):
        if node.attr in DEVICE_CHECKS:
            return True
        if DEVICE_SETTING.match(node.attr) and isinstance(node.value, ast.Name) and node.value.id in SETTINGS:
            return True
    for node in nodes_of(ast.Name):
        if DEVICE_SETTING.match(node.id) and node.id.lower() not in ("device", "devices", "cpu", "gpu", "cuda") \
                or node.id in DEVICE_CHECKS:
            return True
    for node in nodes_of(ast.Constant):
        text = node.value if isinstance(node.value, str) else ""
        if "CUDA_VISIBLE_DEVICES" in text or text.startswith("--") and any(
                word in text.lower() for word in ("cuda", "gpu", "cpu", "device")):
            return True
    for node in nodes_of(*FUNCTIONS):
        if any(DEVICE_SETTING.match(arg.arg) and arg.arg not in ("cpu",) for arg in node.args.args):
            return True  # a device handed in by the caller
    return False


def bare_cuda(call: ast.Call) -> bool:
    """`x.cuda()` (or `.cuda(0)`, `.cuda(non_blocking=True)`): the current GPU, with no device chosen."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "cuda") or (
            isinstance(func.value, ast.Name) and func.value.id == "torch"):
        return False
    return keyword(call, "device") is None and all(isinstance(arg, ast.Constant) for arg in call.args)


def _cuda_available(test: ast.expr) -> bool:
    """`torch.cuda.is_available()` (or `device_count()`), alone or as a part of an `and`."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_cuda_available(value) for value in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Gt, ast.GtE)):
        test = test.left  # torch.cuda.device_count() > 0
    return isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and (
        test.func.attr in ("is_available", "device_count")) and isinstance(test.func.value, ast.Attribute) and (
        test.func.value.attr == "cuda")


def _stops(body: list[ast.stmt]) -> bool:
    """A block that ends the program: `raise ...`, `sys.exit(...)`, `exit()`, `quit()`."""
    last = body[-1] if body else None
    if isinstance(last, ast.Raise):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        func = last.value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name in ("exit", "quit", "_exit")
    return False


def demands_cuda(body: list[ast.stmt]) -> bool:
    """A statement of this body (not nested) that stops the program without CUDA: `assert
    torch.cuda.is_available()`, or `if not torch.cuda.is_available(): raise/sys.exit(...)`."""
    for stmt in body:
        if isinstance(stmt, ast.Assert) and _cuda_available(stmt.test):
            return True
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not) and (
                _cuda_available(stmt.test.operand)) and _stops(stmt.body):
            return True
    return False


def function_commits_to_cuda(body: list[ast.stmt]) -> bool:
    """A `.cuda()` that always runs in this body: in one of its own statements (not under an `if`, a `try` or a
    loop, not in a nested function)."""
    for stmt in body:
        if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.With)):
            parts = [stmt] if not isinstance(stmt, ast.With) else [item.context_expr for item in stmt.items]
            for part in parts:
                if any(isinstance(node, ast.Call) and bare_cuda(node) for node in _own_nodes(part)):
                    return True
            if isinstance(stmt, ast.With) and function_commits_to_cuda(stmt.body):
                return True
    return False


def _own_nodes(node: ast.AST) -> Iterable[ast.AST]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, (*FUNCTIONS, ast.Lambda, ast.ClassDef, ast.IfExp)):
                stack.append(child)


def folder_written_for_cuda(path: Path | None, files: int = 1) -> bool:
    """Whether the folder of `path` is written for CUDA: at least `files` of its `.py` and `.ipynb` files (`path`
    itself included) call `.cuda()`, and none of them asks for a device. A script alone in its folder is read with
    the folder above it (a project's scripts in a subfolder of their own)."""
    state = folder_state(path)
    if state is not None and state[2] == 1 and path is not None and path.parent.parent != path.parent:
        above = folder_state(path.parent)
        if above is not None:
            state = (state[0] or above[0], state[1] + above[1], state[2] + above[2])
    return state is not None and state[1] >= files and not state[0]


def folder_state(path: Path | None) -> tuple[bool, int, int] | None:
    """(some file of the folder asks for a device, how many of its files call a bare `.cuda()`, how many `.py`
    and `.ipynb` files it holds); None when the folder cannot be listed."""
    if path is None:
        return None
    folder = path.parent
    files = _listing(folder)
    if files is None:
        return None
    key = (str(folder.resolve()), tuple(files))
    if key not in _FOLDERS:
        asks, uses = False, 0
        for name, _ in files:
            tree = _read(folder / name)
            if tree is None:
                continue
            kinds: dict[type, list[ast.AST]] = {}
            for node in ast.walk(tree):
                kinds.setdefault(type(node), []).append(node)
            asks = asks or asks_for_device(lambda *wanted, k=kinds: [n for w in wanted for n in k.get(w, ())])
            uses += any(bare_cuda(call) for call in kinds.get(ast.Call, ()))
            if asks:
                break
        _FOLDERS[key] = (asks, uses, len(files))
    return _FOLDERS[key]


def _listing(folder: Path, suffixes: tuple[str, ...] = (".py", ".ipynb"), without: Path | None = None,
             ) -> list[tuple[str, int]] | None:
    """The code files of `folder` that are read for evidence (name, modification time), sorted; None when it
    cannot be listed. Files over _LARGEST, and `without`, are left out."""
    try:
        skip = without.resolve() if without is not None else None
        out = []
        with os.scandir(folder) as entries:  # one stat per file: a big folder is listed once per file linted
            for entry in entries:
                if not entry.name.endswith(suffixes) or not entry.is_file():
                    continue
                info = entry.stat()
                if info.st_size > _LARGEST:
                    continue
                if skip is not None and entry.name == skip.name and Path(entry.path).resolve() == skip:
                    continue
                out.append((entry.name, info.st_mtime_ns))
        return sorted(out)
    except OSError:
        return None


def _package_folders(path: Path, above: bool = False) -> list[Path]:
    """The folder of `path`, and the folders of its package up to the package's top (six at most); with `above`,
    the folder that holds the package as well (where the scripts that import it live)."""
    folders = [path.parent]
    while (folders[-1] / "__init__.py").is_file() and folders[-1].parent != folders[-1] and len(folders) < 6:
        folders.append(folders[-1].parent)
    if above and folders[-1].parent != folders[-1] and len(folders) < 6:
        folders.append(folders[-1].parent)
    return folders


_TREES: dict[tuple[str, int], ast.Module | None] = {}
_MODULES: dict[tuple[str, int], ast.Module | None] = {}


def _once(cache: dict[tuple[str, int], ast.Module | None], path: Path,
          make: Callable[[], ast.Module | None]) -> ast.Module | None:
    """`make()` for this version of the file (its path and modification time), once per run; None when the file
    cannot be seen. At most 512 trees are kept: a long run over a big project keeps its memory bounded."""
    try:
        key = (str(path.resolve()), path.stat().st_mtime_ns)
    except OSError:
        return None
    if key not in cache:
        if len(cache) >= 512:
            cache.clear()
        cache[key] = make()
    return cache[key]


def _read(path: Path) -> ast.Module | None:
    """A neighbour file's tree, parsed once per run whichever rule asks (the trees are only read), or None."""
    return _once(_TREES, path, lambda: _parse(path))


def parse_module(path: Path, text: str | bytes | None = None) -> ast.Module | None:
    """A .py file of the project parsed once per run, whoever asks (machines.py's neighbours, project.py's
    imported modules); the trees are only read. None when it cannot be read or parsed."""

    def make() -> ast.Module | None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ast.parse(path.read_bytes() if text is None else text)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    return _once(_MODULES, path, make)


def _parse(path: Path) -> ast.Module | None:
    from .core import Unreadable, cells_source, decoded, read_notebook

    try:
        text = decoded(path.read_bytes(), path)
        if "torch" not in text and ".cuda(" not in text:
            return None
        if path.suffix == ".py":
            return parse_module(path, text)
        if path.suffix == ".ipynb":
            text = cells_source(read_notebook(text)[0]).text
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError, Unreadable):
        return None


def beside_cuda_sources(path: Path | None) -> bool:
    """The folder of `path` builds a CUDA extension: it, or a folder right under it, holds CUDA sources (`.cu`,
    `.cuh`), or a `setup.py` of the folder builds a `CUDAExtension`. Its scripts test or drive the extension, which
    exists only where CUDA is."""
    if path is None:
        return False
    folder = path.parent
    try:
        for entry in folder.iterdir():
            if entry.suffix in (".cu", ".cuh") and entry.is_file():
                return True
            if entry.name == "setup.py" and entry.is_file() and entry.stat().st_size <= _LARGEST and (
                    b"CUDAExtension" in entry.read_bytes()):
                return True
            if entry.is_dir() and not entry.name.startswith("."):
                if any(f.suffix in (".cu", ".cuh") for f in entry.iterdir()):
                    return True
    except OSError:
        return False
    return False


# ------------------------------------------------------------------------------------------------ other machines
# What DL701 needs before it speaks: the program that loads a checkpoint shows that it runs where the GPU the
# checkpoint was saved from is absent (no GPU at all, or another GPU index). Without such evidence the machine it
# runs on is unknown, and DL701 says nothing.

RUN_TIME_CHECKS = frozenset({"is_available", "device_count", "current_accelerator", "init_process_group"})
OPTION_OBJECTS = SETTINGS - {"self"}  # settings read from a command line or a configuration, not an object's own
DEVICE_WORDS = frozenset({"cpu", "cuda", "mps"})
DEFAULT_GETTERS = frozenset({"get", "getattr", "getenv", "pop", "setdefault"})
_PACKAGES: dict[tuple[str, ...], bool] = {}


def _device_constant(node: ast.AST, words: frozenset[str] = frozenset({"cpu"})) -> bool:
    """`"cpu"` (or, with `words`, `"cuda"`...), or `torch.device("cpu")`."""
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) and (
            getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "device" and node.args:
        node = node.args[0]
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and (
        node.value.strip().lower().split(":")[0] in words)


def _in_demand(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """A check that only stops the program without CUDA: in an `assert`, or the test of `if not ...: raise`."""
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, ast.stmt):
        child, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.Assert):
        return True
    return isinstance(parent, ast.If) and parent.test is child and isinstance(child, ast.UnaryOp) and isinstance(
        child.op, ast.Not) and _stops(parent.body)


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    """Each node's parent, by the child's id (one pass over the tree: `ast.walk` would list each node's children a
    second time)."""
    parents: dict[int, ast.AST] = {}
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
            stack.append(child)
    return parents


class _ParentsOf:
    """The `{id(child): parent}` mapping read here, from an analysis's own index of the file (no second walk)."""

    def __init__(self, analysis) -> None:  # noqa: ANN001 - analysis.Analysis (not imported: it imports this)
        self.a = analysis

    def get(self, key: int, default: ast.AST | None = None) -> ast.AST | None:
        index = self.a._index.get(key)
        if index is None or self.a._parent_of[index] < 0:
            return default
        return self.a.nodes[self.a._parent_of[index]]

    def __getitem__(self, key: int) -> ast.AST:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found


def runs_elsewhere(tree: ast.AST, parents: dict[int, ast.AST] | None = None, analysis=None) -> bool:  # noqa: ANN001
    """Whether the code shows that it runs where a checkpoint's GPU may be absent: a CUDA check that does not stop
    the program (`"cuda" if torch.cuda.is_available() else "cpu"`, `if torch.cuda.is_available(): model.cuda()`),
    a device test (`device == "cpu"`, `x.device.type == "cuda"`), the CPU chosen as a device (`torch.device("cpu")`
    as a branch, a default or a value, `device="cpu"`), a command-line option or a setting about the device
    (`--device`, `--cpu`, `--no-cuda`, `--gpu`, `args.cuda`, `opt.use_gpu`, `use_cuda`, `local_rank`), a
    distributed process group (other GPU indices), or `map_location` given anywhere (its authors move checkpoints
    between devices). `analysis`: the file's Analysis, whose index of the tree is read instead of walking it."""
    if analysis is not None:
        parents, nodes = _ParentsOf(analysis), analysis.nodes
    else:
        parents, nodes = _parents(tree) if parents is None else parents, ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Attribute):
            if node.attr in RUN_TIME_CHECKS and isinstance(parents.get(id(node)), ast.Call) and not _in_demand(
                    parents[id(node)], parents):
                return True
            if node.attr == "accelerator" and isinstance(node.value, ast.Name) and node.value.id == "torch":
                return True
            if DEVICE_SETTING.match(node.attr) and isinstance(node.value, ast.Name) and (
                    node.value.id in OPTION_OBJECTS):
                return True
        elif isinstance(node, ast.Name):
            if DEVICE_SETTING.match(node.id) and node.id.lower() not in ("device", "devices", "cpu", "gpu", "cuda"):
                return True  # use_cuda, no_cuda, use_gpu, ngpu, gpu_ids, local_rank: a switch or a GPU choice
        elif isinstance(node, ast.keyword):
            if node.arg == "map_location":
                return True
        elif isinstance(node, ast.Compare):
            if any(_device_constant(side, DEVICE_WORDS) for side in (node.left, *node.comparators)):
                return True  # device == "cpu", x.device.type == "cuda", "cuda" in str(device)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if text.startswith("--") and any(word in text.lower() for word in ("cuda", "gpu", "cpu", "device")):
                return True
            if _device_constant(node) and _cpu_as_device(node, parents):
                return True
    return False


def _cpu_as_device(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """`"cpu"` where it is a device the program may run on: a branch of a conditional expression, a default (of a
    parameter, an option, a `get`), among an option's choices, assigned, or handed as a keyword (`device="cpu"`);
    not `.to("cpu")`, which only moves a result off the GPU."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Call) and _device_constant(parent) and parent.args and parent.args[0] is node:
        node, parent = parent, parents.get(id(parent))  # torch.device("cpu")
    if isinstance(parent, (ast.List, ast.Tuple, ast.Set)):
        holder = parents.get(id(parent))
        return isinstance(holder, ast.keyword) and holder.arg == "choices"
    if isinstance(parent, ast.IfExp):
        return node is not parent.test
    if isinstance(parent, (ast.keyword, ast.arguments)):
        return True
    if isinstance(parent, (ast.Assign, ast.AnnAssign)):
        return parent.value is node
    if isinstance(parent, ast.Call) and node in parent.args[1:]:
        func = parent.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name in DEFAULT_GETTERS
    return False


def is_library(tree: ast.Module) -> bool:
    """A module that only defines things: no `if __name__ == "__main__":`, no loop or `with` at its top level, no
    `parse_args()` or `torch.load` there, and no statement there that only calls one of its own functions
    (`main()`)."""
    own = {stmt.name for stmt in tree.body if isinstance(stmt, (*FUNCTIONS, ast.ClassDef))}
    for stmt in tree.body:
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            return False
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare) and isinstance(
                stmt.test.left, ast.Name) and stmt.test.left.id == "__name__":
            return False
        if isinstance(stmt, (*FUNCTIONS, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(
                stmt.value.func, ast.Name) and stmt.value.func.id in own:
            return False
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                    node.func.attr in ("parse_args", "parse_known_args") or node.func.attr == "load" and isinstance(
                    node.func.value, ast.Name) and node.func.value.id == "torch"):
                return False
    return True


def follows_devices(tree: ast.Module) -> bool:
    """Code that works on whatever device its caller uses: a parameter named for a device, or a tensor's or a
    module's `.device` read."""
    for node in ast.walk(tree):
        if isinstance(node, FUNCTIONS) and any(
                DEVICE_SETTING.match(arg.arg) for arg in (*node.args.args, *node.args.kwonlyargs)):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "device" and isinstance(node.ctx, ast.Load):
            return True
    return False


def package_runs_elsewhere(path: Path | None) -> bool:
    """Whether a library module is run by a program that shows it runs elsewhere (`runs_elsewhere`): some other
    `.py` file of its folder (the scripts beside a helper module), or, in a package, of the package's folders up to
    the folder above it (where the scripts and the configuration that import it live), shows it."""
    if path is None:
        return False
    files = []
    for folder in _package_folders(path):
        listed = _listing(folder, (".py",), without=path)
        if listed is None:
            return False
        files += [(folder / name, mtime) for name, mtime in listed]
    files.sort()
    key = tuple(f"{file.resolve()}:{mtime}" for file, mtime in files)
    if key not in _PACKAGES:
        _PACKAGES[key] = False
        for file, _ in files:
            tree = _read(file)
            if tree is not None and runs_elsewhere(tree):
                _PACKAGES[key] = True
                break
    return _PACKAGES[key]


# ------------------------------------------------------------------------------------------------ models moved
# What DL501 needs before it speaks: the model whose forward builds a CPU tensor really runs on an accelerator.
# The evidence is a move of an instance of the class, or of a model built from it: `Net().cuda()`,
# `model = Net(...)` then `model.to(device)` (any device but the CPU), in the file or in another `.py` file of its
# folder, its package, or the folder above (the scripts that train it). A class built inside a moved class (`self.
# block = Block(...)`) moves with it. A script that moves its model (`model.cuda()`) runs every model class it
# defines on the device. Without such evidence the model may never leave the CPU, and DL501 says nothing.

_MOVES: dict[tuple[str, ...], tuple[frozenset[str], dict[str, frozenset[str]]]] = {}
DTYPE_WORDS = frozenset({"float", "double", "half", "bfloat16", "float16", "float32", "float64", "int", "long",
                         "int64", "int32", "bool", "uint8", "complex64"})


def _callee(node: ast.AST) -> str | None:
    """`Net` for `Net(...)` or `models.Net(...)`; through wrappers (`nn.DataParallel(Net())`)."""
    while isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in ("DataParallel", "DistributedDataParallel", "compile") and node.args:
            node = node.args[0]
            continue
        return name
    return None


def _moves_to_device(call: ast.Call) -> bool:
    """`.cuda(...)`, or `.to(x)` where x may be a GPU (not the CPU, not a dtype)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "cuda":
        return not (isinstance(func.value, ast.Name) and func.value.id == "torch")
    if func.attr != "to" or not (call.args or keyword(call, "device") is not None):
        return False
    where = keyword(call, "device") or call.args[0]
    if _device_constant(where):
        return False
    return not (isinstance(where, ast.Attribute) and where.attr in DTYPE_WORDS)


def _key(node: ast.AST) -> str:
    """A name or an attribute chain as written (`model`, `self.net`), the way `ast.unparse` writes it, cheaply."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ast.unparse(node) + "".join(f".{part}" for part in reversed(parts))
    return ".".join([node.id, *reversed(parts)])


def _bind(node: ast.Assign | ast.AnnAssign, bound: dict[str, set[str]]) -> None:
    """Remember the class an assignment builds under the name it binds (`model = Net()`, `self.net = Net().cuda()`)."""
    if node.value is None:
        return
    name = _callee(node.value)
    if name is None and isinstance(node.value, ast.Call) and _moves_to_device(node.value):
        name = _callee(node.value.func.value)  # model = Net().to(device): counted below as well
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        if isinstance(target, (ast.Name, ast.Attribute)) and name:
            bound.setdefault(_key(target), set()).add(name)


def moves_in(tree: ast.AST, analysis=None) -> tuple[frozenset[str], dict[str, frozenset[str]], bool]:  # noqa: ANN001
    """(the names of the classes this code moves to a device, what each class of it builds (`self.x = Block()`),
    whether it moves a model whose class it cannot name). One pass over the tree, or none with the file's
    Analysis (`analysis`), whose index of the tree is read instead."""
    from .analysis import child_nodes

    bound: dict[str, set[str]] = {}
    moves: list[ast.Call] = []
    builds: dict[str, set[str]] = {}
    stack: list[tuple[ast.AST, tuple[str, ...]]] = [] if analysis is not None else [(tree, ())]
    if analysis is not None:
        for cls in analysis.nodes_of(ast.ClassDef):
            builds.setdefault(cls.name, set()).update(
                name for call in analysis.walk(cls) if isinstance(call, ast.Call)
                and (name := _callee(call)) and name[:1].isupper())
        moves = [call for call in analysis.nodes_of(ast.Call) if _moves_to_device(call)]
        for node in analysis.nodes_of(ast.Assign, ast.AnnAssign):
            _bind(node, bound)
    while stack:
        node, classes = stack.pop()
        if isinstance(node, ast.ClassDef):
            builds.setdefault(node.name, set())
            classes = (*classes, node.name)  # what its bases, decorators and body call: built by it
        elif isinstance(node, ast.Call):
            if classes and (name := _callee(node)) and name[:1].isupper():
                for owner in classes:
                    builds[owner].add(name)
            if _moves_to_device(node):
                moves.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            _bind(node, bound)
        stack.extend((child, classes) for child in child_nodes(node))
    moved: set[str] = set()
    unnamed = False
    for node in moves:
        receiver = node.func.value  # type: ignore[attr-defined]
        if isinstance(receiver, ast.Call):
            name = _callee(receiver)
            if name and name[:1].isupper():
                moved.add(name)
        elif isinstance(receiver, (ast.Name, ast.Attribute)):
            names = {name for name in bound.get(_key(receiver), set()) if name[:1].isupper()}
            moved |= names
            if not names:
                text = _key(receiver).lower()
                if "model" in text or text.rsplit(".", 1)[-1] in ("net", "network"):
                    unnamed = True  # model = build_model(cfg); model.cuda()
    return frozenset(moved), {name: frozenset(built) for name, built in builds.items()}, unnamed


def classes_on_device(tree: ast.Module, path: Path | None, analysis=None) -> set[str]:  # noqa: ANN001
    """The classes of `tree` that run on a device: moved (see above) here or in the project's files near it, or
    built inside a class that is; every class of a script that moves a model whose class it does not name."""
    moved, builds, unnamed = moves_in(tree, analysis)
    found, contains = set(moved), {k: set(v) for k, v in builds.items()}
    own = {node.name for node in tree.body if isinstance(node, ast.ClassDef)} | set(builds)
    if unnamed and not is_library(tree):
        found |= own
    for other_moved, other_builds in _project_moves(path):
        found |= other_moved
        for name, built in other_builds.items():
            contains.setdefault(name, set()).update(built)
    changed = True
    while changed:
        changed = False
        for name in list(found):
            new = contains.get(name, set()) - found
            if new:
                found |= new
                changed = True
    return found & own


def _project_moves(path: Path | None) -> list[tuple[frozenset[str], dict[str, frozenset[str]]]]:
    if path is None:
        return []
    out = []
    for folder in _package_folders(path, above=True):
        files = _listing(folder)
        if files is None:
            continue
        key = (str(folder.resolve()), *(f"{n}:{t}" for n, t in files))
        if key not in _MOVES:
            all_moved: set[str] = set()
            all_builds: dict[str, frozenset[str]] = {}
            for name, _ in files:
                tree = _read(folder / name)
                if tree is None:
                    continue
                moved, builds, _ = moves_in(tree)
                all_moved |= moved
                all_builds.update(builds)
            _MOVES[key] = (frozenset(all_moved), all_builds)
        out.append(_MOVES[key])
    return out


# ------------------------------------------------------------------------------------------------ CPU machines
# What DL103 needs before it speaks: a script that calls `.cuda()` without asking is a mistake only where the
# project means its scripts to run on machines without a GPU too. The evidence is the script's neighbours: the
# other files of its folder (a script alone in its folder: with the folder above) that run on the CPU (and never
# call a bare `.cuda()` unconditionally, at the top level or in a function's own body; a CUDA check that does not
# stop them, the CPU chosen as a device, a `--cpu`/`--no-cuda` option or a `use_cuda` switch,
# Hugging Face Accelerate, which falls back to the CPU) are at least as many as those that call `.cuda()` without
# any of this. Fewer, or none: the folder is written for GPU machines, or nothing says; DL103 says nothing.

_CPU_FOLDERS: dict[tuple[str, ...], tuple[int, int]] = {}
CPU_SWITCH = re.compile(r"^(use_|no_|with_)(cuda|gpu)$", re.IGNORECASE)


def runs_on_cpu(tree: ast.AST) -> bool:
    """Whether code shows it runs on a machine without a GPU (see above)."""
    parents = _parents(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in ("is_available", "device_count") and isinstance(parents.get(id(node)), ast.Call) and (
                    not _in_demand(parents[id(node)], parents)):
                return True
            if CPU_SWITCH.match(node.attr) or node.attr == "cpu" and not isinstance(parents.get(id(node)), ast.Call):
                return True  # args.use_cuda, args.cpu
        elif isinstance(node, ast.Name):
            if CPU_SWITCH.match(node.id) or node.id == "Accelerator":
                return True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.lower()
            if text.startswith("--") and text.strip("-").replace("_", "-") in ("cpu", "no-cuda", "no-gpu", "use-cpu"):
                return True
            holder = parents.get(id(node))
            if _device_constant(node) and not (isinstance(holder, ast.keyword) and holder.arg == "map_location") and (
                    _cpu_as_device(node, parents)):
                return True
    return False


def commits_to_cuda(tree: ast.Module) -> bool:
    """A bare `.cuda()` that always runs: at the top level, or in a function's own body (not under an `if`)."""
    return function_commits_to_cuda(tree.body) or any(
        function_commits_to_cuda(node.body) for node in ast.walk(tree) if isinstance(node, FUNCTIONS))


def neighbours_run_on_cpu(path: Path | None) -> bool:
    """The other files of the folder of `path` that run on the CPU are at least as many as those written for CUDA
    (a bare `.cuda()` and no sign of the CPU), and there is one."""
    if path is None:
        return False
    cpu, cuda = _cpu_state(path.parent, path)
    if cpu + cuda == 0 and path.parent.parent != path.parent:
        cpu, cuda = _cpu_state(path.parent.parent, path)
    return cpu > 0 and cpu >= cuda


def _cpu_state(folder: Path, path: Path) -> tuple[int, int]:
    files = _listing(folder, without=path)
    if files is None:
        return 0, 0
    key = (str(folder.resolve()), *(f"{n}:{t}" for n, t in files))
    if key not in _CPU_FOLDERS:
        cpu = cuda = 0
        for name, _ in files:
            tree = _read(folder / name)
            if tree is None:
                continue
            if runs_on_cpu(tree) and not commits_to_cuda(tree):
                cpu += 1
            elif any(isinstance(node, ast.Call) and bare_cuda(node) for node in ast.walk(tree)):
                cuda += 1
        _CPU_FOLDERS[key] = (cpu, cuda)
    return _CPU_FOLDERS[key]
