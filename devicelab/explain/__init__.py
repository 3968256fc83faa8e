"""`devicelab explain`: what a pasted device error means, its likely causes, the fix, and the chapter to read.

    python -m devicelab.explain [FILE] [--lang zh|en]     # reads stdin when no FILE is given
    devicelab.explain(error_or_text, lang=None)            # in a notebook: an exception or a message

The words come from the error index (devicelab.errors), the one source that the "Paste your error" page also uses.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from ..errors import CAUSES, CHAPTER_TITLES, CHECK, LABELS, Diagnosis, diagnose, fill
from ..messages import get_language


def chapter_path(chapter: str, lang: str) -> str:
    """The chapter's page path on the site, in that language ("03-embedding/", "zh/03-embedding/")."""
    return f"{'' if lang == 'en' else lang + '/'}{chapter}/"


def _chapter_line(chapter: str, lang: str) -> str:
    return f"{CHAPTER_TITLES[chapter][lang]} — {chapter_path(chapter, lang)}"


def render(text: str, lang: str | None = None) -> str:
    """The explanation of a pasted message, traceback or console fragment, as plain text in `lang`."""
    lang = lang or get_language()
    return render_diagnosis(diagnose(text), lang)


def render_diagnosis(d: Diagnosis, lang: str) -> str:
    """The explanation of a diagnosis, as plain text in `lang`."""
    words = {key: entry[lang] for key, entry in LABELS.items()}
    if d.match is None:
        return words["unknown"]
    values = d.values
    if not d.device_error:
        lines = [f"{words['not_device']} ({words['family']}: {d.kind})", fill(d.match.kind.reading[lang], values)]
        if d.kind != d.match.kind.name:  # a dtype mismatch found by a device family's wording
            lines[1] = fill(_declined_reading(d.kind, lang), values)
        if d.chapter:
            lines.append(f"{words['chapter']}: {_chapter_line(d.chapter, lang)}")
        return "\n".join(lines)
    facts = [f"{words['op']}: {d.op}" if d.op else "", f"{words['arg']}: {d.argument}" if d.argument else "",
             f"{words['devices']}: {', '.join(d.devices)}" if d.devices else ""]
    lines = [f"{words['device']} ({words['family']}: {d.kind})"]
    if any(facts):
        lines.append(" · ".join(f for f in facts if f))
    lines += ["", words["meaning"], _indent(d.match.reading(lang))]
    causes = [fill(CAUSES[key][lang], values) for key in d.causes]
    if causes:
        lines += ["", words["causes"] if len(causes) > 1 else words["cause"]]
        lines += [_indent(f"{n}. {cause}" if len(causes) > 1 else cause) for n, cause in enumerate(causes, 1)]
    if len(causes) > 1 or not d.confident:
        if not d.confident and len(causes) > 1:
            lines.append(_indent(words["unsure"]))
        lines += ["", words["check"], _indent(CHECK[lang])]
    if d.chapter:
        lines += ["", f"{words['chapter']}: {_chapter_line(d.chapter, lang)}"]
        others = [chapter_path(c, lang) for c in d.candidates[1:]]
        if others:
            lines.append(f"{words['also']}: {', '.join(others)}")
        if d.chapter == "09-debugging":
            lines.append(words["fallback"])
    return "\n".join(lines)


def _declined_reading(family: str | None, lang: str) -> str:
    from ..errors import KINDS

    kind = KINDS.get(family or "")
    return kind.reading[lang] if kind else ""


def _indent(text: str) -> str:
    return "  " + text


def explain(error_or_text: BaseException | str, lang: str | None = None) -> None:
    """Print what an error (an exception, a message or a whole traceback) means and which chapter explains it."""
    if isinstance(error_or_text, BaseException):
        text = "".join(traceback.format_exception_only(type(error_or_text), error_or_text))
    else:
        text = str(error_or_text)
    print(render(text, lang))


def main(argv: list[str] | None = None) -> int:
    """The command line: explain the message in FILE, or on stdin."""
    parser = argparse.ArgumentParser(prog="python -m devicelab.explain", description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help="a file holding the message or traceback (default: stdin)")
    parser.add_argument("--lang", choices=("en", "zh"), default=None, help="language of the explanation")
    args = parser.parse_args(argv)
    text = Path(args.file).read_text(encoding="utf-8", errors="replace") if args.file else sys.stdin.read()
    print(render(text, args.lang or get_language()))
    return 0
