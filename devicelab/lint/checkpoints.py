"""DL701's exceptions: where a `torch.load` reads from, when the file itself shows it (chapter 07).

`torch.load(path)` without `map_location` fails on a machine without the GPU the checkpoint was saved from. It
cannot fail that way, and DL701 stays silent, when the same file shows the checkpoint's origin:

- it saved it: `torch.save(obj, path)` (or `torch.hub.download_url_to_file(url, path)`) earlier in the file or
  notebook, to the same path (the same literal, the same name, the same expression);
- it is an in-memory buffer: `torch.load(io.BytesIO(...))`, or a name assigned from `io.BytesIO(...)`;
- it is a download of published weights: a path built from a URL string (`"https://..."`), or from a download
  helper (`torch.hub.load_state_dict_from_url` and `torch.utils.model_zoo.load_url` take `map_location`
  themselves, and are not `torch.load`).

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
        self.written: dict[str, list[tuple[int, int]]] = {}  # ast.dump of a path -> where it was written
        self.assigned: dict[str, list[ast.expr]] = {}  # name -> every value assigned to it in the file
        for node in analysis.nodes_of(ast.Call):
            found = WRITERS.get(analysis.resolve(node.func) or "")
            if found:
                position, name = found
                path = node.args[position] if len(node.args) > position else _keyword(node, name)
                if path is not None:
                    self.written.setdefault(ast.dump(path), []).append((node.lineno, node.col_offset))
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
        return self._saved_before(source, load) or self._buffer(source) or self._downloaded(source, 0)

    def _saved_before(self, source: ast.expr, load: ast.Call) -> bool:
        where = (load.lineno, load.col_offset)
        paths = [source, *(self._opened(source))]
        return any(at < where for path in paths for at in self.written.get(ast.dump(path), ()))

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


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)
