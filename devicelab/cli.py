"""One command for the course's tools: `devicelab explain`, `devicelab lint`, `devicelab grade`.

Each subcommand is the module of the same name run with the remaining arguments (`python -m devicelab.explain`,
`python -m devicelab.lint`, `python -m devicelab.grading` keep working); only the chosen one is imported.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "explain": ("devicelab.explain", "read a pasted error message or traceback: what it means, the fix, the chapter"),
    "lint": ("devicelab.lint", "find the device mistakes of chapters 01-09 in scripts and notebooks, unrun"),
    "grade": ("devicelab.grading", "grade students' lab notebooks (the instructor's grader)"),
}


def usage() -> str:
    """The command's help text."""
    lines = ["usage: devicelab {explain,lint,grade} [ARGS...]   (devicelab COMMAND --help for its options)", ""]
    lines += [f"  {name:<8} {about}" for name, (_, about) in COMMANDS.items()]
    lines += ["", "  --version  print the version"]
    return "\n".join(lines)


def version() -> str:
    """The installed package's version (or the checkout's, when it is not installed)."""
    try:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as installed
        return installed("devicelab")
    except PackageNotFoundError:  # run from a checkout without installing
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    """Dispatch to the subcommand's own main with the remaining arguments."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    if args[0] == "--version":
        print(f"devicelab {version()}")
        return 0
    if args[0] not in COMMANDS:
        print(f"devicelab: unknown command {args[0]!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[args[0]][0])
    return module.main(args[1:])


if __name__ == "__main__":
    sys.exit(main())
