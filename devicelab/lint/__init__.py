"""`devicelab lint`: find the device mistakes of chapters 01–09 in a script or notebook, before it runs.

    python -m devicelab.lint PATH... [--lang en|zh] [--format text|json|github|sarif] [--select DL5] [--ignore DL701]
    python -m devicelab.lint train.py --diff      # the safe fixes, as a diff
    python -m devicelab.lint train.py --fix       # ... written back (needs libcst)

Reads .py files, notebooks (.ipynb, cell by cell) and folders. Prints `path:line:col CODE message — chapter`
and exits with 1 when it finds anything. `# noqa: DL501` on a line silences that rule there; the
[tool.devicelab.lint] table of each file's nearest pyproject.toml (or --config's) sets `select`, `ignore` and
`exclude`. Also a flake8 plugin (codes DL...).
"""

from __future__ import annotations

from .catalogue import RULES, Rule
from .core import Config, Configs, Problem, chapter_url, config_from_toml, lint_file, lint_paths, lint_text, load_config

__all__ = ["RULES", "Config", "Configs", "Problem", "Rule", "chapter_url", "config_from_toml", "lint_file",
           "lint_paths", "lint_text", "load_config", "main"]


def main(argv: list[str] | None = None) -> int:
    """The command line; see the module's docstring."""
    from .cli import main as run

    return run(argv)
