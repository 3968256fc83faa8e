"""`devicelab explain`: what a pasted device error means, its likely causes, the fix, and the chapter to read.

    python -m devicelab.explain [FILE] [--lang zh|en]     # reads stdin when no FILE is given
    devicelab.explain(error_or_text, lang=None)            # in a notebook: an exception or a message

The words come from the error index (devicelab.errors), the one source that the "Paste your error" page also uses.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from pathlib import Path

from ..errors import CAUSES, CHAPTER_TITLES, CHECK, LABELS, REASONS, Diagnosis, diagnose, fill
from ..messages import get_language

DEFAULT_SITE_URL = "https://devicelab-course.github.io/pytorch-device-errors/"
# mkdocs.yml's `site_url: !ENV [VARIABLE, "default address"]`
_SITE_URL = re.compile(r"""^site_url:\s*(?:!ENV\s*\[\s*(\w+)\s*,\s*)?["']?([^"'\]\s]+)["']?""")


def site_url() -> str:
    """The course site's address: DEVICELAB_SITE_URL, else mkdocs.yml's site_url in a clone, else the default."""
    address = os.environ.get("DEVICELAB_SITE_URL")
    if not address:
        config = Path(__file__).resolve().parents[2] / "mkdocs.yml"
        if config.is_file():
            for line in config.read_text(encoding="utf-8").splitlines():
                found = _SITE_URL.match(line)
                if found:
                    address = found.group(2)
                    break
    return (address or DEFAULT_SITE_URL).rstrip("/") + "/"


def chapter_path(chapter: str, lang: str) -> str:
    """The chapter's page path on the site, in that language ("03-embedding/", "zh/03-embedding/")."""
    return f"{'' if lang == 'en' else lang + '/'}{chapter}/"


def chapter_url(chapter: str, lang: str) -> str:
    """The full address of a chapter's page in `lang`: a terminal or a notebook shows it as a link one can click."""
    return site_url() + chapter_path(chapter, lang)


def _chapter_line(chapter: str, lang: str) -> str:
    return f"{CHAPTER_TITLES[chapter][lang]} — {chapter_url(chapter, lang)}"


def render(text: str, lang: str | None = None) -> str:
    """The explanation of a pasted message, traceback or console fragment, as plain text in `lang`."""
    lang = lang or get_language()
    return render_diagnosis(diagnose(text), lang)


def render_diagnosis(d: Diagnosis, lang: str) -> str:
    """The explanation of a diagnosis, as plain text in `lang`: no blank slot, no sentence twice, no internal name."""
    words = {key: entry[lang] for key, entry in LABELS.items()}
    lines: list[str] = []
    if d.cut:
        lines += [fill(words["cut"], {"kb": str(max(1, round(d.cut / 1024)))}), ""]
    if d.match is None:
        return "\n".join(lines + [words["unknown_error"] if d.error_line else words["unknown"]])
    values = d.values
    if not d.device_error:
        reading = fill(d.match.kind.reading[lang], values)
        if d.kind != d.match.kind.name:  # a dtype mismatch found by a device family's wording
            reading = fill(_declined_reading(d.kind, lang), values)
        # The readings open with their own "Not a device error: ..."; the label says it once.
        reading = re.sub(r"^(?:Not [^:.]*:\s*|不是[^：。]*：)", "", reading)
        reading = reading[:1].upper() + reading[1:]
        headline = words["undecided" if d.match.kind.undecided else "not_device"]
        lines += [(headline + ("" if lang == "zh" else " ") + reading).strip()]
        lines += [_indent(fill(CAUSES[key][lang], values)) for key in d.causes]
        lines += _ranking(d, lang, words)
        return "\n".join(lines).strip("\n")
    colon = "：" if lang == "zh" else ": "
    facts = [f"{words['op']}{colon}{d.op}" if d.op else "", f"{words['arg']}{colon}{d.argument}" if d.argument else "",
             f"{words['devices']}{colon}{('、' if lang == 'zh' else ', ').join(d.devices)}" if d.devices else ""]
    lines.append(" · ".join([words["device"], *(f for f in facts if f)]))
    lines += ["", words["meaning"], _indent(d.match.reading(lang))]
    if d.evidence:
        lines += ["", words["evidence"] + ("：" if lang == "zh" else ":")]
        for e in d.evidence:
            lines.append(_indent(f"{e.where} — {REASONS[e.reason][lang]}"))
            if e.code:
                lines.append(_indent(_indent(e.code)))
    causes = [fill(CAUSES[key][lang], values) for key in d.causes]
    causes = [c for c in dict.fromkeys(causes) if c]
    if causes:
        lines += ["", words["causes"] if len(causes) > 1 else words["cause"]]
        lines += [_indent(f"{n}. {cause}" if len(causes) > 1 else cause) for n, cause in enumerate(causes, 1)]
    if len(causes) > 1 or not d.confident:
        lines += ["", words["check"], _indent(CHECK[lang])]
    lines += _ranking(d, lang, words)
    return "\n".join(lines).strip("\n")


def _ranking(d: Diagnosis, lang: str, words: dict[str, str]) -> list[str]:
    if not d.ranking:
        return []
    main = [r for r in d.ranking if r.reason not in ("message_also", "evidence_also")] or list(d.ranking[:1])
    others = [r for r in d.ranking if r not in main]
    lines = ["", words["ranking"] if len(d.ranking) > 1 else words["ranking_one"]]
    for n, r in enumerate(main, 1):
        colon = "：" if lang == "zh" else ": "
        why = f"{words['evidence']}{colon}{r.where}" if r.where else REASONS[r.reason][lang]
        lines.append(_indent(f"{n}. {_chapter_line(r.chapter, lang)}"))
        lines.append(_indent(_indent(why)))
    if others:
        colon, separator = ("：", "；") if lang == "zh" else (": ", "; ")
        lines.append(_indent(words["also"] + colon + separator.join(_chapter_line(r.chapter, lang) for r in others)))
    if d.device_error and not d.confident and len(d.ranking) > 1:
        lines.append(_indent(words["guess"]))
    if d.device_error and d.chapter == "09-debugging":
        lines.append(_indent(words["fallback"]))
    return lines


_BLANK_SLOT = re.compile(r"\{\w+\}|(?:^|[\s(`（])\?(?=$|[\s),.`）:;])")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n")


def render_problems(text: str) -> list[str]:
    """What a reader should never see in an explanation: a blank slot, an internal name, a sentence said twice, an
    empty reading."""
    from ..errors import KINDS

    found = []
    blank = _BLANK_SLOT.search(text)
    if blank:
        found.append(f"blank slot near {blank.group(0)!r}")
    for name in KINDS:
        if "_" in name and re.search(rf"(?<![\w`]){re.escape(name)}(?![\w`])", text):
            found.append(f"internal name {name!r}")
    if re.search(r"\bfamily: |类别[:：]", text):
        found.append("internal label 'family'")
    from ..errors import LABELS

    headings = {LABELS[key][lang] for key in ("meaning", "causes", "cause", "check", "chapter", "evidence", "ranking")
                for lang in ("en", "zh")}
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for number, line in enumerate(lines):
        if line in (LABELS["meaning"]["en"], LABELS["meaning"]["zh"]):  # its reading follows, not another heading
            following = lines[number + 1] if number + 1 < len(lines) else ""
            if not following or following in headings:
                found.append("an empty 'What it means'")
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if len(s.strip()) > 25]
    repeated = sorted({s for s in sentences if sentences.count(s) > 1})
    if repeated:
        found.append(f"said twice: {repeated[0][:80]!r}")
    return found


