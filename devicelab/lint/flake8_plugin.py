"""The flake8 plugin: `flake8 --select DL` reports the same findings as `python -m devicelab.lint`.

Registered in pyproject.toml under [project.entry-points."flake8.extension"] (code prefix DL). flake8 reads
the file and handles `# noqa` itself; the messages are in English (flake8 has no language option).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from .. import __version__
from .analysis import Analysis
from .catalogue import RULES
from .core import Problem, chapter_url


class Plugin:
    """A flake8 AST plugin."""

    name = "devicelab-lint"
    version = __version__

    def __init__(self, tree: ast.AST, lines: list[str] | None = None) -> None:
        self.tree = tree
        self.lines = lines or []

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        """(line, column from 0, "DLnnn message — link", type) for each finding."""
        if not isinstance(self.tree, ast.Module):
            return
        for finding in Analysis(self.tree).run():
            rule = RULES[finding.code]
            if rule.preview:
                continue  # as `devicelab lint` by default: preview rules only when selected by their full code
            text = Problem("", finding.line, finding.col, finding.code, finding.params).message("en")
            col = finding.col - 1
            if 0 < finding.line <= len(self.lines):  # ast counts bytes, flake8 characters
                col = len(self.lines[finding.line - 1].encode("utf-8")[:col].decode("utf-8", errors="ignore"))
            yield finding.line, col, f"{finding.code} {text} — {chapter_url(rule.chapter, 'en')}", type(self)
