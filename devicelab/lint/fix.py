"""`--fix` and `--diff`: the mechanical, safe fixes, written with libcst so that formatting and comments stay.

- DL501: `torch.zeros(n)` in forward -> `torch.zeros(n, device=x.device)`, x being forward's tensor input;
- DL701: `torch.load(path)` -> `torch.load(path, map_location="cpu")`;
- DL801: `torch.cuda.amp.GradScaler(...)` -> `torch.amp.GradScaler("cuda", ...)` (and autocast), when every
  argument is given by keyword (the two spellings order their positional arguments differently).

libcst is imported only here, so that linting needs nothing beyond the standard library.
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

from .core import Config, Configs, Problem, decoded, lint_file, notebook_cells

_BOM = b"\xef\xbb\xbf"


def fix_code(code: str, targets: list[tuple[int, int, dict[str, object]]]) -> str:
    """`code` with the fixes applied; each target is (line, 1-based column, fix) of the call to change."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    wanted = {(line, col - 1): fix for line, col, fix in targets}
    wrapper = MetadataWrapper(cst.parse_module(code))
    positions = wrapper.resolve(PositionProvider)

    class Fixer(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:  # noqa: N802 (libcst's name)
            start = positions[original].start
            fix = wanted.get((start.line, start.column))
            if fix is None:
                return updated
            if fix["kind"] == "device":
                return _add_keyword(updated, "device", cst.parse_expression(f"{fix['input']}.device"))
            if fix["kind"] == "map_location":
                return _add_keyword(updated, "map_location", cst.SimpleString('"cpu"'))
            if fix["kind"] == "amp":
                func = updated.func
                if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute)
                        and isinstance(func.value.value, cst.Attribute)):
                    return updated
                torch = func.value.value.value  # <torch>.cuda.amp.Name -> <torch>.amp.Name
                new_func = func.with_changes(value=cst.Attribute(value=torch, attr=cst.Name("amp")))
                first = cst.Arg(cst.SimpleString(f'"{fix["device_type"]}"'))
                args = [first, *updated.args]
                if len(args) > 1:
                    args[0] = first.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                return updated.with_changes(func=new_func, args=args)
            return updated

    return wrapper.module.visit(Fixer()).code


def _add_keyword(call: object, name: str, value: object) -> object:
    import libcst as cst

    args = list(call.args)  # type: ignore[attr-defined]
    new = cst.Arg(value=value, keyword=cst.Name(name),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    if args:
        last = args[-1]
        trailing = last.comma
        if trailing is cst.MaybeSentinel.DEFAULT or trailing is None:
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args.append(new)
        else:  # a trailing comma (a call spread over lines): the new argument takes the layout of the others
            between = args[-2].comma.whitespace_after if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) \
                else cst.SimpleWhitespace(" ")
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=between))
            args.append(new.with_changes(comma=trailing))
    else:
        args.append(new)
    return call.with_changes(args=args)  # type: ignore[attr-defined]


def fixed_text(path: Path, problems: list[Problem]) -> str | None:
    """The new text of a file with its fixable problems fixed (None when nothing changes)."""
    fixable = [p for p in problems if p.fix is not None]
    if not fixable:
        return None
    original = decoded(path.read_bytes(), path)
    if path.suffix != ".ipynb":
        result = fix_code(original, [(p.line, p.col, p.fix) for p in fixable])
        return result if result != original else None
    notebook = json.loads(original)
    if not isinstance(notebook.get("cells"), list):
        return None  # nbformat 3 (worksheets): read, not rewritten
    changed = False
    code_cells = dict(notebook_cells(original))
    for number, code in code_cells.items():
        targets = [(p.line, p.col, p.fix) for p in fixable if p.cell == number]
        if not targets:
            continue
        try:
            new = fix_code(code, targets)
        except Exception:  # a cell libcst cannot parse alone (IPython magics): leave it
            continue
        if new != code:
            cell = notebook["cells"][number - 1]
            cell["source"] = new.splitlines(keepends=True) if isinstance(cell.get("source"), list) else new
            changed = True
    if not changed:
        return None
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def apply_fixes(files: list[Path], problems: list[Problem], write: bool, show_diff: bool,
                config: Config | Configs | None = None) -> list[Problem]:
    """Fix (or show the diff of) every file; return the problems left afterwards (each file linted again with
    its own configuration)."""
    import libcst  # noqa: F401 (fail early, with a clear message, when it is missing)

    configs = config if isinstance(config, Configs) else Configs(config)
    left: list[Problem] = []
    for path in files:
        mine = [p for p in problems if p.path == str(path)]
        new = fixed_text(path, mine)
        if new is None:
            left += mine
            continue
        data = path.read_bytes()
        old = decoded(data, path)
        if show_diff:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                                       f"a/{path}", f"b/{path}"))
        if write:
            path.write_text(new, encoding="utf-8-sig" if data.startswith(_BOM) else "utf-8")
            left += lint_file(path, configs.for_file(path))
        else:
            left += mine
    return left
