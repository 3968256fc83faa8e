"""The "Paste your error" page in headless Chromium: its rules are the Python index's, and every real message of
the corpus pasted into it gets the same verdict as devicelab.errors.diagnose, in both languages."""

import html
import json
import os
import shutil
import statistics
import time
from pathlib import Path

import pytest

from devicelab.errors import LABELS, diagnose, export
from devicelab.explain import render_problems

pytestmark = pytest.mark.browser
if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the browser test: install Debian's chromium")
    pytestmark = [pytest.mark.browser, pytest.mark.skip(reason="Debian's chromium is not installed")]

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "errors" / "corpus.json"
PAGES = {"en": "/explain/", "zh": "/zh/explain/"}


def corpus_texts() -> list[str]:
    """Every pasted text of the corpus, and every family's own example."""
    entries = json.loads(CORPUS.read_text(encoding="utf-8")) if CORPUS.exists() else []
    return [e["text"] for e in entries] + _examples()


def _examples() -> list[str]:
    from devicelab.errors import KINDS

    names = [k["name"] for k in export()["kinds"]]
    return [KINDS[name].example for name in names]


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    yield page
    context.close()


# What the page shows for the text in its box: the output's data attributes, its text (without the picture) and links.
READ_OUTPUT = """() => { const o = document.getElementById('explain-output');
    return {verdict: o.dataset.verdict, chapter: o.dataset.chapter || null,
            device_error: o.dataset.deviceError === 'true', confident: o.dataset.confident === 'true',
            ms: parseFloat(o.dataset.ms),
            text: (() => { const c = o.cloneNode(true);  // the answer, not its picture
                           c.querySelectorAll('.explain-picture').forEach(p => p.remove());
                           document.body.appendChild(c); const t = c.innerText; c.remove();
                           return t; })(),
            ranking: (o.dataset.ranking || '').split(',').filter(Boolean),
            links: [...o.querySelectorAll('a.explain-chapter')].map(a => a.getAttribute('href'))}; }"""


def paste(page, text: str) -> dict:
    """Type the text into the box as a reader pastes it, and read the answer."""
    page.fill("#explain-input", text)
    return page.evaluate(READ_OUTPUT)


def paste_all(page, texts: list[str]) -> list[dict]:
    """Each text put into the box in turn, with the input event a paste fires, and its answer read: the same
    handler as `paste`, in one call to the browser per hundred texts instead of two per text."""
    answers = []
    for start in range(0, len(texts), 100):
        answers += page.evaluate(
            f"""(texts) => {{ const input = document.getElementById('explain-input'); const read = {READ_OUTPUT};
                             return texts.map(text => {{ input.value = text;
                                 input.dispatchEvent(new Event('input', {{bubbles: true}})); return read(); }}); }}""",
            texts[start:start + 100])
    return answers


def test_the_page_loads_the_rules_generated_from_the_python_index(page, base_url):
    page.goto(f"{base_url}/explain/")
    rules = page.evaluate("() => window.DEVICELAB_EXPLAIN_RULES")
    python = export()
    assert [k["name"] for k in rules["kinds"]] == [k["name"] for k in python["kinds"]]
    assert [k["patterns"] for k in rules["kinds"]] == [k["patterns"] for k in python["kinds"]]
    assert rules["causes"] == python["causes"]


def test_every_rule_compiles_in_javascript(page, base_url):
    page.goto(f"{base_url}/explain/")
    broken = page.evaluate(
        """() => { const bad = [];
                   for (const kind of window.DEVICELAB_EXPLAIN_RULES.kinds) {
                     for (const p of kind.patterns) { try { new RegExp(p, 'd'); } catch (e) { bad.push(p); } }
                     for (const r of kind.routes) for (const w of Object.values(r.when)) {
                       try { new RegExp(w); } catch (e) { bad.push(w); } } }
                   return bad; }"""
    )
    assert broken == [] and page.errors == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_corpus_message_gets_the_same_verdict_as_python(page, base_url, lang):
    page.goto(f"{base_url}{PAGES[lang]}")
    assert page.locator("html").get_attribute("lang") == lang
    different, timings = [], []
    texts = corpus_texts()
    for text, got in zip(texts, paste_all(page, texts), strict=True):
        d = diagnose(text)
        want = (d.device_error, d.chapter, d.confident, [r.chapter for r in d.ranking])
        if (got["device_error"], got["chapter"], got["confident"], got["ranking"]) != want:
            different.append((text[-120:], got, want))
        unclean = render_problems(got["text"])
        if unclean:
            different.append((text[-120:], unclean))
        if d.chapter:
            assert got["links"][0] == f"../{d.chapter}/", text
        timings.append(got["ms"])
    assert different == []
    assert page.errors == []
    for text, batched in zip(texts[:3], paste_all(page, texts[:3]), strict=True):  # a batch reads as a paste
        assert {**paste(page, text), "ms": 0} == {**batched, "ms": 0}
    print(f"browser ({lang}): {statistics.mean(timings):.3f} ms per message, max {max(timings):.3f} ms")


