"""MkDocs hook: the course's helper package, as a wheel in a pip index on the site itself.

The labs' setup cell installs the helper from the repository (`pip install git+https://github.com/...`); where
github.com does not answer (from mainland China, often), it installs the same helper from the site:

    pip install --no-deps --index-url <site_url>simple/ devicelab

simple/ is a PEP 503 "simple" index, two static pages and the wheel, which any static host (GitHub Pages,
`mkdocs serve`) serves as it is. The wheel is built from this checkout at every site build (`pip wheel
--no-deps`, from a clean copy of what pyproject.toml packages), and kept in .cache/helper-wheel/ under the
digest of those files, so a rebuild that changed none of them (`mkdocs serve`) reuses it at once.
"""

from __future__ import annotations

import hashlib
import html
import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "helper-wheel"
INDEX = "simple"  # tools/build_notebooks.py: WHEEL_INDEX, the setup cell's HELPER_INDEX
PROJECT = "devicelab"
# What the wheel is built from: pyproject.toml names the package folder and the README as its description.
SOURCES = ("pyproject.toml", "README.md", PROJECT)
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


def source_files(root: Path = ROOT) -> list[Path]:
    """The files the wheel is built from, sorted."""
    found = []
    for name in SOURCES:
        path = root / name
        if path.is_dir():
            found += [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                      and p.suffix != ".pyc"]
        elif path.is_file():
            found.append(path)
    return sorted(found)


def source_digest(root: Path = ROOT) -> str:
    """The SHA-256 of the wheel's sources (their paths and contents)."""
    digest = hashlib.sha256()
    for path in source_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def build_wheel(root: Path = ROOT, cache: Path = CACHE) -> Path:
    """The helper's wheel built from `root`: from the cache when its sources have not changed."""
    folder = cache / source_digest(root)[:16]
    built = sorted(folder.glob(f"{PROJECT}-*.whl"))
    if built:
        return built[0]
    with tempfile.TemporaryDirectory(prefix="helper-wheel-") as scratch:
        # a clean copy: setuptools builds in the tree it is given, and a build/ left in the checkout
        # would put the files of deleted modules into the next wheel
        source = Path(scratch) / "source"
        source.mkdir()
        for name in SOURCES:
            path = root / name
            if path.is_dir():
                shutil.copytree(path, source / name, ignore=_SKIP)
            else:
                shutil.copy2(path, source / name)
        out = Path(scratch) / "out"
        # Where this environment's setuptools can build a wheel by itself, build without fetching it from the
        # package index; elsewhere (no setuptools, or a venv's older one without the `wheel` package) pip
        # fetches a current one, as for `pip install -e .`
        isolation = ["--no-build-isolation"] if builds_wheels_here() else []
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-q", *isolation,
             "-w", str(out), str(source)],
            capture_output=True, text=True,
        )
        wheels = sorted(out.glob(f"{PROJECT}-*.whl"))
        if done.returncode != 0 or len(wheels) != 1:
            raise RuntimeError(f"pip wheel could not build the helper's wheel:\n{(done.stderr or done.stdout)[-3000:]}")
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f"{wheels[0].name}.partial"
        shutil.copy2(wheels[0], partial)
        partial.replace(folder / wheels[0].name)  # two builds may run at once
    return folder / wheels[0].name


def builds_wheels_here() -> bool:
    """True when this environment's setuptools builds a wheel without anything more: it has `bdist_wheel` itself
    (setuptools 70.1 and later) or the `wheel` package is installed beside it."""
    if importlib.util.find_spec("setuptools") is None:
        return False
    if importlib.util.find_spec("wheel") is not None:
        return True
    try:
        parts = importlib.metadata.version("setuptools").split(".")[:2]
        return (int(parts[0]), int(re.match(r"\d+", parts[1])[0])) >= (70, 1)
    except (importlib.metadata.PackageNotFoundError, ValueError, TypeError, IndexError):
        return False


def requires_python(root: Path = ROOT) -> str | None:
    """pyproject.toml's requires-python, for the index's data-requires-python (None where tomllib is missing)."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11: pip reads it from the wheel's metadata anyway
        return None
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"].get("requires-python")


def write_index(site: Path, wheel: Path) -> Path:
    """The pip index simple/ in the built site, holding the wheel; returns the wheel's place there."""
    project = site / INDEX / PROJECT
    project.mkdir(parents=True, exist_ok=True)
    for old in project.glob(f"{PROJECT}-*.whl"):
        if old.name != wheel.name:
            old.unlink()
    target = project / wheel.name
    shutil.copy2(wheel, target)
    sha = hashlib.sha256(target.read_bytes()).hexdigest()
    head = '<!DOCTYPE html>\n<html><head><meta name="pypi:repository-version" content="1.0"><title>{}</title></head>'
    (site / INDEX / "index.html").write_text(
        head.format("Simple index") + f'<body>\n<a href="{PROJECT}/">{PROJECT}</a>\n</body></html>\n',
        encoding="utf-8")
    name = html.escape(wheel.name)
    python = requires_python()
    needs = f' data-requires-python="{html.escape(python)}"' if python else ""
    (project / "index.html").write_text(
        head.format(f"Links for {PROJECT}")
        + f'<body>\n<h1>Links for {PROJECT}</h1>\n<a href="{name}#sha256={sha}"{needs}>{name}</a>\n</body></html>\n',
        encoding="utf-8")
    return target


def on_post_build(config) -> None:
    """Put the helper's wheel, in its pip index, into the built site: once, at its root (the setup cell asks
    <site_url>simple/), not again in each other language's folder."""
    if (config["theme"].get("language") or "en") != "en":
        return
    write_index(Path(config["site_dir"]), build_wheel())
