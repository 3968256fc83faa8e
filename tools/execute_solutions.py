"""Execute the solution notebooks and keep their outputs in a store, keyed by what makes outputs stale.

The solution pages of the site show these outputs: the environment line, each reproduce step's outcome,
each check's verdict and the proof with its plot, as a real run of the notebook printed them.

    solutions/executed/<lang>/<lab>.ipynb    the executed notebook (committed: the site build stays warm)

An entry is fresh when both still hold:
  - the notebook's code cells are the ones that ran (markdown is not part of the key: it does not run, and
    the page always shows the current markdown with the stored outputs grafted onto the code cells);
  - every file of the helper package that the run imported (recorded by the run itself, from
    sys.modules), and every file of devicelab/data/ (the GPU captures the CPU path prints), is unchanged.
The environment (torch version, CPU or GPU) is not part of the key: it is what the page states ("ran on: ...").
An entry run by the GPU check is kept until it goes stale; `make outputs` re-executes only stale entries.

Usage:  make outputs                      (python tools/execute_solutions.py: execute stale/missing entries)
        python tools/execute_solutions.py --check     (list stale entries; exit 1 if any)
        python tools/execute_solutions.py --lab 01-devices --force
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
# DEVICELAB_OUTPUTS_STORE points elsewhere for a measurement with an empty store (tools/benchmark.py).
STORE = Path(os.environ.get("DEVICELAB_OUTPUTS_STORE") or SOLUTIONS / "executed")
DATA = ROOT / "devicelab" / "data"
LANGS = ("en", "zh")
META = "devicelab_outputs"  # the store notebook's metadata key
TIMEOUT_S = 300  # per cell

# The setup cell's install address changes with the repository a fork builds from; a run in a clone never uses it.
_HELPER_LINE = re.compile(r'^HELPER = "[^"]*"', re.M)

# Appended to the notebook for the run only: what the run imported from the helper, and where it ran.
_PROBE = '''\
import json as _json, sys as _sys, torch as _torch
_device = globals().get("device", _torch.device("cpu"))
print("DEVICELAB-OUTPUTS-PROBE " + _json.dumps({
    "modules": sorted({m.__file__ for n, m in list(_sys.modules.items())
                       if (n == "devicelab" or n.startswith("devicelab.")) and getattr(m, "__file__", None)}),
    "device": str(getattr(_device, "type", _device)),
    "gpu": _torch.cuda.get_device_name(0) if str(getattr(_device, "type", "")) == "cuda" else "",
    "torch": _torch.__version__,
}))'''
_PROBE_MARK = "DEVICELAB-OUTPUTS-PROBE "


def sha256(data: bytes) -> str:
    """The hex SHA-256 of some bytes."""
    return hashlib.sha256(data).hexdigest()


def solution_notebooks() -> list[Path]:
    """Every generated solution notebook, both languages, whatever chapters exist."""
    return sorted(p for lang in LANGS for p in (SOLUTIONS / lang).glob("*.ipynb"))


def store_path(notebook: Path) -> Path:
    """Where the executed copy of a solution notebook is kept."""
    notebook = notebook.resolve()
    return STORE / notebook.parent.name / notebook.name


def code_sources(nb: dict) -> list[str]:
    """The code cells' sources, in order, as they run (the setup cell's install address left out)."""
    sources = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            text = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            sources.append(_HELPER_LINE.sub('HELPER = "…"', text))
    return sources


def code_hash(nb: dict) -> str:
    """The key of a notebook's code: its code cells' sources, in order."""
    return sha256(json.dumps(code_sources(nb), ensure_ascii=False).encode())


def helper_files(imported: list[str]) -> dict[str, str]:
    """{path relative to the repository: SHA-256} of the helper files a run depends on (imported + data)."""
    files = {Path(p).resolve() for p in imported} | {p.resolve() for p in DATA.rglob("*") if p.is_file()}
    found = {}
    for path in sorted(files):
        try:
            name = path.relative_to(ROOT).as_posix()
        except ValueError:
            raise RuntimeError(f"the run imported the helper from {path}, not from this repository") from None
        found[name] = sha256(path.read_bytes())
    return found


def read_json(path: Path) -> dict:
    """A notebook file as a dict."""
    return json.loads(path.read_text(encoding="utf-8"))


def staleness(notebook: Path, stored: dict | None = None, root: Path = ROOT) -> str | None:
    """Why the stored outputs of a solution notebook would not be its outputs, or None when they are fresh."""
    notebook = notebook.resolve()
    entry = store_path(notebook)
    if stored is None:
        if not entry.exists():
            return "no stored execution"
        stored = read_json(entry)
    meta = stored.get("metadata", {}).get(META)
    if not meta:
        return "the stored notebook has no execution record"
    if meta.get("code_sha256") != code_hash(read_json(notebook)):
        return "its code changed since the stored execution"
    for name, digest in meta.get("helper_sha256", {}).items():
        path = root / name
        if not path.exists() or sha256(path.read_bytes()) != digest:
            return f"{name} changed since the stored execution"
    data_now = {p.relative_to(root).as_posix() for p in (root / "devicelab" / "data").rglob("*") if p.is_file()}
    if data_now - set(meta.get("helper_sha256", {})):
        return "devicelab/data has a file the stored execution did not have"
    return None


def scrub(text: str) -> str:
    """Outputs without this machine's paths (the repository's, the interpreter's)."""
    for path, name in ((str(Path(sys.prefix)), "<venv>"), (str(ROOT), "<course>"), (str(Path.home()), "~")):
        if path and path != "/":
            text = text.replace(path, name)
    return text


