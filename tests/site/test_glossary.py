"""The glossary (术语表 / Glossary): one rendering per term. The variants it rules out appear nowhere a Chinese
reader looks: the pages, the labs and solutions, the messages of the helper package (checks, the error
reader and the paste page built from it, the linter, the audit) and the claims shown in the pages' tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[2]

# variant → the glossary's word
RULED_OUT = {
    "诞生": "创建 (tensors are created)",
    "检查点名": "检查报出的是 (it reads as 'checkpoint name')",
    "具名元组": "命名元组",
    "(?<!整)批数据": "批次",
    "验证部分": "效果检验 (the proof)",
    "验证环节": "效果检验 (to an ML reader 验证 is validation)",
    "(?:\\d\\. |[\"“])验证：": "效果检验： (the proof's heading, the plot's title)",
    "词元编号": "token id（词元 ID）",
    "(?<!一张)查找表": "嵌入表 (查找表 describes the table; it is not its name)",
    "(?<!梯度)缩放器": "梯度缩放器",
    "页锁定": "锁页内存",
    "设备放置错误": "设备错误",
    "hidden 张量": "隐藏状态",
    "个 ?epoch": "轮次",
}

# A page's search keywords hold what readers type, variants included (词元编号, 显卡): they are not shown.
KEYWORDS = re.compile(r"^keywords: .*$", re.M)


def variants(text: str) -> list[str]:
    """Each ruled-out variant in a text, with a little context."""
    found = []
    for pattern, wanted in RULED_OUT.items():
        for hit in re.finditer(pattern, text):
            found.append(f"{hit.group(0)!r} (use {wanted}): …{text[max(0, hit.start() - 15):hit.end() + 15]}…")
    return found


def reader_texts() -> dict[str, str]:
    """Every text in Chinese a reader meets, by file (the glossary itself, which names the variants, aside)."""
    texts = {}
    for page in sorted((ROOT / "docs" / "zh").glob("*.md")):
        if page.name != "glossary.md":
            texts[page.relative_to(ROOT).as_posix()] = KEYWORDS.sub("", page.read_text(encoding="utf-8"))
    for folder in ("labs/zh", "solutions/zh"):
        for notebook in sorted((ROOT / folder).glob("*.ipynb")):
            cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
            texts[notebook.relative_to(ROOT).as_posix()] = "\n".join("".join(cell["source"]) for cell in cells)
    for module in sorted((ROOT / "devicelab").rglob("*.py")):  # the zh messages: checks, explain, lint, audit
        texts[module.relative_to(ROOT).as_posix()] = module.read_text(encoding="utf-8")
    for data in sorted((ROOT / "devicelab" / "data").rglob("*.json")):
        texts[data.relative_to(ROOT).as_posix()] = data.read_text(encoding="utf-8")
    for claims in sorted((ROOT / "tests" / "claims").glob("test_claims_*.py")):  # the claims tables' zh lines
        texts[claims.relative_to(ROOT).as_posix()] = claims.read_text(encoding="utf-8")
    texts["mkdocs.yml"] = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    return texts


def test_no_text_a_chinese_reader_meets_uses_a_ruled_out_variant():
    found = [f"{name}: {hit}" for name, text in reader_texts().items() for hit in variants(text)]
    assert not found, "\n".join(found)


def test_the_built_chinese_site_and_paste_page_use_no_ruled_out_variant(site):
    found = []
    for file in sorted((site / "zh").rglob("*.html")):
        if file.parent.name == "glossary":
            continue
        text = BeautifulSoup(file.read_text(encoding="utf-8"), "html.parser").get_text(" ")
        found += [f"{file.relative_to(site)}: {hit}" for hit in variants(text)]
    for script in sorted((site / "assets" / "javascripts").glob("*.js")):  # the paste page's rules
        found += [f"{script.relative_to(site)}: {hit}" for hit in variants(script.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("variant", ["内部诞生的张量", "检查点名的是 index", "具名元组", "一个批数据", "验证部分",
                                     "下面的验证环节", "## 7. 验证：修好的代码能训练", "词元编号在 CPU 上",
                                     "Embedding 的查找表", "缩放器每一步都会检查", "页锁定内存", "这是设备放置错误",
                                     "hidden 张量", "训练三个 epoch"])
def test_each_variant_is_caught(variant):
    assert variants(variant)


def test_the_words_the_glossary_keeps_are_not_caught():
    assert not variants("04 · 整批数据的移动：在模型内部创建的张量、命名元组形式的批次、检查点、效果检验")
    assert not variants("`nn.Embedding` 就是一张查找表；嵌入表在 GPU 上；梯度缩放器；锁页内存；在 GPU 上验证过本实验；"
                        "token id；这是设备错误；隐藏状态；训练三个轮次；for epoch in range(3)；尚未在 GPU 上验证：在 GPU 运行过之前")


@pytest.mark.parametrize(("lang", "folder", "title"), [("en", "", "Glossary"), ("zh", "zh/", "术语表")])
def test_the_glossary_is_in_both_languages_linked_from_the_home_page_and_the_navigation(site, lang, folder, title):
    page = BeautifulSoup((site / folder / "glossary" / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert page.html["lang"] == lang and page.h1.get_text(strip=True).rstrip("¶") == title
    rows = page.select(".md-content table tbody tr")
    kept = {row.find_all("td")[1].get_text(strip=True) for row in rows}
    assert {"张量", "设备", "显存", "缓冲区（buffer）", "检查点", "混合精度", "批次", "token id（词元 ID）", "锁页内存",
            "梯度缩放器（GradScaler）", "效果检验", "恢复训练（断点续训）", "dtype（数据类型）", "traceback（回溯信息）",
            "设备错误"} <= kept
    ruled_out = " ".join(row.find_all("td")[2].get_text() for row in rows)
    for pattern in RULED_OUT:
        assert re.search(pattern, ruled_out), f"the glossary does not name the variant {pattern}"
    home = BeautifulSoup((site / folder / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert home.select_one('.md-content a[href="glossary/"]') is not None, "the home page does not link the glossary"
    assert home.select_one('.md-nav a[href="glossary/"]') is not None, "the navigation does not list the glossary"


def english_prose(code: str) -> list[str]:
    """The comments and docstrings of a code cell written in English only (two English words, no Chinese)."""
    import io
    import tokenize

    found = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return found
    for token in tokens:
        text = token.string
        prose = token.type == tokenize.COMMENT or (token.type == tokenize.STRING and text.startswith(('"""', "'''")))
        english = re.search(r"[A-Za-z]{3,} [A-Za-z]{3,}", text) and not re.search(r"[\u4e00-\u9fff]", text)
        if prose and english and not re.match(r"#\s*(ex\d|noqa|type:)", text):
            found.append(text)
    return found


def test_the_chinese_notebooks_comment_their_code_in_chinese():
    found = []
    for folder in ("labs/zh", "solutions/zh"):
        for notebook in sorted((ROOT / folder).glob("*.ipynb")):
            for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
                if cell["cell_type"] == "code":
                    prose = english_prose("".join(cell["source"]))
                    found += [f"{folder}/{notebook.name}: {text[:90]}" for text in prose]
    assert not found, "English comments or docstrings in the Chinese notebooks:\n" + "\n".join(found)


def test_english_prose_in_code_is_caught():
    code = 'x = 1  # move the model first\n# 先移动模型\ndef f():\n    """The batch on the device."""\n'
    assert english_prose(code) == ["# move the model first", '"""The batch on the device."""']