def _declined_reading(family: str | None, lang: str) -> str:
    from ..errors import KINDS

    kind = KINDS.get(family or "")
    return kind.reading[lang] if kind else ""


def _indent(text: str) -> str:
    return "  " + text


def explain(error_or_text: BaseException | str, lang: str | None = None) -> None:
    """Print what an error (an exception, a message or a whole traceback) means and which chapter explains it."""
    if isinstance(error_or_text, BaseException):  # the whole traceback: its frames say where it happened
        text = "".join(traceback.format_exception(type(error_or_text), error_or_text, error_or_text.__traceback__))
    else:
        text = str(error_or_text)
    print(render(text, lang))


def _is_file(argument: str) -> bool:
    try:
        return Path(argument).is_file()
    except (OSError, ValueError):  # a long message is no path the system can look up
        return False


def main(argv: list[str] | None = None) -> int:
    """The command line: explain the message in FILE (or given itself), or on stdin."""
    parser = argparse.ArgumentParser(prog="python -m devicelab.explain", description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?",
                        help="a file holding the message or traceback, or the message itself in quotes "
                             "(default: stdin)")
    parser.add_argument("--lang", choices=("en", "zh"), default=None, help="language of the explanation")
    args = parser.parse_args(argv)
    if not args.file:
        text = sys.stdin.read()
    elif _is_file(args.file):
        text = Path(args.file).read_text(encoding="utf-8", errors="replace")
    else:  # `devicelab explain "RuntimeError: ..."`: the message itself, as readers paste it
        text = args.file
    print(render(text, args.lang or get_language()))
    return 0
