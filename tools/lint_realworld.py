"""Measure `devicelab lint` on real code: recall on public fix commits, precision on whole repositories.

    python tools/lint_realworld.py --fixes                 # recall on fixed bugs, dev and heldout
    python tools/lint_realworld.py --repos MIRROR_ROOT     # precision per rule, dev and heldout
    python tools/lint_realworld.py --label-dev MIRROR_ROOT # dev findings without a label, with context

The corpus is tests/lint/realworld/ (see its README.md): fixes.json and fixes/ (the files at the parent of each
fix commit), repos.json (repositories pinned to a commit; their code is not stored here: each is exported from
a local git mirror) and labels.json (a verdict for each finding on those repositories).

The held-out half is measured, never shown: for it this tool prints counts, ids, paths and line numbers, never
source text.

The linter is run as a program (`python -m devicelab lint --format json`) from --linter-root (default: the
checkout this tool is in) with --python (default: this interpreter), so another checkout can be measured on the
same corpus.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "tests" / "lint" / "realworld"
SPLITS = ("dev", "heldout")


def load(name: str) -> list[dict]:
    path = CORPUS / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def run_linter(paths: list[str], args: argparse.Namespace, cwd: str | None = None) -> list[dict]:
    """The linter's JSON findings for the files or folders given (exit status 1 just means "findings")."""
    env = dict(os.environ, PYTHONPATH=str(args.linter_root), DEVICELAB_LANG="en", PYTHONDONTWRITEBYTECODE="1")
    select = ["--select", args.select] if getattr(args, "select", None) else []
    command = [args.python, "-m", "devicelab", "lint", "--format", "json", "--lang", "en", *select, *paths]
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd or str(args.linter_root), env=env)
    if done.returncode not in (0, 1):
        raise SystemExit(f"the linter failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    try:
        return json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        raise SystemExit(f"the linter's output is not JSON:\n{done.stdout[:2000]}\n{done.stderr[-2000:]}") from None


def pct(num: int, den: int) -> str:
    return f"{num}/{den} = {100 * num / den:.0f}%" if den else "0/0"


# ---------------------------------------------------------------------------------------------------------- fixes

def fixes_in_project(fixes: list[dict], args: argparse.Namespace) -> dict[str, list[dict]]:
    """Each fix's file linted where it lives: the repository at the fix's parent commit is exported from its mirror,
    and the linter is given the file alone, with its project around it (the neighbours and the imported modules the
    rules read), as a user who lints the project would. Keyed like the stored files; a fix whose repository has no
    mirror, or whose exported file differs from the stored one, is linted as stored and named."""
    by_file: dict[str, list[dict]] = defaultdict(list)
    alone = []
    with tempfile.TemporaryDirectory(prefix="devicelab-fixes-") as tmp:
        for fix in fixes:
            stored = CORPUS / fix["file"]
            git_dir = find_git_dir(Path(args.fixes_mirror_root), fix["repo"])
            root = Path(tmp) / fix["id"]
            if git_dir is not None:
                try:
                    export_tree(git_dir, fix["parent_commit"], root)
                except subprocess.CalledProcessError:
                    git_dir = None
            exported = root / fix["path"]
            if git_dir is None or not exported.is_file() or exported.read_bytes() != stored.read_bytes():
                alone.append(fix)
                continue
            for finding in run_linter([str(exported)], args, cwd=str(root)):
                if Path(finding["path"]).resolve() == exported.resolve():
                    by_file[str(stored.resolve())].append(finding)
            shutil.rmtree(root, ignore_errors=True)
        if alone:
            print("   linted as stored (no mirror, or the file differs): " + ", ".join(f["id"] for f in alone))
            for finding in run_linter([str(CORPUS / f["file"]) for f in alone], args):
                by_file[str(Path(finding["path"]).resolve())].append(finding)
    return by_file


def measure_fixes(args: argparse.Namespace) -> dict:
    fixes = load("fixes.json")
    if args.fixes_mirror_root:
        by_file = fixes_in_project(fixes, args)
    else:
        by_file = defaultdict(list)
        for finding in run_linter([str(CORPUS / fix["file"]) for fix in fixes], args):
            by_file[str(Path(finding["path"]).resolve())].append(finding)
    result: dict = {"splits": {}}
    for split in SPLITS:
        chosen = [fix for fix in fixes if fix["split"] == split]
        hits, misses = [], []
        per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for fix in chosen:
            mine = by_file[str((CORPUS / fix["file"]).resolve())]
            wanted = {line + d for line in fix["bug_lines"] for d in (-1, 0, 1)}
            codes = sorted({f["code"] for f in mine if f["line"] in wanted and f.get("cell") is None})
            per_kind[fix["kind"]][1] += 1
            if codes:
                hits.append((fix["id"], codes))
                per_kind[fix["kind"]][0] += 1
            else:
                misses.append((fix["id"], sorted({f["code"] for f in mine})))
        result["splits"][split] = {"hits": hits, "misses": misses, "per_kind": dict(per_kind)}
        where = " (each file in its project)" if args.fixes_mirror_root else ""
        print(f"== recall on fixed bugs{where}, {split}: {pct(len(hits), len(chosen))}")
        for kind, (hit, total) in sorted(per_kind.items()):
            print(f"   {kind:28s} {hit}/{total}")
        print("   hits:   " + (", ".join(f"{i} ({'+'.join(c)})" for i, c in hits) or "none"))
        print("   misses: " + (", ".join(f"{i}" + (f" (elsewhere: {'+'.join(c)})" if c else "") for i, c in misses)
                               or "none"))
    return result


# ---------------------------------------------------------------------------------------------------------- repos

def find_git_dir(mirror_root: Path, repo: str) -> Path | None:
    """The git directory of `owner/name` under a mirror root laid out as owner+name/<git dir>, owner/name(.git)
    or owner+name(.git)."""
    owner, name = repo.split("/")
    bases = [mirror_root / f"{owner}+{name}", mirror_root / owner / name, mirror_root / f"{owner}/{name}.git",
             mirror_root / f"{owner}+{name}.git"]
    for base in bases:
        if not base.is_dir():
            continue
        if (base / "objects").is_dir() and (base / "HEAD").is_file():
            return base
        for sub in sorted(base.rglob("HEAD")):
            if len(sub.relative_to(base).parts) <= 3 and (sub.parent / "objects").is_dir():
                return sub.parent
    return None


def export_tree(git_dir: Path, commit: str, into: Path) -> list[str]:
    """Write the commit's .py and .ipynb files and its pyproject.toml files (what the linter reads) under `into`.
    A mirror may lack some blobs (very large files): those are skipped and returned."""
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", "--full-tree", commit],
                             capture_output=True, check=True).stdout.decode("utf-8", errors="surrogateescape")
    wanted = []
    for entry in listing.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, obj = meta.split()
        if kind == "blob" and mode in ("100644", "100755") and (
                path.endswith((".py", ".ipynb")) or path.rsplit("/", 1)[-1] == "pyproject.toml"):
            wanted.append((obj, path))
    missing = []
    batch = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "--batch"], capture_output=True, check=True,
                           input="".join(f"{obj}\n" for obj, _ in wanted).encode()).stdout
    at = 0
    for _obj, path in wanted:
        end = batch.index(b"\n", at)
        header = batch[at:end].decode().split()
        at = end + 1
        if len(header) < 3 or header[1] == "missing":
            missing.append(path)
            continue
        size = int(header[2])
        data, at = batch[at:at + size], at + size + 1
        target = into / path
        if ".." in Path(path).parts:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    into.mkdir(parents=True, exist_ok=True)
    return missing


