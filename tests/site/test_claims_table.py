"""The "what is tested where" table each chapter page gets in place of its `<!-- claims-table -->` line."""

import html
import importlib.util
import re
import shutil
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("mkdocs_hooks_for_claims", ROOT / "tools" / "mkdocs_hooks.py")
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)

from devicelab import captures  # noqa: E402

CLAIMS = textwrap.dedent('''
    import pytest
    import torch


    def test_a_tensor_is_on_the_cpu():
        """A tensor created without device= is on the CPU.

        More words that the table leaves out.
        """


    def test_module_to_keeps_the_same_parameters():
        pass


    @pytest.mark.gpu
    def test_cpu_conv_fed_a_cuda_input_raises(cuda):
        """A CPU conv fed a CUDA input raises `Input type ... should be the same`."""


    @pytest.mark.gpu
    @pytest.mark.parametrize("pinned", [False, True], ids=["pageable", "pinned"])
    def test_copy_returns_once_done(cuda, pinned):
        """.to('cuda') without non_blocking returns once the copy is done."""


    @pytest.mark.gpu
    @pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 or more CUDA GPUs")
    def test_dataparallel_on_two_gpus_raises():
        """DataParallel on two GPUs leaves a CPU module and raises."""


    def test_uses_the_cuda_fixture_without_the_mark(cuda):
        """Only a GPU can run this one."""


    @pytest.mark.skipif(torch.cuda.is_available(), reason="the claim is about a machine without a GPU")
    def test_on_a_machine_without_a_gpu_to_cuda_fails():
        """On a machine without a GPU, .to('cuda') fails."""


    def helper_that_is_not_a_test():
        pass


    class TestGrouped:
        @pytest.mark.gpu
        def test_in_a_class(self, cuda):
            """A method of a test class."""
''')
FILE = "tests/claims/test_claims_ch09_example.py"


def record(test, outcome="passed", date="2026-11-29", **more):
    return {"test": f"{FILE}::{test}", "outcome": outcome, "message": "", "gpu": "NVIDIA H200",
            "torch": "2.11.0+cu130", "cuda": "13.0", "date": date, **more}


@pytest.fixture
def claims_dir(tmp_path) -> Path:
    (tmp_path / "test_claims_ch09_example.py").write_text(CLAIMS, encoding="utf-8")
    return tmp_path


def rows(table: str) -> list[list[str]]:
    """The table's body as text cells."""
    body = table.split("<tbody>", 1)[1]
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body)]


def test_every_test_function_is_one_claim_read_without_importing_the_file(claims_dir):
    found = hooks.claims_of(claims_dir / "test_claims_ch09_example.py")
    assert [c["test"] for c in found] == [
        "test_a_tensor_is_on_the_cpu", "test_module_to_keeps_the_same_parameters",
        "test_cpu_conv_fed_a_cuda_input_raises", "test_copy_returns_once_done", "test_dataparallel_on_two_gpus_raises",
        "test_uses_the_cuda_fixture_without_the_mark", "test_on_a_machine_without_a_gpu_to_cuda_fails",
        "TestGrouped::test_in_a_class",
    ]
    claim = {c["test"]: c for c in found}
    assert claim["test_a_tensor_is_on_the_cpu"]["claim"] == "A tensor created without device= is on the CPU."
    assert claim["test_module_to_keeps_the_same_parameters"]["claim"] == "Module to keeps the same parameters"
    assert [c["test"] for c in found if c["gpu"]] == [
        "test_cpu_conv_fed_a_cuda_input_raises", "test_copy_returns_once_done", "test_dataparallel_on_two_gpus_raises",
        "test_uses_the_cuda_fixture_without_the_mark", "TestGrouped::test_in_a_class",
    ]
    assert [c["test"] for c in found if c["two_gpus"]] == ["test_dataparallel_on_two_gpus_raises"]


def test_a_module_level_gpu_mark_makes_every_test_a_gpu_test(tmp_path):
    path = tmp_path / "test_claims_ch09_all_gpu.py"
    path.write_text("import pytest\npytestmark = [pytest.mark.gpu]\n\ndef test_one():\n    pass\n", encoding="utf-8")
    assert [c["gpu"] for c in hooks.claims_of(path)] == [True]


