"""What a lab page says about its GPU verification, read from the record (devicelab/data/gpu_captures.json).

Used by tools/mkdocs_hooks.py: below the lab's stamp ("Last verified on GPU: <GPU>, torch <v>, <date>"), a
folded table gives each reproduce step's expected wording (the one the lab shows until a GPU has verified
it) beside the wording a real GPU printed, and the MPS wording where an MPS run printed a different one.
Nothing is shown while the record has no capture of the lab.
"""

from __future__ import annotations

import ast
import html
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from devicelab import captures  # noqa: E402

TEXT = {
    "en": {
        "summary": "What the GPU printed, beside the expected wording",
        "head": ("Step", "Expected wording", "Captured"),
        "on": "{gpu}, torch {torch}, {date}",
        "mps": "MPS ({gpu}, torch {torch}, {date}), where it differs",
        "none": "not captured yet",
    },
    "zh": {
        "summary": "GPU 实际打印的报错，与预期的措辞对照",
        "head": ("步骤", "预期的措辞", "实际捕获"),
        "on": "{gpu}，torch {torch}，{date}",
        "mps": "MPS（{gpu}，torch {torch}，{date}），与 CUDA 不同之处",
        "none": "尚未捕获",
    },
}


def _constant(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def expected_wordings(lab: str, root: Path = ROOT) -> dict[str, str]:
    """{step: the wording the lab expects} for each `@lab.reproduce` step of a lab, in notebook order."""
    from devicelab.errors import KINDS

    notebook = root / "solutions" / "en" / f"{lab}.ipynb"
    if not notebook.exists():
        return {}
    found: dict[str, str] = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse("".join(cell["source"]))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                        and decorator.func.attr == "reproduce" and decorator.args):
                    kind = _constant(decorator.args[0]) or ""
                    example = next((_constant(k.value) for k in decorator.keywords if k.arg == "example"), None)
                    found[node.name] = example or (KINDS[kind].example if kind in KINDS else "")
    return found


def captured_wording(lab: str, lang: str, known: list[dict[str, str]] | None = None,
                     expected: dict[str, str] | None = None) -> str:
    """The folded table of a lab page: expected wording and captured wording per step ("" with no capture)."""
    known = captures.load() if known is None else known
    mine = [c for c in known if c["lab"] == lab and c.get("kind") != "measurement"]
    if not mine:
        return ""
    words = TEXT[lang]
    expected = expected_wordings(lab) if expected is None else expected
    steps = list(expected) + sorted({c["step"] for c in mine} - set(expected))
    rows = []
    for step in steps:
        cuda = captures.latest(lab, step, mine, device="cuda")
        mps = captures.latest(lab, step, mine, device="mps")
        said = []
        if cuda is not None:
            said.append(f"<code>{html.escape(cuda['message'])}</code><br><small>"
                        f"{html.escape(words['on'].format(**cuda))}</small>")
        if mps is not None and (cuda is None or mps["message"] != cuda["message"]):
            said.append(f"<code>{html.escape(mps['message'])}</code><br><small>"
                        f"{html.escape(words['mps'].format(**mps))}</small>")
        cells = (f"<code>{html.escape(step)}</code>",
                 f"<code>{html.escape(expected.get(step, ''))}</code>" if expected.get(step) else "—",
                 "<br>".join(said) or html.escape(words["none"]))
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in words["head"])
    return (f'<details class="note lab-captures"><summary>{html.escape(words["summary"])}</summary>'
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></details>")
