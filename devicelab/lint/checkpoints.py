"""DL701's exceptions: where a `torch.load` reads from, when the file itself shows it (chapter 07).

`torch.load(path)` without `map_location` fails on a machine without the GPU the checkpoint was saved from. It
cannot fail that way, and DL701 stays silent, when the same file shows the checkpoint's origin:

- it saved it in the same run: `torch.save(obj, path)` (or `torch.hub.download_url_to_file(url, path)`) earlier
  in the same function, or earlier at the top level of the script or notebook (for a load anywhere after it), to
  the same path (the same literal, the same name, the same expression); also through a function's parameter
  when every call of the function in the file passes a path saved before the call (or a name assigned it), there
  or in a function of the file called before it. A
  `save()` method and a `load()` method writing and reading the same path are two runs (a resume, maybe on
  another machine): flagged;
- it saves CPU tensors there: `torch.save(x.cpu(), path)` anywhere in the file, to a path with the same file
  name (the last string of both paths: `os.path.join(args.dump, "feats.pth")` and
  `os.path.join(args.load, "feats.pth")`);
- it is an in-memory buffer: `torch.load(io.BytesIO(...))`, or a name assigned from `io.BytesIO(...)`;
- it is a download of published weights: a path built from a URL string (`"https://..."`), or from a download
  helper (`torch.hub.load_state_dict_from_url` and `torch.utils.model_zoo.load_url` take `map_location`
  themselves, and are not `torch.load`);
- it is a local copy of published weights: the load is one branch of an `if` whose other branch downloads them
  (`torch.hub.load_state_dict_from_url(url)`, `model_zoo.load_url(url)`, a URL string): `if repository:
  torch.load(repository / name) else: load_state_dict_from_url(url)`.

A checkpoint from anywhere else (a path handed in, read from the command line or a config) is still flagged.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .analysis import Analysis

WRITERS = {"torch.save": (1, "f"), "torch.hub.download_url_to_file": (1, "dst"),
           "urllib.request.urlretrieve": (1, "filename")}  # the position and keyword of the path written
BUFFERS = frozenset({"io.BytesIO"})
DOWNLOADS = frozenset({"torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url",
                       "torch.hub.download_url_to_file", "torch.hub.get_dir", "urllib.request.urlretrieve"})


class CheckpointOrigins:
    """What one file saves, buffers and downloads, read once; `known(load)` for each `torch.load` call."""

    def __init__(self, analysis: Analysis) -> None:
        self.a = analysis
        # ast.dump of a path -> where it was written: line, column, and the function it was written in (0: none)
        self.written: dict[str, list[tuple[int, int, int]]] = {}
        self.cpu_names: set[str] = set()  # the file names (last string of the path) saved with CPU tensors
        self.assigned: dict[str, list[ast.expr]] = {}  # name -> every value assigned to it in the file
        for node in analysis.nodes_of(ast.Call):
            writer = analysis.resolve(node.func) or ""
            found = WRITERS.get(writer)
            if found:
                position, name = found
                path = node.args[position] if len(node.args) > position else _keyword(node, name)
                if path is not None:
                    self.written.setdefault(ast.dump(path), []).append((node.lineno, node.col_offset,
                                                                        self._scope(node)))
                    saved = node.args[0] if node.args else _keyword(node, "obj")
                    if writer == "torch.save" and saved is not None and _on_cpu(saved) and _file_name(path):
                        self.cpu_names.add(_file_name(path))
        for node in analysis.nodes_of(ast.Assign, ast.AnnAssign, ast.withitem):
            if isinstance(node, ast.withitem):
                target, value = node.optional_vars, node.context_expr
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "open" and (
                        value.args):
                    value = value.args[0]  # `with open(path, "rb") as f: torch.load(f)` reads `path`
            else:
                target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else getattr(
                    node, "target", None)
                value = node.value
            if isinstance(target, ast.Name) and value is not None:
                self.assigned.setdefault(target.id, []).append(value)

    def known(self, load: ast.Call) -> bool:
        """Whether the file shows where this `torch.load` reads from (see the module's docstring)."""
        source = load.args[0] if load.args else _keyword(load, "f")
        if source is None:
            return False
        return self._saved_before(source, load) or self._buffer(source) or self._downloaded(source, 0) or (
            self._cpu_file(source)) or self._passed_saved_path(source, load) or self._copy_of_download(load)

    def _copy_of_download(self, load: ast.Call) -> bool:
        """The load is one branch of an `if` (the nearest) whose other branch downloads published weights."""
        child: ast.AST = load
        parent = self.a.parent(load)
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            if isinstance(parent, ast.If) and (child in parent.body or child in parent.orelse):
                other = parent.orelse if child in parent.body else parent.body
                return any(self._downloaded(node, 0) for stmt in other for node in self.a.walk(stmt)
                           if isinstance(node, ast.Call))
            child, parent = parent, self.a.parent(parent)
        return False

    def _scope(self, node: ast.AST) -> int:
        """The function a node runs in (a lambda's own function), 0 at the top level."""
        fn = self.a.enclosing_function(node)
        while isinstance(fn, ast.Lambda):
            fn = self.a.enclosing_function(fn)
        return id(fn) if fn is not None else 0

    def _saved_before(self, source: ast.expr, load: ast.AST) -> bool:
        """Saved to the same path earlier in the same function, or earlier at the top level (which runs before the
        functions it defines are called): the same run."""
        where, scope = (load.lineno, load.col_offset), self._scope(load)
        paths = [source, *(self._opened(source))]
        return any((line, col) < where and in_scope in (scope, 0)
                   for path in paths for line, col, in_scope in self.written.get(ast.dump(path), ()))

    def _cpu_file(self, source: ast.expr) -> bool:
        """A file of the same name that the file saves CPU tensors to."""
        name = _file_name(source)
        return bool(name) and name in self.cpu_names

    def _passed_saved_path(self, source: ast.expr, load: ast.Call) -> bool:
        """`def extract(model, path): torch.load(path)`, and every call of `extract` in the file passes a path
        saved before the call (the same expression, or a name assigned it)."""
        fn = self.a.enclosing_function(load)
        if not isinstance(source, ast.Name) or fn is None or isinstance(fn, ast.Lambda) or (
                self.a.functions.get(fn.name) is not fn):
            return False
        params = [arg.arg for arg in [*fn.args.posonlyargs, *fn.args.args]]
        if source.id not in params or self.a.call_count().get(fn.name, 0) <= 0:
            return False
        index = params.index(source.id)
        sites = [c for c in self.a.nodes_of(ast.Call) if isinstance(c.func, ast.Name) and c.func.id == fn.name]
        for site in sites:
            given = site.args[index] if index < len(site.args) and not any(
                isinstance(a, ast.Starred) for a in site.args[:index + 1]) else _keyword(site, source.id)
            if given is None:
                return False
            values = [given, *(self.assigned.get(given.id, ()) if isinstance(given, ast.Name) else ())]
            if not any(self._saved_before(value, site) or self._saved_by_a_call_before(value, site)
                       for value in values):
                return False
        return bool(sites)

    def _saved_by_a_call_before(self, path: ast.expr, site: ast.Call) -> bool:
        """The path is saved inside a function of the file that the site's own function calls before the site
        (`finetune(...)` saves the best model, then `extract(model, path)` loads it): the same run."""
        scope = self._scope(site)
        for _line, _col, in_scope in self.written.get(ast.dump(path), ()):
            saver = next((fn for fn in self.a.functions.values() if id(fn) == in_scope), None)
            if saver is None:
                continue
            if any(isinstance(c.func, ast.Name) and c.func.id == saver.name and self._scope(c) == scope
                   and (c.lineno, c.col_offset) < (site.lineno, site.col_offset)
                   for c in self.a.nodes_of(ast.Call)):
                return True
        return False

    def _opened(self, source: ast.expr) -> list[ast.expr]:
        """The path a file object was opened from (`with open(path) as f`)."""
        if isinstance(source, ast.Name):
            return [v for v in self.assigned.get(source.id, ()) if not isinstance(v, ast.Call)]
        return []

    def _buffer(self, source: ast.expr) -> bool:
        if isinstance(source, ast.Call):
            return self.a.resolve(source.func) in BUFFERS
        if isinstance(source, ast.Name):
            values = self.assigned.get(source.id, ())
            return bool(values) and any(isinstance(v, ast.Call) and self.a.resolve(v.func) in BUFFERS for v in values)
        return False

    def _downloaded(self, source: ast.expr, depth: int) -> bool:
        for node in self.a.walk(source):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(
                    ("https://", "http://")):
                return True
            if isinstance(node, ast.Call) and self.a.resolve(node.func) in DOWNLOADS:
                return True
            if isinstance(node, ast.Name) and depth < 3 and any(
                    self._downloaded(value, depth + 1) for value in self.assigned.get(node.id, ())):
                return True
        return False


def _on_cpu(saved: ast.expr) -> bool:
    """`x.cpu()`, `x.detach().cpu()`, `x.cpu().clone()`: a tensor brought to the CPU before it is saved."""
    node = saved
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "cpu" and not node.args:
            return True
        if node.func.attr not in ("detach", "clone", "contiguous", "float", "half", "double", "long", "int"):
            return False
        node = node.func.value
    return False


def _file_name(path: ast.expr) -> str:
    """The last string written in a path expression, when it names a file (`"feats.pth"`)."""
    strings = [n for n in ast.walk(path) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    last = max(strings, key=lambda n: (n.lineno, n.col_offset), default=None)
    return last.value.rsplit("/", 1)[-1] if last is not None and "." in last.value.rsplit("/", 1)[-1] else ""


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)
