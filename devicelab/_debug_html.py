"""`audit` and `locate` drawn in a notebook: what Jupyter and Colab show for a report (its `_repr_html_`).

The audit is a tree of the model's modules, then the optimizer, the criterion and the batch, each tensor
with a badge coloured by its device and the misplaced ones marked ✗ (their modules open, the others folded).
The locator's report is the path from the model to the first module whose tensors and inputs disagree,
that module marked, with the two devices side by side, then the report's own text. A terminal prints the
text (`str(report)`) as before. Inline styles only: a notebook has no course stylesheet, and each badge
carries its own background, so the colours read on light and dark notebook themes alike.
"""

from __future__ import annotations

import html
import re
from collections import Counter

import torch

from . import messages

# (background, text) per device; a GPU's colour follows its index
_COLOURS = {"cpu": ("#d2e3fc", "#174ea6"), "meta": ("#e8eaed", "#3c4043"), "mps": ("#e9d2fd", "#681da8"),
            "xpu": ("#fde2e4", "#8c1d18")}
_GPU_COLOURS = [("#ceead6", "#0d652d"), ("#feefc3", "#7a4f01"), ("#fad2cf", "#a50e0e"), ("#c4eed0", "#135e2a")]
_BAD = "#c5221f"
_MONO = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace"
LEAVES_SHOWN = 200  # beyond these (odd ones always shown), a line says how many more are in place
SMALL = 12  # a model with at most this many tensors shows every module open
_PART = re.compile(r"(?:[^.\[]+|\[[^\]]*\])+")


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def badge(device: torch.device | str) -> str:
    """A device's name on its colour."""
    device = torch.device(device)
    if device.type in ("cuda", "hip"):
        back, fore = _GPU_COLOURS[(device.index or 0) % len(_GPU_COLOURS)]
    else:
        back, fore = _COLOURS.get(device.type, ("#e8eaed", "#3c4043"))
    return (f'<span class="devicelab-device" style="background:{back};color:{fore};border-radius:3px;'
            f'padding:0 .35em;{_MONO};white-space:nowrap">{_esc(device)}</span>')


def _split(name: str) -> list[str]:
    """A qualified name's parts: `blocks.0.cache[1]` → blocks, 0, cache[1]; brackets keep their dots."""
    return _PART.findall(name) or [name]


def _tree(entries):
    """{part: subtree} with the entries at the leaves, keeping the model's order."""
    root: dict = {}
    for entry in entries:
        node = root
        parts = _split(entry.name)
        if entry.kind in ("optimizer", "criterion", "batch") and len(parts) > 1:
            parts = [parts[0], ".".join(parts[1:])]
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[(parts[-1],)] = entry  # a tuple key: a leaf, never confused with a module called the same
    return root


def _leaves(node) -> list:
    found = []
    for key, value in node.items():
        found += [value] if isinstance(key, tuple) else _leaves(value)
    return found


def _counts(entries) -> str:
    counted = Counter(str(entry.device) for entry in entries)
    return " ".join(f"{badge(device)}&#8202;×{count}" for device, count in counted.items())


def _render(node, budget: list[int], small: bool) -> str:
    from .debug import _shape_text  # debug imports this module: its table and this tree write shapes alike

    rows = []
    for key, value in node.items():
        if isinstance(key, tuple):
            entry = value
            if not entry.odd and budget[0] <= 0:
                continue
            budget[0] -= not entry.odd
            mark = f'<b style="color:{_BAD}">✗ </b>' if entry.odd else ""
            shape = _shape_text(entry.shape)
            style = f"border-left:3px solid {_BAD};padding-left:.4em" if entry.odd else "padding-left:calc(.4em + 3px)"
            rows.append(f'<li style="{style}">{mark}<span style="{_MONO}">{_esc(key[0])}</span> '
                        f'<span style="opacity:.7">{_esc(messages.text(f"debug.kind.{entry.kind}"))}</span> '
                        f'{badge(entry.device)} <span style="opacity:.7;{_MONO}">{_esc(shape)} '
                        f'{_esc(str(entry.dtype).removeprefix("torch."))}</span></li>')
            continue
        inside = _leaves(value)
        odd = any(entry.odd for entry in inside)
        opened = ' open=""' if odd or small else ""
        name = f'<span style="{_MONO};font-weight:600{";color:" + _BAD if odd else ""}">{_esc(key)}</span>'
        rows.append(f'<li><details{opened}><summary>{name} {_counts(inside)}</summary>'
                    f'<ul style="list-style:none;margin:0;padding-left:1.1em">{_render(value, budget, small)}</ul>'
                    f'</details></li>')
    return "".join(rows)