def test_without_a_gpu_run_every_gpu_claim_says_so(claims_dir):
    table = hooks.claims_table("09", "en", claims_dir, records=[])
    cells = rows(table)
    assert len(cells) == 8
    assert cells[0] == ["A tensor created without device= is on the CPU.", "CPU, in CI", "—"]
    assert cells[2] == ["A CPU conv fed a CUDA input raises Input type ... should be the same.", "GPU only",
                        "not yet run on a GPU"]
    assert cells[4][1:] == ["GPU only (2 or more)", "not yet run on a GPU"]
    assert cells[6][1] == "CPU, in CI"  # a claim about machines without a GPU runs in CI
    assert "3 claims run on the CPU in CI; 5 claims only on a GPU, of which 0 passed on one so far" in table
    assert "tests/claims/test_claims_ch09_example.py" in table
    assert "<code>Input type ... should be the same</code>" in table


def test_gpu_runs_from_the_record_say_where_with_which_torch_and_when(claims_dir):
    records = [
        record("test_cpu_conv_fed_a_cuda_input_raises"),
        record("test_copy_returns_once_done[pageable]"),
        record("test_copy_returns_once_done[pinned]", outcome="failed"),
        record("test_dataparallel_on_two_gpus_raises", outcome="skipped", message="needs 2 or more CUDA GPUs"),
        record("test_uses_the_cuda_fixture_without_the_mark", outcome="failed", date="2026-10-01"),
        record("test_uses_the_cuda_fixture_without_the_mark", torch="2.12.0", date="2026-11-30"),
    ]
    status = {row[0]: row[2] for row in rows(hooks.claims_table("09", "en", claims_dir, records=records))}
    assert status["A CPU conv fed a CUDA input raises Input type ... should be the same."] == (
        "passed on NVIDIA H200, torch 2.11.0+cu130, 2026-11-29")
    assert status[".to('cuda') without non_blocking returns once the copy is done."].startswith("FAILED on NVIDIA H200")
    assert status["DataParallel on two GPUs leaves a CPU module and raises."] == (
        "skipped on NVIDIA H200, torch 2.11.0+cu130, 2026-11-29: needs 2 or more CUDA GPUs")
    assert status["Only a GPU can run this one."] == "passed on NVIDIA H200, torch 2.12.0, 2026-11-30"  # the latest
    assert status["A method of a test class."] == "not yet run on a GPU"


def test_a_record_of_another_file_does_not_count(claims_dir):
    other = {**record("test_cpu_conv_fed_a_cuda_input_raises"), "test": "tests/claims/test_claims_ch02_x.py::"
             "test_cpu_conv_fed_a_cuda_input_raises"}
    status = [row[2] for row in rows(hooks.claims_table("09", "en", claims_dir, records=[other]))]
    assert "passed" not in " ".join(status)


def test_the_chinese_table_speaks_chinese(claims_dir):
    table = hooks.claims_table("09", "zh", claims_dir, records=[record("test_cpu_conv_fed_a_cuda_input_raises")])
    assert "<th>在哪里运行</th>" in table and "data-search-exclude" in table
    cells = rows(table)
    assert cells[0][1:] == ["CPU，CI 中运行", "—"]
    assert cells[2][1:] == ["仅限 GPU", "已通过：NVIDIA H200，torch 2.11.0+cu130，2026-11-29"]
    assert cells[3][2] == "尚未在 GPU 上运行"
    assert "3 条说法在 CPU 上运行" in table and "目前其中 1 条已在 GPU 上通过" in table


def test_a_chapter_without_claims_tests_says_so(tmp_path):
    assert "No test file" in hooks.claims_table("07", "en", tmp_path, records=[])


def page(src_uri: str):
    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri))


def test_a_page_without_the_marker_is_left_unchanged():
    markdown = "# 01 · Devices\n\nNo table here. <!-- another comment -->\n"
    assert hooks.on_page_markdown(markdown, page("en/01-devices.md"), None, None) is markdown


def test_the_marker_becomes_the_table_of_the_pages_own_chapter():
    done = hooks.on_page_markdown("## Proved by tests\n\n<!-- claims-table -->\n", page("zh/02-dataparallel.md"),
                                  None, None)
    assert hooks.CLAIMS_MARKER not in done
    assert "tests/claims/test_claims_ch02_dataparallel.py" in done and "<th>在哪里运行</th>" in done


def test_the_marker_on_a_page_that_is_not_a_chapter_is_left_alone():
    markdown = "<!-- claims-table -->\n"
    assert hooks.on_page_markdown(markdown, page("en/index.md"), None, None) is markdown


@pytest.mark.parametrize("chapter", ["01", "02", "03", "04"])
def test_the_committed_record_decides_every_gpu_row_and_nothing_is_invented(chapter):
    recorded = {r["test"].split("::", 1)[1].split("[")[0] for r in captures.load_claims()}
    (path,) = (ROOT / "tests" / "claims").glob(f"test_claims_ch{chapter}_*.py")
    claims = hooks.claims_of(path)
    cells = rows(hooks.claims_table(chapter, "en"))
    assert len(cells) == len(claims) == len(re.findall(r"^(?:    )?(?:async )?def test", path.read_text(), re.M))
    for claim, (_, where, status) in zip(claims, cells):
        if not claim["gpu"]:
            assert (where, status) == ("CPU, in CI", "—")
        elif claim["test"] not in recorded:
            assert status == "not yet run on a GPU"


