"""Reading files (scripts and notebooks, cell by cell), `# noqa`, the configuration, and what a finding says."""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..explain import chapter_url, site_url  # noqa: F401 - site_url: part of this module's interface
from .analysis import Analysis, Finding
from .rules import RULES

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_MAGIC = re.compile(r"^(\s*)(?:[\w.,\s]+=\s*)?[!%]")
_NEWLINE = re.compile(r"\r\n|\r|\n")  # what Python counts as a line end (str.splitlines counts more)
SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site", "build", "dist"})


@dataclass
class Problem:
    """A finding placed in a file: path, notebook cell (1-based, counting every cell), line and column."""

    path: str
    line: int
    col: int
    code: str
    params: dict[str, str] = field(default_factory=dict)
    cell: int | None = None
    fix: dict[str, object] | None = None
    source_line: int = 0  # the line in the parsed text (for --fix)

    def message(self, lang: str) -> str:
        """The rule's one-line message in `lang`, filled in."""
        try:
            return RULES[self.code].message[lang].format(**self.params)
        except (KeyError, IndexError):
            return RULES[self.code].message[lang]

    def location(self) -> str:
        """path:line:col, or path:cell_N:line:col in a notebook."""
        cell = f"cell_{self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.line}:{self.col}"

    def render(self, lang: str) -> str:
        """`path:line:col CODE message — chapter link`."""
        return f"{self.location()} {self.code} {self.message(lang)} — {chapter_url(RULES[self.code].chapter, lang)}"

    def as_dict(self, lang: str) -> dict[str, object]:
        """The finding for --format json."""
        rule = RULES[self.code]
        return {"path": self.path, "cell": self.cell, "line": self.line, "column": self.col, "code": self.code,
                "message": self.message(lang), "chapter": rule.chapter, "url": chapter_url(rule.chapter, lang),
                "fixable": self.fix is not None}


