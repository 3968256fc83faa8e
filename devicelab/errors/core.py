"""The error index's machinery: families of wordings, a normaliser for pasted text, and the reading of a message.

Everything a family says is data (regexes, routes, templates), so that the "Paste your error" page can apply
the same rules in the reader's browser: `export()` writes them as JSON and docs/assets/javascripts/explain.js
interprets them exactly as `diagnose()` does here. Keep the regexes JavaScript-compatible: no inline flags,
no `\\Z`, no `(?P=name)`, ASCII classes only (they are compiled with re.ASCII here, as JavaScript does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..messages import get_language

# Every device type PyTorch prints, with its optional index ("cuda:0", "mps:0", "cpu").
DEVICE_TYPES = r"cuda|cpu|mps|xpu|meta|hpu|npu|xla|privateuseone|ipu|mtia|lazy|vulkan|hip|mkldnn|maia|ort|ve"
DEVICE = r"(?:" + DEVICE_TYPES + r")(?::\d+)?"
_DEVICE_TOKEN = re.compile(r"\b" + DEVICE + r"(?![\w-])", re.ASCII)


@dataclass(frozen=True)
class Route:
    """One routing rule of a family: when every field matches its regex, the message gets this outcome."""

    when: dict[str, str]
    chapter: str | None
    confident: bool = True
    causes: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    device_error: bool | None = None  # None: the family's own
    family: str | None = None  # another family name for this outcome (a dtype mismatch found by the conv wording)

    def applies(self, values: dict[str, str], caseless: bool = False) -> bool:
        """True when every condition of the rule holds for these fields (`caseless`: a paste written in lower case,
        see `is_caseless()`)."""
        flags = re.ASCII | (re.IGNORECASE if caseless else 0)
        return all(re.search(pattern, values.get(name, ""), flags) for name, pattern in self.when.items())


@dataclass(frozen=True)
class ErrorKind:
    """One family of messages: its wordings (old and new), the chapter that explains it and how to read it."""

    name: str
    chapter: str | None
    patterns: tuple[str, ...]
    example: str
    reading: dict[str, str] = field(default_factory=dict)
    # How to read a wording that names no operation (the short "... cuda:0 and cpu!" form), if it differs.
    reading_without_op: dict[str, str] = field(default_factory=dict)
    # How to read a wording recognised by a marker group (`_meta`, `_mps`, …) that names no field the reading needs:
    # {marker: {lang: text}}; the first marker the message matched wins.
    reading_by_marker: dict[str, dict[str, str]] = field(default_factory=dict)
    routes: tuple[Route, ...] = ()
    device_error: bool = True
    confident: bool = True
    causes: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()
    # The fields that name a device (or a legacy type name that carries one), read by device_of().
    device_fields: tuple[str, ...] = ("want", "found")
    # A field whose text is scanned for device names when the wording has no fixed place for them.
    scan: str | None = None
    # Tried only when no other family matched (a catch-all for hand-written checks).
    fallback: bool = False
    # Part of the index that lookup() searches; False for families recognised only to be declined.
    indexed: bool = True
    # "paste": read the whole paste; "error": only its error lines (see error_part), so that the poster's own words
    # ("it runs on the CPU but not on the GPU") are not read as the message.
    scope: str = "paste"
    # A declined family whose message does not say whether the error is a device error (it says where it happened):
    # the answer says "not known to be" one rather than "not" one.
    undecided: bool = False
    # A match that names one device twice ("a GPU other than cuda: 0") is passed over for a later one that names two
    # different devices ("tensors were found at cuda:0 and cuda:4") or reads the message without naming any ("the
    # weights were not transferred to CUDA"); the first match stands when there is none.
    prefer_pair: bool = False

    def compiled(self, caseless: bool = False) -> list[re.Pattern[str]]:
        """The wordings as compiled regexes (a space in a wording may be missing in a paste)."""
        return _compiled(self.patterns, caseless)

    def match(self, message: str) -> dict[str, str] | None:
        """The named fields of the first wording that matches `message` (a paste, normalised first), or None."""
        for variant in dict.fromkeys(normalise(message)):
            found = self.match_ordered(variant)
            if found is not None:
                return {name: value for name, value in found if not name.startswith("_")}
        return None

    def match_ordered(self, message: str, caseless: bool = False) -> list[tuple[str, str]] | None:
        """Like match(), with the fields in the order they appear in the message."""
        patterns = self.compiled(caseless)
        if not self.prefer_pair:  # the first wording that matches (most families: no loop over every match)
            for pattern in patterns:
                found = pattern.search(message)
                if found is not None:
                    named = [(k, v) for k, v in found.groupdict().items() if v is not None]
                    return sorted(named, key=lambda item: found.start(item[0]))
            return None
        first: list[tuple[str, str]] | None = None
        for pattern in patterns:
            for found in pattern.finditer(message):
                named = [(k, v) for k, v in found.groupdict().items() if v is not None]
                ordered = sorted(named, key=lambda item: found.start(item[0]))
                devices = [device_of(v) for k, v in ordered if k in self.device_fields]
                relation = _relation(devices) if len(devices) == 2 and all(devices) else ""
                if first is None:
                    if relation != "same":
                        return ordered
                    first = ordered
                elif relation in ("type", "index") or not devices:
                    return ordered
        return first

    def outcome(self, values: dict[str, str], caseless: bool = False) -> Route:
        """The routing rule that applies to these fields (the family's default when none does)."""
        for route in self.routes:
            if route.applies(values, caseless):
                return route
        return Route({}, self.chapter, self.confident, self.causes, self.candidates)

    def chapter_for(self, fields: dict[str, str]) -> str | None:
        """The chapter that explains a message of this kind with these fields."""
        return self.outcome(derived(self, list(fields.items()))).chapter


_CACHE: dict[tuple[tuple[str, ...], bool], list[re.Pattern[str]]] = {}


def js_source(pattern: str) -> str:
    """A wording as the regex both Python and JavaScript compile: spaces optional, named groups in JS syntax."""
    return pattern.replace(" ", " ?")


def _compiled(patterns: tuple[str, ...], caseless: bool = False) -> list[re.Pattern[str]]:
    key = (patterns, caseless)
    if key not in _CACHE:
        flags = re.ASCII | (re.IGNORECASE if caseless else 0)
        _CACHE[key] = [re.compile(js_source(p), flags) for p in patterns]
    return _CACHE[key]


# --------------------------------------------------------------------------------------------- devices


# PyTorch 0.4 printed a tensor's type wrapped: Variable[CUDAFloatType]
_VARIABLE = re.compile(r"Variable\[(\w+)\]", re.ASCII | re.IGNORECASE)


def device_of(value: str) -> str:
    """The device a field names: a device string, a legacy type name (torch.cuda.FloatTensor), CPU/GPU, an index."""
    v = value.strip().strip("'\"")
    wrapped = _VARIABLE.fullmatch(v)
    if wrapped:
        return device_of(wrapped.group(1))
    low = v.lower()
    if re.fullmatch(DEVICE, low, re.ASCII):
        return low
    glued = re.fullmatch(r"([a-z]+)(\d+)", low, re.ASCII)  # "cuda1": a title that lost its colon
    if glued and re.fullmatch(DEVICE, glued.group(1), re.ASCII):
        return glued.group(1) + ":" + glued.group(2)
    if re.fullmatch(r"\d+", v):
        return "cuda:" + v
    if v == "-1":  # a device index of -1 is the CPU (Tensor.get_device(), the sparse constructors' check)
        return "cpu"
    shown = re.fullmatch(r"device\(type='(\w+)'(?:, ?index=(\d+))?\)", low, re.ASCII)  # torch.device's repr
    if shown:
        return shown.group(1) + (":" + shown.group(2) if shown.group(2) else "")
    numbered = re.fullmatch(r"(?:cuda |gpu )?device (-1|\d+)|(?:gpu|device) ?[:#-]? ?(\d+)", low, re.ASCII)
    if numbered and numbered.group(2):  # "GPU 1", "gpu:1", "device#0"
        return "cuda:" + numbered.group(2)
    if numbered:
        return "cpu" if numbered.group(1) == "-1" else "cuda:" + numbered.group(1)  # "device -1": the CPU
    if v in ("显卡", "显存"):
        return "cuda"
    if v == "内存":
        return "cpu"
    if low == "tpu":
        return "xla"
    if low in ("gpu", "gpus", "cuda") or re.fullmatch(r"graphics? cards?", low, re.ASCII):
        return "cuda"
    if low == "cpu":
        return "cpu"
    if re.fullmatch(r"thcuda\w*tensor", low, re.ASCII):  # TH's legacy C types (warp-ctc, old extensions)
        return "cuda"
    if re.fullmatch(r"th\w*tensor", low, re.ASCII):
        return "cpu"
    if low.startswith("torch.cuda.") or low.startswith("cuda") or "cuda" in low.split("."):
        return "cuda"
    if low.startswith("torch.mps.") or low.startswith("mps"):
        return "mps"
    if low.startswith("torch.xpu.") or low.startswith("xpu"):
        return "xpu"
    if re.fullmatch(r"torch\.\w+tensor", low, re.ASCII) or low.startswith("cpu"):
        return "cpu"
    return ""


def dtype_of(value: str) -> str:
    """The dtype a legacy type name carries (torch.cuda.HalfTensor -> Half), or ''."""
    v = value.strip()
    wrapped = _VARIABLE.fullmatch(v)
    if wrapped:
        return dtype_of(wrapped.group(1))
    found = re.fullmatch(r"(?:torch\.(?:cuda\.|mps\.|xpu\.)?|CUDA|CPU|MPS|XPU)(\w+?)(?:Tensor|Type)", v, re.ASCII)
    if found:
        return found.group(1)
    found = re.fullmatch(r"torch\.(?:cuda\.|mps\.|xpu\.)?([a-z]\w*?)tensor", v, re.ASCII)  # a paste in lower case
    if found:
        return found.group(1).capitalize()
    found = re.fullmatch(r"(?:c10::)?(\w+)", v, re.ASCII)
    if found and found.group(1).lower() in ("half", "float", "double", "bfloat16", "long", "int", "bool"):
        return {"half": "Half", "float": "Float", "double": "Double", "bfloat16": "BFloat16", "long": "Long",
                "int": "Int", "bool": "Bool"}[found.group(1).lower()]
    return ""


def derived(kind: ErrorKind, ordered: list[tuple[str, str]]) -> dict[str, str]:
    """The fields of a match plus what routing reads from them: each side's device, the pair's relation."""
    values = dict(ordered)
    devices: list[str] = []
    if kind.scan and kind.scan in values:
        for token in _DEVICE_TOKEN.findall(values[kind.scan]):
            if token not in devices:
                devices.append(token)
        for name, device in zip(("dev1", "dev2"), devices[:2]):
            values[name] = device
    else:
        for name, raw in ordered:
            if name in kind.device_fields:
                device = device_of(raw)
                if device and raw.startswith("device(type="):  # torch.device's repr: shown as the device it names
                    values[name] = device
                values[name + "_dev"] = device
                values[name + "_dtype"] = dtype_of(raw)
                if device:
                    devices.append(device)
    for name, device in zip(("dev1", "dev2"), devices[:2]):
        values.setdefault(name, device)
    values["devices"] = ",".join(devices)
    values["relation"] = _relation(devices)
    values["types"] = ",".join(sorted({d.split(":")[0] for d in devices}))
    dtypes = [values.get(n + "_dtype", "") for n in kind.device_fields]
    values["dtypes"] = ("same" if dtypes[0] == dtypes[1] else "different") if len(dtypes) == 2 and all(dtypes) else ""
    return values


def _relation(devices: list[str]) -> str:
    if len(devices) < 2:
        return ""
    a, b = devices[0], devices[1]
    if a == b:
        return "same"
    type_a, _, index_a = a.partition(":")
    type_b, _, index_b = b.partition(":")
    if type_a != type_b:
        return "type"
    return "index" if index_a and index_b and index_a != index_b else "same"


# --------------------------------------------------------------------------------------------- pastes

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# what a console or a reply puts before each line: `> ` quoting, torchrun's `[rank0]:` (older launchers `[default0]:`)
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?|\[(?:rank|default)\d+\]:[ \t]?)+")
_BOX = re.compile(r"[\u2500-\u257f]")
_PUNCTUATION = {0x2018: "'", 0x2019: "'", 0x201C: '"', 0x201D: '"', 0x3000: " ", 0x3002: ".", 0x3001: ",", 0x60: ""}
_PUNCTUATION.update({code: chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)})


