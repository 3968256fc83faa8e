"""The command line of `devicelab lint`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..messages import get_language
from .core import Configs, config_from_toml, iter_files, lint_file
from .rules import RULES


def main(argv: list[str] | None = None) -> int:
    """Lint the paths given; print the findings; 1 when there are any (a file that cannot be read or parsed is one,
    DL000), 0 when none, 2 on a usage error."""
    parser = argparse.ArgumentParser(prog="devicelab lint",
                                     description="Find the device mistakes of chapters 01-09 before the code runs.")
    parser.add_argument("paths", nargs="*", default=["."], help=".py files, .ipynb notebooks or folders (default: .)")
    parser.add_argument("--lang", choices=("en", "zh"), default=None, help="language of the messages")
    parser.add_argument("--format", choices=("text", "json", "github"), default="text",
                        help="output format (github: annotations for GitHub Actions)")
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
            print(f"{rule.code} ({rule.chapter}){fixable}: {rule.message[lang]}")
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


def _configs(args: argparse.Namespace) -> Configs:
    """--config for every file, or each file's own nearest pyproject.toml; --select and --ignore over either."""
    def codes(text: str | None) -> tuple[str, ...] | None:
        return None if text is None else tuple(c.strip().upper() for c in text.split(",") if c.strip())

    given = None
    if args.config:
        given = config_from_toml(Path(args.config).read_text(encoding="utf-8"))
    return Configs(given, select=codes(args.select), ignore=codes(args.ignore))
