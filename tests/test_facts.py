"""Say each fact once: the facts a page and its lab share (docs/facts.yml), the sentences retired as false, and
no sentence that names a test, a GPU run or a measurement the repository does not hold."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import facts  # noqa: E402

DATA = facts.load()
FACTS = DATA["facts"]
USES = facts.uses()


def test_every_facts_copy_is_the_facts_file_text():
    stale = [str(p.relative_to(ROOT)) for p, lab in facts.places() if facts.filled(p, lab, FACTS) !=
             p.read_text(encoding="utf-8")]
    assert not stale, f"stale facts in {stale}: run python tools/build_notebooks.py"


@pytest.mark.parametrize("ident", sorted(FACTS))
def test_a_shared_fact_is_said_by_a_page_and_a_lab_in_both_languages(ident):
    places = USES.get(ident, [])
    pages = [f for f, _ in places if f.startswith("docs/")]
    labs = [f for f, _ in places if f.startswith("solutions/source/")]
    assert pages and labs, f"{ident}: a fact of docs/facts.yml is for a page and its lab (pages {pages}, labs {labs})"
    en = sorted(f.replace("/en/", "/") for f, lang in places if lang == "en")
    zh = sorted(f.replace("/zh/", "/") for f, lang in places if lang == "zh")
    assert en == zh, f"{ident}: said in English in {en}, in Chinese in {zh}"


@pytest.mark.parametrize("ident", sorted(FACTS))
def test_a_fact_has_both_languages_and_the_tests_it_rests_on_exist(ident):
    fact = FACTS[ident]
    assert fact.get("en", "").strip() and fact.get("zh", "").strip()
    assert re.search(r"[\u4e00-\u9fff]", fact["zh"]) and not re.search(r"[\u4e00-\u9fff]", fact["en"])
    assert fact.get("claims") or fact.get("gpu") or fact.get("sources"), f"{ident} rests on nothing"
    for node in [*fact.get("claims", []), *fact.get("gpu", [])]:
        path, _, name = node.partition("::")
        assert name in test_names(ROOT / path), f"{ident}: no test {node}"
    for node in fact.get("gpu", []):
        path, _, name = node.partition("::")
        assert name.startswith("test_gpu") or is_gpu_marked(ROOT / path, name), f"{node} is not a GPU test"


def test_a_fact_marker_naming_no_fact_fails():
    with pytest.raises(SystemExit, match="unknown fact"):
        facts.fill("<!-- fact: no-such-fact --><!-- /fact -->", lambda offset: "en", FACTS, False, "page.md")


def test_a_fact_is_filled_in_the_language_and_indentation_of_its_place():
    fact = {"en": "One\ntwo, see [chapter 04](04-batches.md).", "zh": "一\n二"}
    page = facts.fill("- x <!-- fact: f --><!-- /fact -->", lambda o: "en", {"f": fact}, False, "p")
    assert page == "- x <!-- fact: f -->One\n  two, see [chapter 04](04-batches.md).<!-- /fact -->"
    lab = facts.fill("<!-- fact: f -->\n<!-- /fact -->", lambda o: "en", {"f": fact}, True, "l")
    assert lab == "<!-- fact: f -->\nOne\ntwo, see chapter 04.\n<!-- /fact -->"
    assert facts.fill("<!-- fact: f -->old<!-- /fact -->", lambda o: "zh", {"f": fact}, False, "p") == \
        "<!-- fact: f -->一\n二<!-- /fact -->"
    assert facts.strip_markers("a <!-- fact: f -->b<!-- /fact --> c") == "a b c"


def test_no_notebook_and_no_built_text_shows_a_fact_marker():
    for notebook in sorted(ROOT.glob("labs/*/*.ipynb")) + sorted(ROOT.glob("solutions/*/*.ipynb")):
        assert "<!-- fact" not in notebook.read_text(encoding="utf-8"), notebook


def reader_texts() -> dict[str, str]:
    """What a reader meets: pages, lab sources and notebooks, README, the helper's messages, the GPU notebook."""
    files = [*ROOT.glob("docs/*/*.md"), *ROOT.glob("solutions/source/*.md"), ROOT / "README.md",
             *ROOT.glob("labs/*/*.ipynb"), *ROOT.glob("solutions/*/*.ipynb"), ROOT / "tools" / "verify_on_gpu.ipynb",
             *[p for p in ROOT.glob("devicelab/**/*.py")]]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in files}


