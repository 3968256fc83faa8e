"""DL701: `torch.load` without `map_location` (chapter 07).

Not flagged: a second positional argument or `**kwargs` (either may be the map_location); a checkpoint whose
origin the file shows (saved by the same file before, saved by it as CPU tensors, an in-memory buffer, a download
of published weights: checkpoints.py); a load in code written for CUDA (machines.py): the function that loads
calls `.cuda()` unconditionally, or its file or folder calls `.cuda()` and never asks for a device. Such code
runs only where CUDA is, and the checkpoint loads there."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..machines import asks_for_device, bare_cuda, folder_written_for_cuda, function_commits_to_cuda
from ..tree import has_double_star, keyword
from .base import Check

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..flow import Walker


class LoadWithoutMapLocation(Check):
    """A checkpoint saved on a GPU fails to load on a machine without one."""

    code = "DL701"
    calls = frozenset({"torch.load"})

    def __init__(self, analysis: Analysis) -> None:
        super().__init__(analysis)
        self._file: bool | None = None  # the file calls .cuda() and never asks for a device
        self._scopes: dict[int, bool] = {}  # function (or module) -> whether it calls .cuda() on every path

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name == "torch.load" and keyword(call, "map_location") is None and len(call.args) < 2 and not (
                has_double_star(call)) and not self.a.checkpoints().known(call) and not self.written_for_cuda(call):
            self.a.add(self.code, call, {"kind": "map_location"})

    def written_for_cuda(self, call: ast.Call) -> bool:
        """The load runs only where CUDA is: its function (or the module's top level) calls `.cuda()` on every
        path, or its file, or its folder, calls `.cuda()` and nothing there asks for a device."""
        a = self.a
        fn = a.enclosing_function(call)
        scope = fn if fn is not None and not isinstance(fn, ast.Lambda) else a.tree
        if id(scope) not in self._scopes:
            self._scopes[id(scope)] = function_commits_to_cuda(scope.body)
        if self._scopes[id(scope)]:
            return True
        if self._file is None:
            self._file = not asks_for_device(a.nodes_of) and any(bare_cuda(c) for c in a.nodes_of(ast.Call))
        return self._file or folder_written_for_cuda(a.path)
