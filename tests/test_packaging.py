"""The helper package as Colab installs it: every subpackage and data file is in the wheel pip builds."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_subpackage_is_listed() -> None:
    """A subpackage missing from pyproject.toml would be missing from a learner's install."""
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "devicelab").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert set(CONFIG["tool"]["setuptools"]["packages"]) == found


def test_every_data_file_is_covered() -> None:
    """Every non-Python file inside the package matches a package-data pattern."""
    patterns = CONFIG["tool"]["setuptools"].get("package-data", {}).get("devicelab", [])
    package = ROOT / "devicelab"
    data = [p for p in package.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")]
    uncovered = [p for p in data if not any(p.relative_to(package).match(pattern) for pattern in patterns)]
    assert not uncovered, uncovered
