"""The pictures of where tensors live (devicelab/pictures.py): drawn from the chapter's own code, the same in
both languages but for the words, every label inside its box, small, described in words, backed by claims."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from devicelab import messages, pictures

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p.stem for p in (ROOT / "docs" / "en").glob("0*.md"))
LANGS = messages.LANGUAGES
SVG = "{http://www.w3.org/2000/svg}"
FENCE = re.compile(r"^\s*```[^\n]*\n(.*?)^\s*```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+)`")


def chapter_code(chapter: str, lang: str) -> str:
    """All the code a reader of the chapter sees: its page's code blocks and inline code, and its lab's."""
    page = (ROOT / "docs" / lang / f"{chapter}.md").read_text(encoding="utf-8")
    source = (ROOT / "solutions" / "source" / f"{chapter}.md").read_text(encoding="utf-8")
    found = FENCE.findall(page) + INLINE.findall(FENCE.sub("", page))
    # the lab's cells: "%% code" (both languages) or "%% code zh"; its text cells' inline code
    for cell in re.split(r"^%% ", source, flags=re.M)[1:]:
        kind, _, body = cell.partition("\n")
        if kind.split()[0] == "code" and kind.split()[1:] in ([], [lang]):
            found.append(body)
        elif kind.split()[1:] in ([], [lang]):
            found += FENCE.findall(body) + INLINE.findall(FENCE.sub("", body))
    return "\n".join(found)


def scenes(picture: pictures.Picture):
    return (("before", picture.before), ("after", picture.after))


def test_every_chapter_has_its_picture_and_each_page_places_it_once():
    assert sorted(pictures.PICTURES) == CHAPTERS
    for chapter in CHAPTERS:
        for lang in LANGS:
            page = (ROOT / "docs" / lang / f"{chapter}.md").read_text(encoding="utf-8")
            assert page.count(f"<!-- picture: {chapter} -->") == 1, (lang, chapter)
            cause = page.index("**Cause.**" if lang == "en" else "**原因。**")
            assert cause < page.index(f"<!-- picture: {chapter} -->") < page.index("## "), \
                f"{lang}/{chapter}: the picture belongs beside the cause, before the first section"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_picture_names_only_what_the_chapters_code_has(chapter):
    picture = pictures.PICTURES[chapter]
    for lang in LANGS:
        code = chapter_code(chapter, lang)
        for state, scene in scenes(picture):
            named = [t.code for place in scene.places for t in place.things if t.code]
            named += [move.code for moves in scene.moves for move in moves]
            for name in named:
                assert name in code, f"{chapter} ({state}, {lang}) draws `{name}`, which its code does not have"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_two_languages_differ_only_in_their_words(chapter):
    def shape(markup: str) -> str:
        return re.sub(r">[^<]*<", "><", markup)

    drawn = {lang: pictures.figure(chapter, lang) for lang in LANGS}
    assert shape(drawn["en"]) == shape(drawn["zh"])
    assert drawn["en"] != drawn["zh"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_label_fits_its_box_in_both_languages(chapter):
    picture = pictures.PICTURES[chapter]
    margin = 1.08  # the estimate may run short by a few percent
    for lang in LANGS:
        for state, scene in scenes(picture):
            for place in scene.places:
                name = pictures._place_name(place, lang)
                assert pictures.text_width(name, 7.0) * margin <= pictures.WIDTH - 2 * pictures.PAD, (lang, name)
                for thing, _x, _row, width in pictures._chips_layout(place.things):
                    first, second, third = pictures._chip_lines(thing, lang)
                    sign = 2 if thing.mark in ("bad", "good") else 0
                    if thing.code:
                        assert (len(first) + sign) * pictures.CODE_PX * margin <= width - 10, (chapter, first)
                    else:
                        assert pictures.text_width(first, 6.6) * margin <= width - 10, (chapter, lang, first)
                    for words in (second, third):
                        assert pictures.text_width(words) * margin <= width - 10, (chapter, state, lang, words)
            for moves in scene.moves:
                for move in moves:
                    room = pictures.WIDTH - 36
                    assert len(move.code) * pictures.CODE_PX * margin <= room, (chapter, move.code)
                    words = messages.text(f"picture.move.{move.note}", lang)
                    assert pictures.text_width(words) * margin <= room, (chapter, lang, words)


def test_the_width_estimate_counts_chinese_characters_twice():
    assert pictures.text_width("ab", 5.0) == 10.0
    assert pictures.text_width("显存", 5.0) == 20.0
    assert pictures.text_width("（）", 5.0) == 20.0


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_picture_is_small_well_formed_and_says_in_words_what_it_draws(chapter):
    picture = pictures.PICTURES[chapter]
    for lang in LANGS:
        figure = pictures.figure(chapter, lang)
        assert len(figure.encode()) <= 20_000, f"{chapter} ({lang}): {len(figure.encode())} bytes"
        for state, scene in scenes(picture):
            markup = pictures.svg(scene, lang, f"x-{state}", state)
            root = ElementTree.fromstring(markup)
            title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
            assert root.get("role") == "img" and root.get("aria-labelledby") == f"x-{state}-t x-{state}-d"
            assert title.get("id") == f"x-{state}-t" and desc.get("id") == f"x-{state}-d"
            assert messages.text(f"picture.{state}", lang) in title.text
            said = desc.text
            for place in scene.places:
                assert pictures._place_name(place, lang) in said
                for thing in place.things:
                    assert (thing.code or messages.text(f"picture.what.{thing.what}", lang)) in said
                    if thing.mark:
                        assert messages.text(f"picture.mark.{thing.mark}", lang) in said
            for moves in scene.moves:
                for move in moves:
                    assert move.code in said and messages.text(f"picture.move.{move.note}", lang) in said
            # every word drawn is in the catalogue's language: no English label on a Chinese picture
            drawn = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
            if lang == "zh":
                assert not re.search(r"\b(the|memory|moves|copy|batch of)\b", drawn), drawn


def test_the_marks_are_the_mistake_before_and_the_fix_after():
    for chapter, picture in pictures.PICTURES.items():
        before = [t.mark for place in picture.before.places for t in place.things]
        after = [t.mark for place in picture.after.places for t in place.things]
        failing = [m.kind for moves in picture.before.moves for m in moves if m.kind in ("lost", "fail")]
        assert ("bad" in before or failing) and "good" in after, chapter
        assert "bad" not in after, f"{chapter}: the fixed picture still shows a mistake"
        assert not [m for moves in picture.after.moves for m in moves if m.kind in ("lost", "fail")], chapter
        for scene in (picture.before, picture.after):
            assert len(scene.moves) <= len(scene.places) - 1, f"{chapter}: moves only between neighbouring places"


def test_every_picture_is_backed_by_claims_tests_that_exist():
    defined = set()
    for path in (ROOT / "tests" / "claims").glob("test_*.py"):
        defined |= set(re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.M))
    for chapter, picture in pictures.PICTURES.items():
        assert picture.backed_by, chapter
        missing = [name for name in picture.backed_by if name not in defined]
        assert not missing, f"{chapter}: no such claims test: {missing}"


def test_colours_come_from_classes_the_stylesheet_gives_both_palettes():
    css = (ROOT / "docs" / "assets" / "course.css").read_text(encoding="utf-8")
    for variable in ("--dl-bad", "--dl-good", "--dl-cpu", "--dl-cuda0", "--dl-cuda1", "--dl-meta", "--dl-file"):
        assert css.count(variable + ":") == 2, f"{variable}: one value for the light palette and one for the dark"
    assert '[data-md-color-scheme="slate"]' in css
    markup = pictures.figure("01-devices", "en")
    for name in ("dl-box", "dl-code", "dl-words", "dl-bad", "dl-good", "dl-cpu", "dl-cuda0"):
        assert f"{name}" in markup and f".{name}" in css, name


def test_every_text_of_a_picture_takes_its_colour_from_the_theme():
    """A text class with no rule in the stylesheet keeps the SVG's own dark fill, unreadable in the dark palette."""
    css = (ROOT / "docs" / "assets" / "course.css").read_text(encoding="utf-8")
    themed = {name for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", css) if re.search(r"\bfill:", body)
              for selector in selectors.split(",") if ".dl-picture" in selector
              for name in re.findall(r"\.(dl-[\w-]+)\s*$", selector.strip())}
    used = set()
    for chapter in pictures.PICTURES:
        for language in ("en", "zh"):
            used |= set(re.findall(r'<text class="(dl-[\w-]+)"', pictures.figure(chapter, language)))
    assert used and used <= themed, used - themed
