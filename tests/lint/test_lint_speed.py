"""The linter's time grows with the size of a file, not faster: a megabyte of training code in seconds."""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

from devicelab.lint import lint_text
from devicelab.lint.analysis import Analysis
from devicelab.lint.tree import SHARED_NODES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from bench_lint import SNIPPETS, training_code  # noqa: E402


def test_a_megabyte_of_training_code_lints_in_a_few_seconds() -> None:
    """CPU time, generous (the budget is 1 s per MB; a quadratic step took 27 s here): a regression fails."""
    code = training_code(1_000_000)
    start = time.process_time()
    problems = lint_text(code, "generated.py")
    spent = time.process_time() - start
    copies = code.count("class Block")
    assert spent <= 5.0, f"{spent:.1f} s for 1 MB"
    # every copy's planted mistakes are found, the last copy's as the first's: the whole file was read
    assert sum(p.code == "DL701" for p in problems) == copies
    assert sum(p.code == "DL501" for p in problems) == copies
    assert len(SNIPPETS) >= 6 and copies > 100


def test_a_functions_nodes_read_as_a_slice_are_those_ast_walk_gives() -> None:
    """The analysis reads each function's nodes from one walk of the file; they must be ast.walk's."""
    tree = ast.parse(training_code(30_000))
    analysis = Analysis(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.For, ast.Call)):
            walked = [n for n in ast.walk(node) if not isinstance(n, SHARED_NODES)]
            assert sorted(map(id, analysis.walk(node))) == sorted(map(id, walked))
            for child in ast.iter_child_nodes(node):
                if not isinstance(child, SHARED_NODES):
                    assert analysis._parent(tree, child) is node