MAX_PASTE, HEAD = 40_000, 8_000
# HTML's escapes, as a paste copied from a page's source or a scraped post shows them (`&#39;cuda:0&#39;`)
_ENTITY = re.compile(r"&(#[0-9]{1,6}|#[xX][0-9a-fA-F]{1,6}|lt|gt|quot|apos|amp|nbsp);")
_NAMED = {"lt": "<", "gt": ">", "quot": '"', "apos": "'", "amp": "&", "nbsp": "\u00a0"}
_UPPER = re.compile(r"[A-Z]")


def _entity(found: re.Match[str]) -> str:
    name = found.group(1)
    if name[0] != "#":
        return _NAMED[name]
    code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else found.group(0)


def unescape(text: str) -> str:
    """A paste with HTML's escapes (`&lt;`, `&quot;`, `&#39;`, `&#x27;`, ...) read as the characters they stand for."""
    return _ENTITY.sub(_entity, text) if "&" in text else text


# A title that a web page cut with "…" and whose body goes on with "…" ("tensor on different …" / "…devices when"):
# the two halves of one sentence, wherever the page put lines between them (quoted by a reply or prefixed by torchrun
# too).
_CUT_TITLE = re.compile(r"\u2026(?:[^\S\n]|>|\[rank\d+\]:)*(?:\n(?:[^\S\n]|>|\[rank\d+\]:)*)*\u2026")