def _coalesce_streams(outputs: list[dict]) -> list[dict]:
    """Consecutive prints to one stream as one output (a training loop prints in several messages)."""
    merged: list[dict] = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (previous is not None and output.get("output_type") == "stream" == previous.get("output_type")
                and output.get("name") == previous.get("name")):
            previous["text"] = "".join(previous["text"]) + "".join(output["text"])
        else:
            merged.append(output)
    return merged


def _scrub_outputs(outputs: list[dict]) -> None:
    for output in outputs:
        if "text" in output:
            text = output["text"] if isinstance(output["text"], str) else "".join(output["text"])
            output["text"] = scrub(text)
        if "traceback" in output:
            output["traceback"] = [scrub(line) for line in output["traceback"]]
        for mime, value in output.get("data", {}).items():
            if mime.startswith("text/") and isinstance(value, (str, list)):
                output["data"][mime] = scrub(value if isinstance(value, str) else "".join(value))


def execute(notebook: Path, timeout: int = TIMEOUT_S, env: dict[str, str] | None = None) -> dict:
    """Run one solution notebook in a fresh kernel (from its folder, as a reader would); return it executed.

    `env` is the kernel's environment (default: this process's). A cell that raises fails the run, except
    one tagged raises-exception (as under nbval).
    """
    import nbformat
    from nbclient import NotebookClient

    notebook = notebook.resolve()
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(_PROBE, id="devicelab-outputs-probe"))
    # The plot as an image output, whatever backend the caller's environment names.
    env = {**(os.environ if env is None else env), "MPLBACKEND": "module://matplotlib_inline.backend_inline",
           "PYTHONUNBUFFERED": "1"}
    start = time.monotonic()
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(notebook.parent)}},
                   extra_arguments=["--IPKernelApp.log_level=ERROR"]).execute(env=env)  # no transport warning
    seconds = time.monotonic() - start
    probe = nb.cells.pop()
    text = "".join(o.get("text", "") for o in probe.outputs if o.get("output_type") == "stream")
    found = json.loads(text.split(_PROBE_MARK, 1)[1].splitlines()[0])
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = _coalesce_streams(cell.outputs)
            _scrub_outputs(cell.outputs)
    nb.metadata[META] = {
        "notebook": notebook.relative_to(ROOT).as_posix(),
        "code_sha256": code_hash(read_json(notebook)),
        "helper_sha256": helper_files(found["modules"]),
        "ran_on": {
            "device": found["device"],
            "gpu": found["gpu"],
            "torch": found["torch"],
            "date": datetime.now(timezone.utc).date().isoformat(),
            "seconds": round(seconds, 1),
        },
    }
    return json.loads(nbformat.writes(nb))


