"""Draw the dev/heldout split once, before anything else is done with the entries.

Fixes: sort the ids, shuffle with random.Random(3231), the first half is "dev", the rest "heldout".
Repositories (only if repos.json exists): sort by owner/name, shuffle with random.Random(3232), the first half is
"dev". This batch has no repos.json; the fixes are split alone.
Refuses to run twice (a split already present is never redrawn or moved by hand).
"""
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent


def draw(keys, seed):
    order = sorted(keys)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return {k: ("dev" if i < half else "heldout") for i, k in enumerate(order)}


def main():
    fixes = json.loads((HERE / "fixes.json").read_text())
    repos_path = HERE / "repos.json"
    repos = json.loads(repos_path.read_text()) if repos_path.exists() else None
    if any(f.get("split") for f in fixes) or any(r.get("split") for r in repos or []):
        raise SystemExit("split already drawn; not redrawing")
    fs = draw([f["id"] for f in fixes], 3231)
    for f in fixes:
        f["split"] = fs[f["id"]]
    (HERE / "fixes.json").write_text(json.dumps(fixes, indent=1) + "\n")
    drawn = [("fixes", fs)]
    if repos is not None:
        rs = draw([r["repo"] for r in repos], 3232)
        for r in repos:
            r["split"] = rs[r["repo"]]
        repos_path.write_text(json.dumps(repos, indent=1) + "\n")
        drawn.append(("repos", rs))
    for name, d in drawn:
        print(name, {s: sum(v == s for v in d.values()) for s in ("dev", "heldout")})


if __name__ == "__main__":
    main()