# Characters a web page puts into copied text that the reader never means: zero-width spaces and joiners (some blogs
# put one between every few characters of a code block) and a byte-order mark; and typographic quotes for plain ones
# (`File “x.py”`, ‘cuda:0’), as a page that "smartens" quotes shows them.
_PLAIN = {0x200B: None, 0x200C: None, 0x200D: None, 0x2060: None, 0xFEFF: None,
          0x2018: "'", 0x2019: "'", 0x201C: '"', 0x201D: '"'}


# A console's colours whose escape character was lost on the way ("[0;31mRuntimeError[0m: ..."), and HTML's line
# breaks and text tags around a paste copied from a page's source ("<pre><code>...<br>...</code></pre>").
_ORPHAN_COLOUR = re.compile(r"\[(?:\d{1,3}(?:;\d{1,3})*m|m(?=[A-Z\s:]|$))", re.MULTILINE)
_BREAK = re.compile(r"<br ?/?>\n?", re.IGNORECASE)
_TEXT_TAG = re.compile(r"</?(?:pre|code|p|b|strong|i|em|span|div|tt|kbd|samp|blockquote)(?: [^<>\n]*)?>", re.IGNORECASE)


def plain(text: str) -> str:
    """A paste without zero-width characters, console colours (with or without their escape character) or HTML's
    line breaks and text tags, and with plain quotes for typographic ones."""
    text = ANSI.sub("", text.translate(_PLAIN))
    if "[" in text:
        text = _ORPHAN_COLOUR.sub("", text)
    if "<" in text:
        text = _TEXT_TAG.sub("", _BREAK.sub("\n", text))
    return text


