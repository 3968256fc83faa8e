"""The error index: every wording PyTorch has used for a device error, the chapter that explains it, and a
reading of a pasted message (`diagnose`) that names the operation, the argument and both devices.

    >>> d = diagnose("RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, "
    ...              "different from other tensors on cuda:0 (when checking argument in method "
    ...              "wrapper_CUDA__index_select)")
    >>> d.device_error, d.chapter, d.confident, d.devices, d.argument
    (True, '03-embedding', True, ('cpu', 'cuda:0'), 'index')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .causes import CAUSES, CHAPTER_TITLES, CHECK, LABELS, REASONS
from .core import (
    DEVICE,
    EXCEPTION_LINE,
    MAX_PASTE,
    ErrorKind,
    Match,
    Route,
    derived,
    device_of,
    dtype_of,
    error_part,
    fill,
    is_caseless,
    js_source,
    normalise,
    plain,
    rejoin,
    unescape,
)
from .evidence import AMP_WORDS, Evidence, Frame, evidence, frames, rules_for_export
from .kinds import ALL

__all__ = [
    "CAUSES", "CHAPTER_TITLES", "CHECK", "KINDS", "LABELS", "REASONS", "Diagnosis", "ErrorKind", "Evidence", "Frame",
    "Match", "Ranked", "Route", "derived", "device_of", "diagnose", "dtype_of", "evidence", "export", "fill", "focus",
    "frames", "lookup", "match_kind", "normalise", "register",
]

KINDS: dict[str, ErrorKind] = {}


def register(kind: ErrorKind) -> ErrorKind:
    """Add a family to the index (tried after those already there, unless it is a fallback)."""
    KINDS[kind.name] = kind
    return kind


for _kind in ALL:
    register(_kind)


def _ordered() -> list[ErrorKind]:
    kinds = list(KINDS.values())
    return [k for k in kinds if not k.fallback] + [k for k in kinds if k.fallback]


def _matches_in(line: str, kinds: list[ErrorKind], caseless: bool = False) -> list[Match]:
    found = []
    for kind in kinds:
        ordered = kind.match_ordered(line, caseless)
        if ordered is not None:
            fields = [(name, value) for name, value in ordered if not name.startswith("_")]
            markers = {name: value for name, value in ordered if name.startswith("_")}
            found.append(Match(kind, dict(fields), tuple(name for name, _ in fields), markers))
    return found


def _weight(found: list[Match]) -> int:
    return sum(len(value) for value in found[0].fields.values()) if found else -1


def _matches(text: str, kinds: list[ErrorKind], caseless: bool = False) -> list[Match]:
    """The matches of `kinds` in a pasted text, read with its lines joined by spaces, or glued where that reads
    more of the same family (a console that wrapped a word: "wrapper_CUDA_ad" + "dmm"). A family scoped to the
    error lines reads only those."""
    whole, errors = normalise(text), normalise(error_part(text))

    def both(form: int) -> list[Match]:
        found = [m for k in kinds for m in _matches_in((errors if k.scope == "error" else whole)[form], [k], caseless)]
        return found

    spaced, glued = whole
    first = both(0)
    second = both(1) if glued != spaced or errors[1] != errors[0] else []
    # the glued reading wins when it reads more of the same family, or a family of its own where the spaced one
    # read only the general fallback ("torch.cuda.i" + "s_available()" wrapped at a fixed width)
    if second and (not first or (second[0].kind is first[0].kind and _weight(second) > _weight(first))
                   or (first[0].kind.fallback and not second[0].kind.fallback)):
        return second
    return first


def lookup(message: str) -> list[Match]:
    """Every indexed family whose wordings match `message` (old and new wordings alike), most specific first."""
    kinds = [k for k in _ordered() if k.indexed]
    message = plain(unescape(message))
    caseless = is_caseless(message)
    found = _matches(message, [k for k in kinds if not k.fallback], caseless)
    return found or _matches(message, [k for k in kinds if k.fallback], caseless)


def match_kind(name: str, message: str) -> Match | None:
    """Match `message` against one family only."""
    found = _matches(message, [KINDS[name]])
    return found[0] if found else None


@dataclass(frozen=True)
class Ranked:
    """A chapter to read, why (a key of REASONS) and, when a traceback frame was the evidence, which one."""

    chapter: str
    reason: str
    where: str = ""


@dataclass(frozen=True)
class Diagnosis:
    """What a pasted text says: a device error or not, the chapters to read (most likely first, each with its
    reason), and whether the evidence is strong enough to name the first one with confidence."""

    device_error: bool
    chapter: str | None
    confident: bool
    candidates: list[str]
    kind: str | None
    devices: tuple[str, ...]
    op: str | None
    argument: str | None
    causes: tuple[str, ...] = ()
    match: Match | None = None
    ranking: tuple[Ranked, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    cut: int = 0  # characters of a long paste that were not read (lines with no error, frame or device in them)
    error_line: bool = False  # the paste holds a line that looks like an exception (`SomethingError: ...`)

    @property
    def recognised(self) -> bool:
        """True when some family of the index matched the text."""
        return self.match is not None

    @property
    def values(self) -> dict[str, str]:
        """The message's fields and what routing read from them (for filling templates)."""
        return self.match.values if self.match else {}