def write_entry(notebook: Path, executed: dict) -> Path:
    """Write an executed notebook into the store, atomically (two builds may run at once)."""
    entry = store_path(notebook)
    entry.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(executed, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=entry.parent, delete=False, suffix=".tmp") as tmp:
        tmp.write(text)
    os.chmod(tmp.name, 0o644)
    os.replace(tmp.name, entry)
    return entry


def refresh(notebook: Path, force: bool = False, log=print) -> dict:
    """The fresh stored execution of a solution notebook, executing it (and storing the run) when needed."""
    reason = "forced" if force else staleness(notebook)
    if reason is None:
        return read_json(store_path(notebook))
    name = notebook.relative_to(ROOT).as_posix()
    log(f"executing {name} ({reason}): this takes a while")
    executed = execute(notebook)
    write_entry(notebook, executed)
    log(f"executed {name} in {executed['metadata'][META]['ran_on']['seconds']} s")
    return executed


def strays() -> list[Path]:
    """Store entries whose solution notebook no longer exists."""
    return sorted(p for p in STORE.glob("*/*.ipynb")
                  if not (SOLUTIONS / p.parent.name / p.name).exists())


def graft(notebook: dict, executed: dict) -> dict:
    """The current notebook (its markdown as it is now) with the stored run's outputs on its code cells."""
    if code_hash(notebook) != executed.get("metadata", {}).get(META, {}).get("code_sha256"):
        raise ValueError("the stored execution ran other code than this notebook's")
    shown = copy.deepcopy(notebook)
    ran = iter(c for c in executed["cells"] if c["cell_type"] == "code")
    for cell in shown["cells"]:
        if cell["cell_type"] == "code":
            done = next(ran)
            cell["outputs"] = done.get("outputs", [])
            cell["execution_count"] = done.get("execution_count")
    shown["metadata"][META] = executed["metadata"][META]
    return shown


def main() -> int:
    """Execute stale or missing entries of the store (or, with --check, only list them)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list stale entries and fail if there is one")
    parser.add_argument("--force", action="store_true", help="execute even fresh entries (on this machine)")
    parser.add_argument("--lab", help="only this lab (e.g. 01-devices)")
    args = parser.parse_args()
    notebooks = [p for p in solution_notebooks() if not args.lab or p.stem == args.lab]
    if args.check:
        stale = [(p, staleness(p)) for p in notebooks]
        stale = [(p, why) for p, why in stale if why]
        for path, why in stale:
            print(f"stale: {store_path(path).relative_to(ROOT)}: {why}")
        for path in strays():
            print(f"stray: {path.relative_to(ROOT)}: its solution notebook is gone")
        if stale or strays():
            print("run: make outputs")
        return 1 if stale or strays() else 0
    start = time.monotonic()
    failed = []
    for notebook in notebooks:
        try:
            refresh(notebook, force=args.force)
        except Exception as error:  # noqa: BLE001 - report every failing notebook, then fail
            failed.append(f"{notebook.relative_to(ROOT)}: {type(error).__name__}: {str(error)[-1500:]}")
    if not args.lab:
        for path in strays():
            path.unlink()
            print(f"removed {path.relative_to(ROOT)}: its solution notebook is gone")
    print(f"store up to date in {time.monotonic() - start:.0f} s" if not failed else "\n\n".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
