"""Search as readers use it: every query of a corpus of reader queries, run by the site's own search code.

Each query goes to the search worker the built pages configure (Material's worker, wrapped by
docs/assets/javascripts/workers/course-search.js), in headless Chromium, through the same messages
Material's search box sends; only the typing is left out, which tests/site/test_browser.py covers.
"""

import json
import os
import re
import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CORPUS = json.loads((HERE / "search_queries.json").read_text(encoding="utf-8"))
CHAPTERS = tuple(sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "docs" / "en").glob("0*.md")))
PREFIX = {"en": "", "zh": "zh/"}
TOP = 3
FLOOR = 0.90  # share of the corpus that must find its chapter in the top 3, per language
# The questions every reader asks ("model on GPU, data on CPU", labels, checkpoints, several GPUs, mixed
# precision, which layer is on the CPU): the corpus marks them with a `family`, and their chapter comes first.
FAMILIES = {"gpu-data", "labels", "checkpoint", "multi-gpu", "amp", "which-layer"}
# share of all family queries whose chapter is the first result, per language (measured: en 40/41, zh 39/42),
# and the same share within each family: a floor with room for a page's edit to move one query
FAMILY_FLOOR = 0.85
EACH_FAMILY_FLOOR = 0.70

pytestmark = pytest.mark.browser
if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the browser tests: install Debian's chromium")
    pytestmark = [pytest.mark.browser, pytest.mark.skip(reason="Debian's chromium is not installed")]

# Runs in the page: start the worker the page configures, give it the index as Material does, ask.
RUN_QUERIES = """async (queries) => {
  const config = JSON.parse(document.querySelector("#__config").textContent)
  const base = new URL(config.base, location.href)
  const index = await (await fetch(new URL("search/search_index.json", base))).json()
  const worker = new Worker(new URL(config.search, location.href))
  const reply = () => new Promise((resolve, reject) => {
    worker.onmessage = event => resolve(event.data)
    worker.onerror = event => reject(new Error(event.message))
  })
  worker.postMessage({type: 0, data: {config: index.config, docs: index.docs, options: {suggest: false}}})
  await reply()
  const results = []
  for (const query of queries) {
    worker.postMessage({type: 2, data: query})
    const answer = await reply()
    results.push(answer.data.items.map(group => group[0].location.split("#")[0]))
  }
  worker.terminate()
  return results
}"""


# English error messages as readers paste them, on the Chinese pages too (which quote them in English):
# the Chinese search must list first the chapter that the English search lists first (it ranked chapter 02
# first for the first one, whose Chinese title holds "... should be the same", and the English site 01).
PASTED_ENGLISH = [
    "Expected all tensors to be on the same device",
    "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!",
    "Expected all tensors to be on the same device, but got weight is on cpu, different from other tensors on cuda:0",
    "module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cpu",
    "Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu",
    "expected self and mask to be on the same device",
    "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False",
    "Input, output and indices must be on the current device",
]
# and every English message of the corpus (pasted whole, in part, or in an older wording), on both sites
PASTED_ENGLISH += [item["q"] for lang in ("en", "zh") for item in CORPUS[lang]
                   if item["kind"] in ("message", "old", "part") and item["q"].isascii()]
PASTED_ENGLISH = list(dict.fromkeys(PASTED_ENGLISH))


def wanted(item: dict, lang: str) -> list[str]:
    """The locations of the chapter pages a query must find, in the reader's language."""
    chapters = item["chapter"] if isinstance(item["chapter"], list) else [item["chapter"]]
    return [f"{PREFIX[lang]}{chapter}/" for chapter in chapters]


@pytest.fixture(scope="module")
def results(browser, base_url) -> dict[str, dict[str, list[str]]]:
    """For each language, each corpus query's result pages, best first, searched from that language's home."""
    found = {}
    for lang, start in (("en", "/"), ("zh", "/zh/")):
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{base_url}{start}")
        queries = [item["q"] for item in CORPUS[lang]] + ["Expected all tensors"]
        queries += [query for named_lang, query, _, _ in NAMED if named_lang == lang and query not in queries]
        queries += [query for query in PASTED_ENGLISH if query not in queries]
        answers = page.evaluate(RUN_QUERIES, queries)
        context.close()
        found[lang] = dict(zip(queries, answers))
    return found


def hit_rate(lang: str, results) -> tuple[float, list[str]]:
    """The share of the language's corpus that finds its chapter in the top 3, and the misses."""
    misses = []
    for item in CORPUS[lang]:
        top = results[lang][item["q"]][:TOP]
        if not set(top) & set(wanted(item, lang)):
            misses.append(f"{item['kind']}: {item['q']!r} wants {item['chapter']}, got {top}")
    return 1 - len(misses) / len(CORPUS[lang]), misses


