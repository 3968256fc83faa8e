"""DL104: a `.cuda(...)` move right after an `if` about the device that guards the same move of another name
(chapter 01):

    if args.gpu is not None:
        images = images.cuda(args.gpu, non_blocking=True)
    target = target.cuda(args.gpu, non_blocking=True)   # DL104: runs without a GPU too

The author guarded one move and not its twin: on a machine without CUDA (or without `--gpu`) the second one
stops the program, or puts `target` somewhere else than `images`.

Flagged: a statement that moves with `.cuda(...)` (the same arguments as the guarded moves), directly after an
`if` without `else` whose test asks about the device (`args.gpu`, `use_cuda`, `torch.cuda.is_available()`,
`x.is_cuda`; see machines.py) and whose body only makes such moves. Not flagged: a guard about anything else
(`if not len(self.q):`), an `if` with an `else`, moves with other arguments."""

from __future__ import annotations

import ast

from ..machines import asks_for_device
from .base import Check


class UnguardedCuda(Check):
    """Moves that go together are guarded together."""

    code = "DL104"

    def file(self) -> None:
        for node in self.a.nodes_of(ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For, ast.While,
                                    ast.With, ast.Try):
            for field in ("body", "orelse", "finalbody"):
                body = getattr(node, field, None)
                if isinstance(body, list):
                    self.check_body(body)

    def check_body(self, body: list[ast.stmt]) -> None:
        for guard, stmt in zip(body, body[1:]):
            if not isinstance(guard, ast.If) or guard.orelse or not guard.body:
                continue
            guarded = [_cuda_move(s) for s in guard.body]
            move = _cuda_move(stmt)
            if move is None or not all(guarded) or move[1] not in {g[1] for g in guarded if g} or not (
                    self._about_the_device(guard.test)):
                continue
            self.a.add(self.code, move[0], call=ast.unparse(move[0].func) + "(...)", test=ast.unparse(guard.test))

    def _about_the_device(self, test: ast.expr) -> bool:
        kinds: dict[type, list[ast.AST]] = {}
        for node in self.a.walk(test):
            kinds.setdefault(type(node), []).append(node)
        found = asks_for_device(lambda *wanted: [n for w in wanted for n in kinds.get(w, ())])
        return found or any(n.attr == "is_cuda" for n in kinds.get(ast.Attribute, ()))


def _cuda_move(stmt: ast.stmt) -> tuple[ast.Call, str] | None:
    """(the call, its arguments as written) for `x = x.cuda(...)` or `x.cuda(...)` as a statement."""
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "cuda" and not (
            isinstance(value.func.value, ast.Name) and value.func.value.id == "torch"):
        return value, ast.unparse(ast.Call(func=ast.Name("f"), args=value.args, keywords=value.keywords))
    return None