def rejoin(text: str) -> str:
    """A paste with a title cut by "…" and continued by "…" after a line break, as one sentence again."""
    return _CUT_TITLE.sub("", text) if "\u2026" in text else text


def is_caseless(text: str) -> bool:
    """True for a paste with no capital letter at all (an issue title typed in lower case, a lowercased log): its
    wordings and routes are then read without regard to case. A paste with any capital is read as written."""
    return not _UPPER.search(text)


def bare_line(line: str) -> str:
    """A pasted line without what a reply or a console put before it (`> `, `[rank0]:`) and with a web page's
    no-break spaces as spaces: how the error lines and the traceback's frames are read."""
    return _QUOTE.sub("", line).replace("\u00a0", " ")


_INDENT = re.compile(r"^\s{2,}")
_SENTENCE_GLUE = re.compile(r"(?<=[a-z)\]'\"])([.!?])\n(?=[A-Z][a-z])")


def normalise(text: str) -> tuple[str, str]:
    """A pasted text as one line, two ways: lines joined with a space, and lines glued (a word wrapped mid-way)."""
    if len(text) > MAX_PASTE:  # a whole log: keep its head and its end, where the error is
        text = text[:HEAD] + "\n" + text[-(MAX_PASTE - HEAD):]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = ANSI.sub("", text).translate(_PUNCTUATION)
    lines = [_BOX.sub(" ", _QUOTE.sub("", line)) for line in text.split("\n")]
    spaced = re.sub(r"\s+", " ", " ".join(lines)).strip()
    # glued: a space kept where a line ends with one, or starts with a single one (a paste wrapped at a fixed width
    # at a space); an indentation of two or more is a console's or a traceback's, dropped as before. A sentence that
    # ends its line before a capital letter is not a wrapped word ("... cuda tensors." + "If they are on cpu ...").
    glued = re.sub(r"\s+", " ", _SENTENCE_GLUE.sub(r"\1 ", "\n".join(_INDENT.sub("", line) for line in lines))
                   .replace("\n", "")).strip()
    return spaced, glued