def test_the_built_chapter_pages_show_their_table_where_the_page_asks_for_one(site):
    for lang, prefix in (("en", ""), ("zh", "zh/")):
        for source in sorted((ROOT / "docs" / lang).glob("0*.md")):
            html = (site / prefix / source.stem / "index.html").read_text(encoding="utf-8")
            assert hooks.CLAIMS_MARKER not in html
            if hooks.CLAIMS_MARKER in source.read_text(encoding="utf-8"):
                assert 'class="claims-table"' in html, source


def test_a_zh_line_in_the_docstring_gives_the_chinese_table_its_claim(tmp_path):
    (tmp_path / "test_claims_ch08_x.py").write_text(
        'def test_one():\n    """A tensor created without device= is on the CPU.\n\n'
        '    zh: 创建时没有指定 device= 的张量在 CPU 上。\n    """\n\n'
        'def test_two():\n    """Only English here."""\n', encoding="utf-8")
    zh = [row[0] for row in rows(hooks.claims_table("08", "zh", tmp_path, records=[]))]
    en = [row[0] for row in rows(hooks.claims_table("08", "en", tmp_path, records=[]))]
    assert zh == ["创建时没有指定 device= 的张量在 CPU 上。", "Only English here."]
    assert en == ["A tensor created without device= is on the CPU.", "Only English here."]


@pytest.mark.parametrize("path", sorted((ROOT / "tests" / "claims").glob("test_claims_ch*.py")), ids=lambda p: p.name)
def test_every_claim_of_every_chapter_is_said_in_both_languages(path):
    claims = hooks.claims_of(path)
    assert claims, f"{path.name} has no tests"
    missing = [c["test"] for c in claims if not c["claim_zh"] or c["claim"] == hooks.readable(str(c["test"]))]
    assert not missing, f"claims without an English docstring line or a `zh:` line: {missing}"


def test_each_cell_names_its_column_for_the_stacked_phone_layout(claims_dir):
    for lang in ("en", "zh"):
        table = hooks.claims_table("09", lang, claims_dir, records=[])
        labels = re.findall(r'<td data-label="([^"]*)">', table)
        assert labels and labels == list(hooks.CLAIMS_TEXT[lang]["head"]) * (len(labels) // 3), labels


# Runs in the page: where the "On a GPU" column is, and whether a reader can see it without scrolling sideways.
GPU_COLUMN = """() => {
  const table = document.querySelector(".claims-table table")
  const box = table.closest(".md-typeset__scrollwrap") || table.parentElement
  const header = table.querySelector("thead th:nth-child(3)")
  const cells = [...table.querySelectorAll("tbody td:nth-child(3)")]
  const seen = el => {
    const r = el.getBoundingClientRect(); return r.width > 1 && r.left >= 0 && r.right <= innerWidth }
  const label = cell => getComputedStyle(cell, "::before").content
  return {
    header: header.textContent, headerSeen: seen(header),
    cellsSeen: cells.filter(seen).length, cells: cells.length,
    labels: [...new Set(cells.map(label))],
    hidden: box.scrollWidth - box.clientWidth,
    sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  }
}"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize(("lang", "prefix"), [("en", ""), ("zh", "zh/")])
def test_the_on_a_gpu_column_is_in_sight_on_a_phone_and_on_a_desktop(browser, base_url, lang, prefix, width):
    if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
        pytest.skip("Debian's chromium is not installed")
    context = browser.new_context(viewport={"width": width, "height": 844}, is_mobile=width < 600)
    page = context.new_page()
    try:
        page.goto(f"{base_url}/{prefix}01-devices/")
        found = page.evaluate(GPU_COLUMN)
    finally:
        context.close()
    name = hooks.CLAIMS_TEXT[lang]["head"][2]
    assert found["header"] == name
    assert found["hidden"] <= 0 and found["sideways"] <= 0, f"the table hides {found['hidden']} px sideways"
    assert found["cellsSeen"] == found["cells"] > 0, found
    if width < 600:  # stacked: the header row is for screen readers; every GPU cell says which column it is
        assert found["labels"] == [f'"{name}{"：" if lang == "zh" else ": "}"'], found["labels"]
    else:
        assert found["headerSeen"] and found["labels"] == ["none"], found
