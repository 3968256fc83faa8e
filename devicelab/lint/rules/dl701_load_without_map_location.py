"""DL701: `torch.load` without `map_location` (chapter 07).

Flagged only where the program that loads shows that it runs where the checkpoint's GPU may be absent
(machines.py, `runs_elsewhere`: a CPU fallback, a device test, a device option or setting, a distributed process
group, `map_location` given elsewhere; or a library module that follows its caller's device, or whose folder or
package shows it); elsewhere the machine it runs on is unknown and nothing is said.

Not flagged: a second positional argument or `**kwargs` (either may be the map_location); a checkpoint whose
origin the file shows (saved by the same file before, saved by it as CPU tensors, an in-memory buffer, a download
of published weights: checkpoints.py); a load in code written for CUDA (machines.py): the function that loads
calls `.cuda()` unconditionally, or its file or folder calls `.cuda()` and never asks for a device; code that
demands CUDA (`assert torch.cuda.is_available()`, or `if not torch.cuda.is_available(): raise`, at the top level
of the module or of the function that loads). Such code runs only where CUDA is, and the checkpoint loads there.
Nor a load whose result holds no tensors that can be on a GPU: one handed straight to a learning-rate scheduler's
or a GradScaler's `load_state_dict` (Python numbers), or one used only as random-number-generator states
(`random.setstate`, `np.random.set_state`, `torch.set_rng_state`, `torch.cuda.set_rng_state(_all)`: CPU byte
tensors, even the CUDA generators')."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from ..machines import (
    asks_for_device,
    bare_cuda,
    demands_cuda,
    folder_written_for_cuda,
    follows_devices,
    function_commits_to_cuda,
    is_library,
    package_runs_elsewhere,
    runs_elsewhere,
)
from ..tree import has_double_star, keyword, scope_walk
from .base import Check

# what holds only Python numbers in its state: learning-rate schedulers, GradScaler (`lr_scheduler`, `scaler`)
NUMBER_STATES = re.compile(r"sched|scaler", re.IGNORECASE)
# what takes random-number-generator states (CPU byte tensors, also for the CUDA generators)
RNG_SETTERS = frozenset({"setstate", "set_state", "set_rng_state", "set_rng_state_all"})

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
        self._demands: bool | None = None  # the module stops at its top level without CUDA
        self._sets_rng: bool | None = None  # the file sets random-number-generator states somewhere
        self._loads: dict[int, dict[str, list[ast.Name]]] = {}  # scope -> name -> where it is read
        self._elsewhere: bool | None = None  # the program shows that it runs where the GPU may be absent

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        if name == "torch.load" and keyword(call, "map_location") is None and len(call.args) < 2 and not (
                has_double_star(call)) and not self.a.checkpoints().known(call) and not (
                self.written_for_cuda(call)) and not self.holds_no_tensors(call, stmt) and self.runs_elsewhere():
            self.a.add(self.code, call, {"kind": "map_location"})

    def runs_elsewhere(self) -> bool:
        """The program that loads shows that it runs where the checkpoint's GPU may be absent (machines.py): in the
        file itself (a CPU fallback, a device option or setting, a device test, `map_location` elsewhere); or the
        file is a library module that follows its caller's device (a `device` parameter, `x.device`), or a module
        of a package whose scripts or configuration show it. Otherwise the machine it runs on is unknown."""
        if self._elsewhere is None:
            a = self.a
            self._elsewhere = runs_elsewhere(a.tree, analysis=a) or (
                a.path is None or a.path.suffix != ".ipynb") and is_library(a.tree) and (
                follows_devices(a.tree) or package_runs_elsewhere(a.path))
        return self._elsewhere

    def holds_no_tensors(self, call: ast.Call, stmt: ast.stmt) -> bool:
        """What is loaded cannot hold GPU tensors: handed straight to a scheduler's or a GradScaler's
        `load_state_dict`, or a name used only as random-number-generator states."""
        parent = self.a.parent(call)
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is call and isinstance(
                parent.func, ast.Attribute) and parent.func.attr == "load_state_dict":
            owner = parent.func.value
            name = owner.attr if isinstance(owner, ast.Attribute) else (
                owner.id if isinstance(owner, ast.Name) else "")
            return bool(NUMBER_STATES.search(name))
        if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name)):
            return False
        if self._sets_rng is None:
            self._sets_rng = any(isinstance(c.func, ast.Attribute) and c.func.attr in RNG_SETTERS
                                 for c in self.a.nodes_of(ast.Call))
        if not self._sets_rng:
            return False
        fn = self.a.enclosing_function(call)
        scope = fn if fn is not None and not isinstance(fn, ast.Lambda) else self.a.tree
        if id(scope) not in self._loads:
            loads: dict[str, list[ast.Name]] = {}
            for node in scope_walk(list(scope.body)):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    loads.setdefault(node.id, []).append(node)
            self._loads[id(scope)] = loads
        uses = self._loads[id(scope)].get(stmt.targets[0].id, [])
        return bool(uses) and all(self._rng_state(node) for node in uses)

    def _rng_state(self, use: ast.Name) -> bool:
        """`state["cpu"]` (or `state`) handed to `random.setstate`, `torch.cuda.set_rng_state_all`..."""
        node: ast.AST = use
        parent = self.a.parent(node)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            node, parent = parent, self.a.parent(parent)
        return isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, (
            ast.Attribute, ast.Name)) and (getattr(parent.func, "attr", None) or getattr(parent.func, "id", "")) in (
            RNG_SETTERS)

    def written_for_cuda(self, call: ast.Call) -> bool:
        """The load runs only where CUDA is: its function (or the module's top level) calls `.cuda()` on every
        path; the module's top level or the function demands CUDA (`assert torch.cuda.is_available()`); or its
        file, or its folder, calls `.cuda()` and nothing there asks for a device."""
        a = self.a
        fn = a.enclosing_function(call)
        scope = fn if fn is not None and not isinstance(fn, ast.Lambda) else a.tree
        if id(scope) not in self._scopes:
            self._scopes[id(scope)] = function_commits_to_cuda(scope.body)
        if self._scopes[id(scope)]:
            return True
        if self._demands is None:
            self._demands = demands_cuda(a.tree.body)
        if self._demands or scope is not a.tree and demands_cuda(scope.body):
            return True
        if self._file is None:
            self._file = not asks_for_device(a.nodes_of) and any(bare_cuda(c) for c in a.nodes_of(ast.Call))
        return self._file or folder_written_for_cuda(a.path)