@pytest.mark.parametrize("retired", DATA["retired"], ids=[r["finding"] for r in DATA["retired"]])
def test_a_sentence_retired_as_false_is_written_nowhere(retired):
    found = [f"{name}: …{text[max(0, m.start() - 40):m.end() + 20]}…" for name, text in reader_texts().items()
             for lang in ("en", "zh") for m in re.finditer(retired[lang], text)]
    assert not found, f"audit finding {retired['finding']} is back:\n" + "\n".join(found)


# ------------------------------------------------------------------ sentences that name what the repository holds


def test_names(path: Path) -> set[str]:
    """The test functions defined in a test file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


test_names.__test__ = False  # a helper, not a test


def is_gpu_marked(path: Path, name: str) -> bool:
    """Whether a test function carries pytest.mark.gpu."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return any("gpu" in ast.unparse(d) for d in node.decorator_list)
    return False


ALL_TESTS = {name for path in ROOT.glob("tests/**/test_*.py") for name in test_names(path)}
PROSE = {name: text for name, text in reader_texts().items() if not name.startswith("devicelab/")}


def test_every_test_a_text_names_exists():
    missing = []
    for name, text in PROSE.items():
        if name.endswith(".ipynb"):  # made from the sources, which are read
            continue
        for found in re.finditer(r"\btests/[\w/]+\.py(?:::(test_\w+))?|`(test_\w+)`", text):
            path = found.group(0).split("::")[0]
            function = found.group(1) or found.group(2)
            if path.startswith("tests/") and not list(ROOT.glob(path.replace("NN", "[0-9][0-9]"))):
                missing.append(f"{name}: {path}")
            elif function and function not in ALL_TESTS:
                missing.append(f"{name}: {function}")
    assert not missing, "a text names a test (or test file) the repository does not hold:\n" + "\n".join(missing)


GPU_RECORD = json.loads((ROOT / "devicelab" / "data" / "gpu_captures.json").read_text(encoding="utf-8"))
# A duration or a figure measured on a GPU, in either language.
MEASURED = re.compile(
    r"\b\d+(?:\.\d+)?\s*(?:minutes?|min|seconds?|ms|s)\b[^.\n]{0,25}\bon (?:a|an|the|one)?\s*"
    r"(?:T4|H100|H200|A100|GPU)\b"
    r"|(?:T4|H100|H200|A100|GPU)\s*上[^。\n]{0,8}?\d+(?:\.\d+)?\s*(?:分钟|秒|毫秒)"
)


def test_no_text_states_a_gpu_time_the_gpu_record_does_not_hold():
    found = [f"{name}: {m.group(0)!r}" for name, text in PROSE.items() for m in MEASURED.finditer(text)]
    if not GPU_RECORD["captures"]:
        assert not found, "a duration on a GPU that no GPU run measured:\n" + "\n".join(found)


@pytest.mark.parametrize("sentence", ["Expect about 15 minutes on a T4.", "It takes about 15 minutes on a T4.",
                                      "T4 上大约需要 15 分钟", "3 s on a GPU"])
def test_a_gpu_time_is_caught(sentence):
    assert MEASURED.search(sentence)


# Sentences that say no GPU has run a part yet: true only while the GPU record holds nothing for it.
NOT_YET = re.compile(r"No GPU has (?:run|measured) |not yet run on a GPU|还没有在 GPU 上运行过|目前还没有 GPU 测过|"
                     r"has not been timed on a GPU yet|还没有在 GPU 上计过时")


def test_a_not_yet_on_a_gpu_sentence_matches_the_gpu_record():
    said = sorted(name for name, text in PROSE.items() if NOT_YET.search(text))
    assert said, "the pages say which GPU parts have not run yet"
    assert not GPU_RECORD["captures"] and not GPU_RECORD["claims"], (
        "the GPU record now holds a run: update these sentences (and this test) to what it measured: "
        + ", ".join(said))
