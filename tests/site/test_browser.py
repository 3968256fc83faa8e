"""A reader's path in headless Chromium: open the site, switch language, search the error, land on the chapter."""

import os
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


def search(page, query: str, open_box: bool = True) -> None:
    if open_box:
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


RNN_HIDDEN = ("RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 "
              "and hidden tensor at cpu")
DESERIALIZE = ("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
               "is False. If you are running on a CPU-only machine, please use torch.load with "
               "map_location=torch.device('cpu') to map your storages to the CPU.")


DP_MODULE = ("RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) "
             "but found one of them on device: cpu")
MASK = "RuntimeError: expected self and mask to be on the same device, but got mask on cpu and self on cuda:0"


# (start, query, chapter, title): a reader on `start` searches `query` and lands on `chapter`, whose h1 holds `title`
SEARCHES = [
    ("/", "weight type should be the same", "02-dataparallel", "DataParallel"),
    ("/zh/", "权重类型不匹配", "02-dataparallel", "DataParallel"),
    ("/", OLD_EMBEDDING, "03-embedding", "Embedding"),
    ("/zh/", OLD_EMBEDDING, "03-embedding", "Embedding"),
    ("/", NEW_EMBEDDING, "03-embedding", "Embedding"),
    ("/zh/", NEW_EMBEDDING, "03-embedding", "Embedding"),
    # readers type sentences: a Chinese question, and a half-remembered Chinese one
    ("/zh/", "模型在GPU上但是数据在CPU上", "01-devices", "01 ·"),
    ("/", "model on gpu but data on cpu", "01-devices", "01 ·"),
    ("/zh/", "批次是字典怎么移动到GPU", "04-batches", "04 ·"),
    ("/", "how do I move a dict batch to the gpu", "04-batches", "04 ·"),
    # an English message pasted into the Chinese site opens the Chinese chapter
    ("/zh/", "RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) "
             "should be the same", "02-dataparallel", "DataParallel"),
    # one message of each later chapter, pasted into each language's site
    ("/", RNN_HIDDEN, "05-inside", "05 ·"),
    ("/", DP_MODULE, "06-multigpu", "06 ·"),
    ("/zh/", DP_MODULE, "06-multigpu", "06 ·"),
    ("/", "mat1 and mat2 must have the same dtype, but got Half and Float", "08-amp", "08 ·"),
    ("/zh/", "mat1 and mat2 must have the same dtype, but got Half and Float", "08-amp", "08 ·"),
    ("/", MASK, "09-debugging", "09 ·"),
    ("/zh/", MASK, "09-debugging", "09 ·"),
    ("/zh/", RNN_HIDDEN, "05-inside", "05 ·"),
    ("/", DESERIALIZE, "07-checkpoints", "07 ·"),
    ("/zh/", DESERIALIZE, "07-checkpoints", "07 ·"),
]


def clear_search(page) -> None:
    """Empty the search box and wait until the last query's results are gone."""
    page.fill(".md-search__input", "")
    page.press(".md-search__input", "End")
    page.wait_for_selector(".md-search-result__item", state="detached", timeout=10_000)


def landed(site, address: str) -> tuple[str | None, str]:
    """The built page at `address` (a path under the site): its html lang and its first h1's text."""
    from bs4 import BeautifulSoup

    html = (site / address.strip("/") / "index.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    return soup.html.get("lang"), soup.find("h1").get_text()


@pytest.mark.parametrize("start", ["/", "/zh/"])
def test_searching_lands_on_the_chapter_in_the_readers_language(page, base_url, site, start):
    """Every query of SEARCHES typed on `start`, one after another in the same page (the search index is built
    once, as when a reader searches again): the results hold only the reader's language, the chapter is among the
    first three, and the page it links to is the chapter in that language (its lang and title, read from the built
    site). The last query's link is also clicked, and the browser lands there."""
    cases = [case for case in SEARCHES if case[0] == start]
    lang = "zh/" if start == "/zh/" else ""
    page.goto(f"{base_url}{start}")
    problems = []
    for n, (_, query, chapter, title) in enumerate(cases):
        if n:
            clear_search(page)
        search(page, query, open_box=not n)
        groups = page.locator(".md-search-result__item")
        # each result group is one page: its first link is the page, the others its sections
        pages = groups.evaluate_all("items => items.map(item => item.querySelector('a').href)")
        other = [href for href in pages if href.startswith(f"{base_url}/zh/") != bool(lang)]
        if other:
            problems.append(f"pages of the other language among the results for {query!r}: {other}")
        wanted = [i for i, href in enumerate(pages[:3]) if href.startswith(f"{base_url}/{lang}{chapter}/")]
        if not wanted:
            problems.append(f"no {lang}{chapter} page among the first 3 results for {query!r}: {pages}")
            continue
        href = pages[wanted[0]][len(base_url):].split("#")[0].split("?")[0]
        page_lang, h1 = landed(site, href)
        if page_lang != ("zh" if lang else "en") or title not in h1:
            problems.append(f"{query!r} links to {href}: lang {page_lang!r}, title {h1!r}")
    assert problems == []
    groups.nth(wanted[0]).locator("a").first.click()
    page.wait_for_url(f"**/{lang}{chapter}/**")
    assert page.locator("html").get_attribute("lang") == ("zh" if lang else "en")
    assert title in page.locator("h1").first.inner_text()


def test_every_search_starts_on_a_home_page():
    assert {case[0] for case in SEARCHES} == {"/", "/zh/"}
