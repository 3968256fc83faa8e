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


RNN_HIDDEN = ("RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 "
              "and hidden tensor at cpu")
DESERIALIZE = ("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
               "is False. If you are running on a CPU-only machine, please use torch.load with "
               "map_location=torch.device('cpu') to map your storages to the CPU.")


DP_MODULE = ("RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) "
             "but found one of them on device: cpu")
MASK = "RuntimeError: expected self and mask to be on the same device, but got mask on cpu and self on cuda:0"


@pytest.mark.parametrize(
    ("start", "query", "chapter", "title"),
    [
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
    ],
)
def test_searching_lands_on_the_chapter_in_the_readers_language(page, base_url, start, query, chapter, title):
    page.goto(f"{base_url}{start}")
    search(page, query)
    groups = page.locator(".md-search-result__item")
    # each result group is one page: its first link is the page, the others its sections
    pages = groups.evaluate_all("items => items.map(item => item.querySelector('a').href)")
    lang = "zh/" if start == "/zh/" else ""
    other = [href for href in pages if href.startswith(f"{base_url}/zh/") != bool(lang)]
    assert not other, f"pages of the other language among the results for {query!r}: {other}"
    wanted = [i for i, href in enumerate(pages[:3]) if href.startswith(f"{base_url}/{lang}{chapter}/")]
    assert wanted, f"no {lang}{chapter} page among the first 3 results for {query!r}: {pages}"
    groups.nth(wanted[0]).locator("a").first.click()
    page.wait_for_url(f"**/{lang}{chapter}/**")
    assert page.locator("html").get_attribute("lang") == ("zh" if lang else "en")
    assert title in page.locator("h1").first.inner_text()
