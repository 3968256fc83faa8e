"""One command for the course's tools: `devicelab explain`, `devicelab lint`, `devicelab grade`.

Each subcommand is the module of the same name run with the remaining arguments (`python -m devicelab.explain`,
`python -m devicelab.lint`, `python -m devicelab.grading` keep working); only the chosen one is imported.
"""

from __future__ import annotations

import importlib
import os
import sys

COMMANDS = {
    "explain": ("devicelab.explain", "read a pasted error message or traceback: what it means, the fix, the chapter"),
    "lint": ("devicelab.lint", "find the device mistakes of chapters 01-09 in scripts and notebooks, unrun"),
    "grade": ("devicelab.grading", "grade students' lab notebooks (the instructor's grader)"),
}


ABOUT_ZH = {
    "explain": "解读粘贴进来的报错或 traceback：它的含义、修复方法和对应的章节",
    "lint": "不运行代码，找出脚本和笔记本里第 01–09 章讲到的设备错误",
    "grade": "给学生的实验笔记本评分（教师用的评分程序）",
}


def user_language() -> str:
    """"zh" when the user's locale is Chinese (LC_ALL, LC_MESSAGES, LANG), else "en"."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def usage(lang: str | None = None) -> str:
    """The command's help text, in the user's language."""
    zh = (lang or user_language()) == "zh"
    lines = ["用法：devicelab {explain,lint,grade} [参数...]   （子命令的选项：devicelab 子命令 --help）" if zh else
             "usage: devicelab {explain,lint,grade} [ARGS...]   (devicelab COMMAND --help for its options)", ""]
    lines += [f"  {name:<8} {ABOUT_ZH[name] if zh else about}" for name, (_, about) in COMMANDS.items()]
    lines += ["", "  --version  " + ("显示版本号" if zh else "print the version")]
    return "\n".join(lines)


def version() -> str:
    """The package's version (semantic versioning: CHANGELOG.md says what each one changed)."""
    from . import __version__

    return __version__


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