def audit_html(report) -> str:
    """The audit as a tree coloured by device (see the module's docstring)."""
    entries = report.entries
    colour = _BAD if report.odd else "inherit"
    head = (f'<div class="devicelab-audit" style="line-height:1.55;font-size:13px">'
            f'<p style="margin:.2em 0;font-weight:600;color:{colour}">{_esc(report.verdict)}</p>')
    if not entries:
        return head + "</div>"
    legend = (f'<p style="margin:.2em 0">{_esc(messages.text("debug.html.expected"))} {badge(report.expected)} · '
              f'{_esc(messages.text("debug.html.found"))} {_counts(entries)}</p>')
    budget = [LEAVES_SHOWN]
    tree = _render(_tree(entries), budget, small=len(entries) <= SMALL)
    shown = sum(1 for entry in entries if entry.odd) + min(LEAVES_SHOWN, sum(1 for e in entries if not e.odd))
    more = ""
    if shown < len(entries):
        left = messages.text("debug.html.more", count=len(entries) - shown)
        more = f'<p style="margin:.2em 0;opacity:.7">{_esc(left)}</p>'
    return head + legend + f'<ul style="list-style:none;margin:0;padding-left:0">{tree}</ul>{more}</div>'


def locate_html(report) -> str:
    """The locator's report: the path to the module it names, that module marked, then its text."""
    made = report._created
    module = report.module if report.module is not None else (made.module if made is not None else None)
    parts = [report.model_name] + ([] if not module else _split(module))
    crumbs = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1 and module is not None and not report.ok
        style = (f"border:2px solid {_BAD};border-radius:4px;padding:0 .3em;color:{_BAD};font-weight:600"
                 if last else "padding:0 .1em")
        crumbs.append(f'<span style="{_MONO};{style}">{_esc(part)}</span>')
    lines = [f'<div class="devicelab-locate" style="line-height:1.6;font-size:13px">'
             f'<p style="margin:.2em 0">{" › ".join(crumbs)}</p>']
    if report.devices is not None and report.module is not None:
        own, other = report.devices
        what = report.tensor or report.argument or ""
        lines.append(f'<p style="margin:.2em 0"><span style="{_MONO}">{_esc(what)}</span> {badge(own)} '
                     f'<b style="color:{_BAD}">≠</b> {_esc(messages.text("debug.html.input"))} {badge(other)}</p>')
    elif made is not None:
        lines.append(f'<p style="margin:.2em 0"><span style="{_MONO}">{_esc(made.func)}</span> {badge(made.device)} '
                     f'<b style="color:{_BAD}">≠</b> {_esc(messages.text("debug.html.input"))} '
                     f'{badge(made.input_device)}</p>')
    lines.append(f'<pre style="margin:.3em 0;white-space:pre-wrap">{_esc(str(report))}</pre></div>')
    return "".join(lines)


messages.add({
    "debug.html.expected": {"en": "expected:", "zh": "应在："},
    "debug.html.found": {"en": "found:", "zh": "实际："},
    "debug.html.input": {"en": "input", "zh": "输入"},
    "debug.html.more": {
        "en": "… and {count} more tensors in place, not shown (report.entries lists them all)",
        "zh": "…… 另有 {count} 个位置正确的张量未列出（report.entries 中有完整列表）",
    },
})
