"""Solution pages show the outputs of a real run of the current notebook; student pages show none.

The store (solutions/executed/, written by tools/execute_solutions.py) must hold a fresh run of every
solution notebook, whatever chapters exist; the built pages must carry the key of the code that ran.
"""

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


executed = load("execute_solutions", ROOT / "tools" / "execute_solutions.py")
hooks = load("mkdocs_hooks", ROOT / "tools" / "mkdocs_hooks.py")

NOTEBOOKS = executed.solution_notebooks()
IDS = [f"{p.parent.name}/{p.stem}" for p in NOTEBOOKS]
CHECK_CALL = re.compile(r"^\s*\w+\.check\(\)\s*$", re.M)


def page_dir(notebook: Path, kind: str = "solutions") -> str:
    lang = notebook.parent.name
    return f"{'' if lang == 'en' else lang + '/'}{kind}/{notebook.stem}"


def text_of(outputs: list[dict]) -> str:
    parts = []
    for output in outputs:
        parts.append("".join(output.get("text", "")))
        parts.append("".join(output.get("data", {}).get("text/plain", "")))
    return "".join(parts)


# ------------------------------------------------------------------------------------------ the store

@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_every_solution_notebook_has_a_fresh_stored_run(notebook):
    reason = executed.staleness(notebook)
    assert reason is None, (
        f"{executed.store_path(notebook).relative_to(ROOT)} is stale: {reason}. Run `make outputs` "
        "and commit solutions/executed/ (a build would otherwise execute it, slowly)."
    )


def test_the_store_holds_no_run_of_a_notebook_that_is_gone():
    assert executed.strays() == []


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_the_stored_run_shows_environment_reproduce_checks_and_plot(notebook):
    stored = executed.read_json(executed.store_path(notebook))
    code = [c for c in stored["cells"] if c["cell_type"] == "code"]
    assert "torch" in text_of(code[0]["outputs"]), "the setup cell prints the environment"
    for cell in code:
        source = "".join(cell["source"])
        assert not any(o.get("output_type") == "error" for o in cell["outputs"]) or "raises-exception" in (
            cell.get("metadata", {}).get("tags", [])), f"a cell failed:\n{source[:300]}"
        if "@lab.reproduce(" in source:
            assert text_of(cell["outputs"]).strip(), f"a reproduce step printed nothing:\n{source[:300]}"
        if CHECK_CALL.search(source):
            assert "✅" in text_of(cell["outputs"]), f"a check did not pass:\n{source[:300]}"
    plots = [o for c in code if "plot_training(" in "".join(c["source"])
             for o in c["outputs"] if "image/png" in o.get("data", {})]
    assert plots, "the proof draws its plot"
    for plot in plots:
        png = "".join(plot["data"]["image/png"])
        assert 2_000 < len(png) * 3 // 4 < 60_000, "a PNG of a few tens of KB"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_the_stored_run_says_where_it_ran(notebook):
    ran = executed.read_json(executed.store_path(notebook))["metadata"][executed.META]["ran_on"]
    assert ran["device"] and ran["torch"] and re.fullmatch(r"\d{4}-\d\d-\d\d", ran["date"])
    assert ran["device"] != "cuda" or ran["gpu"], "a GPU run names its GPU"


def test_stored_runs_hold_no_machine_paths():
    for entry in sorted(executed.STORE.glob("*/*.ipynb")):
        text = entry.read_text(encoding="utf-8")
        assert str(ROOT) not in text and str(Path.home()) + "/" not in text, entry


# --------------------------------------------------------------------------- what makes a run stale

def fake_course(tmp_path: Path) -> tuple[Path, dict]:
    """A tiny course: one solution notebook, one helper file, one data file, and a fresh stored run of it."""
    (tmp_path / "devicelab" / "data").mkdir(parents=True)
    (tmp_path / "devicelab" / "lab.py").write_text("X = 1\n")
    (tmp_path / "devicelab" / "data" / "gpu_captures.json").write_text("{}\n")
    notebook = tmp_path / "solutions" / "en" / "01-x.ipynb"
    notebook.parent.mkdir(parents=True)
    cells = [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": ["# Title"]},
             {"cell_type": "code", "id": "c", "metadata": {}, "execution_count": None, "outputs": [],
              "source": ['HELPER = "git+https://example.org/a"\n', "print(1)"]}]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    notebook.write_text(json.dumps(nb))
    helper = {name: executed.sha256((tmp_path / name).read_bytes())
              for name in ("devicelab/lab.py", "devicelab/data/gpu_captures.json")}
    ran = json.loads(json.dumps(nb))
    ran["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1\n"}]
    ran["metadata"][executed.META] = {"code_sha256": executed.code_hash(nb), "helper_sha256": helper,
                                      "ran_on": {"device": "cpu", "gpu": "", "torch": "2.14.1", "date": "2026-11-30"}}
    return notebook, ran


