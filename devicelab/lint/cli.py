"""The command line of `devicelab lint`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from urllib.parse import quote

from ..messages import get_language
from .catalogue import RULES
from .core import UNREADABLE, Configs, Problem, chapter_url, config_from_toml, iter_files, lint_file


def main(argv: list[str] | None = None) -> int:
    """Lint the paths given; print the findings; 1 when there are any (a file that cannot be read or parsed is one,
    DL000), 0 when none, 2 on a usage error."""
    parser = argparse.ArgumentParser(prog="devicelab lint",
                                     description="Find the device mistakes of chapters 01-09 before the code runs.")
    parser.add_argument("paths", nargs="*", default=["."], help=".py files, .ipynb notebooks or folders (default: .)")
    parser.add_argument("--lang", choices=("en", "zh"), default=None, help="language of the messages")
    parser.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text",
                        help="output format (github: annotations for GitHub Actions; sarif: SARIF 2.1.0 for code "
                             "scanning)")
    parser.add_argument("--select", default=None, help="comma-separated code prefixes to report (DL5,DL701)")
    parser.add_argument("--ignore", default=None, help="comma-separated code prefixes to leave out")
    parser.add_argument("--config", default=None, help="a pyproject.toml to read instead of the nearest one")
    parser.add_argument("--fix", action="store_true", help="apply the safe fixes in place (needs libcst)")
    parser.add_argument("--diff", action="store_true", help="print the safe fixes as a unified diff, change nothing")
    parser.add_argument("--list-rules", action="store_true", help="print every rule and its chapter")
    args = parser.parse_args(argv)
    lang = args.lang or get_language()

    if args.list_rules:
        for rule in RULES.values():
            fixable = " [fix]" if rule.fixable else ""
            preview = " [preview: --select " + rule.code + "]" if rule.preview else ""
            print(f"{rule.code} ({rule.chapter}){fixable}{preview}: {rule.message[lang]}")
        return 0

    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        print(f"no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        configs = _configs(args)
        files = list(iter_files(args.paths, configs))
        problems = [p for path in files for p in lint_file(path, configs.for_file(path))]
    except (OSError, ValueError) as error:  # a --config that cannot be read, a pyproject.toml that is not TOML
        print(f"cannot read the configuration: {error}", file=sys.stderr)
        return 2

    if args.fix or args.diff:
        from .fix import apply_fixes

        try:
            problems = apply_fixes(files, problems, write=args.fix, show_diff=args.diff, config=configs)
        except ModuleNotFoundError as error:
            print(f"--fix and --diff need libcst ({error}): pip install libcst", file=sys.stderr)
            return 2

    if args.format == "json":
        print(json.dumps([p.as_dict(lang) for p in problems], ensure_ascii=False, indent=2))
    elif args.format == "sarif":
        print(json.dumps(sarif_log(problems, lang), ensure_ascii=False, indent=2))
    elif args.format == "github":
        for problem in problems:
            print(github_annotation(problem.as_dict(lang)))
    else:
        for problem in problems:
            print(problem.render(lang))
    return 1 if problems else 0


def github_annotation(finding: dict[str, object]) -> str:
    """One finding as a GitHub Actions workflow command: an annotation on the file and line of the pull request."""

    def escaped(value: object, in_property: bool = False) -> str:
        text = str(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return text.replace(":", "%3A").replace(",", "%2C") if in_property else text

    where = f"file={escaped(finding['path'], True)},line={finding['line']},col={finding['column']}"
    cell = f" (cell {finding['cell']})" if finding.get("cell") else ""
    title = escaped(f"{finding['code']} · chapter {finding['chapter']}", True)
    return f"::warning {where},title={title}::{escaped(finding['message'])}{cell} {finding['url']}"


CELL = {"en": "cell {}: ", "zh": "第 {} 个单元格："}


def sarif_log(problems: list[Problem], lang: str) -> dict[str, object]:
    """The findings as a SARIF 2.1.0 log: one run, every rule (its id, what it finds, its chapter's page) and one
    result per finding, placed at its line and column (in a notebook, its cell's; the cell is in the message and
    in the result's properties)."""
    from .. import __version__

    rules = list(RULES.values())
    index = {rule.code: n for n, rule in enumerate(rules)}

    def level(code: str) -> str:
        return "error" if code == UNREADABLE else "warning"

    def uri(path: str) -> str:
        where = Path(path)
        return where.resolve().as_uri() if where.is_absolute() else quote(where.as_posix())

    results = []
    for problem in problems:
        cell = "" if problem.cell is None else CELL[lang].format(problem.cell)
        result: dict[str, object] = {
            "ruleId": problem.code, "ruleIndex": index[problem.code], "level": level(problem.code),
            "message": {"text": cell + problem.message(lang)},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri(problem.path)},
                                                "region": {"startLine": problem.line, "startColumn": problem.col}}}],
        }
        if problem.cell is not None:
            result["properties"] = {"cell": problem.cell}
        results.append(result)
    driver = {
        "name": "devicelab lint", "version": __version__, "informationUri": chapter_url("tools", lang),
        "rules": [{"id": rule.code, "name": rule.code,
                   "shortDescription": {"text": (rule.summary or rule.message)[lang]},
                   "helpUri": chapter_url(rule.chapter, lang),
                   "defaultConfiguration": {"level": level(rule.code)},
                   "properties": {"chapter": rule.chapter, "fixable": rule.fixable}} for rule in rules],
    }
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}]}


def _configs(args: argparse.Namespace) -> Configs:
    """--config for every file, or each file's own nearest pyproject.toml; --select and --ignore over either."""
    def codes(text: str | None) -> tuple[str, ...] | None:
        return None if text is None else tuple(c.strip().upper() for c in text.split(",") if c.strip())

    given = None
    if args.config:
        given = config_from_toml(Path(args.config).read_text(encoding="utf-8"))
    return Configs(given, select=codes(args.select), ignore=codes(args.ignore))
