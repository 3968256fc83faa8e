"""Score the error index on the corpus of real pasted messages (tests/errors/corpus.json).

Prints recall, false positives and confident-wrong answers, per chapter and per language, and lists the misses.

    .venv/bin/python tools/corpus_report.py            # figures and misses
    .venv/bin/python tools/corpus_report.py --json     # the figures as JSON
    .venv/bin/python tools/corpus_report.py --time     # also the mean time to diagnose one message
    .venv/bin/python tools/corpus_report.py --composition   # what the corpus holds: family, era, language
    .venv/bin/python tools/corpus_report.py --heldout  # figures on the held-out part (no message text is printed)

Definitions (the same as tests/errors/test_corpus.py, which imports this file):
- recall: share of the device-error entries where the index says device_error and names one of the entry's chapters;
- confident-wrong: device-error entries where the index is confident and its chapter is not one of the entry's;
- false positive: an entry that is not a device-placement error, claimed as one.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import json
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "errors" / "corpus.json"
# Held out from whoever writes the index's rules: scored, never read (see tests/errors/README.md).
HELDOUT = ROOT / "tests" / "errors" / "heldout.json"
# The novel wordings: pastes whose error line is not 90% similar to any message of the two parts above, from 75
# libraries built on PyTorch and from Chinese threads, collected in a pass that wrote no rules and split by thread.
NOVEL_DEV = ROOT / "tests" / "errors" / "novel_dev.json"
# A second development batch of novel wordings (libraries' own words, Chinese threads, close negatives), none of them
# from a held-out thread nor 90% similar to a held-out entry's error line.
NOVEL_DEV2 = ROOT / "tests" / "errors" / "novel_dev2.json"
NOVEL_HELDOUT = ROOT / "tests" / "errors" / "novel_heldout.json"  # scored, never read, like heldout.json
# A third batch (December 2026), collected the same way and split by a seeded draw: its development half is read, its
# held-out half scored, never read.
NOVEL_DEV3 = ROOT / "tests" / "errors" / "novel_dev3.json"
NOVEL_HELDOUT2 = ROOT / "tests" / "errors" / "novel_heldout2.json"
# A fourth batch, the same way (seeded draw random.Random(4044)); it fills the largest gap the collector found
# (a CUDA tensor handed to NumPy, in many libraries' and languages' words) and more library wordings.
NOVEL_DEV4 = ROOT / "tests" / "errors" / "novel_dev4.json"
NOVEL_HELDOUT3 = ROOT / "tests" / "errors" / "novel_heldout3.json"
# A fifth batch (seeded draw random.Random(5055)): its collector found most tail wordings of device errors already
# held at 90% similarity, so it is mostly close negatives (low-level CUDA faults, dtype, distributed set-up).
NOVEL_DEV5 = ROOT / "tests" / "errors" / "novel_dev5.json"
NOVEL_HELDOUT4 = ROOT / "tests" / "errors" / "novel_heldout4.json"
# A sixth batch (seeded draw random.Random(6066)), small: its collector found few tail wordings not already held.
NOVEL_DEV6 = ROOT / "tests" / "errors" / "novel_dev6.json"
NOVEL_HELDOUT5 = ROOT / "tests" / "errors" / "novel_heldout5.json"
# A seventh batch (seeded draw random.Random(7077)): 64 threads from 52 libraries, a third of them Chinese posts, mostly
# close negatives again (16 device errors).
NOVEL_DEV7 = ROOT / "tests" / "errors" / "novel_dev7.json"
NOVEL_HELDOUT6 = ROOT / "tests" / "errors" / "novel_heldout6.json"
# An eighth batch (seeded draw random.Random(8088)), aimed at device errors in rare wordings: 67 threads, 49 libraries.
NOVEL_DEV8 = ROOT / "tests" / "errors" / "novel_dev8.json"
NOVEL_HELDOUT7 = ROOT / "tests" / "errors" / "novel_heldout7.json"
# A ninth batch (seeded draw random.Random(9099)): 64 threads, 42 libraries; many device errors told in the poster's
# own words around (or instead of) the message.
NOVEL_DEV9 = ROOT / "tests" / "errors" / "novel_dev9.json"
NOVEL_HELDOUT8 = ROOT / "tests" / "errors" / "novel_heldout8.json"
# A tenth batch (seeded draw random.Random(10101)): 70 threads, 61 libraries; again many device errors told in words.
NOVEL_DEV10 = ROOT / "tests" / "errors" / "novel_dev10.json"
NOVEL_HELDOUT9 = ROOT / "tests" / "errors" / "novel_heldout9.json"
# An eleventh batch (seeded draw random.Random(11111)): 71 threads, 66 libraries, research code's issues; most of its
# device errors are told in words.
NOVEL_DEV11 = ROOT / "tests" / "errors" / "novel_dev11.json"
NOVEL_HELDOUT10 = ROOT / "tests" / "errors" / "novel_heldout10.json"
# A twelfth batch (seeded draw random.Random(12121)): 72 threads, 63 libraries, aimed at libraries' own wordings and
# posters' words; a third Chinese.
NOVEL_DEV12 = ROOT / "tests" / "errors" / "novel_dev12.json"
NOVEL_HELDOUT11 = ROOT / "tests" / "errors" / "novel_heldout11.json"
# A thirteenth batch (seeded draw random.Random(13131)): 64 pages from forums, model hubs and blogs, none a GitHub
# issue; a third Chinese.
NOVEL_DEV13 = ROOT / "tests" / "errors" / "novel_dev13.json"
NOVEL_HELDOUT12 = ROOT / "tests" / "errors" / "novel_heldout12.json"
# A fourteenth batch (seeded draw random.Random(14141)): 73 threads, 46 libraries, all GitHub issues and pull requests;
# most device errors told in the poster's words or a pull request's title, a third of the batch Chinese (mostly
# close negatives).
NOVEL_DEV14 = ROOT / "tests" / "errors" / "novel_dev14.json"
NOVEL_HELDOUT13 = ROOT / "tests" / "errors" / "novel_heldout13.json"
# A fifteenth batch (seeded draw random.Random(15151)): 102 threads from 74 libraries, GitHub issues and pull requests
# and Chinese articles; most wordings in a library's or a poster's own words, a third of the batch Chinese.
NOVEL_DEV15 = ROOT / "tests" / "errors" / "novel_dev15.json"
NOVEL_HELDOUT14 = ROOT / "tests" / "errors" / "novel_heldout14.json"
# A sixteenth batch (seeded draw random.Random(16161)): 101 threads from 90 libraries, GitHub issues and pull requests,
# screened by its collectors for wordings the corpus already held; many told in a poster's words or titles only.
NOVEL_DEV16 = ROOT / "tests" / "errors" / "novel_dev16.json"
NOVEL_HELDOUT15 = ROOT / "tests" / "errors" / "novel_heldout15.json"
# A seventeenth batch (seeded draw random.Random(17171), by thread): 44 threads from 39 libraries, whole tracebacks and
# Chinese issues; most of its device errors were set aside by the screen.
NOVEL_DEV17 = ROOT / "tests" / "errors" / "novel_dev17.json"
NOVEL_HELDOUT16 = ROOT / "tests" / "errors" / "novel_heldout16.json"
# An eighteenth batch (seeded draw random.Random(18181), by thread): 92 threads from about 70 libraries, Chinese issues,
# accelerators other than CUDA and libraries' own words; many told in a poster's words or titles only.
NOVEL_DEV18 = ROOT / "tests" / "errors" / "novel_dev18.json"
NOVEL_HELDOUT17 = ROOT / "tests" / "errors" / "novel_heldout17.json"
# A nineteenth batch (random.Random(19191), by thread): 68 threads, Chinese issues of smaller projects and libraries of
# scientific ML, tabular, audio, OCR, video, point clouds, federated and continual learning, pruning, LLM serving.
NOVEL_DEV19 = ROOT / "tests" / "errors" / "novel_dev19.json"
NOVEL_HELDOUT18 = ROOT / "tests" / "errors" / "novel_heldout18.json"
# A twentieth batch (random.Random(20202), by thread): Chinese issues of large Chinese-origin projects, and libraries of
# RL, robotics, medical and remote-sensing imaging, Gaussian splatting, speech, quantization, with older wordings.
NOVEL_DEV20 = ROOT / "tests" / "errors" / "novel_dev20.json"
NOVEL_HELDOUT19 = ROOT / "tests" / "errors" / "novel_heldout19.json"
# A twenty-first batch (random.Random(21212), by thread): only pastes that hold an exception line, from libraries'
# own words (NVIDIA DALI, torchinfo, ComfyUI nodes, ...) and PyTorch's rarer checks.
NOVEL_DEV21 = ROOT / "tests" / "errors" / "novel_dev21.json"
NOVEL_HELDOUT20 = ROOT / "tests" / "errors" / "novel_heldout20.json"
# A twenty-second batch (random.Random(22222), by thread): Chinese threads of Chinese-origin projects (LLM fine-tuning,
# detection, speech) and English threads of libraries not yet held (time series, recommenders, 3D, scientific ML, RL).
NOVEL_DEV22 = ROOT / "tests" / "errors" / "novel_dev22.json"
NOVEL_HELDOUT21 = ROOT / "tests" / "errors" / "novel_heldout21.json"
# A twenty-third batch (random.Random(23232), by thread): accelerators other than CUDA (MPS, XLA, NPU, XPU, DirectML,
# ROCm) and questions as readers ask them on forums (Stack Overflow, the PyTorch and Hugging Face forums, Reddit).
NOVEL_DEV23 = ROOT / "tests" / "errors" / "novel_dev23.json"
NOVEL_HELDOUT22 = ROOT / "tests" / "errors" / "novel_heldout22.json"
# A twenty-fourth batch (random.Random(24242), by thread): only pastes that hold an exception line, from the LLM and
# image-generation tools of 2024-2026 and from libraries for science, vision, audio and training loops.
NOVEL_DEV24 = ROOT / "tests" / "errors" / "novel_dev24.json"
NOVEL_HELDOUT23 = ROOT / "tests" / "errors" / "novel_heldout23.json"
# A twenty-fifth batch (random.Random(25252), by thread): Chinese threads and libraries for reinforcement learning,
# recommenders, speech, time series, medical imaging and quantization; compilers, export and serving (TorchScript,
# ONNX, AOTInductor, Triton, torchserve) and accelerators other than CUDA.
NOVEL_DEV25 = ROOT / "tests" / "errors" / "novel_dev25.json"
NOVEL_HELDOUT24 = ROOT / "tests" / "errors" / "novel_heldout24.json"
# A twenty-sixth batch (random.Random(26262), by thread): questions and descriptions in posters' own words (GitHub
# threads in English and Chinese), and 2024-2026 libraries for LLM training and serving, vision and video, graphs,
# tabular and scientific work.
NOVEL_DEV26 = ROOT / "tests" / "errors" / "novel_dev26.json"
NOVEL_HELDOUT25 = ROOT / "tests" / "errors" / "novel_heldout25.json"
# A twenty-seventh batch (random.Random(27272), by thread): pull requests and issues that fix or report a device problem
# in their authors' own words (English and Chinese), and pastes as they arrive from notebooks and consoles (cell
# output, log prefixes, cut tracebacks) from tabular, AutoML and course repositories.
NOVEL_DEV27 = ROOT / "tests" / "errors" / "novel_dev27.json"
NOVEL_HELDOUT26 = ROOT / "tests" / "errors" / "novel_heldout26.json"
DEVELOPMENT_FILES = (CORPUS, NOVEL_DEV, NOVEL_DEV2, NOVEL_DEV3, NOVEL_DEV4, NOVEL_DEV5, NOVEL_DEV6, NOVEL_DEV7,
                     NOVEL_DEV8, NOVEL_DEV9, NOVEL_DEV10, NOVEL_DEV11, NOVEL_DEV12,
                     NOVEL_DEV13, NOVEL_DEV14, NOVEL_DEV15, NOVEL_DEV16,
                     NOVEL_DEV17, NOVEL_DEV18, NOVEL_DEV19, NOVEL_DEV20,
                     NOVEL_DEV21, NOVEL_DEV22, NOVEL_DEV23, NOVEL_DEV24, NOVEL_DEV25, NOVEL_DEV26, NOVEL_DEV27)
HELDOUT_FILES = (HELDOUT, NOVEL_HELDOUT, NOVEL_HELDOUT2, NOVEL_HELDOUT3, NOVEL_HELDOUT4, NOVEL_HELDOUT5,
                 NOVEL_HELDOUT6, NOVEL_HELDOUT7, NOVEL_HELDOUT8, NOVEL_HELDOUT9, NOVEL_HELDOUT10, NOVEL_HELDOUT11,
                 NOVEL_HELDOUT12, NOVEL_HELDOUT13, NOVEL_HELDOUT14,
                 NOVEL_HELDOUT15, NOVEL_HELDOUT16, NOVEL_HELDOUT17,
                 NOVEL_HELDOUT18, NOVEL_HELDOUT19, NOVEL_HELDOUT20, NOVEL_HELDOUT21,
                 NOVEL_HELDOUT22, NOVEL_HELDOUT23, NOVEL_HELDOUT24, NOVEL_HELDOUT25, NOVEL_HELDOUT26)

CHAPTERS = (
    "01-devices",
    "02-dataparallel",
    "03-embedding",
    "04-batches",
    "05-inside",
    "06-multigpu",
    "07-checkpoints",
    "08-amp",
    "09-debugging",
)


# The wording of a device error tells its PyTorch era; the first pattern that matches names it.
ERAS = (
    ("0.x (THC / type checks)", r"THCTensor_\(checkGPU\)|invalid combination of arguments|located on different GPUs"
     r"|Expected object of type torch\.cuda"),
    ("<=1.3 backend", r"Expected object of backend"),
    ("1.4-1.8 device type", r"Expected object of device type"),
    ("1.5-1.8 checked on GPU", r"expected (?:it|them) to be on GPU"),
    ("1.x expected device", r"expected device \w+(?::\d+)?(?: and dtype \w+)? but got device"),
    ("1.x cudnn same device", r"to have the same device as tensor"),
    ("1.9-2.7 two devices", r"found at least two devices"),
    (">=2.8 different from other tensors", r"different from other tensors on"),
)


_EXCEPTION = re.compile(r"(?:[\w.]*(?:Error|Exception|Warning)\b\s*[:：]|报错|错误)")


def error_line(text: str) -> str:
    """A paste's main error line (its last exception line, else its first line), lowercased, numbers and
    addresses replaced: what the novelty of a wording is measured on."""
    lines = [line.strip() for line in text.splitlines()  # words, not fences or a traceback's header
             if re.search(r"[^\W\d_]{3}", line) and not line.strip().lower().startswith("traceback")]
    found = [line for line in lines if _EXCEPTION.search(line)]
    line = (found[-1] if found else lines[0] if lines else "").lower()
    return re.sub(r"\d+", "0", re.sub(r"0x[0-9a-f]+", "0x", line))[:300]


@functools.lru_cache(maxsize=8192)
def _matcher(b: str) -> difflib.SequenceMatcher:
    """A matcher with `b` as its second sequence, indexed once: one line is compared with many (difflib's advice)."""
    return difflib.SequenceMatcher(None, "", b, autojunk=False)


def similar(a: str, b: str, cut: float = 0.9) -> bool:
    """Whether two error lines are at least `cut` similar (difflib's ratio, `a` against `b`)."""
    if len(a) + len(b) and 2 * min(len(a), len(b)) / (len(a) + len(b)) < cut:  # real_quick_ratio, without a matcher
        return False
    matcher = _matcher(b)
    matcher.set_seq1(a)
    return matcher.quick_ratio() >= cut and matcher.ratio() >= cut


def heldout_strata() -> dict[str, list[dict[str, Any]]]:
    """The held-out entries (both files) in two strata: "novel" when the error line is not at least 90% similar to
    the error line of any development entry (DEVELOPMENT_FILES), "common" otherwise."""
    development = [error_line(e["text"]) for path in DEVELOPMENT_FILES for e in load_corpus(path)]
    strata: dict[str, list[dict[str, Any]]] = {"common": [], "novel": []}
    for entry in (e for path in HELDOUT_FILES for e in load_corpus(path)):
        line = error_line(entry["text"])
        strata["common" if any(similar(line, d) for d in development) else "novel"].append(entry)
    return strata


def era_of(text: str) -> str:
    """The PyTorch era a device-error paste's wording belongs to, or 'other wording'."""
    for name, pattern in ERAS:
        if re.search(pattern, text, re.IGNORECASE):
            return name
    return "other wording"


def load_corpus(path: Path = CORPUS) -> list[dict[str, Any]]:
    """The corpus entries, in file order."""
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass
class Verdict:
    """What the index answered for one corpus entry, and how that compares with the entry."""

    entry: dict[str, Any]
    device_error: bool
    chapter: str | None
    confident: bool
    candidates: list[str]
    error: str | None = None  # diagnose() raised: the exception, as text
    ranking: list[str] = field(default_factory=list)  # the chapters in the order the index names them

    @property
    def first_two(self) -> list[str]:
        """The first two chapters the index names (its ranking, or its chapter then its candidates)."""
        named = self.ranking or ([self.chapter] if self.chapter else []) + self.candidates
        out: list[str] = []
        for chapter in named:
            if chapter and chapter not in out:
                out.append(chapter)
        return out[:2]

    @property
    def hit_within_two(self) -> bool:
        """A device error recognised, with an acceptable chapter among the first two named."""
        return self.positive and self.device_error and any(c in self.entry["chapters"] for c in self.first_two)

    @property
    def positive(self) -> bool:
        """The entry is a device-placement error."""
        return bool(self.entry["device_error"])

    @property
    def hit(self) -> bool:
        """A device error recognised and sent to one of its acceptable chapters."""
        return self.positive and self.device_error and self.chapter in self.entry["chapters"]

    @property
    def confident_wrong(self) -> bool:
        """A device error answered with confidence and a chapter that does not explain it."""
        return self.positive and self.confident and self.chapter not in self.entry["chapters"]

    @property
    def false_positive(self) -> bool:
        """Not a device error, yet claimed as one."""
        return not self.positive and self.device_error


@dataclass
class Report:
    """Every verdict, and the figures computed from them."""

    verdicts: list[Verdict]
    seconds_per_message: float | None = None
    groups: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    @property
    def positives(self) -> list[Verdict]:
        """Verdicts on device-error entries."""
        return [v for v in self.verdicts if v.positive]

    @property
    def negatives(self) -> list[Verdict]:
        """Verdicts on entries that are not device errors."""
        return [v for v in self.verdicts if not v.positive]

    @property
    def recall(self) -> float:
        """Share of device-error entries recognised and sent to an acceptable chapter."""
        pos = self.positives
        return sum(v.hit for v in pos) / len(pos) if pos else 0.0

    @property
    def recognised(self) -> float:
        """Share of device-error entries recognised as device errors, whatever the chapter."""
        pos = self.positives
        return sum(v.device_error for v in pos) / len(pos) if pos else 0.0

    @property
    def false_positives(self) -> list[Verdict]:
        """Negatives claimed as device errors."""
        return [v for v in self.negatives if v.false_positive]

    @property
    def confident_wrong(self) -> list[Verdict]:
        """Device errors sent to a wrong chapter with confidence."""
        return [v for v in self.positives if v.confident_wrong]

    @property
    def misses(self) -> list[Verdict]:
        """Device errors not recognised, or sent to a chapter that is not acceptable."""
        return [v for v in self.positives if not v.hit]

    @property
    def negatives_routed(self) -> float:
        """Share of negatives that name a chapter (those that have one) and get exactly it."""
        with_chapter = [v for v in self.negatives if v.entry["chapters"]]
        if not with_chapter:
            return 0.0
        return sum(not v.device_error and v.chapter in v.entry["chapters"] for v in with_chapter) / len(with_chapter)

    def figures(self) -> dict[str, Any]:
        """The headline figures, as plain data."""
        return {
            "entries": len(self.verdicts),
            "positives": len(self.positives),
            "negatives": len(self.negatives),
            "recall": round(self.recall, 4),
            "recognised": round(self.recognised, 4),
            "false_positives": len(self.false_positives),
            "confident_wrong": len(self.confident_wrong),
            "negatives_routed": round(self.negatives_routed, 4),
            "errors": sum(v.error is not None for v in self.verdicts),
            "seconds_per_message": self.seconds_per_message,
            "by_chapter": self.groups.get("chapter", {}),
            "by_lang": self.groups.get("lang", {}),
        }


def _diagnose_one(diagnose: Callable[[str], Any], entry: dict[str, Any]) -> Verdict:
    try:
        d = diagnose(entry["text"])
    except Exception as exc:  # diagnose must never raise: record it as a miss
        return Verdict(entry, False, None, False, [], error=f"{type(exc).__name__}: {exc}")
    return Verdict(
        entry,
        bool(d.device_error),
        d.chapter,
        bool(d.confident),
        list(d.candidates or []),
        ranking=[r.chapter for r in getattr(d, "ranking", ()) or ()],
    )


def _group(verdicts: list[Verdict], key: Callable[[Verdict], str]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(
        lambda: {"positives": 0, "hits": 0, "confident_wrong": 0, "negatives": 0, "false_positives": 0}
    )
    for v in verdicts:
        row = out[key(v)]
        if v.positive:
            row["positives"] += 1
            row["hits"] += v.hit
            row["confident_wrong"] += v.confident_wrong
        else:
            row["negatives"] += 1
            row["false_positives"] += v.false_positive
    return dict(sorted(out.items()))


def score(
    entries: list[dict[str, Any]] | None = None,
    diagnose: Callable[[str], Any] | None = None,
    timed: bool = False,
) -> Report:
    """Run the index's `diagnose` over the corpus and collect the verdicts."""
    if entries is None:
        entries = load_corpus()
    if diagnose is None:
        from devicelab.errors import diagnose as index_diagnose

        diagnose = index_diagnose
    verdicts = [_diagnose_one(diagnose, e) for e in entries]
    report = Report(verdicts)
    if timed:
        rounds = 5
        start = time.perf_counter()
        for _ in range(rounds):
            for e in entries:
                try:
                    diagnose(e["text"])
                except Exception:
                    pass
        report.seconds_per_message = (time.perf_counter() - start) / (rounds * len(entries))
    # A positive counts once under its first (best) chapter; a negative under its chapter or "(none)".
    report.groups["chapter"] = _group(verdicts, lambda v: (v.entry["chapters"] or ["(none)"])[0])
    report.groups["lang"] = _group(verdicts, lambda v: v.entry["lang"])
    return report


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "-"


def _short(text: str, width: int = 110) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def print_report(report: Report, out=sys.stdout) -> None:
    """Print the figures, the per-chapter and per-language tables, and every miss."""
    f = report.figures()
    pos, neg = report.positives, report.negatives
    print(f"corpus: {f['entries']} entries, {f['positives']} device errors, {f['negatives']} negatives", file=out)
    print(f"recall (device error and acceptable chapter): {_pct(sum(v.hit for v in pos), len(pos))}", file=out)
    print(f"recognised as device errors (any chapter): {_pct(sum(v.device_error for v in pos), len(pos))}", file=out)
    print(f"confident-wrong: {f['confident_wrong']}", file=out)
    print(f"false positives: {_pct(len(report.false_positives), len(neg))}", file=out)
    with_chapter = [v for v in neg if v.entry["chapters"]]
    routed = sum(not v.device_error and v.chapter in v.entry["chapters"] for v in with_chapter)
    print(f"negatives sent to their chapter (e.g. dtype -> 08-amp): {_pct(routed, len(with_chapter))}", file=out)
    if f["errors"]:
        print(f"diagnose() raised on {f['errors']} entries", file=out)
    if report.seconds_per_message is not None:
        print(f"time to diagnose one message: {report.seconds_per_message * 1e3:.3f} ms", file=out)
    for title, rows in (("by chapter (first acceptable)", f["by_chapter"]), ("by language", f["by_lang"])):
        print(f"\n{title}:", file=out)
        print(f"  {'':16} {'recall':>14} {'conf-wrong':>10} {'false pos':>12}", file=out)
        for name, r in rows.items():
            recall = _pct(r["hits"], r["positives"])
            fp = _pct(r["false_positives"], r["negatives"])
            print(f"  {name:16} {recall:>14} {r['confident_wrong']:>10} {fp:>12}", file=out)
    sections = (
        ("confident-wrong", report.confident_wrong),
        ("false positives", report.false_positives),
        ("misses", report.misses),
    )
    for title, items in sections:
        if not items:
            continue
        print(f"\n{title}:", file=out)
        for v in items:
            e = v.entry
            said = "device error" if v.device_error else "not a device error"
            conf = ", confident" if v.confident else ""
            print(f"  {e['id']} [{e['lang']}, {e['family']}] want {e['chapters'] or 'none'}; got {said}, "
                  f"chapter {v.chapter}{conf}, candidates {v.candidates}" + (f"; raised {v.error}" if v.error else ""),
                  file=out)
            print(f"      {_short(e['text'])}", file=out)


def print_composition(entries: list[dict[str, Any]], out=sys.stdout) -> None:
    """Print how many entries the corpus holds per language, era (device errors) and family."""
    pos = [e for e in entries if e["device_error"]]
    neg = [e for e in entries if not e["device_error"]]
    print(f"{len(entries)} entries: {len(pos)} device errors, {len(neg)} negatives", file=out)
    for title, rows in (
        ("language (device errors / negatives)", {
            lang: f"{sum(e['lang'] == lang for e in pos)} / {sum(e['lang'] == lang for e in neg)}"
            for lang in ("en", "zh")}),
        ("era of the wording (device errors)", Counter(era_of(e["text"]) for e in pos)),
        ("family (device errors)", Counter(e["family"] for e in pos)),
        ("family (negatives)", Counter(e["family"] for e in neg)),
        ("first chapter (device errors)", Counter(e["chapters"][0] for e in pos)),
    ):
        print(f"\n{title}:", file=out)
        items = rows.most_common() if isinstance(rows, Counter) else rows.items()
        for name, n in items:
            print(f"  {name:36} {n}", file=out)


def heldout_figures(report: Report) -> dict[str, Any]:
    """The held-out figures, overall and per language: counts and entry ids only, never message text.

    right_first: device errors recognised with an acceptable first chapter; right_within_two: an acceptable chapter
    among the first two named; confident_wrong: device errors given a wrong chapter with confidence; declined: device
    errors answered "not a device error"; false_positives: other errors claimed as device errors.
    """

    def block(verdicts: list[Verdict]) -> dict[str, Any]:
        pos = [v for v in verdicts if v.positive]
        neg = [v for v in verdicts if not v.positive]
        hits = sum(v.hit for v in pos)
        return {
            "entries": len(verdicts),
            "device_errors": len(pos),
            "negatives": len(neg),
            "right_first": hits,
            "right_first_rate": round(hits / len(pos), 4) if pos else None,
            "right_within_two": sum(v.hit_within_two for v in pos),
            "right_within_two_rate": round(sum(v.hit_within_two for v in pos) / len(pos), 4) if pos else None,
            "confident_wrong": sum(v.confident_wrong for v in pos),
            "declined": sum(not v.device_error for v in pos),
            "false_positives": sum(v.false_positive for v in neg),
            "errors": sum(v.error is not None for v in verdicts),
        }

    out = block(report.verdicts)
    out["by_lang"] = {
        lang: block([v for v in report.verdicts if v.entry["lang"] == lang])
        for lang in sorted({v.entry["lang"] for v in report.verdicts})
    }
    out["ids"] = {
        "confident_wrong": [v.entry["id"] for v in report.confident_wrong],
        "false_positives": [v.entry["id"] for v in report.false_positives],
        "declined": [v.entry["id"] for v in report.positives if not v.device_error],
        "wrong_first_chapter": [v.entry["id"] for v in report.positives if v.device_error and not v.hit],
        "raised": [v.entry["id"] for v in report.verdicts if v.error is not None],
    }
    return out


def print_heldout(figures: dict[str, Any], out=sys.stdout) -> None:
    """Print the held-out figures: numbers and ids, no message text."""

    def pct(a: int, b: int) -> str:
        return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "-"

    rows = [("all", figures)] + list(figures["by_lang"].items())
    print(f"held-out: {figures['entries']} entries, {figures['device_errors']} device errors, "
          f"{figures['negatives']} negatives", file=out)
    print(f"  {'':6} {'right first':>15} {'within two':>15} {'conf-wrong':>10} {'declined':>9} {'false pos':>12}",
          file=out)
    for name, f in rows:
        print(f"  {name:6} {pct(f['right_first'], f['device_errors']):>15} "
              f"{pct(f['right_within_two'], f['device_errors']):>15} {f['confident_wrong']:>10} "
              f"{f['declined']:>9} {pct(f['false_positives'], f['negatives']):>12}", file=out)
    for name, ids in figures["ids"].items():
        if ids:
            print(f"{name.replace('_', ' ')}: {', '.join(ids)}", file=out)


def main(argv: list[str] | None = None) -> int:
    """Command line: print the corpus figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--time", action="store_true", help="also time diagnose() per message")
    parser.add_argument("--composition", action="store_true", help="print what the corpus holds, then stop")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--heldout", action="store_true",
                        help="score the held-out part (or --corpus FILE) the held-out way: figures and ids only, "
                             "never message text")
    args = parser.parse_args(argv)
    if args.heldout:
        sys.path.insert(0, str(ROOT))
        strata = {args.corpus.stem: load_corpus(args.corpus)} if args.corpus != CORPUS else heldout_strata()
        if len(strata) > 1:
            strata["all"] = [e for part in list(strata.values()) for e in part]
        for name, entries in strata.items():
            figures = heldout_figures(score(entries))
            if args.json:
                print(json.dumps({"stratum": name, **figures}, indent=1))
            else:
                print(f"--- stratum: {name}")
                print_heldout(figures)
        return 0
    if args.composition:
        print_composition(load_corpus(args.corpus))
        return 0
    sys.path.insert(0, str(ROOT))
    report = score(load_corpus(args.corpus), timed=args.time)
    if args.json:
        print(json.dumps(report.figures(), indent=1))
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