def test_pastes_in_lower_case_escaped_or_quoted_get_the_same_verdict_as_python(page, base_url):
    """The page reads a paste with no capital letter without regard to case, HTML's escapes as the characters
    they stand for, a reply's `> `, torchrun's `[rank0]:`, no-break spaces, zero-width spaces, typographic quotes,
    blank lines between lines, colours, HTML's line breaks, a traceback on one line and a paste wrapped at a fixed
    width, as Python does (tests/unit/test_errors_paste_forms.py)."""
    page.goto(f"{base_url}{PAGES['en']}")
    texts = corpus_texts()[::4]
    forms = [text.lower() for text in texts] + [html.escape(text) for text in texts]
    forms += ["\n".join("> " + line for line in text.splitlines()) for text in texts[::2]]
    forms += [text.replace(" ", "\u00a0") for text in texts[::2]]
    forms += ["\n".join("[rank0]: " + line for line in text.splitlines()) for text in texts[1::2]]
    # zero-width spaces, typographic quotes, a blank line after every line (tests/unit/test_errors_paste_forms.py)
    forms += ["\ufeff" + text.replace(" ", " \u200b") for text in texts[::3]]
    forms += [text.replace('"', "\u201c").replace("'", "\u2019") for text in texts[1::3]]
    forms += [text.replace("\n", "\n\n") for text in texts[2::3]]
    # colours without their escape, HTML's line breaks, a traceback on one line
    forms += [text.replace("Error:", "Error[0m:").replace("Runtime", "[0;31mRuntime") for text in texts[::3]]
    forms += ["<pre><code>" + text.replace("\n", "<br>\n") + "</code></pre>" for text in texts[1::3]]
    forms += [" ".join(line.strip() for line in text.splitlines()) for text in texts[2::3]]
    forms += ["\n".join(line[i:i + 80] for line in text.splitlines() for i in range(0, max(len(line), 1), 80))
              for text in texts[::2]]  # wrapped at a fixed width
    forms += ["runtimeerror: function addbackward0 returned an invalid gradient at index 1 - expected type "
              "torch.floattensor but got torch.cuda.floattensor", "&lt;class &#x27;RuntimeError&#x27;&gt; &amp;#39;",
              "TypeError: 无法转换CUDA张量为numpy。使用Tensor.cpu()将张量复制到主机内存",
              # the eighth batch's readings (tests/unit/test_errors_rare_wordings.py)
              "RuntimeError: Unhandled FakeTensor Device Propagation for aten.add.Tensor, found two different devices "
              "spyre:0, cpu", "RuntimeError: Expected all tensors to be on the sa", "RuntimeError: Expected all tenso",
              '  File "/x/torch/cuda/amp/grad_scaler.py", line 161, in scale\n'
              "    assert outputs.is_cuda or outputs.device.type == 'xla'\nAssertionError"]
    assert differences(page, forms) == [] and page.errors == []
    assert sum(diagnose(text).device_error for text in forms) > len(forms) // 3  # the forms were read, not declined


