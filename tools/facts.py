"""Write each shared fact of docs/facts.yml into every page and lab source that holds its marker.

A fact a chapter page and its lab both state is written once, in docs/facts.yml, in both languages. Where
it is said, a page (docs/en|zh/*.md) or a lab source (solutions/source/*.md) holds

    <!-- fact: ID -->…<!-- /fact -->

and this script replaces what stands between the markers with the fact's text in that place's language
(docs/en and `%% md en` cells: English; docs/zh and `%% md zh` cells: Chinese). In a lab a link to a
chapter page keeps its words and drops its address. The site hook and the notebook generator drop the
markers themselves, so readers never see them.

Regenerate:  python tools/facts.py        (make notebooks runs it first)
Check:       python tools/facts.py --check
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
FACTS_FILE = ROOT / "docs" / "facts.yml"
LANGS = ("en", "zh")
FACT = re.compile(r"<!-- fact: (?P<id>[a-z0-9-]+) -->(?P<body>.*?)<!-- /fact -->", re.DOTALL)
MARKERS = re.compile(r"<!-- /?fact(?:: [a-z0-9-]+)? -->")
CELL = re.compile(r"^%% (md en|md zh|code zh|code|setup)\s*$", re.MULTILINE)
LIST_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.)\s+")
PAGE_LINK = re.compile(r"\[([^\]]+)\]\((?![a-z]+:)[^)\s]*\.md(?:#[^)]*)?\)")


def load(path: Path = FACTS_FILE) -> dict:
    """The facts file: {'facts': {id: {...}}, 'retired': [...]}."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def strip_markers(text: str) -> str:
    """The text as a reader sees it: the fact markers removed, the facts' words kept."""
    return MARKERS.sub("", text)


def text_for(fact: dict, lang: str, in_lab: bool) -> str:
    """A fact's words in one language, with chapter links reduced to their words inside a lab."""
    words = fact[lang].strip()
    return PAGE_LINK.sub(r"\1", words) if in_lab else words


def fill(text: str, lang_at, facts: dict, in_lab: bool, where: str) -> str:
    """Every fact block of `text` rewritten from `facts`; lang_at(offset) gives the language there."""

    def replace(found: re.Match) -> str:
        ident = found.group("id")
        if ident not in facts:
            raise SystemExit(f"{where}: unknown fact {ident!r} (not in {FACTS_FILE.relative_to(ROOT)})")
        body = found.group("body")
        words = text_for(facts[ident], lang_at(found.start()), in_lab)
        line = text[text.rfind("\n", 0, found.start()) + 1:found.start()]
        item = LIST_ITEM.match(line)  # continuation lines keep the list item's (or the line's) indentation
        indent = " " * len(item.group(0)) if item else line[:len(line) - len(line.lstrip())]
        if body.startswith("\n"):  # a block fact: the markers stand on lines of their own
            words = "\n" + "\n".join(indent + w if w else w for w in words.split("\n")) + "\n" + indent
        else:
            words = words.replace("\n", "\n" + indent)
        return f"<!-- fact: {ident} -->{words}<!-- /fact -->"

    return FACT.sub(replace, text)


def lab_language(source: str):
    """For a lab source: the language of the markdown cell each offset falls in."""
    cells = [(m.start(), m.group(1)) for m in CELL.finditer(source)]

    def lang_at(offset: int) -> str:
        kind = next((k for start, k in reversed(cells) if start <= offset), None)
        if kind not in ("md en", "md zh"):
            raise SystemExit(f"a fact marker outside a markdown cell (cell kind {kind!r})")
        return kind.split()[1]

    return lang_at


def places() -> list[tuple[Path, bool]]:
    """Every file that may hold a fact: (path, is a lab source)."""
    pages = [(p, False) for lang in LANGS for p in sorted((ROOT / "docs" / lang).glob("*.md"))]
    return pages + [(p, True) for p in sorted((ROOT / "solutions" / "source").glob("*.md"))]


def language_at(path: Path, in_lab: bool, text: str):
    """lang_at(offset) for a file: its folder's language for a page, the cell's for a lab source."""
    if in_lab:
        return lab_language(text)
    return lambda offset: path.parent.name


def filled(path: Path, in_lab: bool, facts: dict) -> str:
    """The file's text with its facts written in."""
    text = path.read_text(encoding="utf-8")
    return fill(text, language_at(path, in_lab, text), facts, in_lab, str(path.relative_to(ROOT)))


def uses() -> dict[str, list[tuple[str, str]]]:
    """For each fact id: the (file, language) of every place that holds it."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path, in_lab in places():
        text = path.read_text(encoding="utf-8")
        lang_at = language_at(path, in_lab, text)
        for block in FACT.finditer(text):
            found.setdefault(block.group("id"), []).append((str(path.relative_to(ROOT)), lang_at(block.start())))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only list the files whose facts are stale")
    args = parser.parse_args()
    facts = load()["facts"]
    stale = []
    for path, in_lab in places():
        old = path.read_text(encoding="utf-8")
        new = filled(path, in_lab, facts)
        if new != old:
            stale.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