_RELEVANT = re.compile(
    r"Error|error|Exception|Traceback|File |line \d|device|Device|DEVICE|cuda|CUDA|cpu|CPU|mps|meta|Backend|backend|"
    r"tensor|Tensor|->|Cell In|\.py|设备|错误|报错|张量",
    re.ASCII,
)
_ERROR_LINE = re.compile(r"(?:^|\s)(?:[\w.]*(?:Error|Exception)\b|Traceback\b)|报错|错误|Error[:：]", re.ASCII)


def focus(text: str) -> tuple[str, int]:
    """A long paste (a whole log) cut down to the lines that can hold an error, a frame or a device, and how many
    characters were left out. Short pastes are read whole."""
    if len(text) <= MAX_PASTE:
        return text, 0
    lines = text.replace("\r\n", "\n").split("\n")
    keep = [i for i, line in enumerate(lines) if _RELEVANT.search(line)]
    kept = sorted({j for i in keep for j in (i, i + 1) if j < len(lines)})  # a frame's code line follows it
    focused = "\n".join(lines[j] for j in kept)
    if len(focused) > MAX_PASTE:  # still a log: its end is where the error is
        focused = focused[-MAX_PASTE:]
    return focused, max(0, len(text) - len(focused))


def diagnose(text: object) -> Diagnosis:
    """Read a pasted message, traceback or console fragment, of any size; never raises."""
    try:
        return _diagnose(str(text) if not isinstance(text, str) else text)
    except Exception:  # noqa: BLE001 - a reader's paste must never crash the reading
        return Diagnosis(False, None, False, [], None, (), None, None)


_HALF = re.compile(r"[Hh]alf|[Bb][Ff]loat16|float16|HALF", re.ASCII)


