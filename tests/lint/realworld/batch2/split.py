"""Draw the dev/heldout split once, before anything else is done with the entries.

Fixes: sort the ids, shuffle with random.Random(3131), the first half is "dev", the rest "heldout".
Repositories: sort by owner/name, shuffle with random.Random(3132), the first half is "dev".
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
    repos = json.loads((HERE / "repos.json").read_text())
    if any(f.get("split") for f in fixes) or any(r.get("split") for r in repos):
        raise SystemExit("split already drawn; not redrawing")
    fs = draw([f["id"] for f in fixes], 3131)
    rs = draw([r["repo"] for r in repos], 3132)
    for f in fixes:
        f["split"] = fs[f["id"]]
    for r in repos:
        r["split"] = rs[r["repo"]]
    (HERE / "fixes.json").write_text(json.dumps(fixes, indent=1) + "\n")
    (HERE / "repos.json").write_text(json.dumps(repos, indent=1) + "\n")
    for name, d in (("fixes", fs), ("repos", rs)):
        print(name, {s: sum(v == s for v in d.values()) for s in ("dev", "heldout")})


if __name__ == "__main__":
    main()
