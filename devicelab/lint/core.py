"""Reading files (scripts and notebooks, cell by cell), `# noqa`, the configuration, and what a finding says."""

from __future__ import annotations

import ast
import gc
import io
import json
import os
import re
import tokenize
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..explain import chapter_url, site_url  # noqa: F401 - site_url: part of this module's interface
from .analysis import Analysis
from .catalogue import REASONS, RULES, VARIANTS
from .values import Finding

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_MAGIC = re.compile(r"^(\s*)(?:[\w.,\s]+=\s*)?[!%]")
# IPython's help: `obj?`, `obj.method??`, `?obj`, `??obj`, `np.*load*?` (a whole line, nothing else on it)
_HELP = re.compile(r"^(\s*)(?:\?{1,2}\s*[\w.*]+(?:\(\))?|[\w.*]+(?:\(\))?\s*\?{1,2})\s*(?:#.*)?$")
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
        """The rule's one-line message in `lang`, filled in (DL000's reason in the same language)."""
        params = dict(self.params)
        reason = REASONS.get(params.get("reason", ""))
        if reason is not None:
            params["reason"] = _filled(reason[lang], params)
        variant = VARIANTS.get(self.code, {}).get(params.get("variant", ""))
        if variant is not None:
            params["variant"] = _filled(variant[lang], params)
        return _filled(RULES[self.code].message[lang], params)

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


def _filled(template: str, params: dict[str, str]) -> str:
    try:
        return template.format(**params)
    except (KeyError, IndexError):
        return template


