"""What a rule is: a small visitor over the shared analysis, called only at the points it implements."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..flow import Walker


class Check:
    """One rule. The flow calls `statement`, `call`, `expression_statement`, `moved`, `bound` and `block_end` as
    it walks each scope (module level, then each function); `file` runs once every scope has been walked."""

    code: ClassVar[str] = ""
    # the calls `call` is given: those whose function resolves to one of `calls`, or is a method named in
    # `methods`; every call when both are empty
    calls: ClassVar[frozenset[str]] = frozenset()
    methods: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, analysis: Analysis) -> None:
        self.a = analysis

    def statement(self, walker: Walker, stmt: ast.stmt) -> None:
        """A statement, before what it binds is recorded."""

    def call(self, walker: Walker, call: ast.Call, name: str | None, stmt: ast.stmt) -> None:
        """A call in a statement's own expressions (`name`: what its function resolves to through the imports)."""

    def expression_statement(self, walker: Walker, node: ast.expr) -> None:
        """An expression used as a statement (its value thrown away)."""

    def moved(self, walker: Walker, name: str, call: ast.Call) -> None:
        """The module `name` moved in place to a device."""

    def bound(self, walker: Walker, name: str) -> None:
        """`name` assigned anew."""

    def block_end(self, walker: Walker) -> None:
        """The end of a scope."""

    def file(self) -> None:
        """Once, after every scope of the file."""