def source_line(root: Path, path: str, line: int, cell: int | None) -> str:
    """The text of a finding's line (in a notebook, the line of its cell); '' when it cannot be found."""
    file = root / path
    try:
        if cell is None:
            text = file.read_bytes().decode("utf-8", errors="replace")
        else:
            notebook = json.loads(file.read_bytes().decode("utf-8-sig", errors="replace"))
            cells = notebook.get("cells")
            if not isinstance(cells, list):
                cells = [c for sheet in notebook.get("worksheets") or [] for c in sheet.get("cells") or []]
            chosen = cells[cell - 1]
            text = chosen.get("source", chosen.get("input", ""))
            text = "".join(text) if isinstance(text, list) else str(text)
        lines = text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""
    except (OSError, ValueError, IndexError, AttributeError, TypeError):
        return ""


def context(root: Path, path: str, line: int, cell: int | None, around: int = 3) -> str:
    out = []
    for n in range(max(1, line - around), line + around + 1):
        text = source_line(root, path, n, cell)
        if not text and n > line:
            continue
        out.append(f"{'>' if n == line else ' '}{n:5d}  {text}")
    return "\n".join(out)


def sha1(text: str) -> str:
    return hashlib.sha1(text.strip().encode("utf-8")).hexdigest()


def lint_repos(args: argparse.Namespace, wanted_splits: tuple[str, ...]) -> list[dict]:
    """Every finding on the repositories of the splits given: repo, split, path, cell, line, code, message,
    line_text_sha1, and the exported root (for context) while the temporary folder lives."""
    repos = [r for r in load("repos.json") if r["split"] in wanted_splits and (not args.only or r["repo"] in args.only)]
    mirror_root = Path(args.mirror_root)
    findings: list[dict] = []
    args._tmp = tempfile.TemporaryDirectory(prefix="lint-realworld-")
    for repo in repos:
        git_dir = find_git_dir(mirror_root, repo["repo"])
        if git_dir is None:
            print(f"!! {repo['repo']}: no mirror under {mirror_root}", file=sys.stderr)
            continue
        root = Path(args._tmp.name) / repo["repo"].replace("/", "+")
        try:
            missing = export_tree(git_dir, repo["commit"], root)
        except subprocess.CalledProcessError as error:
            print(f"!! {repo['repo']}: cannot export {repo['commit']}: {error.stderr[-300:]!r}", file=sys.stderr)
            continue
        if missing:
            print(f"   {repo['repo']}: {len(missing)} source files absent from the mirror, not linted: "
                  + ", ".join(missing[:5]), file=sys.stderr)
        found = run_linter([str(root)], args)
        for f in found:
            rel = Path(f["path"]).resolve().relative_to(root.resolve()).as_posix()
            text = source_line(root, rel, f["line"], f.get("cell"))
            findings.append({"repo": repo["repo"], "split": repo["split"], "path": rel, "cell": f.get("cell"),
                             "line": f["line"], "code": f["code"], "message": f["message"],
                             "line_text_sha1": sha1(text), "_root": str(root)})
        print(f"   linted {repo['split']:7s} {repo['repo']}: {len(found)} findings", file=sys.stderr)
    return findings