def _diagnose(text: str) -> Diagnosis:
    read, cut = focus(rejoin(plain(unescape(text))))
    error_line = bool(_ERROR_LINE.search(read))
    caseless = is_caseless(read)  # a paste in lower case: its wordings and routes are read without regard to case
    found = _matches(read, _ordered(), caseless)
    if not found:
        return Diagnosis(False, None, False, [], None, (), None, None, cut=cut, error_line=error_line)
    match = found[0]
    values = {**match.values, "_text": normalise(read)[0]}  # routes may look at the whole paste
    route = match.kind.outcome(values, caseless)
    device_error = match.kind.device_error if route.device_error is None else route.device_error
    chapter = route.chapter
    confident = bool(route.confident and chapter)
    candidates = [c for c in dict.fromkeys([chapter, *route.candidates]) if c]
    causes = route.causes if device_error else ()
    kind = route.family or match.kind.name
    seen = tuple(evidence(frames(read)))
    ranking: list[Ranked] = []
    if device_error:
        library = [e for e in seen if e.library]
        own = [e for e in seen if not e.library]
        # A PyTorch frame says where the error happened: it outranks the message. The reader's own line does too,
        # unless the message alone already names its chapter with confidence.
        first = library + ([] if confident else own)
        ranking = [Ranked(e.chapter, e.reason, e.where) for e in first]
        ranking += [Ranked(c, "message" if n == 0 else "message_also") for n, c in enumerate(candidates)]
        ranking += [Ranked(e.chapter, e.reason, e.where) for e in (own if confident else [])]
        ranking += [Ranked(c, "evidence_also") for e in seen for c in e.also]
        if seen and ranking[0].chapter != chapter:
            confident = False  # the frames and the message disagree: a ranking, not a certainty
            extra = {"07-checkpoints": "optimizer_state", "08-amp": None, "04-batches": "batch_not_moved",
                     "05-inside": "tensor_made_inside", "06-multigpu": "multi_gpu_mix"}.get(ranking[0].chapter)
            if extra and extra not in causes:
                causes = (extra, *causes)
    else:
        if kind == "dtype_mismatch":
            # A dtype mismatch is mixed precision's business only when half precision or autocast is in the paste.
            fields = str({k: v for k, v in values.items() if k != "_text"})
            if not (_HALF.search(fields) or _HALF.search(read) or re.search(AMP_WORDS, read)
                    or any(e.chapter == "08-amp" for e in seen)):
                chapter, candidates = None, []
        if kind == "invalid_device_ordinal" and any(e.reason in ("serialization", "torch_load") for e in seen):
            chapter, candidates, causes = "07-checkpoints", ["07-checkpoints"], ("map_location_remap",)
        if chapter:
            where = next((e for e in seen if e.chapter == chapter), None)
            ranking = [Ranked(chapter, where.reason, where.where) if where else Ranked(chapter, "message")]
    ranking = _unique(ranking)
    chapters = [r.chapter for r in ranking]
    devices = tuple(d for d in values.get("devices", "").split(",") if d)
    return Diagnosis(
        device_error=device_error,
        chapter=chapters[0] if chapters else None,
        confident=bool(confident and chapters),
        candidates=chapters,
        kind=kind,
        devices=devices,
        op=values.get("op") or None,
        argument=values.get("arg") if values.get("arg") and not values["arg"].isdigit() else None,
        causes=tuple(causes),
        match=match,
        ranking=tuple(ranking),
        evidence=seen,
        cut=cut,
        error_line=error_line,
    )


def _unique(ranking: list[Ranked]) -> list[Ranked]:
    seen: set[str] = set()
    out = []
    for r in ranking:
        if r.chapter and r.chapter not in seen:
            seen.add(r.chapter)
            out.append(r)
    return out


# --------------------------------------------------------------------------------------------- the browser's copy


def _js(pattern: str) -> str:
    return re.sub(r"\(\?P<", "(?<", js_source(pattern))


def _route(route: Route) -> dict[str, object]:
    return {"when": route.when, "chapter": route.chapter, "confident": route.confident, "causes": list(route.causes),
            "candidates": list(route.candidates), "device_error": route.device_error, "family": route.family}


def export() -> dict[str, object]:
    """The whole index as plain data, for the paste page's JavaScript interpreter (one source of truth)."""
    return {
        "device": DEVICE,
        "kinds": [
            {
                "name": k.name, "chapter": k.chapter, "device_error": k.device_error, "confident": k.confident,
                "causes": list(k.causes), "candidates": list(k.candidates), "device_fields": list(k.device_fields),
                "scan": k.scan, "fallback": k.fallback, "patterns": [_js(p) for p in k.patterns],
                "routes": [_route(r) for r in k.routes], "reading": k.reading,
                "reading_without_op": k.reading_without_op, "reading_by_marker": k.reading_by_marker,
                "scope": k.scope, "prefer_pair": k.prefer_pair, "undecided": k.undecided,
            }
            for k in _ordered()
        ],
        "causes": CAUSES,
        "reasons": REASONS,
        "frames": rules_for_export(),
        "max_paste": MAX_PASTE,
        "relevant": _RELEVANT.pattern,
        "error_line": _ERROR_LINE.pattern,
        "exception_line": EXCEPTION_LINE,
        "half": _HALF.pattern,
        "check": CHECK,
        "labels": LABELS,
        "chapters": CHAPTER_TITLES,
    }