def edit_cell(notebook: Path, index: int, source: str) -> None:
    nb = json.loads(notebook.read_text())
    nb["cells"][index]["source"] = [source]
    notebook.write_text(json.dumps(nb))


def test_a_fresh_run_is_fresh(tmp_path):
    notebook, ran = fake_course(tmp_path)
    assert executed.staleness(notebook, ran, root=tmp_path) is None


def test_editing_markdown_keeps_the_run_fresh_and_the_page_shows_the_new_text(tmp_path):
    notebook, ran = fake_course(tmp_path)
    edit_cell(notebook, 0, "# A better title")
    assert executed.staleness(notebook, ran, root=tmp_path) is None
    shown = executed.graft(json.loads(notebook.read_text()), ran)
    assert shown["cells"][0]["source"] == ["# A better title"]
    assert shown["cells"][1]["outputs"][0]["text"] == "1\n"


def test_editing_code_makes_the_run_stale(tmp_path):
    notebook, ran = fake_course(tmp_path)
    edit_cell(notebook, 1, "print(2)")
    assert "code changed" in executed.staleness(notebook, ran, root=tmp_path)
    with pytest.raises(ValueError, match="other code"):
        executed.graft(json.loads(notebook.read_text()), ran)


def test_a_fork_s_install_address_keeps_the_run_fresh(tmp_path):
    notebook, ran = fake_course(tmp_path)
    edit_cell(notebook, 1, 'HELPER = "git+https://github.com/someone/fork"\nprint(1)')
    assert executed.staleness(notebook, ran, root=tmp_path) is None


def test_editing_an_imported_helper_file_makes_the_run_stale(tmp_path):
    notebook, ran = fake_course(tmp_path)
    (tmp_path / "devicelab" / "lab.py").write_text("X = 2\n")
    assert "devicelab/lab.py changed" in executed.staleness(notebook, ran, root=tmp_path)


def test_new_gpu_captures_make_the_run_stale(tmp_path):
    notebook, ran = fake_course(tmp_path)
    (tmp_path / "devicelab" / "data" / "gpu_captures.json").write_text('{"captures": []}\n')
    assert "gpu_captures.json changed" in executed.staleness(notebook, ran, root=tmp_path)
    (tmp_path / "devicelab" / "data" / "gpu_captures.json").write_text("{}\n")
    (tmp_path / "devicelab" / "data" / "corpus.json").write_text("[]\n")
    assert "devicelab/data has a file" in executed.staleness(notebook, ran, root=tmp_path)


def test_a_helper_file_the_run_did_not_import_does_not_matter(tmp_path):
    notebook, ran = fake_course(tmp_path)
    (tmp_path / "devicelab" / "grading.py").write_text("Y = 1\n")
    assert executed.staleness(notebook, ran, root=tmp_path) is None


def test_a_build_that_requires_stored_runs_fails_clearly_on_a_stale_one(monkeypatch):
    from mkdocs.exceptions import PluginError

    monkeypatch.setattr(hooks.execute_solutions, "staleness", lambda notebook: "its code changed")
    with pytest.raises(PluginError, match="make outputs"):
        hooks.stored_outputs(NOTEBOOKS[0], mode="require")


def test_outputs_lose_this_machine_s_paths():
    said = executed.scrub(f"File {ROOT}/devicelab/lab.py, line 3")
    assert str(ROOT) not in said and "<course>/devicelab/lab.py" in said


def test_consecutive_prints_become_one_output():
    outputs = [{"output_type": "stream", "name": "stdout", "text": "epoch 1\n"},
               {"output_type": "stream", "name": "stdout", "text": "epoch 2\n"},
               {"output_type": "stream", "name": "stderr", "text": "warning\n"}]
    merged = executed._coalesce_streams(outputs)
    assert [o["text"] for o in merged] == ["epoch 1\nepoch 2\n", "warning\n"]


CPU_RUN = {"device": "cpu", "gpu": "", "torch": "2.14.1", "date": "2026-11-30"}
GPU_RUN = {"device": "cuda", "gpu": "NVIDIA H200", "torch": "2.11.0+cu130", "date": "2026-11-29"}


