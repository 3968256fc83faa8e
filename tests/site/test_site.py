"""The built site: both languages, notebooks as real pages, buttons on every lab page."""

import io
import json
import re
import tokenize
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


FENCE = re.compile(r"^([ \t]*)```[ \t]*([^\n`]*)\n(.*?)^\1```", re.S | re.M)
PYTHON = {"python", "py", "python3", "pycon"}
SHELL = {"bash", "sh", "shell", "console", "zsh"}


def _without_python_comments(code: str) -> str:
    """Python code with its comments and trailing whitespace removed (lines that held only a comment go too)."""
    lines = code.splitlines()
    cut: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.COMMENT:
                cut[token.start[0] - 1] = token.start[1]
    except (tokenize.TokenError, IndentationError, SyntaxError):  # a fragment: fall back to a plain cut
        return _without_shell_comments(code)
    kept = []
    for number, line in enumerate(lines):
        stripped = line[: cut[number]].rstrip() if number in cut else line.rstrip()
        if number in cut and not stripped:
            continue
        kept.append(stripped)
    return "\n".join(kept)


def _without_python_prose(code: str) -> str:
    """Python code without its comments and docstrings (both may be translated): each docstring's text becomes the
    same placeholder, in place, so that every other character still counts."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return _without_python_comments(code)
    lines = [line.encode("utf-8") for line in code.splitlines(keepends=True)]  # ast's columns count UTF-8 bytes
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body and \
                isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) and \
                isinstance(node.body[0].value.value, str):
            value = node.body[0].value
            spans.append((value.lineno, value.col_offset, value.end_lineno, value.end_col_offset))
    for start_line, start_col, end_line, end_col in sorted(spans, reverse=True):  # from the end: offsets hold
        head = lines[start_line - 1][:start_col]
        tail = lines[end_line - 1][end_col:]
        lines[start_line - 1:end_line] = [head + b'"docstring"' + tail]
    return _without_python_comments(b"".join(lines).decode("utf-8"))


def _without_shell_comments(code: str) -> str:
    """Shell code with `#` comments (whole lines, or after a space) and trailing whitespace removed."""
    kept = []
    for line in code.splitlines():
        stripped = re.sub(r"(^|\s)#.*$", "", line).rstrip()
        if stripped or not line.strip():
            kept.append(stripped)
    return "\n".join(kept)


def comparable(lang: str, body: str, indent: str = "") -> str:
    """A fenced block's code as both languages must share it: comments are free to differ."""
    body = "\n".join(line.removeprefix(indent) for line in body.splitlines())
    lang = lang.split()[0].lower() if lang.strip() else ""
    if lang in PYTHON:
        return _without_python_prose(body)
    if lang in SHELL:
        return _without_shell_comments(body)
    return body


def code_blocks(path: Path) -> list[tuple[str, str]]:
    """Each fenced block of a page: (language, code without comments)."""
    text = path.read_text(encoding="utf-8")
    return [(lang.strip(), comparable(lang, body, indent)) for indent, lang, body in FENCE.findall(text)]


@pytest.mark.parametrize("page_name", sorted(p.name for p in (ROOT / "docs" / "en").glob("*.md")))
def test_code_on_a_page_is_identical_in_both_languages(page_name):
    en = code_blocks(ROOT / "docs" / "en" / page_name)
    zh = code_blocks(ROOT / "docs" / "zh" / page_name)
    assert [lang for lang, _ in en] == [lang for lang, _ in zh], "the pages have different code blocks"
    for number, ((lang, en_code), (_, zh_code)) in enumerate(zip(en, zh), start=1):
        assert en_code == zh_code, f"code block {number} ({lang or 'no language'}) differs"


EN_BLOCK = """    ```python
    # Move, wrap, and keep the name the loop trains
    model = model.to(device)  # in place
    text = "a # inside a string stays"
    ```
"""


def test_translated_comments_are_not_a_difference():
    zh = EN_BLOCK.replace("# Move, wrap, and keep the name the loop trains", "# 先移动、再包装，并沿用训练循环用的名字")
    zh = zh.replace("# in place", "# 原地移动   ")
    (en_code,), (zh_code,) = ([comparable(lang, body, indent) for indent, lang, body in FENCE.findall(page)]
                              for page in (EN_BLOCK, zh))
    assert en_code == zh_code == 'model = model.to(device)\ntext = "a # inside a string stays"'


@pytest.mark.parametrize(
    "change",
    [
        ("model.to(device)", 'model.to("cpu")'),  # code
        ('"a # inside a string stays"', '"a # 字符串里的井号"'),  # a string that looks like a comment
        ("    model = model", "    model  = model"),  # spacing inside a line
        ("```python", "```text"),  # the block's language
    ],
)
def test_a_code_difference_is_caught_even_with_comments_removed(change):
    zh = EN_BLOCK.replace(*change)
    blocks = [[(lang.strip(), comparable(lang, body, indent)) for indent, lang, body in FENCE.findall(page)]
              for page in (EN_BLOCK, zh)]
    assert blocks[0] != blocks[1]


def test_a_translated_docstring_is_not_a_difference_but_its_code_is():
    en = 'def f(x):\n    """Move it."""\n    return x.to(device)\n'
    zh = 'def f(x):\n    """把它移过去。"""\n    return x.to(device)\n'
    assert comparable("python", en) == comparable("python", zh)
    assert comparable("python", en) != comparable("python", zh.replace("x.to(device)", "x"))


def test_shell_comments_may_differ_but_commands_may_not():
    en = "pip install -r requirements.txt  # the site\n# then\nmake serve\n"
    assert comparable("bash", en) == comparable("bash", "pip install -r requirements.txt  # 网站\n# 然后\nmake serve\n")
    changed = en.replace("-r requirements.txt", "requirements.txt")
    assert comparable("bash", en) != comparable("bash", changed)
    assert comparable("text", "RuntimeError: x # y") != comparable("text", "RuntimeError: x # z")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_home_page_promises_nothing_that_depends_on_the_capture_file(lang):
    text = " ".join((ROOT / "docs" / lang / "index.md").read_text(encoding="utf-8").split())
    for overclaim in ("Every statement", "每一句陈述", "what a real GPU printed", "真实 GPU 打印的内容", "seed", "Seed",
                      "原文 0"):
        assert overclaim not in text
    expected = {"en": "until a GPU has verified that lab, the expected wording, labelled as such",
                "zh": "还没有在 GPU 上验证过时，展示的是预期的报错文字，并会注明"}
    assert expected[lang] in text
