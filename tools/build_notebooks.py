"""Generate every lab notebook from its bilingual source.

One source per chapter, solutions/source/NN-slug.md, holds the solved notebook in both languages.
From it this script writes four notebooks:

    solutions/en/NN-slug.ipynb   solutions/zh/NN-slug.ipynb   (solved)
    labs/en/NN-slug.ipynb        labs/zh/NN-slug.ipynb        (student: solution regions replaced)

Source syntax: a line `%% md en`, `%% md zh`, `%% code`, `%% code zh` or `%% setup` starts a cell. Every
English markdown cell is followed by its Chinese twin, so both languages have the same cells in the same
order, and code is written once. A `%% code` cell may be followed by a `%% code zh` twin: the same code
with its comments, docstrings, assert messages and the strings it hands to print() in Chinese, used in the
Chinese notebooks; the generator
refuses a twin whose code (that prose aside, compared token by token) differs from the English cell.
In code, a region between `### BEGIN SOLUTION` and `### END SOLUTION` is the answer; its lines starting
with `#> ` are what the student gets instead. `%% setup` is replaced by the setup cell below, the same in every lab.

Shared facts (docs/facts.yml, written once for a page and its lab) are first written into the sources by
tools/facts.py; their markers are dropped from the notebooks.

Regenerate:  python tools/build_notebooks.py  (one lab: --lab 01-devices)
Check freshness:  python tools/build_notebooks.py --check  (the sources' facts included)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import tokenize
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import facts  # noqa: E402  (tools/facts.py)

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "solutions" / "source"
LANGS = ("en", "zh")
MARKER = re.compile(r"^%% (md en|md zh|code zh|code|setup)\s*$")
STUDENT_LINE = re.compile(r"^(\s*)#> ?(.*)$")


# mkdocs.yml's `repo_url: !ENV [VARIABLE, "default address"]`: the variable overrides the default.
_ADDRESS = re.compile(r"""^(\w+):\s*!ENV\s*\[\s*(\w+)\s*,\s*["']?([^"'\]\s]+)["']?\s*\]""")


def _address(key: str) -> str:
    """An address of mkdocs.yml (repo_url, site_url), as the site build reads it: its variable, else its default."""
    for line in (ROOT / "mkdocs.yml").read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{key}:"):
            found = _ADDRESS.match(line)
            if found is None:  # a plain address
                return line.split(":", 1)[1].split(" #", 1)[0].strip().strip("\"'")
            _, variable, default = found.groups()
            return os.environ.get(variable) or default
    raise SystemExit(f"mkdocs.yml has no {key}")


def repo_url() -> str:
    """The course repository's address, as the site build reads it from mkdocs.yml's repo_url.

    That line names an environment variable (DEVICELAB_REPO_URL) and a default address: a fork sets the
    variable when it runs `make notebooks`, and the labs' setup cell installs the helper from the fork.
    """
    return _address("repo_url").rstrip("/")


# Where the site keeps the helper as a wheel, in a pip index (tools/helper_wheel.py writes it at every build).
WHEEL_INDEX = "simple/"


def helper_index_url() -> str:
    """The pip index on the course's site that holds the helper's wheel (mkdocs.yml's site_url + simple/).

    The labs' setup cell installs the helper from there when github.com does not answer; a fork sets
    DEVICELAB_SITE_URL when it runs `make notebooks`, as for DEVICELAB_REPO_URL.
    """
    return _address("site_url").rstrip("/") + "/" + WHEEL_INDEX


SETUP = '''\
LANG = "{lang}"  # {c_lang}
LAB = "{lab}"
HELPER = "git+{repo}"  # {c_helper}
# {c_index}
HELPER_INDEX = "{index}"

import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

if importlib.util.find_spec("devicelab") is None:
    here = Path.cwd().resolve()
    clone = next((p for p in (here, *here.parents) if (p / "devicelab" / "__init__.py").exists()), None)
    if clone is not None:  # {c_clone}
        sys.path.insert(0, str(clone))
    else:
        # {c_nodeps}
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-color", "--no-deps"]
        # {c_git}
        git = {{**os.environ, "GIT_HTTP_LOW_SPEED_LIMIT": "1000", "GIT_HTTP_LOW_SPEED_TIME": "30"}}
        sources = [(HELPER, [HELPER], git), (HELPER_INDEX, ["--index-url", HELPER_INDEX, "devicelab"], None)]
        failed = []
        for source, wanted, env in sources:  # {c_site}
            address = urlsplit(source.removeprefix("git+"))
            try:  # {c_answers}
                socket.create_connection((address.hostname, address.port or 443), timeout=10).close()
            except OSError as error:
                said = f"ERROR: {{address.hostname}} does not answer ({{error}})"
                done = subprocess.CompletedProcess(pip, 1, "", said)
            else:
                done = subprocess.run([*pip, *wanted], capture_output=True, text=True, env=env)
            if done.returncode == 0:
                break
            failed.append(done)
        if failed and done.returncode == 0:
            print({{"en": "The helper could not be installed from GitHub: it was installed from the course's site.",
                   "zh": "无法从 GitHub 安装课程辅助包，已改从课程网站安装。"}}[LANG])
        on_colab = "google.colab" in sys.modules
        if done.returncode == 0 and on_colab and importlib.util.find_spec("timm") is None:
            done = subprocess.run([*pip, "timm"], capture_output=True, text=True)
            failed = [done] if done.returncode != 0 else []
        if done.returncode != 0:
            # {c_pip}
            said = [line.strip() for run in failed for line in (run.stderr + run.stdout).splitlines() if line.strip()]
            own = list(dict.fromkeys(line for line in said if line.startswith(("×", "fatal:", "remote:", "ERROR:"))))
            cause = "\\n".join("  " + line for line in (own or said)[-8:])
            command = f"pip install --no-deps {{HELPER}}"
            from_site = f"pip install --no-deps --index-url {{HELPER_INDEX}} devicelab"
            raise RuntimeError({{
                "en": "The course helper could not be installed, so this lab stops here: its reproduce, check, "
                      "hint and proof cells all need it.\\nWhy (what pip reported):\\n" + cause + "\\n"
                      + ("What to do: connect the runtime to the internet, then run this cell again."
                         if on_colab else f"What to do: run `{{command}}` in this environment (or, from the "
                         f"course's site, `{{from_site}}`), or open this notebook inside a clone of the course; "
                         "then run this cell again."),
                "zh": "无法安装课程辅助包，本实验只能停在这里：复现、检查、提示和效果检验单元都离不开它。\\n"
                      "原因（pip 报告的错误）：\\n" + cause + "\\n"
                      + ("怎么办：让运行时连上网络，然后重新运行本单元。"
                         if on_colab else f"怎么办：在当前环境里运行 `{{command}}`（或者从课程网站安装："
                         f"`{{from_site}}`），或者在课程仓库的克隆里打开本笔记本；然后重新运行本单元。"),
            }}[LANG]) from None

from devicelab import ____, start_lab

lab = start_lab(LAB, lang=LANG)
device = lab.device'''


def code_without_comments(code: str) -> list[str]:
    """The code's tokens without comments, blank lines or indentation detail: what both languages must share."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # Not plain Python (a shell line, a magic): compare lines with `#` comments cut off.
        return [line.split("#", 1)[0].rstrip() for line in code.splitlines() if line.split("#", 1)[0].strip()]
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    kept = _printed_as_placeholders(_fstrings_joined([(t.type, t.string) for t in tokens if t.type not in skip]))
    # A comment-only line leaves a NEWLINE behind in some contexts: collapse repeated NEWLINEs.
    out: list[str] = []
    for kind, text in kept:
        if kind == tokenize.NEWLINE and (not out or out[-1] == "\n"):
            continue
        out.append("\n" if kind == tokenize.NEWLINE else text)
    return _prose_as_placeholders(out, {text for kind, text in kept if kind == tokenize.STRING})


def _fstrings_joined(tokens: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Python 3.12+ splits an f-string into FSTRING_START ... FSTRING_END tokens: make it one STRING again."""
    start, end = getattr(tokenize, "FSTRING_START", None), getattr(tokenize, "FSTRING_END", None)
    if start is None:
        return tokens
    out: list[tuple[int, str]] = []
    depth, parts = 0, []
    for kind, text in tokens:
        if kind == start:
            depth += 1
        if depth:
            parts.append(text)
            if kind == end:
                depth -= 1
                if not depth:
                    out.append((tokenize.STRING, "".join(parts)))
                    parts = []
        else:
            out.append((kind, text))
    return out


def _printed_as_placeholders(tokens: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """A string handed straight to print() is text for the reader, translated like a comment: compare it as a
    placeholder. Only print's own arguments: a string inside a call or an index within them (`print(f("a"))`,
    `print(d["key"])`) is code."""
    out: list[tuple[int, str]] = []
    depth = 0  # bracket depth inside a print(...) call; 0 outside one
    for i, (kind, text) in enumerate(tokens):
        if depth == 0:
            if (kind == tokenize.NAME and text == "print" and i + 1 < len(tokens) and tokens[i + 1][1] == "("
                    and not (out and out[-1][1] == ".")):
                depth = -1  # the next token opens the call
        elif kind == tokenize.OP and text in ("(", "[", "{"):
            depth = 1 if depth == -1 else depth + 1
        elif kind == tokenize.OP and text in (")", "]", "}"):
            depth -= 1
        elif depth == 1 and kind == tokenize.STRING:
            text = _printed(text)
        out.append((kind, text))
    return out


def _printed(string: str) -> str:
    """The placeholder of a printed string: its words may be translated, the values an f-string shows may not."""
    prefix = re.match(r"[A-Za-z]*", string).group(0).lower()
    shown = sorted(re.findall(r"(?<!\{)\{([^{}]*)\}", string)) if "f" in prefix else []
    return "<printed" + "".join(" {" + value + "}" for value in shown) + ">"


def _prose_as_placeholders(tokens: list[str], strings: set[str]) -> list[str]:
    """Docstrings and assert messages are prose for the reader, translated like comments: compare them as placeholders.

    A docstring is a statement made of strings alone; an assert message is what follows the assert's top-level comma
    when that is strings alone.
    """
    out: list[str] = []
    start = 0
    for end in [i for i, t in enumerate(tokens) if t == "\n"] + [len(tokens)]:
        line = tokens[start:end]
        if line and all(t in strings for t in line):
            line = ["<docstring>"]
        elif line and line[0] == "assert":
            depth, comma = 0, None
            for i, t in enumerate(line):
                depth += t in "([{" and len(t) == 1
                depth -= t in ")]}" and len(t) == 1
                if t == "," and depth == 0:
                    comma = i
                    break
            if comma is not None and line[comma + 1:] and all(t in strings for t in line[comma + 1:]):
                line = line[: comma + 1] + ["<message>"]
        out.extend(line + tokens[end:end + 1])
        start = end + 1
    return out


SETUP_COMMENTS = {
    "en": {
        "c_lang": 'this notebook\'s language ("en" or "zh")',
        "c_helper": "the course's helper package",
        "c_clone": "a clone of the course: use its helper as it is",
        "c_nodeps": "--no-deps: install only the helper (on Colab also timm if missing); never touch torch.",
        "c_pip": "pip wraps git's own error in boilerplate: keep its lines that say what went wrong.",
        "c_index": "the same helper, as a wheel on the course's site: for when github.com does not answer",
        "c_answers": "does the host answer at all? (from some networks github.com does not)",
        "c_git": "git gives up on a transfer that stalls below 1 KB/s for 30 s, instead of hanging",
        "c_site": "from the repository; when it does not answer or the install fails, from the course's site",
    },
    "zh": {
        "c_lang": '本笔记本的语言（"en" 或 "zh"）',
        "c_helper": "课程的辅助包",
        "c_clone": "在课程仓库的克隆里：直接使用其中的辅助包",
        "c_nodeps": "--no-deps：只安装辅助包（在 Colab 上缺少 timm 时也装上 timm），绝不改动已有的 torch。",
        "c_pip": "pip 会把 git 自己的报错包在一堆套话里：只保留说明出了什么问题的那几行。",
        "c_index": "课程网站上的同一个辅助包（wheel 格式）：github.com 连不上时从这里安装",
        "c_answers": "主机能连上吗？（在有些网络里 github.com 连不上）",
        "c_git": "传输速度低于 1 KB/s 持续 30 秒时，git 放弃下载，而不是一直卡住",
        "c_site": "先从仓库安装；仓库连不上或安装失败时，改从课程网站安装",
    },
}


def parse(source: Path) -> list[tuple[str, str]]:
    """The cells of a source file as (kind, text) pairs; kind is 'md en', 'md zh', 'code', 'code zh' or 'setup'."""
    cells: list[tuple[str, list[str]]] = []
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        found = MARKER.match(line)
        if found:
            cells.append((found.group(1), []))
        elif cells:
            cells[-1][1].append(line)
        elif line.strip():
            raise SystemExit(f"{source}:{number}: text before the first %% marker")
    parsed = [(kind, "\n".join(lines).strip("\n")) for kind, lines in cells]
    for i, (kind, _) in enumerate(parsed):
        following = parsed[i + 1][0] if i + 1 < len(parsed) else None
        previous = parsed[i - 1][0] if i > 0 else None
        if kind == "md en" and following != "md zh":
            raise SystemExit(f"{source}: English cell {i} has no Chinese twin right after it")
        if kind == "md zh" and previous != "md en":
            raise SystemExit(f"{source}: Chinese cell {i} has no English twin right before it")
        if kind == "code zh" and previous != "code":
            raise SystemExit(f"{source}: Chinese code cell {i} does not follow a `%% code` cell")
        if kind == "code zh":
            english = parsed[i - 1][1]
            for version in (0, 1):  # the solution, then the student version
                en_code = split_solution(english, source)[version]
                zh_code = split_solution(parsed[i][1], source)[version]
                if code_without_comments(en_code) != code_without_comments(zh_code):
                    raise SystemExit(f"{source}: Chinese code cell {i} differs from its English twin in code, "
                                     "not only in comments")
    return parsed


def split_solution(code: str, source: Path) -> tuple[str, str]:
    """The (solution, student) versions of a code cell."""
    solution: list[str] = []
    student: list[str] = []
    inside = False
    for line in code.splitlines():
        stripped = line.strip()
        if stripped == "### BEGIN SOLUTION":
            if inside:
                raise SystemExit(f"{source}: nested BEGIN SOLUTION")
            inside = True
        elif stripped == "### END SOLUTION":
            if not inside:
                raise SystemExit(f"{source}: END SOLUTION without BEGIN")
            inside = False
        elif inside and STUDENT_LINE.match(line):
            student.append(STUDENT_LINE.sub(r"\1\2", line))
        elif inside:
            solution.append(line)
        else:
            solution.append(line)
            student.append(line)
    if inside:
        raise SystemExit(f"{source}: BEGIN SOLUTION without END")
    return "\n".join(solution), "\n".join(student)


def notebook(cells: list[dict]) -> dict:
    """A clean nbformat 4.5 notebook: no outputs, no execution counts, no personal metadata."""
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "accelerator": "GPU",
            "colab": {"provenance": []},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def code_cell(text: str, index: int) -> dict:
    """A code cell with a stable id."""
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": f"code-{index:02d}",
        "metadata": {},
        "outputs": [],
        "source": text.splitlines(keepends=True),
    }


def markdown_cell(text: str, index: int) -> dict:
    """A markdown cell with a stable id."""
    return {"cell_type": "markdown", "id": f"md-{index:02d}", "metadata": {}, "source": text.splitlines(keepends=True)}


# A lab's title names the student version; its solution's names the solution ("Solution 05 · …").
TITLES = {"# Lab ": "# Solution ", "# 实验 ": "# 参考答案 "}


def titled(markdown: str, version: str) -> str:
    """A markdown cell whose first-level title names the notebook's version (the source writes the lab's)."""
    if version != "solutions":
        return markdown
    for lab, solution in TITLES.items():
        if markdown.startswith(lab):
            return solution + markdown[len(lab):]
    return markdown


def build(source: Path) -> dict[Path, str]:
    """Every notebook generated from one source, as {path: JSON text}."""
    lab = source.stem
    parsed = parse(source)
    outputs: dict[Path, str] = {}
    for lang in LANGS:
        for version in ("solutions", "labs"):
            cells = []
            for index, (kind, body) in enumerate(parsed):
                if kind.startswith("md"):
                    if kind == f"md {lang}":
                        cells.append(markdown_cell(titled(facts.strip_markers(body), version), index))
                    continue
                if kind == "code zh":
                    continue  # used in place of the English cell before it
                if kind == "code" and lang == "zh" and index + 1 < len(parsed) and parsed[index + 1][0] == "code zh":
                    body = parsed[index + 1][1]
                if kind == "setup":
                    body = SETUP.format(lang=lang, lab=lab, repo=repo_url(), index=helper_index_url(),
                                         **SETUP_COMMENTS[lang])
                solution, student = split_solution(body, source)
                cells.append(code_cell(solution if version == "solutions" else student, index))
            text = json.dumps(notebook(cells), indent=1, ensure_ascii=False) + "\n"
            outputs[ROOT / version / lang / f"{lab}.ipynb"] = text
    return outputs


def all_outputs() -> dict[Path, str]:
    """Every generated notebook of every chapter."""
    outputs: dict[Path, str] = {}
    for source in sorted(SOURCES.glob("*.md")):
        outputs.update(build(source))
    return outputs


def main() -> int:
    """Write the notebooks, or with --check report the stale ones and fail."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a generated notebook is stale")
    parser.add_argument("--lab", help="only this lab (e.g. 01-devices): write its four notebooks, nothing else")
    args = parser.parse_args()
    shared = facts.load()["facts"]
    stale_facts = [path for path, in_lab in facts.places() if facts.filled(path, in_lab, shared) !=
                   path.read_text(encoding="utf-8")]
    if args.check and stale_facts:
        for path in stale_facts:
            print(f"stale facts: {path.relative_to(ROOT)}")
        print("run: python tools/build_notebooks.py (it runs tools/facts.py first)")
        return 1
    for path in stale_facts:  # write the facts into the sources (and pages) before the notebooks are built
        path.write_text(facts.filled(path, path.is_relative_to(SOURCES), shared), encoding="utf-8")
        print(f"facts written into {path.relative_to(ROOT)}")
    if args.lab and not args.check:
        for path, text in build(SOURCES / f"{args.lab}.md").items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        print(f"wrote the 4 notebooks of {args.lab}")
        return 0
    outputs = all_outputs()
    generated_dirs = [ROOT / v / lang for v in ("solutions", "labs") for lang in LANGS]
    strays = [p for d in generated_dirs if d.exists() for p in d.glob("*.ipynb") if p not in outputs]
    stale = [p for p, text in outputs.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale + strays:
            print(f"stale: {path.relative_to(ROOT)}")
        if stale or strays:
            print("run: python tools/build_notebooks.py")
        return 1 if stale or strays else 0
    for path, text in outputs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for path in strays:
        path.unlink()
    print(f"wrote {len(outputs)} notebooks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
