"""No version is ever compared as a string: "2.14.1" >= "2.8" is False, and a claim guarded by it never runs."""

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _mentions_version(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and "version" in n.attr.lower())
        or (isinstance(n, ast.Name) and "version" in n.id.lower())
        for n in ast.walk(node)
    )


def _is_version_object(node: ast.AST) -> bool:
    # TorchVersion(...) >= "2.8" and Version(...) >= Version("2.8") compare as versions, not as text.
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return "Version" in name or name == "parse"


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def string_version_comparisons(source: str) -> list[int]:
    """Line numbers where a version is ordered against a string (either side)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare) or not any(isinstance(op, ORDERING) for op in node.ops):
            continue
        sides = [node.left, *node.comparators]
        others = [s for s in sides if not _is_text(s)]
        if any(_is_version_object(s) for s in others):
            continue
        if any(_is_text(s) for s in sides) and any(_mentions_version(s) for s in others):
            found.append(node.lineno)
    return found


def _python_sources() -> dict[str, str]:
    sources = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if {".venv", "site", ".git", "nbgrader-course"} & set(parts) or any(p.startswith(".venv") for p in parts):
            continue
        if parts[:3] == ("tests", "lint", "realworld"):  # other projects' files, kept as data for the linter
            continue
        sources[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for path in [*ROOT.glob("labs/*/*.ipynb"), *ROOT.glob("solutions/*/*.ipynb")]:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells):
            if cell["cell_type"] == "code":
                code = "".join(cell["source"])
                if not any(line.lstrip().startswith(("!", "%")) for line in code.splitlines()):
                    sources[f"{path.relative_to(ROOT)} cell {number}"] = code
    return sources


def test_the_scan_catches_a_string_comparison_of_torch_version():
    assert string_version_comparisons('if torch.__version__ >= "2.8":\n    pass\n') == [1]
    assert string_version_comparisons('ok = "1.13" < version\n') == [1]
    assert string_version_comparisons("ok = TorchVersion(torch.__version__) >= (2, 8)\n") == []
    assert string_version_comparisons('ok = TorchVersion(torch.__version__) >= "2.8"\n') == []
    assert string_version_comparisons('same = torch.__version__ == "2.14.1"\n') == []


def test_the_string_comparison_really_is_wrong():
    assert not ("2.14.1" >= "2.8"), "if this ever holds, the test above guards nothing"


def test_no_version_is_compared_as_a_string_anywhere_in_the_course():
    offenders = [f"{name}:{line}" for name, code in _python_sources().items()
                 for line in string_version_comparisons(code)]
    assert not offenders, offenders