@dataclass
class Config:
    """Which rules run: `select` and `ignore` are code prefixes ("DL5" = every chapter-05 rule)."""

    select: tuple[str, ...] = ("DL",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    root: Path | None = None  # the folder of the pyproject.toml it was read from: `exclude` is relative to it

    def wants(self, code: str) -> bool:
        """Whether findings of rule `code` are reported (DL000, a file not checked, unless ignored by name)."""
        if code == UNREADABLE:
            return not any(len(p) > 2 and code.startswith(p) for p in self.ignore)
        if code in RULES and RULES[code].preview and code not in self.select:
            return False  # a preview rule runs only when selected by its full code
        chosen = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        dropped = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return chosen >= 0 and chosen > dropped


def load_config(start: Path | None = None) -> Config:
    """[tool.devicelab.lint] from the nearest pyproject.toml at or above `start` (a folder or a file; default: the
    current folder). A pyproject.toml without the table marks a project of its own: the defaults."""
    folder = (start or Path.cwd()).resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            return replace(config_from_toml(pyproject.read_text(encoding="utf-8")), root=candidate)
    return Config()


class Configs:
    """The configuration of each file, as ruff finds its own: the nearest pyproject.toml at or above the file (not
    the current folder), read once per folder; or `given` (--config) for every file. `select` and `ignore` (from
    the command line) override either."""

    def __init__(self, given: Config | None = None, select: tuple[str, ...] | None = None,
                 ignore: tuple[str, ...] | None = None) -> None:
        self.given = given
        self.overrides = {k: v for k, v in (("select", select), ("ignore", ignore)) if v is not None}
        self._folders: dict[Path, Config] = {}

    def for_folder(self, folder: Path) -> Config:
        """The configuration of the files in `folder`."""
        if self.given is not None:
            return replace(self.given, **self.overrides)
        folder = folder.resolve()
        visited: list[Path] = []
        config = None
        for candidate in (folder, *folder.parents):
            config = self._folders.get(candidate)
            if config is not None:
                break
            visited.append(candidate)
            pyproject = candidate / "pyproject.toml"
            if pyproject.is_file():
                config = replace(config_from_toml(pyproject.read_text(encoding="utf-8")), root=candidate,
                                 **self.overrides)
                break
        config = config or replace(Config(), **self.overrides)
        for seen in visited:
            self._folders[seen] = config
        return config

    def for_file(self, path: Path) -> Config:
        """The configuration of one file."""
        return self.for_folder(Path(path).parent)


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

UNREADABLE = "DL000"


class Unreadable(Exception):
    """A file the linter cannot read: DL000's reason (a key of rules.REASONS), its words, and where."""

    def __init__(self, reason: str, line: int = 1, col: int = 1, cell: int | None = None, **params: object) -> None:
        super().__init__(reason)
        self.reason, self.line, self.col, self.cell = reason, line or 1, col or 1, cell
        self.params = {"reason": reason, **({"cell": str(cell)} if cell is not None else {}),
                       **{k: str(v) for k, v in params.items()}}

    def problem(self, path: str) -> Problem:
        """The one finding that says the file (or a cell of it) was not checked."""
        return Problem(path, self.line, self.col, UNREADABLE, self.params, self.cell)


@dataclass
class Source:
    """The Python text the linter parses, and where each of its lines came from."""

    text: str
    origin: list[tuple[int | None, int]]  # per parsed line (0-based): (cell number or None, line in file or cell)
    lines: list[str]  # the original lines, for noqa
    skipped: Unreadable | None = None  # a notebook cell that could not be read (the others are linted)


def script_source(text: str) -> Source:
    """A .py file as it is."""
    lines = _NEWLINE.split(text)
    return Source(text, [(None, n) for n in range(1, len(lines) + 1)], lines)


def _json_kind(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def read_notebook(text: str) -> tuple[list[tuple[int, str]], Unreadable | None]:
    """A notebook's code cells (cell number counting every cell from 1, source), nbformat 4 or 3, and the first
    cell that could not be read (skipped); Unreadable when the text is no notebook at all."""
    try:
        notebook = json.loads(text)
    except ValueError as error:
        raise Unreadable("json", getattr(error, "lineno", 1), getattr(error, "colno", 1),
                         error=getattr(error, "msg", error)) from None
    if not isinstance(notebook, dict):
        raise Unreadable("no_cells", kind=_json_kind(notebook))
    if "cells" not in notebook and isinstance(notebook.get("worksheets"), list):  # nbformat 3
        sheets = [sheet.get("cells") if isinstance(sheet, dict) else sheet for sheet in notebook["worksheets"]]
        if not all(isinstance(cells, list) for cells in sheets):
            raise Unreadable("no_cells", kind=next(_json_kind(c) for c in sheets if not isinstance(c, list)))
        every = [cell for cells in sheets for cell in cells]
    else:
        every = notebook.get("cells")
        if not isinstance(every, list):
            raise Unreadable("no_cells", kind=_json_kind(every))
    code: list[tuple[int, str]] = []
    skipped: Unreadable | None = None
    for number, cell in enumerate(every, 1):
        if not isinstance(cell, dict):
            skipped = skipped or Unreadable("bad_cell", cell=number, kind=_json_kind(cell))
            continue
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            skipped = skipped or Unreadable("bad_source", cell=number)
            continue
        code.append((number, source))
    return code, skipped


def notebook_cells(text: str) -> list[tuple[int, str]]:
    """The code cells of a notebook: (cell number counting every cell from 1, source); unreadable cells left out."""
    return read_notebook(text)[0]


def neutralised(line: str) -> str:
    """A notebook line as Python: an IPython magic (`%time ...`, `!pip ...`, `x = !ls`) or help request (`obj?`,
    `?obj`) becomes `pass` at the same indentation, so that the rest of its cell still parses."""
    special = _MAGIC.match(line) or _HELP.match(line)
    return f"{special.group(1)}pass" if special else line


def cells_source(cells: Iterable[tuple[int, str]]) -> Source:
    """Code cells joined in order (a later cell sees the names of an earlier one); IPython magics blanked."""
    out: list[str] = []
    origin: list[tuple[int | None, int]] = []
    originals: list[str] = []
    for number, code in cells:
        lines = _NEWLINE.split(code.rstrip("\r\n")) if code.strip() else []
        if lines and lines[0].lstrip().startswith("%%"):
            continue  # a cell magic: not Python
        # A cell that is Python as it stands keeps every line: a line that starts with `%` or `!` may continue an
        # expression (`"%s" \n % name`), and is no magic there.
        try:
            plain = bool(parse(code))
        except (SyntaxError, ValueError, Unreadable):
            plain = False
        for index, line in enumerate(lines, 1):
            out.append(line if plain else neutralised(line))
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


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The collector off while one file is read: a tree and its analysis make no cycles, and in a file of
    megabytes the collector's passes over its millions of objects would cost more than the analysis."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse(text: str) -> ast.Module:
    """The tree of Python source text: SyntaxError when it is not Python, Unreadable when it nests too deeply."""
    try:
        with warnings.catch_warnings(), _no_cycle_collection():
            warnings.simplefilter("ignore")  # an invalid escape and the like: Python's own warnings, not ours
            return ast.parse(text)
    except (RecursionError, MemoryError):
        raise Unreadable("nesting") from None


def analyse(text: str, path: str | Path | None = None) -> list[Finding]:
    """Every finding in Python source text (no noqa, no configuration); SyntaxError or Unreadable when it cannot be
    read. `path`, the file it was read from, lets the analysis read the project's own modules it imports."""
    with _no_cycle_collection():  # from the parse to the tree's end: the collector never walks the tree
        tree = parse(text)
        if "torch" not in text and "timm" not in text:
            return []  # every rule is about a name from torch (or a model from timm)
        try:
            findings = Analysis(tree, path).run()
        except RecursionError:  # an expression nested deeper than the analysis follows
            raise Unreadable("nesting") from None
        del tree  # freed here, while the collector is still off (the analysis keeps no cycle)
    return findings


def _syntax(error: SyntaxError, source: Source, index: int | None = None) -> Unreadable:
    """DL000 for a SyntaxError, placed in its file (or notebook cell); `index`: the parsed line it is on."""
    line = index if index is not None else (error.lineno or 1) - 1
    cell, at = source.origin[line] if 0 <= line < len(source.origin) else (None, error.lineno or 1)
    return Unreadable("syntax", at, error.offset or 1, cell, error=error.msg)


def lint_source(source: Source, path: str, config: Config | None = None) -> list[Problem]:
    """The problems of one parsed source, placed back in its file, noqa and configuration applied. A script that
    does not parse is one DL000 finding; a notebook is read without its broken cells (the first one named)."""
    config = config or Config()
    try:
        findings = analyse(source.text, path)
    except SyntaxError as error:
        if source.origin and source.origin[0][0] is not None:
            return _lint_cells_one_by_one(source, path, config)
        return _wanted([_syntax(error, source).problem(path)], config)
    except Unreadable as error:
        return _wanted([error.problem(path)], config)
    problems = [source.skipped.problem(path)] if source.skipped is not None else []
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
    return _wanted(problems, config)


def _wanted(problems: list[Problem], config: Config) -> list[Problem]:
    return [p for p in problems if p.code != UNREADABLE or config.wants(UNREADABLE)]


def _displayed_lines(source: Source) -> set[int]:
    """The parsed lines (1-based) that end a notebook cell's code: Jupyter displays a last expression."""
    last: dict[int, int] = {}
    for index, (cell, _) in enumerate(source.origin):
        if cell is not None and source.lines[index].strip() and not source.lines[index].lstrip().startswith("#"):
            last[cell] = index + 1
    return set(last.values())


def _lint_cells_one_by_one(source: Source, path: str, config: Config) -> list[Problem]:
    """A notebook whose joined cells do not parse: the cells that parse, still joined (imports carry over), and
    DL000 for the first cell that does not."""
    text_lines = source.text.split("\n")
    by_cell: dict[int | None, list[int]] = {}
    for index, (cell, _) in enumerate(source.origin):
        by_cell.setdefault(cell, []).append(index)
    broken: set[int] = set()
    first: Unreadable | None = source.skipped
    for indexes in by_cell.values():
        try:
            parse("\n".join(text_lines[i] for i in indexes))
        except SyntaxError as error:
            broken.update(indexes)
            at = min(max((error.lineno or 1) - 1, 0), len(indexes) - 1)
            first = first or _syntax(error, source, indexes[at])
        except Unreadable as error:
            broken.update(indexes)
            first = first or Unreadable(error.reason, 1, 1, source.origin[indexes[0]][0])
    kept = "\n".join("" if i in broken else line for i, line in enumerate(text_lines))
    try:
        parse(kept)
    except SyntaxError as error:  # the cells parse one by one, not together (a block split across cells)
        return _wanted([(first or _syntax(error, source)).problem(path)], config)
    except Unreadable as error:
        return _wanted([(first or error).problem(path)], config)
    return lint_source(Source(kept, source.origin, source.lines, first), path, config)


def decoded(data: bytes, path: Path) -> str:
    """A file's text: a notebook is UTF-8 JSON, a script in the encoding it declares (PEP 263; a BOM means
    UTF-8); bytes that do not decode are replaced."""
    if path.suffix == ".ipynb":
        return data.decode("utf-8-sig", errors="replace")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # an unknown encoding, or a BOM beside another declared encoding
        raise Unreadable("encoding", error=error.msg) from None
    return data.decode(encoding, errors="replace")


def read_source(path: Path) -> Source:
    """A .py file, or a notebook's code cells; Unreadable when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise Unreadable("open", error=error.strerror or error) from None
    text = decoded(data, path)
    if path.suffix == ".ipynb":
        cells, skipped = read_notebook(text)
        source = cells_source(cells)
        source.skipped = skipped
        return source
    return script_source(text)


def lint_text(text: str, path: str = "<string>", config: Config | None = None) -> list[Problem]:
    """The problems of Python source text."""
    return lint_source(script_source(text), path, config)


def lint_file(path: Path, config: Config | None = None, shown: str | None = None) -> list[Problem]:
    """The problems of one .py or .ipynb file; a file that cannot be read or parsed is one DL000 finding."""
    try:
        source = read_source(path)
    except Unreadable as error:
        return _wanted([error.problem(shown or str(path))], config or Config())
    return lint_source(source, shown or str(path), config)


def iter_files(paths: Iterable[str | Path], config: Config | Configs | None = None) -> Iterator[Path]:
    """The .py and .ipynb files named, and those inside the folders named (hidden folders and builds skipped).
    A file named is always read; inside a folder named, each project's `exclude` applies, relative to its
    pyproject.toml's folder (a Config given instead applies to all, relative to the folder named)."""
    configs = config if isinstance(config, Configs) else Configs(config or Config())
    for given in paths:
        path = Path(given)
        if path.is_dir():
            for root, folders, files in os.walk(path):
                here = Path(root)
                if configs.given is not None:
                    project, inside = configs.given, here.relative_to(path)  # exclude applies below the folder named
                else:
                    project = configs.for_folder(here)
                    inside = here.resolve().relative_to(project.root) if project.root else None
                folders[:] = sorted(f for f in folders if not f.startswith(".") and f not in SKIPPED_FOLDERS
                                    and not f.endswith(".egg-info") and not _excluded(inside, f, project))
                for name in sorted(files):
                    found = here / name
                    if found.suffix in (".py", ".ipynb") and not _excluded(inside, name, project):
                        yield found
        elif path.suffix in (".py", ".ipynb") or path.is_file():
            yield path


def _excluded(folder: Path | None, name: str, config: Config) -> bool:
    """Whether the entry `name` of `folder` (relative to where the patterns apply; None: nowhere) is excluded:
    a pattern is a path (`labs`, `src/legacy`) or a glob matched from the right (`*_test.py`, `tests/*.py`)."""
    if folder is None or not config.exclude:
        return False
    path = folder / name
    text = path.as_posix()
    return any(path.match(pattern) or text == pattern.strip("/").removeprefix("./") for pattern in config.exclude)


def lint_paths(paths: Iterable[str | Path], config: Config | Configs | None = None) -> list[Problem]:
    """The problems of every file named or inside a folder named; without a Config, each file's own nearest
    pyproject.toml decides."""
    configs = config if isinstance(config, Configs) else Configs(config)
    problems: list[Problem] = []
    for path in iter_files(paths, configs):
        problems += lint_file(path, configs.for_file(path))
    return problems