def test_the_corpus_is_large_and_varied():
    for lang in ("en", "zh"):
        items = CORPUS[lang]
        assert len(items) >= 100
        assert {"question", "keywords", "message", "old", "paraphrase"} <= {item["kind"] for item in items}
        assert {item["family"] for item in items if "family" in item} == FAMILIES
        for family in FAMILIES:
            assert sum(item.get("family") == family for item in items) >= 5, f"{lang}: few {family} queries"
        assert {c for item in items for c in wanted(item, "en")} == {f"{c}/" for c in CHAPTERS}
        assert len({item["q"] for item in items}) == len(items), "a query is listed twice"
    assert any(item["kind"] == "translated" for item in CORPUS["zh"])
    assert any(item["kind"] == "message" and item["q"].isascii() for item in CORPUS["zh"]), "pasted English"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_language_searches_only_its_own_pages(results, lang):
    for query, pages in results[lang].items():
        assert pages, f"{query!r} found nothing"
        strangers = [p for p in pages if (p.startswith("zh/") if lang == "en" else not p.startswith("zh/"))]
        assert not strangers, f"{query!r} on the {lang} site lists {strangers}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reader_queries_find_their_chapter_in_the_top_three(results, lang):
    rate, misses = hit_rate(lang, results)
    print(f"\n{lang}: {rate:.0%} of {len(CORPUS[lang])} reader queries find their chapter in the top {TOP}")
    for miss in misses:
        print("  miss", miss)
    assert rate >= FLOOR, f"{lang}: only {rate:.0%} find their chapter:\n" + "\n".join(misses)


def first_rates(lang: str, results) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """For each family, (queries whose chapter comes first, queries); and the ones that do not."""
    rates, misses = {}, []
    for item in CORPUS[lang]:
        if "family" not in item:
            continue
        first = results[lang][item["q"]][:1]
        hit = bool(set(first) & set(wanted(item, lang)))
        got, total = rates.get(item["family"], (0, 0))
        rates[item["family"]] = (got + hit, total + 1)
        if not hit:
            top = results[lang][item["q"]][:3]
            misses.append(f"{item['family']}: {item['q']!r} wants {item['chapter']}, got {top}")
    return rates, misses


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_questions_every_reader_asks_rank_their_chapter_first(results, lang):
    rates, misses = first_rates(lang, results)
    got = sum(hit for hit, _ in rates.values())
    total = sum(count for _, count in rates.values())
    print(f"\n{lang}: {got}/{total} family queries rank their chapter first: "
          + ", ".join(f"{family} {hit}/{count}" for family, (hit, count) in sorted(rates.items())))
    for miss in misses:
        print("  not first", miss)
    assert got / total >= FAMILY_FLOOR, "\n".join(misses)
    weak = [family for family, (hit, count) in rates.items() if hit / count < EACH_FAMILY_FLOOR]
    assert not weak, f"{lang}: {weak} rank their chapter first too rarely:\n" + "\n".join(misses)


NAMED = [
    ("zh", "模型在GPU上但是数据在CPU上", "01-devices", 1),
    ("en", "model on gpu but data on cpu", "01-devices", 1),
    ("en", "which layer is on the cpu", "09-debugging", 1),
    ("zh", "哪一层在CPU上", "09-debugging", 1),
    ("en", "mixed precision", "08-amp", 1),
    ("zh", "混合精度", "08-amp", 1),
    ("en", "load a checkpoint on the cpu", "07-checkpoints", 1),
    ("zh", "多卡训练 设备不一致", "06-multigpu", 1),
    ("zh", "批次是字典怎么移动到GPU", "04-batches", TOP),  # the words after 是 were dropped
    ("zh", "embedding", "03-embedding", 1),  # English pages came first on the Chinese site
    ("zh", "non_blocking", "04-batches", 1),
]


@pytest.mark.parametrize(("lang", "query", "chapter", "top"), NAMED)
def test_the_queries_the_issue_names_find_their_chapter_in_their_language(results, lang, query, chapter, top):
    assert f"{PREFIX[lang]}{chapter}/" in results[lang][query][:top], results[lang][query]


@pytest.mark.parametrize("query", PASTED_ENGLISH[:9])
def test_a_pasted_english_message_ranks_first_on_the_chinese_pages_what_it_ranks_first_on_the_english(
        results, query):
    english = results["en"][query]
    assert english and not english[0].startswith("zh/"), english
    assert results["zh"][query][:1] == [f"zh/{english[0]}"], (results["zh"][query][:3], english[:3])


def test_every_english_message_of_the_corpus_ranks_first_the_same_chapter_on_both_sites(results):
    differ = [f"{query!r}: en {results['en'][query][:2]}, zh {results['zh'][query][:2]}"
              for query in PASTED_ENGLISH
              if [f"zh/{page}" for page in results["en"][query][:1]] != results["zh"][query][:1]]
    print(f"\n{len(PASTED_ENGLISH) - len(differ)}/{len(PASTED_ENGLISH)} English messages rank the same chapter first")
    assert not differ, "\n".join(differ)


