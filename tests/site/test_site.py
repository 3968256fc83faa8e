"""The built site: both languages, notebooks as real pages, buttons on every lab page."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LABS = sorted(p.stem for p in (ROOT / "solutions" / "source").glob("*.md"))
PREFIX = {"en": "", "zh": "zh/"}


def page(site: Path, lang: str, path: str) -> str:
    return (site / PREFIX[lang] / path / "index.html").read_text(encoding="utf-8")


def test_every_page_has_a_twin_in_the_other_language():
    en = {p.relative_to(ROOT / "docs" / "en") for p in (ROOT / "docs" / "en").rglob("*") if p.is_file()}
    zh = {p.relative_to(ROOT / "docs" / "zh") for p in (ROOT / "docs" / "zh").rglob("*") if p.is_file()}
    assert en == zh


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("version", ["labs", "solutions"])
@pytest.mark.parametrize("lab", LABS)
def test_notebook_pages_are_html_pages_not_raw_json(site, lang, version, lab):
    html = page(site, lang, f"{version}/{lab}")
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert "jp-Notebook" in html and "jp-CodeCell" in html
    assert '"cell_type"' not in html and '"nbformat"' not in html
    assert f'lang="{lang}"' in html
    # the raw notebook is only published as the download, next to its page
    json.loads((site / PREFIX[lang] / version / lab / f"{lab}.ipynb").read_text(encoding="utf-8"))
    assert not (site / PREFIX[lang] / version / f"{lab}.ipynb").exists()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("lab", LABS)
def test_lab_pages_have_colab_download_and_verification_line(site, lang, lab):
    html = page(site, lang, f"labs/{lab}")
    colab = re.search(r'href="(https://colab\.research\.google\.com/github/[^"]+)"', html)
    assert colab and colab.group(1).endswith(f"/blob/main/labs/{lang}/{lab}.ipynb")
    assert f'href="{lab}.ipynb" download' in html
    assert 'class="lab-verified"' in html


@pytest.mark.parametrize("lab", LABS)
def test_language_switcher_links_each_page_to_its_twin(site, lab):
    for path in (lab, f"labs/{lab}", f"solutions/{lab}"):
        en, zh = page(site, "en", path), page(site, "zh", path)
        assert re.search(rf'href="[./]*zh/{re.escape(path)}/" hreflang="zh"', en), path
        assert re.search(rf'href="[./]*/?{re.escape(path)}/" hreflang="en"', zh), path


def test_chapter_pages_link_to_their_lab(site):
    for lab in LABS:
        for lang in ("en", "zh"):
            html = page(site, lang, lab)
            assert f'href="../labs/{lab}/"' in html and f'href="../solutions/{lab}/"' in html


def test_notebook_pages_do_not_inline_the_jupyterlab_theme(site):
    for lab in LABS:
        html = page(site, "en", f"labs/{lab}")
        assert len(html.encode()) < 400_000
        styles = re.findall(r"<style[^>]*>.*?</style>", html, re.S)
        assert max(len(s) for s in styles) < 20_000, "the 570 KB JupyterLab theme is back"


def test_search_sends_readers_to_chapter_pages_not_notebook_copies(site):
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = [d["location"] for d in index["docs"]]
    assert not [loc for loc in locations if "labs/" in loc or "solutions/" in loc]
    for lab in LABS:
        assert any(loc.startswith(f"{lab}/") for loc in locations)
        assert any(loc.startswith(f"zh/{lab}/") for loc in locations)


def test_search_index_holds_chinese_words_segmented(site):
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    zh_docs = [d for d in index["docs"] if d["location"].startswith("zh/")]
    assert zh_docs, "no Chinese pages in the search index"
    assert any("\u200b" in d["text"] for d in zh_docs), "Chinese text was not segmented (is jieba installed?)"


FENCE = re.compile(r"^([ \t]*)```[^\n]*\n(.*?)^\1```", re.S | re.M)


@pytest.mark.parametrize("page_name", sorted(p.name for p in (ROOT / "docs" / "en").glob("*.md")))
def test_code_on_a_page_is_identical_in_both_languages(page_name):
    en = FENCE.findall((ROOT / "docs" / "en" / page_name).read_text(encoding="utf-8"))
    zh = FENCE.findall((ROOT / "docs" / "zh" / page_name).read_text(encoding="utf-8"))
    assert [body for _, body in en] == [body for _, body in zh]