# A line that carries an exception (`RuntimeError: ...`, `AssertionError`, a C++ `Check failed`, a Chinese 报错), a
# C++ exception's `what():` under "terminate called after throwing ...", or a library's "Exception in aoti_torch: ...".
# A C++ stack frame that names the exception's constructor (`frame #0: c10::Error::Error(...)`) is not one: "::" is
# a scope, not a message. A name is read from its first character (a start inside a long word, a line of base64 or
# of digits, would scan the rest of it again at each character).
EXCEPTION_LINE = (r"(?:(?<![\w.])[\w.]*(?:Error|Exception|Warning|Failure)\b(?: in [\w.]+)? ?[:：](?![:：])|"
                  r"^ *[\w.]*(?:Error|Exception) *$|Check failed|\bwhat\(\): |报错|错误)")
_EXCEPTION = re.compile(EXCEPTION_LINE, re.ASCII)


_CLAUSE_END = "，,。；;：:！!？?"


def _clause_start(line: str, start: int) -> int:
    """Where an error line's text starts: at its exception, or, for a Chinese word for the error ("报错", "错误"), at
    the start of its clause, where Chinese posts name the error ("显卡device不一致错误", "GPU上就报错")."""
    if not line.startswith(("报错", "错误"), start):
        return start
    return max(line.rfind(mark, 0, start) for mark in _CLAUSE_END) + 1


def error_part(text: str) -> str:
    """The paste's error lines from their exception on (the poster's words before it left out, except the clause
    that a Chinese word for the error ends), each with the two lines after it (a message that wraps) and the line
    before it when that is a traceback's failing code (indented) or a failed `assert` statement; the whole paste when
    no line looks like an error."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines = [bare_line(line) for line in lines]
    found = {i: m.start() for i, line in enumerate(lines) if (m := _EXCEPTION.search(line))}
    if not found:
        return text
    keep: dict[int, str] = {}
    for i, start in found.items():
        if i > 0 and (lines[i - 1][:1] in (" ", "\t") or lines[i - 1].startswith("assert ")):
            keep.setdefault(i - 1, lines[i - 1])
        keep[i] = lines[i][_clause_start(lines[i], start):]
        for j in (i + 1, i + 2):
            if j < len(lines):
                keep.setdefault(j, lines[j][_clause_start(lines[j], found[j]):] if j in found else lines[j])
    return "\n".join(keep[j] for j in sorted(keep))


# --------------------------------------------------------------------------------------------- matches


@dataclass(frozen=True)
class Match:
    """A pasted message recognised by the index."""

    kind: ErrorKind
    fields: dict[str, str]
    order: tuple[str, ...] = ()
    markers: dict[str, str] = field(default_factory=dict)  # groups named _x: which wording matched, for routing

    @property
    def values(self) -> dict[str, str]:
        """The fields plus what routing reads from them."""
        names = self.order or tuple(self.fields)
        values = derived(self.kind, [(name, self.fields[name]) for name in names if name in self.fields])
        return {**self.markers, **values}

    @property
    def outcome(self) -> Route:
        """The routing rule that decides this message's chapter and causes."""
        return self.kind.outcome(self.values)

    @property
    def chapter(self) -> str | None:
        """The chapter that explains this message."""
        return self.outcome.chapter

    def reading(self, lang: str | None = None) -> str:
        """A one-paragraph reading of the message, in the chosen language."""
        lang = lang or get_language()
        for marker, texts in self.kind.reading_by_marker.items():
            if self.markers.get(marker):
                return fill(texts.get(lang, ""), self.values)
        short = not ({"op", "arg"} & set(self.fields)) and "want" in self.fields and bool(self.kind.reading_without_op)
        template = (self.kind.reading_without_op if short else self.kind.reading).get(lang, "")
        return fill(template, self.values)


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def fill(template: str, values: dict[str, str]) -> str:
    """A template with its {placeholders} filled in; a parenthesis or a sentence whose placeholder the message did
    not fill is left out (a reader never sees a blank slot)."""

    def missing(part: str) -> bool:
        return any(not values.get(name) for name in _PLACEHOLDER.findall(part))

    text = _PARENTHESIS.sub(lambda m: "" if missing(m.group(0)) else m.group(0), template)
    sentences = [part for part in _SENTENCE.split(text) if part and not missing(part)]
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], "".join(sentences)).strip()


# A parenthesis holding a placeholder (ASCII or full-width), and the end of a sentence in either language.
_PARENTHESIS = re.compile(r" ?[(（][^()（）]*\{\w+\}[^()（）]*[)）]")
_SENTENCE = re.compile(r"(?<=[.!?;:。！？；：])(?=\s|[^\x00-\x7f]|$)")