def label_key(item: dict) -> tuple:
    return (item["repo"], item["path"], item.get("cell"), int(item["line"]), item["code"])


def measure_repos(args: argparse.Namespace) -> dict:
    findings = lint_repos(args, SPLITS)
    labels = {label_key(lab): lab for lab in load("labels.json")}
    result: dict = {"splits": {}}
    for split in SPLITS:
        mine = [f for f in findings if f["split"] == split]
        per_rule: dict[str, Counter] = defaultdict(Counter)
        unlabelled, stale = [], []
        for f in mine:
            lab = labels.get(label_key(f))
            if lab is None:
                per_rule[f["code"]]["unlabelled"] += 1
                unlabelled.append(f)
            elif lab.get("line_text_sha1") and lab["line_text_sha1"] != f["line_text_sha1"]:
                per_rule[f["code"]]["stale"] += 1
                stale.append(f)
            else:
                per_rule[f["code"]][lab["verdict"]] += 1
        true = sum(c["true"] for c in per_rule.values())
        false = sum(c["false"] for c in per_rule.values())
        result["splits"][split] = {code: dict(c) for code, c in per_rule.items()}
        nrepos = len({f["repo"] for f in mine})
        print(f"== precision on repositories, {split}: {len(mine)} findings in {nrepos} repositories with findings; "
              f"labelled {pct(true, true + false)} true")
        for code, c in sorted(per_rule.items()):
            extra = "".join(f", {c[k]} {k}" for k in ("unlabelled", "stale") if c[k])
            print(f"   {code}: {pct(c['true'], c['true'] + c['false'])}{extra}")
        if unlabelled or stale:
            print(f"   {len(unlabelled)} unlabelled, {len(stale)} whose line changed since labelled:")
            for f in unlabelled + stale:
                cell = f" cell {f['cell']}" if f["cell"] is not None else ""
                print(f"     {f['repo']} {f['path']}{cell}:{f['line']} {f['code']}")
    return result


def label_dev(args: argparse.Namespace) -> None:
    findings = lint_repos(args, ("dev",))
    labels = {label_key(lab) for lab in load("labels.json")}
    todo = [f for f in findings if label_key(f) not in labels]
    print(f"{len(todo)} dev findings without a label")
    for f in todo:
        cell = f" cell {f['cell']}" if f["cell"] is not None else ""
        print(f"\n--- {f['repo']} {f['path']}{cell}:{f['line']} {f['code']} sha1={f['line_text_sha1']}")
        print(f"    {f['message']}")
        print(context(Path(f["_root"]), f["path"], f["line"], f["cell"]))
        print("    label: " + json.dumps({"repo": f["repo"], "path": f["path"], "cell": f["cell"], "line": f["line"],
                                          "code": f["code"], "line_text_sha1": f["line_text_sha1"],
                                          "verdict": "true|false", "why": ""}, ensure_ascii=False))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixes", action="store_true", help="recall on the stored fix files, per split and kind")
    parser.add_argument("--in-project", dest="fixes_mirror_root", metavar="MIRROR_ROOT",
                        help="with --fixes: lint each fix's file inside its repository at the parent commit, "
                             "exported from the mirrors here (the project's other files as context)")
    parser.add_argument("--repos", dest="mirror_root", metavar="MIRROR_ROOT",
                        help="precision per rule on the repositories of repos.json, exported from mirrors here")
    parser.add_argument("--label-dev", dest="label_root", metavar="MIRROR_ROOT",
                        help="print the dev findings without a label, with context")
    parser.add_argument("--only", action="append", help="only this repository (owner/name); repeatable")
    parser.add_argument("--linter-root", default=str(HERE.parent), help="checkout whose devicelab is measured")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs the linter")
    parser.add_argument("--select", default=None,
                        help="the linter's --select (default: its own; DL,DL106,DL506 adds the preview rules)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON here")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="the corpus folder (fixes.json, fixes/, repos.json, labels.json); default: the first "
                             "batch, tests/lint/realworld; the second is tests/lint/realworld/batch2")
    args = parser.parse_args(argv)
    global CORPUS
    CORPUS = (args.corpus or CORPUS).resolve()
    if args.label_root:
        args.mirror_root = args.label_root
    if not (args.fixes or args.mirror_root):
        parser.error("give --fixes, --repos MIRROR_ROOT or --label-dev MIRROR_ROOT")
    report: dict = {}
    if args.fixes:
        report["fixes"] = measure_fixes(args)
    if args.label_root:
        label_dev(args)
    elif args.mirror_root:
        report["repos"] = measure_repos(args)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
