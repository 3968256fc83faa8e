"""DL701: `torch.load` without `map_location` (chapter 07).

Not flagged: a second positional argument or `**kwargs` (either may be the map_location), and a checkpoint whose
origin the file shows (saved by the same file before, an in-memory buffer, a download of published weights:
checkpoints.py)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..tree import has_double_star, keyword
from .base import Check

if TYPE_CHECKING:
    from ..flow import Walker


class LoadWithoutMapLocation(Check):
    """A checkpoint saved on a GPU fails to load on a machine without one."""

    code = "DL701"
    calls = frozenset({"torch.load"})

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name == "torch.load" and keyword(call, "map_location") is None and len(call.args) < 2 and not (
                has_double_star(call)) and not self.a.checkpoints().known(call):
            self.a.add(self.code, call, {"kind": "map_location"})