@pytest.mark.parametrize(("ran", "lang", "said"), [
    (CPU_RUN, "en", "ran on CPU, torch 2.14.1, 2026-11-30"),
    (GPU_RUN, "en", "ran on NVIDIA H200, torch 2.11.0+cu130, 2026-11-29"),
    (CPU_RUN, "zh", "运行于 CPU，torch 2.14.1，2026-11-30"),
    (GPU_RUN, "zh", "运行于 NVIDIA H200，torch 2.11.0+cu130，2026-11-29"),
])
def test_the_ran_on_line_names_the_device_torch_and_date(ran, lang, said):
    line = hooks.ran_on_line({"ran_on": ran, "code_sha256": "abc"}, lang)
    assert said in line and 'data-outputs-code="abc"' in line


# ------------------------------------------------------------------------------------------- the plot

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_plot_draws_the_numbers_it_is_given_with_labels_in_the_page_s_language(lang):
    import matplotlib

    matplotlib.use("Agg")
    from devicelab import plotting

    figure = plotting.plot_training([1.0, 0.5, 0.25], [0.3, 0.8, 0.9], lang=lang)
    left, right = figure.axes
    assert list(left.lines[0].get_ydata()) == [1.0, 0.5, 0.25]
    assert list(right.lines[0].get_ydata()) == [0.3, 0.8, 0.9]
    chinese = lang == "zh" and plotting._cjk_font() is not None
    assert left.get_ylabel() == ("损失" if chinese else "loss")
    assert left.get_xlabel() == ("轮次" if chinese else "epoch")


def test_without_a_chinese_font_the_chinese_plot_has_english_labels(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from devicelab import plotting

    monkeypatch.setattr(plotting, "_cjk_font", lambda: None)
    figure = plotting.plot_training([1.0, 0.5], lang="zh", xlabel="step")
    assert figure.axes[0].get_ylabel() == "loss" and figure.axes[0].get_xlabel() == "step"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_resumed_run_is_marked_where_it_resumed_with_a_legend_entry_that_says_so(lang):
    import matplotlib

    matplotlib.use("Agg")
    from devicelab import plotting

    figure = plotting.plot_training([1.0, 0.6, 0.4, 0.3, 0.2], lang=lang, resumed_after=3)
    [axis] = figure.axes  # the loss only: one axis
    marks = [line for line in axis.lines if list(line.get_xdata()) == [3.5, 3.5]]
    assert len(marks) == 1 and marks[0].get_linestyle() == "--"  # between epoch 3 and epoch 4
    chinese = lang == "zh" and plotting._cjk_font() is not None
    legend = [entry.get_text() for entry in axis.get_legend().get_texts()]
    assert ("从检查点恢复训练" if chinese else "resumed from the checkpoint") in legend
    with pytest.raises(ValueError):
        plotting.plot_training([1.0, 0.5], resumed_after=2)  # no point after it


def test_the_plot_refuses_what_no_run_prints():
    from devicelab import plotting

    with pytest.raises(ValueError):
        plotting.plot_training([])
    with pytest.raises(ValueError):
        plotting.plot_training([1.0, float("nan")])


# ------------------------------------------------------------------------------------- the built site

@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_a_solution_page_shows_the_outputs_of_the_current_notebook(site, notebook):
    page = (site / page_dir(notebook) / "index.html").read_text(encoding="utf-8")
    key = re.search(r'class="solution-ran-on" data-outputs-code="([0-9a-f]+)"', page)
    assert key, "the page says where its outputs ran"
    assert key.group(1) == executed.code_hash(executed.read_json(notebook)), (
        "the page shows the outputs of another version of the notebook")
    stored = executed.read_json(executed.store_path(notebook))
    assert stored["metadata"][executed.META]["code_sha256"] == key.group(1)
    assert 'src="data:image/png;base64,' in page, "the proof's plot"
    assert "✅" in page


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_a_student_page_shows_no_outputs(site, notebook):
    page = (site / page_dir(notebook, "labs") / "index.html").read_text(encoding="utf-8")
    assert "solution-ran-on" not in page
    assert "jp-OutputArea-output" not in page


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_a_solution_page_downloads_the_committed_notebook(site, notebook):
    downloaded = site / page_dir(notebook) / notebook.name
    assert downloaded.read_bytes() == notebook.read_bytes()


@pytest.mark.parametrize("kind", ["labs", "solutions"])
def test_a_notebook_page_shows_each_cell_s_code_once(site, kind):
    page = (site / kind / "01-devices" / "index.html").read_text(encoding="utf-8")
    assert "clipboard-copy-txt" not in page, "mkdocs-jupyter's hidden copy of the code would show as a paragraph"
    assert re.sub(r"<[^>]+>", "", page).count("def make_points(") == 1
