"""The site serves the course's helper as a wheel in a pip index (tools/helper_wheel.py), and the labs' setup cell
installs it from there when github.com does not answer: tested for real, from the built site served locally,
into a fresh virtual environment."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks  # noqa: E402
import helper_wheel  # noqa: E402

spec = importlib.util.spec_from_file_location("mkdocs_hooks_for_wheel", ROOT / "tools" / "mkdocs_hooks.py")
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)

from devicelab import __version__  # noqa: E402

LINK = re.compile(r'<a href="(devicelab-[^"#]+\.whl)#sha256=([0-9a-f]{64})"')


def test_the_wheels_sources_are_what_pyproject_packages_and_their_digest_follows_them(tmp_path):
    (tmp_path / "devicelab" / "__pycache__").mkdir(parents=True)
    (tmp_path / "devicelab" / "__init__.py").write_text("__version__ = '1'\n")
    (tmp_path / "devicelab" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'devicelab'\n")
    (tmp_path / "README.md").write_text("readme\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("")
    names = [p.relative_to(tmp_path).as_posix() for p in helper_wheel.source_files(tmp_path)]
    assert names == ["README.md", "devicelab/__init__.py", "pyproject.toml"]
    before = helper_wheel.source_digest(tmp_path)
    (tmp_path / "tests" / "test_x.py").write_text("changed")
    assert helper_wheel.source_digest(tmp_path) == before
    (tmp_path / "devicelab" / "__init__.py").write_text("__version__ = '2'\n")
    assert helper_wheel.source_digest(tmp_path) != before


@pytest.mark.parametrize(("setuptools", "wheel", "here"), [
    ("65.5.0", False, False),  # Python 3.11's venv: no bdist_wheel without the wheel package
    ("65.5.0", True, True),
    ("70.1.0", False, True),
    ("84.2.1", False, True),
    (None, False, False),
])
def test_the_wheel_is_built_without_isolation_only_where_setuptools_can_build_it(monkeypatch, setuptools, wheel, here):
    found = {"setuptools": setuptools is not None, "wheel": wheel}
    monkeypatch.setattr(helper_wheel.importlib.util, "find_spec", lambda name: object() if found.get(name) else None)
    monkeypatch.setattr(helper_wheel.importlib.metadata, "version", lambda name: setuptools)
    assert helper_wheel.builds_wheels_here() is here


def test_the_setup_cell_and_the_site_name_the_same_index():
    assert build_notebooks.WHEEL_INDEX == helper_wheel.INDEX + "/"
    config = {"site_url": "https://someone.github.io/fork/"}
    assert hooks.helper_index_url(config) == "https://someone.github.io/fork/simple/"


def test_the_built_site_holds_a_pip_index_with_the_helpers_wheel(site):
    assert '<a href="devicelab/">devicelab</a>' in (site / "simple" / "index.html").read_text(encoding="utf-8")
    page = (site / "simple" / "devicelab" / "index.html").read_text(encoding="utf-8")
    [(name, sha)] = LINK.findall(page)
    wheel = site / "simple" / "devicelab" / name
    assert name == f"devicelab-{__version__}-py3-none-any.whl"
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == sha
    assert 'data-requires-python="&gt;=3.9"' in page
    with zipfile.ZipFile(wheel) as archive:
        files = set(archive.namelist())
    assert {"devicelab/__init__.py", "devicelab/lab.py", "devicelab/data/gpu_captures.json"} <= files
    assert not any("__pycache__" in f or f.startswith("tests/") for f in files)
    assert len(list((site / "simple" / "devicelab").glob("*.whl"))) == 1


@pytest.mark.parametrize(("lang", "says"), [("en", "any Jupyter with CUDA"), ("zh", "任何带 CUDA 的 Jupyter")])
def test_lab_pages_say_where_else_a_lab_runs_and_that_the_helper_comes_from_the_site_too(site, lang, says):
    index = hooks.helper_index_url({"site_url": build_notebooks._address("site_url")})
    folder = "" if lang == "en" else "zh/"
    for kind in ("labs", "solutions"):
        page = (site / folder / kind / "01-devices" / "index.html").read_text(encoding="utf-8")
        line = re.search(r'<span class="lab-elsewhere">(.*?)</span>', page, re.S)
        assert line and says in line.group(1), kind
        assert f"<code>pip install --no-deps --index-url {index} devicelab</code>" in line.group(1)
    home = (site / folder / "index.html").read_text(encoding="utf-8")
    assert {"en": "works outside Colab too", "zh": "在 Colab 之外同样可用"}[lang] in re.sub(r"\s+", " ", home)


def setup_install(lang: str, helper: str, index: str) -> str:
    """The install part of a lab's setup cell (up to its import of the helper), pointed at other addresses."""
    cells = json.loads((ROOT / "labs" / lang / "01-devices.ipynb").read_text(encoding="utf-8"))["cells"]
    setup = "".join(next(c for c in cells if c["cell_type"] == "code")["source"])
    setup = setup.split("from devicelab import ____")[0]
    for name, address in (("HELPER", helper), ("HELPER_INDEX", index)):
        url = next(line for line in setup.splitlines() if line.startswith(f"{name} = ")).split('"')[1]
        setup = setup.replace(f'{name} = "{url}"', f'{name} = "{address}"')
    return setup + "\nimport devicelab\nprint('HELPER FROM', devicelab.__file__, devicelab.__version__)\n"


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory) -> Path:
    """The interpreter of a new virtual environment with pip and nothing else (no devicelab, no torch)."""
    venv = tmp_path_factory.mktemp("learner") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    return venv / "bin" / "python"


@pytest.mark.parametrize(
    ("lang", "repository"),
    [("en", "git+https://course-helper.invalid/labs"),  # github.com does not answer: the name does not resolve
     ("zh", "git+{base}/not-a-repository")],  # the host answers, the install from it fails
    ids=["en-unreachable", "zh-install-fails"],
)
def test_the_setup_cell_installs_the_helper_from_the_site_when_github_does_not_answer(
        base_url, fresh_python, tmp_path, lang, repository):
    subprocess.run([str(fresh_python), "-m", "pip", "uninstall", "-y", "-q", "devicelab"], capture_output=True)
    code = setup_install(lang, repository.format(base=base_url), f"{base_url}/simple/")
    done = subprocess.run([str(fresh_python), "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    said = {"en": "The helper could not be installed from GitHub: it was installed from the course's site.",
            "zh": "无法从 GitHub 安装课程辅助包，已改从课程网站安装。"}[lang]
    lines = done.stdout.strip().splitlines()
    assert lines[0] == said, done.stdout
    where, version = lines[-1].removeprefix("HELPER FROM ").rsplit(" ", 1)
    assert where.startswith(str(fresh_python.parent.parent)) and version == __version__, lines[-1]
