"""A reader's path in headless Chromium: open the site, switch language, search the error, land on the chapter."""

import os
import re
import shutil

import pytest

pytestmark = pytest.mark.browser
if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the browser test: install Debian's chromium")
    pytestmark = [pytest.mark.browser, pytest.mark.skip(reason="Debian's chromium is not installed")]


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


def search(page, query: str) -> None:
    page.locator("label.md-search__icon, .md-search__input").first.click()
    # The search index loads in a web worker after the page; a query typed before it is ready
    # is not run again, so press a key until results appear (as an impatient reader would).
    page.fill(".md-search__input", query)
    for _ in range(10):
        page.press(".md-search__input", "End")  # Material reads the query on keyup
        try:
            page.wait_for_selector(".md-search-result__item", timeout=4_000)
            return
        except Exception:  # noqa: BLE001 - playwright's TimeoutError: not ready yet
            continue
    raise AssertionError(f"no search results for {query!r}")


def test_language_switcher_goes_to_the_same_chapter_in_chinese(page, base_url):
    page.goto(f"{base_url}/02-dataparallel/")
    assert page.locator("html").get_attribute("lang") == "en"
    page.locator(".md-header__option .md-select").hover()
    page.locator('a[hreflang="zh"]').first.click()
    page.wait_for_url("**/zh/02-dataparallel/")
    assert page.locator("html").get_attribute("lang") == "zh"
    page.locator('.md-header__option .md-select').hover()
    page.locator('a[hreflang="en"]').first.click()
    page.wait_for_url(f"{base_url}/02-dataparallel/")


OLD_EMBEDDING = "Input, output and indices must be on the current device"
NEW_EMBEDDING = (
    "Expected all tensors to be on the same device, but got index is on cpu, different from other tensors on cuda:0"
)


@pytest.mark.parametrize(
    ("start", "query", "chapter", "title"),
    [
        ("/", "weight type should be the same", "02-dataparallel", "DataParallel"),
        ("/zh/", "权重类型不匹配", "02-dataparallel", "DataParallel"),
        ("/", OLD_EMBEDDING, "03-embedding", "Embedding"),
        ("/zh/", OLD_EMBEDDING, "03-embedding", "Embedding"),
        ("/", NEW_EMBEDDING, "03-embedding", "Embedding"),
        ("/zh/", NEW_EMBEDDING, "03-embedding", "Embedding"),
    ],
)
def test_searching_the_error_lands_on_the_chapter(page, base_url, start, query, chapter, title):
    page.goto(f"{base_url}{start}")
    search(page, query)
    hits = page.locator(".md-search-result__item a")
    targets = [hits.nth(i).get_attribute("href") for i in range(hits.count())]
    lang = "zh/" if start == "/zh/" else ""
    wanted = [i for i, href in enumerate(targets)
              if href and re.search(rf"(^|/){lang}{chapter}/", href) and "labs/" not in href and "solutions/" not in href]
    assert wanted, f"no {lang}{chapter} page among the results for {query!r}: {targets}"
    hits.nth(wanted[0]).click()
    page.wait_for_url(f"**/{lang}{chapter}/**")
    assert title in page.locator("h1").first.inner_text()
