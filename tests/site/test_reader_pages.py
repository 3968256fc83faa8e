"""What a reader meets on the built pages: no page scrolls sideways on a phone, code in tables never breaks
inside a name, no stray backtick, chapter pages that lead from chapter to chapter, a 404 page in the reader's
language that keeps its style at any base path, and no request that fails (the sitemap Material looks for)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

CHAPTERS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "docs" / "en").glob("0*.md"))
FOLDERS = {"en": "", "zh": "zh/"}
PHONE = {"width": 390, "height": 844}

browser_only = [pytest.mark.browser]
if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the browser tests: install Debian's chromium")
    browser_only.append(pytest.mark.skip(reason="Debian's chromium is not installed"))


def notebook_pages() -> list[str]:
    """Every lab and solution page, per language."""
    return [f"/{folder}{kind}/{chapter}/" for folder in FOLDERS.values() for kind in ("labs", "solutions")
            for chapter in CHAPTERS]


def reader_pages() -> list[str]:
    """The pages a reader opens: homes, chapters, the paste page, the glossary, the tools, every lab and solution."""
    pages = []
    for folder in FOLDERS.values():
        pages += [f"/{folder}", f"/{folder}explain/", f"/{folder}glossary/", f"/{folder}instructors/",
                  f"/{folder}tools/"]
        pages += [f"/{folder}{chapter}/" for chapter in CHAPTERS]
    return pages + notebook_pages()


# Runs in the page: what sticks out of a phone's screen, and code that wraps inside a table cell.
LAYOUT = r"""() => {
  const root = document.documentElement
  const scrolls = el => { for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (["auto", "scroll"].includes(getComputedStyle(p).overflowX)) return true } return false }
  const wide = [...document.querySelectorAll(".md-content table, .md-content pre")]
    .filter(el => el.getBoundingClientRect().right > innerWidth + 1 && !scrolls(el)
                  && !["auto", "scroll"].includes(getComputedStyle(el).overflowX))
    .map(el => el.tagName + ": " + el.textContent.slice(0, 60))
  // a line that ends inside a name: the last character of one line and the first of the next are both
  // letters, digits or underscores (nn.Parame|ter, register_|buffer)
  const broken = []
  for (const code of document.querySelectorAll(".md-content td code, .md-content th code")) {
    const node = code.firstChild
    if (!node || node.nodeType !== Node.TEXT_NODE) continue
    const text = node.textContent, range = document.createRange()
    let top = null
    for (let i = 0; i < text.length; i++) {
      range.setStart(node, i); range.setEnd(node, i + 1)
      const rect = range.getClientRects()[0]
      if (!rect || /\s/.test(text[i])) continue
      if (top !== null && rect.top > top + 2 && /\w/.test(text[i - 1]) && /\w/.test(text[i])) {
        broken.push(text)
        break
      }
      top = rect.top
    }
  }
  return {sideways: root.scrollWidth - root.clientWidth, wide, broken}
}"""


@pytest.fixture(scope="module")
def phone(browser):
    """One phone-sized tab that every address is opened in, one after another (a new tab per address cost
    Chromium about a second of CPU each, for a layout that a navigation rebuilds from scratch anyway)."""
    context = browser.new_context(viewport=PHONE, is_mobile=True)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("address", reader_pages())
@pytest.mark.parametrize("_", [pytest.param(None, marks=browser_only)])
def test_no_page_scrolls_sideways_on_a_phone(phone, base_url, address, _):
    phone.goto(f"{base_url}{address}")
    found = phone.evaluate(LAYOUT)
    assert found["sideways"] <= 0, f"{address} scrolls {found['sideways']} px sideways at 390 px"
    assert not found["wide"], f"{address}: these stick out of the screen instead of scrolling inside: {found['wide']}"
    assert not found["broken"], f"{address}: code broken across lines inside a table cell: {found['broken']}"


@pytest.mark.parametrize("_", [pytest.param(None, marks=browser_only)])
def test_no_notebook_page_scrolls_sideways_on_a_desktop(browser, base_url, _):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    wide = []
    try:
        for address in notebook_pages():
            page.goto(f"{base_url}{address}")
            sideways = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            if sideways > 0:
                wide.append(f"{address}: {sideways} px")
    finally:
        context.close()
    assert not wide, "these scroll sideways at 1,280 px: " + ", ".join(wide)


def visible_text(html: str) -> str:
    """The text a reader sees outside code: no scripts, styles, code spans or code blocks."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "code", "pre", "textarea", "template", "svg"]):
        tag.decompose()
    return soup.get_text(" ")