@pytest.mark.parametrize(
    ("start", "query", "other", "chapter"),
    [
        ("/", "混合精度 报错", "zh", "08-amp"),
        ("/", "多卡训练 设备不一致", "zh", "06-multigpu"),
        ("/zh/", "mixed precision training error", "en", "08-amp"),
    ],
)
def test_a_query_in_the_other_language_links_to_that_languages_results(browser, base_url, start, query, other, chapter):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{base_url}{start}")
        page.locator("label.md-search__icon, .md-search__input").first.click()
        page.fill(".md-search__input", query)
        page.press(".md-search__input", "End")  # typing Chinese fires no keyup
        link = page.locator(".md-search-result .course-search-other a")
        link.wait_for(timeout=10_000)
        assert link.count() == 1 and link.get_attribute("data-lang") == other and link.is_visible()
        # in Chinese on both sites: it answers a Chinese query on the English pages, and speaks to the
        # Chinese pages' reader there
        text = link.inner_text()
        assert link.get_attribute("lang") == "zh" and re.search(r"[\u4e00-\u9fff]{4}", text), text
        assert text.startswith("在英文页面中搜索" if other == "en" else "在中文页面中搜索"), text
        href = link.evaluate("a => a.href")
        assert href.startswith(f"{base_url}/{'zh/' if other == 'zh' else ''}") and "?q=" in href, href
        page.goto(href)  # where the link leads (a click there races Material's re-rendering of the results)
        assert page.locator("html").get_attribute("lang") == other
        # Material opens the search with the query of ?q=; the results are that language's. A query run
        # before the index is ready is not run again: press a key, as a reader would.
        for _ in range(10):
            try:
                page.wait_for_selector(".md-search-result__item", timeout=4_000)
                break
            except Exception:  # noqa: BLE001 - playwright's TimeoutError: not ready yet
                page.press(".md-search__input", "End")
        first = page.locator(".md-search-result__item").first.locator("a").first.evaluate("a => a.href")
        assert first.startswith(f"{base_url}/{'zh/' if other == 'zh' else ''}{chapter}/"), first
    finally:
        context.close()


def test_a_query_in_the_pages_own_language_shows_no_such_line(browser, base_url):
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{base_url}/")
        page.locator("label.md-search__icon, .md-search__input").first.click()
        page.fill(".md-search__input", "mixed precision")
        page.press(".md-search__input", "End")
        page.wait_for_selector(".md-search-result__item", timeout=15_000)
        assert page.locator(".course-search-other").count() == 0
    finally:
        context.close()


PASTED_ON_A_PHONE = [
    ("Expected all tensors to be on the same device", "01-devices"),
    ("Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu",
     "05-inside"),
    ("module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on "
     "device: cpu", "09-debugging"),
]


@pytest.mark.parametrize("start", ["/", "/zh/"])
def test_a_message_pasted_into_the_search_box_lists_the_same_chapter_first_in_both_languages(browser, base_url, start):
    """Each message of PASTED_ON_A_PHONE pasted in turn into the phone's search box of one page (the index is built
    once, as when a reader searches again): its chapter is the first result, shown on the screen."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    first = ".md-search-result__item a"
    wrong = []
    try:
        page.goto(f"{base_url}{start}")
        page.locator('label.md-header__button[for="__search"]').click()  # the phone's search button
        for n, (query, chapter) in enumerate(PASTED_ON_A_PHONE):
            if n:  # the last query's results gone first: no stale first result is read as this query's
                page.fill(".md-search__input", "")
                page.press(".md-search__input", "End")
                page.wait_for_selector(".md-search-result__item", state="detached", timeout=10_000)
            page.fill(".md-search__input", query)
            want = f"{base_url}{start}{chapter}/"
            # a query typed before the index is ready is not run again: press a key, as a reader would
            for _ in range(8):
                page.press(".md-search__input", "End")
                try:
                    page.wait_for_function(
                        "([selector, want]) => { const a = document.querySelector(selector);"
                        " return a && a.href.split(/[?#]/)[0] === want }", arg=[first, want], timeout=2_500)
                    break
                except Exception:  # noqa: BLE001 - playwright's TimeoutError: not ready yet, or another page first
                    pass
            shown = page.locator(first).first.evaluate("a => a.href") if page.locator(first).count() else None
            if not (shown and re.split(r"[?#]", shown)[0] == want):
                wrong.append(f"{query!r} on {start}: first result {shown}, wanted {want}")
            elif not page.locator(".md-search-result__item").first.is_visible():
                wrong.append(f"{query!r} on {start}: the first result is not on the screen")
    finally:
        context.close()
    assert wrong == []
