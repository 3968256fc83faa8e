"""tools/verify_on_gpu.ipynb: on a machine without CUDA or MPS it runs top to bottom as a dry run and stops cleanly."""

import json
import re
from pathlib import Path

import nbformat
import pytest
import torch
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "tools" / "verify_on_gpu.ipynb"


def has_accelerator() -> bool:
    return torch.cuda.is_available() or torch.backends.mps.is_available()


@pytest.mark.skipif(has_accelerator(), reason="on a GPU the notebook clones the course and runs the real check")
def test_the_notebook_runs_as_a_dry_run_in_a_real_kernel_without_a_gpu(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}},
                   extra_arguments=["--IPKernelApp.log_level=ERROR"]).execute()
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert not any(o.get("output_type") == "error" for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "Nothing can be verified without a GPU: this is a dry run." in printed
    assert "Dry run finished: no archive was made, and nothing was verified." in printed
    assert "would run, in the course's folder:" in printed and "tools/gpu_check.py --device cuda --archive" in printed
    assert not list(tmp_path.iterdir()), "a dry run writes nothing"


def test_the_notebook_is_committed_clean_and_fetches_the_course_repository():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    first = "".join(code[0]["source"])
    repo_url = re.search(r'^repo_url: .*"(https://[^"]+)"', (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert f'REPO_URL = "{repo_url.group(1)}"' in first
    assert 'COMMIT = ""' in first and "DRY_RUN = False" in first
    assert nb["metadata"]["accelerator"] == "GPU"
    source = "".join("".join(c["source"]) for c in code)
    assert "tools/gpu_check.py" in source and "--archive" in source
    assert "keep-torch.txt" in source, "the install must never replace the runtime's torch"
