"""DL105: the branches of a device choice move different tensors (chapter 01):

    if args.gpu is not None and torch.cuda.is_available():
        images = images.cuda(args.gpu, non_blocking=True)     # DL105: target stays behind here
    elif not args.gpu and torch.cuda.is_available():
        target = target.cuda(args.gpu, non_blocking=True)     # DL105: images stays behind here
    elif torch.backends.mps.is_available():
        images = images.to('mps')
        target = target.to('mps')

Flagged: in an `if` / `elif` chain whose first test asks about the device (see machines.py), a branch that moves
some of the tensors the other branches move (`x = x.cuda(...)`, `x = x.to(...)`) and leaves the others where they
are; at the branch's first move. Not flagged: a branch that moves nothing (the CPU's `else`), a chain whose test
is about something else, branches that move the same names."""

from __future__ import annotations

import ast

from ..machines import asks_for_device
from .base import Check


class BranchMoves(Check):
    """Every branch of a device choice moves the same tensors."""

    code = "DL105"

    def file(self) -> None:
        inner: set[int] = set()
        for node in self.a.nodes_of(ast.If):
            if id(node) in inner:
                continue
            branches, last = [node.body], node
            while len(last.orelse) == 1 and isinstance(last.orelse[0], ast.If):
                last = last.orelse[0]
                inner.add(id(last))
                branches.append(last.body)
            if last.orelse:
                branches.append(last.orelse)
            moves = [_moves(body) for body in branches]
            if sum(1 for m in moves if m) < 2 or not self._about_the_device(node.test):
                continue
            every = set().union(*(set(m) for m in moves))
            for found in moves:
                missing = sorted(every - set(found))
                if found and missing:
                    first = next(iter(found.values()))
                    self.a.add(self.code, first, moved=", ".join(sorted(found)), missing=", ".join(missing))

    def _about_the_device(self, test: ast.expr) -> bool:
        kinds: dict[type, list[ast.AST]] = {}
        for node in self.a.walk(test):
            kinds.setdefault(type(node), []).append(node)
        return asks_for_device(lambda *wanted: [n for w in wanted for n in kinds.get(w, ())]) or any(
            n.attr == "is_cuda" for n in kinds.get(ast.Attribute, ()))


def _moves(body: list[ast.stmt]) -> dict[str, ast.Call]:
    """The names a block moves in place of themselves (`x = x.cuda(...)`, `x = x.to(...)`), each with its call."""
    out: dict[str, ast.Call] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value, name = stmt.value, stmt.targets[0].id
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in (
                    "cuda", "to") and isinstance(value.func.value, ast.Name) and value.func.value.id == name:
                out.setdefault(name, value)
    return out