def test_no_built_page_shows_a_stray_backtick(site):
    pages = sorted(p for p in site.rglob("*.html") if "assets" not in p.relative_to(site).parts)
    stray = []
    for file in pages:
        text = visible_text(file.read_text(encoding="utf-8"))
        for found in re.finditer("`", text):
            stray.append(f"{file.relative_to(site)}: …{text[max(0, found.start() - 40):found.end() + 40]!r}…")
    assert len(pages) > 40
    assert not stray, "backticks shown as text (a code span that did not close):\n" + "\n".join(stray[:20])


CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"


INLINE = {"a", "abbr", "b", "em", "i", "kbd", "mark", "q", "s", "small", "span", "strong", "sub", "sup", "u"}


def broken_chinese_lines(html: str) -> list[str]:
    """Where a line break of the source between two Chinese characters reaches the reader as a space: inside the
    text of one block (a paragraph, a list item, a cell…), across the tags of emphasis and links, outside code."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "pre", "textarea", "template", "svg"]):
        tag.decompose()
    for tag in soup("code"):
        tag.replace_with("x")  # a name in a sentence: a space beside it is wanted
    blocks: dict[int, list[str]] = {}
    for string in soup.find_all(string=True):
        block = next((parent for parent in string.parents if parent.name not in INLINE), None)
        blocks.setdefault(id(block), []).append(str(string))
    found = []
    for pieces in blocks.values():
        text = "".join(pieces)
        found += [text[max(0, m.start() - 12):m.end() + 12] for m in re.finditer(f"[{CJK}]\\n[ \\t]*[{CJK}]", text)]
    return found


def test_no_chinese_page_shows_a_space_where_its_source_wraps_a_sentence(site):
    pages = sorted(p for p in (site / "zh").rglob("*.html") if "assets" not in p.parts)
    found = {str(p.relative_to(site)): broken_chinese_lines(p.read_text(encoding="utf-8")) for p in pages}
    found = {page: places for page, places in found.items() if places}
    assert len(pages) > 20
    assert not found, "line breaks shown as spaces between Chinese characters:\n" + "\n".join(
        f"{page}: {places[:3]}" for page, places in list(found.items())[:10])


def test_a_wrapped_chinese_sentence_is_joined_and_code_is_left_alone():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    from mkdocs_hooks import joined_cjk_lines

    html = "<p>停不下来的\n单元，和 torch\n导入</p><pre>模型\n数据</pre><li>它的\n<strong>进程</strong>\n结束</li>"
    joined = "<p>停不下来的单元，和 torch\n导入</p><pre>模型\n数据</pre><li>它的<strong>进程</strong>结束</li>"
    assert joined_cjk_lines(html) == joined
    assert len(broken_chinese_lines(html)) == 3  # 的|单, 的|进, 程|结: not torch|导, not the code
    assert broken_chinese_lines(joined_cjk_lines(html)) == []


def test_a_nested_backtick_in_markdown_would_be_caught():
    import markdown

    html = markdown.markdown("raises `ValueError: Expected `device_type` of type `str``.")
    assert "`" in visible_text(html)
    assert "`" not in visible_text(markdown.markdown("raises `` ValueError: Expected `device_type` of type `str` ``."))


@pytest.mark.parametrize("lang", FOLDERS)
def test_chapter_pages_lead_from_chapter_to_chapter(site, lang):
    folder = FOLDERS[lang]
    for number, chapter in enumerate(CHAPTERS):
        soup = BeautifulSoup((site / folder / chapter / "index.html").read_text(encoding="utf-8"), "html.parser")
        following = soup.select_one("a.md-footer__link--next")
        preceding = soup.select_one("a.md-footer__link--prev")
        if number + 1 < len(CHAPTERS):
            assert following is not None and following["href"].rstrip("/") == f"../{CHAPTERS[number + 1]}", chapter
        else:
            assert following is None, f"{folder}{chapter} leads on to {following['href']}"
        expected = f"../{CHAPTERS[number - 1]}" if number else ".."  # the home page before chapter 01
        assert preceding is not None and preceding["href"].rstrip("/") == expected, chapter


@pytest.mark.parametrize("lang", FOLDERS)
def test_lab_and_solution_pages_have_titles_of_their_own_and_lead_along_their_kind(site, lang):
    folder = FOLDERS[lang]
    words = {"labs": {"en": "Lab", "zh": "实验"}, "solutions": {"en": "Solution", "zh": "参考答案"}}
    titles = set()
    for kind in ("labs", "solutions"):
        for number, chapter in enumerate(CHAPTERS):
            soup = BeautifulSoup((site / folder / kind / chapter / "index.html").read_text(encoding="utf-8"),
                                 "html.parser")
            title = soup.title.get_text()
            assert title.startswith(f"{words[kind][lang]} {chapter[:2]} · "), (kind, chapter, title)
            titles.add(title)
            following = soup.select_one("a.md-footer__link--next")
            preceding = soup.select_one("a.md-footer__link--prev")
            if number + 1 < len(CHAPTERS):
                assert following is not None and following["href"].rstrip("/") == f"../{CHAPTERS[number + 1]}"
            else:
                assert following is None, f"{kind}/{chapter} leads on to {following['href']}"
            if number:
                assert preceding is not None and preceding["href"].rstrip("/") == f"../{CHAPTERS[number - 1]}"
            else:
                assert preceding is None, f"{kind}/{chapter} leads back to {preceding['href']}"
    assert len(titles) == 2 * len(CHAPTERS), "every lab and solution page has a browser title of its own"


@pytest.mark.parametrize(("lang", "title", "explain"), [("en", "Page not found", "explain/"),
                                                         ("zh", "页面不存在", "zh/explain/")])
def test_the_404_page_speaks_its_language_and_offers_search_the_paste_page_and_the_chapters(site, lang, title, explain):
    soup = BeautifulSoup((site / FOLDERS[lang] / "404.html").read_text(encoding="utf-8"), "html.parser")
    assert soup.html["lang"] == lang
    assert soup.h1.get_text(strip=True).rstrip("¶") == title
    assert soup.select_one('label[for="__search"]') is not None
    hrefs = [a["href"] for a in soup.select(".md-content a[href]")]
    assert explain in hrefs
    assert [f"{FOLDERS[lang]}{chapter}/" for chapter in CHAPTERS] == [h for h in hrefs if h != explain]
    assert soup.find("base", href=True) is not None  # its links are relative to the site's root


@pytest.mark.parametrize("address", ["/404.html", "/zh/404.html"])
@pytest.mark.parametrize("_", [pytest.param(None, marks=browser_only)])
def test_the_404_page_keeps_its_style_and_links_when_served_at_another_path(browser, base_url, address, _):
    # The test server serves the site at its root, not at site_url's path (/pytorch-device-errors/).
    page = browser.new_page()
    try:
        page.goto(f"{base_url}{address}")
        page.wait_for_load_state("load")
        header = page.evaluate("getComputedStyle(document.querySelector('.md-header')).position")
        assert header in ("sticky", "fixed"), "Material's stylesheet did not load"
        page.locator(".md-content a[href$='explain/']").click()
        page.wait_for_url(f"{base_url}/{'zh/' if address.startswith('/zh/') else ''}explain/")
    finally:
        page.close()


@pytest.mark.parametrize("address", ["/", "/zh/", "/01-devices/", "/zh/06-multigpu/", "/labs/05-inside/"])
@pytest.mark.parametrize("_", [pytest.param(None, marks=browser_only)])
def test_pages_make_no_request_that_fails(browser, base_url, address, _):
    page = browser.new_page()
    failed = []
    page.on("response", lambda response: failed.append(f"{response.status} {response.url}")
            if response.status >= 400 else None)
    try:
        page.goto(f"{base_url}{address}")
        page.wait_for_load_state("networkidle")
    finally:
        page.close()
    assert not failed, failed


@pytest.mark.parametrize(("address", "lang"), [("/", "zh"), ("/zh/", "en"), ("/zh/01-devices/", "en")])
@pytest.mark.parametrize("_", [pytest.param(None, marks=browser_only)])
def test_the_language_switch_works_at_any_base_path(browser, base_url, address, lang, _):
    page = browser.new_page()
    try:
        page.goto(f"{base_url}{address}")
        page.locator(".md-header__option .md-select").hover()
        page.locator(f'a.md-select__link[hreflang="{lang}"]').first.click()
        page.wait_for_load_state("load")
        assert page.locator("html").get_attribute("lang") == lang
        assert page.url.startswith(f"{base_url}/"), page.url
    finally:
        page.close()


@pytest.mark.parametrize("lang", FOLDERS)
@pytest.mark.parametrize("_", [pytest.param(None, marks=browser_only)])
def test_each_chapters_fix_is_whole_on_a_desktop(browser, base_url, lang, _):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    cut = []
    try:
        for chapter in CHAPTERS:
            page.goto(f"{base_url}/{FOLDERS[lang]}{chapter}/")
            code = page.locator(".md-content .language-python.highlight code").first
            if code.count():  # the fix: the page's first Python block, read without scrolling sideways
                if code.evaluate("c => c.scrollWidth > c.clientWidth + 1"):
                    cut.append(chapter)
    finally:
        page.close()
    assert not cut, f"the fix runs off the right edge at 1366 px: {cut}"


@pytest.mark.parametrize(("lang", "lab", "solution"), [("en", "Lab", "Solution"), ("zh", "实验", "参考答案")])
def test_a_lab_and_its_solution_have_their_own_titles(site, lang, lab, solution):
    for number, chapter in enumerate(CHAPTERS, start=1):
        for version, word in (("labs", lab), ("solutions", solution)):
            soup = BeautifulSoup((site / FOLDERS[lang] / version / chapter / "index.html").read_text(encoding="utf-8"),
                                 "html.parser")
            title = soup.select_one(".md-content h1").get_text(strip=True).rstrip("¶")
            assert title.startswith(f"{word} {number:02d} · "), (version, chapter, title)


def test_reader_pages_give_no_maintainer_commands(site):
    found = []
    for file in sorted(site.rglob("*.html")):
        rel = file.relative_to(site).as_posix()
        if "instructors" in rel or "assets" in rel:
            continue  # the instructors' page is where maintainers' commands belong
        text = BeautifulSoup(file.read_text(encoding="utf-8"), "html.parser").get_text(" ")
        found += [rel for command in ("make gpu-check", "make outputs", "make notebooks") if command in text]
    assert not found, found


@pytest.mark.parametrize("_", [pytest.param(None, marks=browser_only)])
def test_notebook_headings_show_their_anchor_only_on_hover(browser, base_url, _):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    try:
        page.goto(f"{base_url}/labs/05-inside/")
        anchor = page.locator(".jupyter-wrapper h2 .anchor-link").first
        assert anchor.evaluate("a => getComputedStyle(a).visibility") == "hidden"
        page.locator(".jupyter-wrapper h2").first.hover()
        assert anchor.evaluate("a => getComputedStyle(a).visibility") == "visible"
    finally:
        page.close()


def test_a_notebook_pages_table_of_contents_keeps_the_inline_code_of_its_headings(site):
    """Each table-of-contents entry of a lab or solution page reads as its heading does, inline code included."""
    wrong = []
    for address in notebook_pages():
        soup = BeautifulSoup((site / address.strip("/") / "index.html").read_text(encoding="utf-8"), "html.parser")
        def words(tag) -> str:  # noqa: ANN001 - the text without any whitespace: only the words are compared
            return "".join(tag.get_text().replace("¶", "").split())

        headings = {h["id"]: words(h) for h in soup.select(".md-content h2[id], .md-content h3[id]")}
        for link in soup.select('nav.md-nav--secondary a.md-nav__link[href^="#"]'):
            anchor = link["href"][1:]
            if anchor in headings and words(link) != headings[anchor]:
                wrong.append(f"{address}#{anchor}: {link.get_text(' ', strip=True)!r}")
    assert not wrong, "\n".join(wrong[:10])


@pytest.mark.parametrize(("address", "lang", "title"), [("/no-such-page/", "en", "Page not found"),
                                                         ("/zh/no-such-page/", "zh", "页面不存在"),
                                                         ("/zh/03-embedding/gone/", "zh", "页面不存在")])
@pytest.mark.parametrize("_", [pytest.param(None, marks=browser_only)])
def test_a_missing_address_gets_the_404_page_of_its_language(browser, base_url, address, lang, title, _):
    # The test server, like GitHub Pages, answers every missing address with the root 404.html.
    page = browser.new_page()
    try:
        response = page.goto(f"{base_url}{address}")
        assert response is not None and response.status == 404
        page.wait_for_function(f"document.documentElement.lang === {lang!r}")
        assert page.locator("h1").first.inner_text().rstrip("¶").strip() == title
        assert page.url == f"{base_url}{address}"  # the reader keeps the address they asked for
        header = page.evaluate("getComputedStyle(document.querySelector('.md-header')).position")
        assert header in ("sticky", "fixed"), "Material's stylesheet did not load"
    finally:
        page.close()


def test_no_page_asks_github_for_repository_facts_and_the_footer_has_no_english_credit(site):
    """Material fetches stars and forks from api.github.com for a `source` component: the course's partial has none
    (wherever GitHub is unreachable, two failed requests on every page); and no page carries the English
    "Made with Material for MkDocs" line."""
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert 'data-md-component="source"' not in text, page.relative_to(site)
        assert "Made with" not in text, page.relative_to(site)
    assert 'class="md-source"' in (site / "zh" / "index.html").read_text(encoding="utf-8")  # the link stays


def test_every_plot_says_what_it_shows_in_the_pages_language(site):
    """A solution's plot has the caption its cell printed as alt text, never nbconvert's English placeholder."""
    seen = 0
    for address in notebook_pages():
        soup = BeautifulSoup((site / address.strip("/") / "index.html").read_text(encoding="utf-8"), "html.parser")
        for image in soup.select(".jupyter-wrapper img"):
            seen += 1
            alt = image.get("alt", "")
            assert alt and "No description" not in alt, (address, alt)
            if address.startswith("/zh/"):
                assert re.search(r"[\u4e00-\u9fff]", alt), (address, alt)
    assert seen >= 18, seen  # every solution draws its proof


# Runs in the page: the characters of each wrapped error block (a `text` block) that lie under its copy button.
UNDER_THE_COPY_BUTTON = r"""() => {
  const found = []
  for (const block of document.querySelectorAll(".md-content .language-text.highlight")) {
    const nav = block.querySelector(".md-code__nav, .md-clipboard"), code = block.querySelector("pre > code")
    if (!nav || !code) continue
    const b = nav.getBoundingClientRect()
    if (b.width === 0) continue  // a tab not shown
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT), range = document.createRange()
    let under = "", node
    while ((node = walker.nextNode()))
      for (let i = 0; i < node.textContent.length; i++) {
        if (/\s/.test(node.textContent[i])) continue
        range.setStart(node, i); range.setEnd(node, i + 1)
        const r = range.getClientRects()[0]
        if (r && r.right > b.left && r.left < b.right && r.bottom > b.top && r.top < b.bottom)
          under += node.textContent[i]
      }
    found.push({text: code.textContent.slice(0, 50), under})
  }
  return found
}"""


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("lang", FOLDERS)
@pytest.mark.parametrize("_", [pytest.param(None, marks=browser_only)])
def test_the_copy_button_covers_no_text_of_a_wrapped_error_message(browser, base_url, lang, width, _):
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 600)
    page = context.new_page()
    covered, blocks = [], 0
    try:
        for chapter in CHAPTERS:
            page.goto(f"{base_url}/{FOLDERS[lang]}{chapter}/")
            page.wait_for_selector(".md-code__nav, .md-clipboard", state="attached")
            for block in page.evaluate(UNDER_THE_COPY_BUTTON):
                blocks += 1
                if block["under"]:
                    covered.append(f"{chapter}: {block['under']!r} of {block['text']!r}")
    finally:
        context.close()
    assert blocks >= len(CHAPTERS), f"only {blocks} error blocks with a copy button"
    assert not covered, f"at {width} px the copy button covers: " + "; ".join(covered)
