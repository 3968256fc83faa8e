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

from .causes import CAUSES, CHAPTER_TITLES, CHECK, LABELS
from .core import DEVICE, ErrorKind, Match, Route, derived, device_of, dtype_of, fill, js_source, normalise
from .kinds import ALL

__all__ = [
    "CAUSES", "CHAPTER_TITLES", "CHECK", "KINDS", "LABELS", "Diagnosis", "ErrorKind", "Match", "Route", "derived",
    "device_of", "diagnose", "dtype_of", "export", "fill", "lookup", "match_kind", "normalise", "register",
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


def _matches_in(line: str, kinds: list[ErrorKind]) -> list[Match]:
    found = []
    for kind in kinds:
        ordered = kind.match_ordered(line)
        if ordered is not None:
            fields = [(name, value) for name, value in ordered if not name.startswith("_")]
            markers = {name: value for name, value in ordered if name.startswith("_")}
            found.append(Match(kind, dict(fields), tuple(name for name, _ in fields), markers))
    return found


def _weight(found: list[Match]) -> int:
    return sum(len(value) for value in found[0].fields.values()) if found else -1


def _matches(text: str, kinds: list[ErrorKind]) -> list[Match]:
    """The matches of `kinds` in a pasted text, read with its lines joined by spaces, or glued where that reads
    more of the same family (a console that wrapped a word: "wrapper_CUDA_ad" + "dmm")."""
    spaced, glued = normalise(text)
    first = _matches_in(spaced, kinds)
    second = _matches_in(glued, kinds) if glued != spaced else []
    if second and (not first or (second[0].kind is first[0].kind and _weight(second) > _weight(first))):
        return second
    return first


def lookup(message: str) -> list[Match]:
    """Every indexed family whose wordings match `message` (old and new wordings alike), most specific first."""
    kinds = [k for k in _ordered() if k.indexed]
    found = _matches(message, [k for k in kinds if not k.fallback])
    return found or _matches(message, [k for k in kinds if k.fallback])


def match_kind(name: str, message: str) -> Match | None:
    """Match `message` against one family only."""
    found = _matches(message, [KINDS[name]])
    return found[0] if found else None


@dataclass(frozen=True)
class Diagnosis:
    """What a pasted text says: a device error or not, the chapter to read, and how sure the index is."""

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

    @property
    def recognised(self) -> bool:
        """True when some family of the index matched the text."""
        return self.match is not None

    @property
    def values(self) -> dict[str, str]:
        """The message's fields and what routing read from them (for filling templates)."""
        return self.match.values if self.match else {}


def diagnose(text: object) -> Diagnosis:
    """Read a pasted message, traceback or console fragment; never raises."""
    try:
        return _diagnose(str(text) if not isinstance(text, str) else text)
    except Exception:  # noqa: BLE001 - a reader's paste must never crash the reading
        return Diagnosis(False, None, False, [], None, (), None, None)


def _diagnose(text: str) -> Diagnosis:
    found = _matches(text, _ordered())
    if not found:
        return Diagnosis(False, None, False, [], None, (), None, None)
    match = found[0]
    values = match.values
    route = match.kind.outcome(values)
    device_error = match.kind.device_error if route.device_error is None else route.device_error
    chapter = route.chapter
    candidates = [c for c in dict.fromkeys([chapter, *route.candidates]) if c]
    devices = tuple(d for d in values.get("devices", "").split(",") if d)
    return Diagnosis(
        device_error=device_error,
        chapter=chapter,
        confident=bool(route.confident and chapter),
        candidates=candidates,
        kind=route.family or match.kind.name,
        devices=devices,
        op=values.get("op") or None,
        argument=values.get("arg") if values.get("arg") and not values["arg"].isdigit() else None,
        causes=route.causes if device_error else (),
        match=match,
    )


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
                "reading_without_op": k.reading_without_op,
            }
            for k in _ordered()
        ],
        "causes": CAUSES,
        "check": CHECK,
        "labels": LABELS,
        "chapters": CHAPTER_TITLES,
    }
