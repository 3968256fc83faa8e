"""The pictures of where tensors live on the built site: inline on each chapter page in its language, fetched by
the paste page for the chapter it diagnoses, readable at 390 px and in the light and the dark palette."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from devicelab import messages, pictures

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(pictures.PICTURES)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def page_path(site: Path, lang: str, chapter: str) -> Path:
    return site / ("" if lang == "en" else "zh") / chapter / "index.html"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_chapter_page_holds_its_picture_inline_in_its_language(site, lang):
    for chapter in CHAPTERS:
        html = page_path(site, lang, chapter).read_text(encoding="utf-8")
        assert html.count('<figure class="dl-picture"') == 1, chapter
        assert pictures.figure(chapter, lang) in html, f"{lang}/{chapter}: the figure as devicelab.pictures draws it"
        assert "<!-- picture:" not in html
        figure = html[html.index('<figure class="dl-picture"'):]
        figure = figure[:figure.index("</figure>")]
        assert "<script" not in figure and "http" not in figure.replace("http://www.w3.org/2000/svg", "")
        # beside the cause: after the page's first paragraph about it, before its first section
        assert html.index('<figure class="dl-picture"') < html.index("<h2"), chapter
        assert messages.text("picture.before", lang) in figure


def test_the_paste_page_has_every_chapters_picture_to_fetch_and_search_leaves_pictures_out(site):
    for lang in messages.LANGUAGES:
        for chapter in CHAPTERS:
            fragment = site / "assets" / "pictures" / lang / f"{chapter}.html"
            assert fragment.read_text(encoding="utf-8") == pictures.figure(chapter, lang)
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    words = " ".join(doc.get("text", "") for doc in index["docs"])
    for key in ("picture.empty", "picture.caption", "picture.move.copy_lost"):
        assert messages.text(key, "en") not in words and messages.text(key, "zh") not in words, key


if CHROMIUM is None and os.environ.get("CI"):
    raise RuntimeError("CI must run the browser test: install Debian's chromium")
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.browser
@needs_browser
def test_a_picture_fits_the_page_and_follows_the_palette(browser, base_url, lang, width, scheme):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    try:
        page.goto(f"{base_url}{'' if lang == 'en' else '/zh'}/01-devices/")
        found = page.evaluate("""() => {
            const f = document.querySelector('figure.dl-picture'), svg = f.querySelector('svg');
            const box = svg.querySelector('.dl-cpu .dl-box'), label = svg.querySelector('.dl-place-name');
            return {figure: f.getBoundingClientRect().width, page: document.documentElement.clientWidth,
                    scroll: document.documentElement.scrollWidth, svg: svg.getBoundingClientRect().width,
                    scheme: document.body.getAttribute('data-md-color-scheme'),
                    fill: getComputedStyle(box).fill, text: getComputedStyle(label).fill,
                    halves: [...f.querySelectorAll('.dl-picture-half')].map(h => h.getBoundingClientRect().top)};
        }""")
        assert found["scroll"] <= found["page"], "the page scrolls sideways"
        assert found["figure"] <= found["page"] and found["svg"] >= min(300, found["page"] - 60)
        assert found["scheme"] == ("slate" if scheme == "dark" else "default")
        light_fill, dark_fill = "rgb(232, 240, 254)", "rgb(28, 43, 65)"
        assert found["fill"] == (dark_fill if scheme == "dark" else light_fill), found
        if width >= 1280:
            assert found["halves"][0] == found["halves"][1], "before and after side by side on a wide screen"
        else:
            assert found["halves"][0] < found["halves"][1], "before above after on a phone"
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.browser
@needs_browser
def test_the_paste_page_shows_the_diagnosed_chapters_picture(browser, base_url, lang):
    context = browser.new_context(viewport={"width": 390, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{base_url}{'' if lang == 'en' else '/zh'}/explain/")
        page.fill("#explain-input", "RuntimeError: Expected all tensors to be on the same device, but got index is on "
                                    "cpu, different from other tensors on cuda:0 (when checking argument in method "
                                    "wrapper_CUDA__index_select)")
        shown = page.locator('#explain-output .explain-picture figure[data-chapter="03-embedding"]')
        shown.wait_for(timeout=5000)
        assert messages.text("picture.before", lang) in shown.inner_text()
        page.fill("#explain-input", "RuntimeError: Attempting to deserialize object on a CUDA device but "
                                    "torch.cuda.is_available() is False. If you are running on a CPU-only machine, "
                                    "please use torch.load with map_location=torch.device('cpu') to map your storages "
                                    "to the CPU.")
        page.locator('#explain-output .explain-picture figure[data-chapter="07-checkpoints"]').wait_for(timeout=5000)
        assert page.locator("#explain-output .explain-picture").count() == 1
        page.fill("#explain-input", "mat1 and mat2 shapes cannot be multiplied (64x10 and 20x5)")
        page.wait_for_timeout(300)
        assert page.locator("#explain-output .explain-picture").count() == 0, "no picture: not a device error"
        assert re.search(r"\d", page.evaluate("document.getElementById('explain-output').dataset.ms"))
        assert errors == []
    finally:
        context.close()