def test_the_general_reading_gets_the_same_verdict_as_python(page, base_url):
    """The device checks mined from the sources, the development pastes of the ninth batch on (posters' words,
    two GPUs named by number or several in words, a pair that names one device twice before the real pair, a title cut
    by "…") and the general reading's unit cases (tests/unit/test_errors_general_reading.py) read the same on the
    page."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("general", ROOT / "tests" / "unit" / "test_errors_general_reading.py")
    general = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(general)
    page.goto(f"{base_url}{PAGES['en']}")
    sources = json.loads(general.SOURCES.read_text(encoding="utf-8"))
    batch = [entry for path in general.DEVELOPMENT_HALVES for entry in json.loads(path.read_text(encoding="utf-8"))]
    texts = [e["text"] for e in sources] + [e["text"] for e in batch] + general.FROM_THE_SOURCES + general.PROSE
    texts += general.TWO_GPUS + general.NEGATIVES + general.LOADED_WITHOUT_THE_GPU + general.INSIDE
    texts += ["Move the labels to avoid tensors on different \u2026" + newline + "\u2026devices in the loss"
              for newline in ("\n\n", "\r\n\r\n", "\n")]
    texts += [f"{e}: Caught {e} in replica 1 on device 1." for e in ("RuntimeError", "StopIteration")]
    texts += ["RuntimeError: Expected all tensors to be on the same device, but got index is on cuda:0..."]
    texts += [text for text, _ in general.IN_WORDS] + general.NOT_IN_WORDS
    assert differences(page, texts) == [] and page.errors == []


def differences(page, texts: list[str]) -> list[tuple]:
    """The texts the page reads otherwise than Python: device error or not, chapter, confidence, ranking."""
    different = []
    for text, got in zip(texts, paste_all(page, texts), strict=True):
        d = diagnose(text)
        if (got["device_error"], got["chapter"], got["confident"], got["ranking"]) != (
                d.device_error, d.chapter, d.confident, [r.chapter for r in d.ranking]):
            different.append((text[-120:], got["ranking"], [r.chapter for r in d.ranking]))
    return different


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_answer_is_in_the_pages_language_and_its_link_opens_the_chapter(page, base_url, lang):
    page.goto(f"{base_url}{PAGES[lang]}")
    got = paste(page, "RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different "
                      "from other tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)")
    assert got["verdict"] == "device" and got["chapter"] == "03-embedding"
    assert LABELS["device"][lang] in got["text"] and LABELS["meaning"][lang] in got["text"]
    page.locator("#explain-output a.explain-chapter").first.click()
    page.wait_for_url(f"{base_url}{'' if lang == 'en' else '/zh'}/03-embedding/")
    assert page.locator("html").get_attribute("lang") == lang


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_dtype_mismatch_is_declined_on_the_page(page, base_url, lang):
    page.goto(f"{base_url}{PAGES[lang]}")
    got = paste(page, "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Half")
    assert got["verdict"] == "declined" and not got["device_error"] and got["chapter"] == "08-amp"
    assert LABELS["not_device"][lang] in got["text"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_replica_header_alone_is_not_known_to_be_a_device_error_on_the_page(page, base_url, lang):
    """DataParallel's header says where the error happened, not what it was: the page says so, and sends the reader
    to chapter 06, as Python does."""
    page.goto(f"{base_url}{PAGES[lang]}")
    got = paste(page, "RuntimeError: Caught RuntimeError in replica 1 on device 1.")
    assert got["verdict"] == "declined" and not got["device_error"] and got["chapter"] == "06-multigpu"
    assert LABELS["undecided"][lang] in got["text"] and LABELS["not_device"][lang] not in got["text"]


def test_the_python_reading_is_fast_enough_to_feel_instant():
    texts = corpus_texts()
    started = time.perf_counter()
    for text in texts:
        diagnose(text)
    per_message = (time.perf_counter() - started) / len(texts) * 1000
    print(f"python: {per_message:.3f} ms per message")
    assert per_message < 50


def test_a_paste_of_one_long_token_is_answered_in_seconds_on_the_page(page, base_url):
    """The page reads the same wordings with the browser's regular expressions: a paste that is one very long token
    (letters, digits, a dotted path, a word wrapped at a fixed width) is answered in seconds, as in Python."""
    page.goto(f"{base_url}/explain/")
    shapes = {"letters": "a" * 40_000, "digits": "1" * 40_000, "dotted": "a." * 20_000,
              "underscored": "a_" * 20_000, "wrapped": ("a" * 79 + "\n") * 500}
    seconds = page.evaluate(
        f"""(texts) => {{ const input = document.getElementById('explain-input'); const read = {READ_OUTPUT};
                         return texts.map(text => {{ const started = performance.now(); input.value = text;
                             input.dispatchEvent(new Event('input', {{bubbles: true}})); read();
                             return (performance.now() - started) / 1000; }}); }}""",
        list(shapes.values()))
    slow = {name: round(s, 1) for name, s in zip(shapes, seconds) if s >= 5}
    assert slow == {}, slow