@dataclass
class Config:
    """Which rules run: `select` and `ignore` are code prefixes ("DL5" = every chapter-05 rule)."""

    select: tuple[str, ...] = ("DL",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def wants(self, code: str) -> bool:
        """Whether findings of rule `code` are reported."""
        chosen = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        dropped = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return chosen >= 0 and chosen > dropped


def load_config(start: Path | None = None) -> Config:
    """[tool.devicelab.lint] from the nearest pyproject.toml at or above `start` (default: the current folder)."""
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            return config_from_toml(pyproject.read_text(encoding="utf-8"))
    return Config()


def config_from_toml(text: str) -> Config:
    """The configuration in a pyproject.toml's text (defaults when it has none, or no TOML reader is there)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            return Config()
    table = tomllib.loads(text).get("tool", {}).get("devicelab", {}).get("lint", {})
    config = Config()
    if "select" in table:
        config.select = tuple(str(c).upper() for c in table["select"])
    if "ignore" in table:
        config.ignore = tuple(str(c).upper() for c in table["ignore"])
    if "exclude" in table:
        config.exclude = tuple(str(c) for c in table["exclude"])
    return config


# --- sources -------------------------------------------------------------------------------------------------

@dataclass
class Source:
    """The Python text the linter parses, and where each of its lines came from."""

    text: str
    origin: list[tuple[int | None, int]]  # per parsed line (0-based): (cell number or None, line in file or cell)
    lines: list[str]  # the original lines, for noqa


def script_source(text: str) -> Source:
    """A .py file as it is."""
    lines = _NEWLINE.split(text)
    return Source(text, [(None, n) for n in range(1, len(lines) + 1)], lines)


def notebook_cells(text: str) -> list[tuple[int, str]]:
    """The code cells of a notebook: (cell number counting every cell from 1, source)."""
    notebook = json.loads(text)
    cells = []
    for number, cell in enumerate(notebook.get("cells", []), 1):
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            cells.append((number, "".join(source) if isinstance(source, list) else source))
    return cells


def cells_source(cells: Iterable[tuple[int, str]]) -> Source:
    """Code cells joined in order (a later cell sees the names of an earlier one); IPython magics blanked."""
    out: list[str] = []
    origin: list[tuple[int | None, int]] = []
    originals: list[str] = []
    for number, code in cells:
        lines = _NEWLINE.split(code.rstrip("\r\n")) if code.strip() else []
        if lines and lines[0].lstrip().startswith("%%"):
            continue  # a cell magic: not Python
        for index, line in enumerate(lines, 1):
            magic = _MAGIC.match(line)
            out.append(f"{magic.group(1)}pass" if magic else line)
            origin.append((number, index))
            originals.append(line)
        out.append("")
        origin.append((number, len(lines) + 1))
        originals.append("")
    return Source("\n".join(out) + "\n", origin, originals)


def noqa_codes(line: str) -> set[str] | None:
    """The codes a `# noqa: CODE` comment silences on this line; an empty set for a bare `# noqa`; None without."""
    found = _NOQA.search(line)
    if not found:
        return None
    codes = found.group("codes")
    return set(re.split(r"[,\s]+", codes.upper().strip())) if codes else set()


def analyse(text: str) -> list[Finding]:
    """Every finding in Python source text (no noqa, no configuration)."""
    if "torch" not in text and "timm" not in text:
        return []  # every rule is about a name from torch (or a model from timm)
    return Analysis(ast.parse(text)).run()


def lint_source(source: Source, path: str, config: Config | None = None,
                unread: list[str] | None = None) -> list[Problem]:
    """The problems of one parsed source, placed back in its file, noqa and configuration applied (a script
    that does not parse is added to `unread`; a notebook is read without its broken cells)."""
    config = config or Config()
    try:
        findings = analyse(source.text)
    except SyntaxError as error:
        if source.origin and source.origin[0][0] is not None:
            return _lint_cells_one_by_one(source, path, config)
        if unread is not None:
            unread.append(f"{path}:{error.lineno}:{error.offset}: cannot parse ({error.msg})")
        return []
    problems = []
    parsed_lines = _NEWLINE.split(source.text)
    shown = _displayed_lines(source)
    for finding in findings:
        if not config.wants(finding.code) or not 0 < finding.line <= len(source.origin):
            continue
        if finding.code == "DL101" and finding.col == 1 and finding.line in shown:
            continue  # a notebook cell's last expression is displayed, not thrown away
        cell, line = source.origin[finding.line - 1]
        parsed = parsed_lines[finding.line - 1] if finding.line <= len(parsed_lines) else ""
        col = len(parsed.encode("utf-8")[:finding.col - 1].decode("utf-8", errors="ignore")) + 1  # ast counts bytes
        silenced = noqa_codes(source.lines[finding.line - 1])
        if silenced is not None and (not silenced or finding.code in silenced):
            continue
        problems.append(Problem(path, line, col, finding.code, finding.params, cell, finding.fix, finding.line))
    return problems


def _displayed_lines(source: Source) -> set[int]:
    """The parsed lines (1-based) that end a notebook cell's code: Jupyter displays a last expression."""
    last: dict[int, int] = {}
    for index, (cell, _) in enumerate(source.origin):
        if cell is not None and source.lines[index].strip() and not source.lines[index].lstrip().startswith("#"):
            last[cell] = index + 1
    return set(last.values())


def _lint_cells_one_by_one(source: Source, path: str, config: Config) -> list[Problem]:
    """A notebook whose joined cells do not parse: the cells that parse, still joined (imports carry over)."""
    text_lines = source.text.split("\n")
    by_cell: dict[int | None, list[int]] = {}
    for index, (cell, _) in enumerate(source.origin):
        by_cell.setdefault(cell, []).append(index)
    broken: set[int] = set()
    for indexes in by_cell.values():
        try:
            ast.parse("\n".join(text_lines[i] for i in indexes))
        except SyntaxError:
            broken.update(indexes)
    if not broken:
        return []
    kept = "\n".join("" if i in broken else line for i, line in enumerate(text_lines))
    try:
        ast.parse(kept)
    except SyntaxError:
        return []
    return lint_source(Source(kept, source.origin, source.lines), path, config)


def read_source(path: Path) -> Source:
    """A .py file, or a notebook's code cells."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        return cells_source(notebook_cells(text))
    return script_source(text)


def lint_text(text: str, path: str = "<string>", config: Config | None = None) -> list[Problem]:
    """The problems of Python source text."""
    return lint_source(script_source(text), path, config)


def lint_file(path: Path, config: Config | None = None, shown: str | None = None,
              unread: list[str] | None = None) -> list[Problem]:
    """The problems of one .py or .ipynb file; a file that cannot be read or parsed is added to `unread`."""
    try:
        source = read_source(path)
    except (OSError, ValueError) as error:
        if unread is not None:
            unread.append(f"{shown or path}: cannot read ({error})")
        return []
    return lint_source(source, shown or str(path), config, unread)


def iter_files(paths: Iterable[str | Path], config: Config | None = None) -> Iterator[Path]:
    """The .py and .ipynb files named, and those inside the folders named (hidden folders and builds skipped)."""
    config = config or Config()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            for root, folders, files in os.walk(path):
                inside = Path(root).relative_to(path)  # exclude patterns apply below the folder named
                folders[:] = sorted(f for f in folders if not f.startswith(".") and f not in SKIPPED_FOLDERS
                                    and not f.endswith(".egg-info") and not _excluded(inside / f, config))
                for name in sorted(files):
                    found = Path(root) / name
                    if found.suffix in (".py", ".ipynb") and not _excluded(inside / name, config):
                        yield found
        elif path.suffix in (".py", ".ipynb") or path.is_file():
            yield path


def _excluded(path: Path, config: Config) -> bool:
    text = path.as_posix()
    return any(path.match(pattern) or text.startswith(pattern.rstrip("/") + "/") or text == pattern.rstrip("/")
               for pattern in config.exclude)


def lint_paths(paths: Iterable[str | Path], config: Config | None = None) -> list[Problem]:
    """The problems of every file named or inside a folder named."""
    problems: list[Problem] = []
    for path in iter_files(paths, config):
        problems += lint_file(path, config)
    return problems
