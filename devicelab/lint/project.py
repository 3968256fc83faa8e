"""The project's own modules a file imports (`from .models import Net`, `from models import *`), found beside
the file or above it, each read once: what they define tells the flow that `Net()` builds a model, or what
`build_model()` returns."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .analysis import Analysis

# packages that are never the project's own (the standard library, and what training code imports most)
LIBRARIES = frozenset(sys.stdlib_module_names) | frozenset(
    "torch torchvision torchaudio torchtext timm numpy np scipy sklearn pandas matplotlib PIL cv2 tqdm transformers "
    "datasets accelerate lightning pytorch_lightning einops wandb tensorboard yaml omegaconf hydra".split())
_READ: dict[tuple[str, int, int], Analysis | None] = {}


def module_file(start: Path, module: str | None, level: int) -> Path | None:
    """The file of `from <level dots><module> import ...` in the file `start`, when the project holds it."""
    parts = module.split(".") if module else []
    if level:
        base = start.parent
        for _ in range(level - 1):
            base = base.parent
        folders = [base]
    else:
        if not parts or parts[0] in LIBRARIES:
            return None
        folders = [start.parent, *list(start.parent.parents)[:3]]  # beside the script, or its package's root
    for folder in folders:
        path = folder.joinpath(*parts)
        for candidate in ((path.parent / f"{path.name}.py") if parts else None, path / "__init__.py"):
            if candidate is not None and candidate.is_file():
                return candidate
    return None


def read_module(path: Path, depth: int) -> Analysis | None:
    """The analysis of one module of the project (not run: its classes, functions and what they return)."""
    from .analysis import Analysis
    from .machines import parse_module

    try:
        key = (str(path.resolve()), path.stat().st_mtime_ns, depth)
    except OSError:
        return None
    if key not in _READ:
        _READ[key] = None  # an import cycle reads nothing the second time
        tree = parse_module(path)  # parsed once, shared with machines.py's reading of the neighbours
        if tree is not None:
            try:
                _READ[key] = Analysis(tree, path, depth)
            except (RecursionError, MemoryError):
                pass
    return _READ[key]


def imported_names(analysis: Analysis) -> dict[str, tuple[Analysis, str]]:
    """What a file imports from its project: local name -> (the analysis of the module that holds it, its name
    there). A star import brings every public class and function of the module (and what it imports itself)."""
    assert analysis.path is not None
    out: dict[str, tuple[Analysis, str]] = {}
    for node in analysis.imports.local:
        if not isinstance(node, ast.ImportFrom):
            continue
        target = module_file(analysis.path, node.module, node.level)
        if target is None or target.resolve() == analysis.path.resolve():
            continue
        other = read_module(target, analysis.depth + 1)
        if other is None:
            continue
        for alias in node.names:
            if alias.name == "*":
                names = [*other.classes, *other.functions, *(other.project() if other.depth < 2 else {})]
                for name in names:
                    if not name.startswith("_"):
                        out.setdefault(name, (other, name))
            else:
                out[alias.asname or alias.name] = (other, alias.name)
    return out


def definition(analysis: Analysis, name: str) -> tuple[Analysis, str] | None:
    """Where a name imported from the project is defined, following re-exports (a package's __init__)."""
    found = analysis.foreign(name)
    for _ in range(3):
        if found is None:
            return None
        other, there = found
        if there in other.classes or there in other.functions:
            return found
        found = other.foreign(there)
    return None
