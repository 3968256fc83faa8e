"""What the frames of a pasted traceback say about where a device error happened.

A message names an operation and two devices; the traceback around it says *where*: inside an optimizer's
`step` (its state was left on another device: chapter 07), inside `torch.load` (07), inside DataParallel or
DDP (06), inside autocast or a GradScaler (08), inside the DataLoader (04), or on a line of the reader's own
`forward` that makes a tensor without `device=` (05). `frames()` reads the frames of the three traceback
styles people paste (Python's, IPython 8's and older IPython's); `evidence()` applies the rules below to them.

Every rule is data (regexes, a chapter, a reason), exported with the index so that the paste page's
JavaScript reads tracebacks exactly as this module does. Keep the regexes JavaScript-compatible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .core import ANSI, bare_line

# Python: `  File "/x/torch/optim/sgd.py", line 84, in step` then the code line.
_PYTHON = re.compile(r'^\s*File "(?P<path>[^"\n]+)", line (?P<line>\d+), in (?P<func>\S+)', re.ASCII)
# IPython >= 8: `File /x/torch/nn/modules/module.py:1736, in Module._call_impl(self, *args)` and `Cell In[3], line 5`.
_IPYTHON = re.compile(r"^\s*(?:File )?(?P<path>[^\s,:()]+\.py):(?P<line>\d+), in (?P<func>[\w.<>]+)", re.ASCII)
_CELL = re.compile(r"^\s*(?P<path>Cell In ?\[\d*\]|Input In ?\[\d*\]), line (?P<line>\d+)(?:, in (?P<func>[\w.<>]+))?",
                   re.ASCII)
# IPython < 8: `/x/torch/optim/adam.py in step(self, closure)` and `<ipython-input-5-2f1c> in <module>`.
_OLD_IPYTHON = re.compile(r"^\s*(?P<path>(?:/|[A-Za-z]:[\\/]|~)\S+\.py|<ipython-input-[\w-]+>) in (?P<func>[\w.<>]+)\(",
                          re.ASCII)
# The line that raised, in IPython's listings: `----> 5 y = model(x)`.
_ARROW = re.compile(r"^\s*-+>\s*(?P<line>\d+)\s?(?P<code>.*)$", re.ASCII)
_TORCH = re.compile(r"(?:^|/)(?P<rel>torch/(?:nn|optim|utils|amp|cuda|distributed|autograd|_dynamo|_inductor|fx|jit|"
                    r"backends|sparse|_\w+\.py|serialization\.py|storage\.py|functional\.py|overrides\.py)(?:/.*)?)$",
                    re.ASCII)


@dataclass(frozen=True)
class Frame:
    """One frame of a traceback: file, line, function and the code shown for it."""

    path: str
    line: str
    func: str
    code: str

    @property
    def torch_path(self) -> str:
        """The path from `torch/` on for a frame inside PyTorch, else ''."""
        found = _TORCH.search(self.path)
        return found.group("rel") if found else ""

    @property
    def where(self) -> str:
        """The frame as a reader finds it in the traceback: `optim/sgd.py, line 84, in step`."""
        rel = self.torch_path
        shown = rel[len("torch/"):] if rel else self.path.rsplit("/", 1)[-1]
        return f"{shown}, line {self.line}, in {self.func}" if self.line else f"{shown}, in {self.func}"


# A traceback whose line breaks a page lost: a frame's header after other text on its line, the code after the header.
_FLAT = re.compile(r'(?<=\S)[ \t]+(?=File "[^"\n]+", line \d+, in \S)', re.ASCII)
_AFTER_HEADER = re.compile(r'(File "[^"\n]+", line \d+, in \S+)[ \t]+(?=\S)', re.ASCII)
_BEFORE_ERROR = re.compile(r"[ \t]+(?=[A-Za-z_][\w.]*(?:Error|Exception|Warning)\b:)", re.ASCII)


def _unflatten(line: str) -> list[str]:
    """A flattened traceback (`... in <module> y = model(x) File "...", line 9, in forward ...`) as the lines it
    was: one frame per line, its code below it, the exception on a line of its own."""
    split = _AFTER_HEADER.sub("\\1\n    ", _FLAT.sub("\n", line))
    return [line] if split == line else _BEFORE_ERROR.sub("\n", split).split("\n")


def _rewrapped(lines: list[str]) -> list[str]:
    """Frame headers that a fixed-width paste wrapped (`File "/x/torch/nn/modules/mod` + `ule.py", line 8, in f`),
    each glued back to one line."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if (index + 1 < len(lines) and line.lstrip().startswith('File "') and not _PYTHON.match(line)
                and _PYTHON.match(line + lines[index + 1])):
            line, index = line + lines[index + 1], index + 1
        out.append(line)
        index += 1
    return out


def frames(text: str) -> list[Frame]:
    """The frames of every traceback in a pasted text, outermost first, each with its code line if shown."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").replace("\\\\", "/").split("\n")
    # colours, `> ` quoting, torchrun's `[rank0]:` prefix and a web page's no-break spaces are not part of a frame
    lines = [part for line in lines for part in _unflatten(bare_line(ANSI.sub("", line)).replace("\\", "/"))]
    lines = _rewrapped(lines)
    found: list[Frame] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        match = _PYTHON.match(line) or _IPYTHON.match(line) or _CELL.match(line) or _OLD_IPYTHON.match(line)
        if not match:
            index += 1
            continue
        groups = match.groupdict()
        path, number = groups["path"], groups.get("line") or ""
        func = groups.get("func") or "<cell>"
        code = ""
        if match.re is _PYTHON:
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if not following.strip() and index + 2 < len(lines) and lines[index + 2][:1] in (" ", "\t"):
                following = lines[index + 2]  # a page that put a blank line after every line of the paste
            if following.strip() and not _starts_frame(following) and not set(following.strip()) <= set("^~ "):
                code = following.strip()
        else:  # IPython: the arrowed line of the listing below the header
            for below in lines[index + 1: index + 40]:
                if _starts_frame(below):
                    break
                arrow = _ARROW.match(below)
                if arrow:
                    number, code = number or arrow.group("line"), arrow.group("code").strip()
                    break
        found.append(Frame(path, number, func, code))
        index += 1
    return found


def _starts_frame(line: str) -> bool:
    return bool(_PYTHON.match(line) or _IPYTHON.match(line) or _CELL.match(line) or _OLD_IPYTHON.match(line))


@dataclass(frozen=True)
class FrameRule:
    """A frame that points to a chapter: a PyTorch file (and function), or a line of the reader's own code."""

    reason: str  # key of REASONS
    chapter: str
    torch_path: str = ""  # regex on the path from torch/ on (library frames)
    func: str = ""  # regex on the function name
    code: str = ""  # regex on the code line (the reader's own frames)
    code_not: str = ""  # ...that this regex does not match
    also: tuple[str, ...] = ()  # the next chapters to read for this reason


# Innermost frames are read first: the library frame closest to the error, then the reader's own line.
LIBRARY_RULES: tuple[FrameRule, ...] = (
    FrameRule("optimizer_step", "07-checkpoints", torch_path=r"^torch/optim/", also=("01-devices",)),
    FrameRule("grad_scaler", "08-amp", torch_path=r"^torch/(?:amp|cuda/amp)/grad_scaler\.py"),
    FrameRule("autocast", "08-amp", torch_path=r"^torch/(?:amp/autocast_mode|cuda/amp/autocast_mode|amp/)"),
    FrameRule("serialization", "07-checkpoints",
              torch_path=r"^torch/(?:serialization|_utils|storage|jit/_serialization)\.py"),
    FrameRule("data_parallel", "06-multigpu",
              torch_path=r"^torch/nn/parallel/(?:data_parallel|parallel_apply|replicate|scatter_gather|comm|_functions)"
              r"\.py", also=("02-dataparallel",)),
    FrameRule("distributed", "06-multigpu", torch_path=r"^torch/(?:nn/parallel/distributed\.py|distributed/)"),
    FrameRule("dataloader", "04-batches", torch_path=r"^torch/utils/data/"),
    FrameRule("rnn", "05-inside", torch_path=r"^torch/nn/modules/rnn\.py"),
    FrameRule("embedding", "03-embedding", torch_path=r"^torch/nn/(?:modules/sparse\.py|functional\.py)",
              func=r"^(?:Embedding\.)?(?:forward|embedding|embedding_bag)$"),
    FrameRule("loss", "03-embedding", torch_path=r"^torch/nn/(?:modules/loss\.py|functional\.py)",
              func=r"(?:loss|cross_entropy|nll_loss|forward)$", also=("02-dataparallel",)),
)

_FACTORY = (r"\btorch\.(?:zeros|ones|empty|full|rand|randn|randint|randperm|arange|linspace|logspace|eye|tensor|"
            r"as_tensor|from_numpy|FloatTensor|LongTensor|Tensor|BoolTensor)\(")
USER_RULES: tuple[FrameRule, ...] = (
    FrameRule("factory_in_forward", "05-inside", func=r"forward$", code=_FACTORY, code_not=r"device ?="),
    FrameRule("layer_in_forward", "05-inside", func=r"forward$", code=r"\bnn\.[A-Z]\w*\("),
    FrameRule("numpy_call", "09-debugging", code=r"\.numpy\(\)", code_not=r"\.cpu\(\)\s*\.numpy\(\)"),
    FrameRule("torch_load", "07-checkpoints", code=r"\btorch\.(?:jit\.)?load\("),
    FrameRule("load_state_dict", "07-checkpoints", code=r"optim\w*\.load_state_dict\("),
    FrameRule("optimizer_step_call", "07-checkpoints", code=r"\b(?:optim\w*|opt)\.step\(\)"),
    FrameRule("scaler_call", "08-amp", code=r"\bscaler\.(?:step|scale|unscale_)\("),
    FrameRule("batch_loop", "04-batches", code=r"\bfor\b[^:]*\bin\b[^:]*\b(?:batch|loader|dataloader)\b"),
)

# The error raised on a line of the reader's own code (not inside a PyTorch layer): the operation that mixes the
# devices is written there, so one of its tensors was made or kept there (a layer would fail inside PyTorch when
# only its input was left behind). Not for the top level of a script, where batches and labels are handled.
# Nor for a line that calls a whole model or pipeline (a cut traceback: the error was raised inside it), nor for a
# dispatcher's frame ("execute": an application that runs nodes or jobs prints its traceback after the message,
# often cut there).
OWN_LINE = FrameRule("raised_in_own_code", "05-inside",
                     func=r"^(?!<|main$|train|evaluat|valid|test|run|fit|step$|execute$)",
                     code=r".",
                     code_not=r"\b(?:net|model|module|network|pipe|pipeline|self\.model|self\.net|self\.pipe)\(",
                     also=("01-devices",))
# Frames in installed packages are not the reader's own code.
INSTALLED = r"(?:site|dist)-packages/|/lib/python[\d.]+/"

# Words in a traceback that say mixed precision is in play (for dtype mismatches).
AMP_WORDS = r"autocast|GradScaler|\.half\(\)|torch\.float16|torch\.bfloat16|\bamp\b|bf16|fp16"


@dataclass(frozen=True)
class Evidence:
    """A frame that points to a chapter, and why."""

    chapter: str
    reason: str
    where: str
    code: str
    also: tuple[str, ...] = ()
    library: bool = True


def _applies(rule: FrameRule, frame: Frame, path: str) -> bool:
    if rule.torch_path and not re.search(rule.torch_path, path, re.ASCII):
        return False
    if rule.func and not re.search(rule.func, frame.func.rsplit(".", 1)[-1] if rule.torch_path else frame.func,
                                   re.ASCII):
        return False
    if rule.code and not re.search(rule.code, frame.code, re.ASCII):
        return False
    return not (rule.code_not and re.search(rule.code_not, frame.code, re.ASCII))


def evidence(found: list[Frame]) -> list[Evidence]:
    """What the frames point to, strongest first: the innermost PyTorch frame a rule knows, then the reader's lines."""
    library: list[Evidence] = []
    own: list[Evidence] = []
    innermost = found[-1] if found else None
    for frame in reversed(found):
        path = frame.torch_path
        if path:
            for rule in LIBRARY_RULES:
                if _applies(rule, frame, path):
                    library.append(Evidence(rule.chapter, rule.reason, frame.where, frame.code, rule.also, True))
                    break
        elif frame.code:
            for rule in USER_RULES:
                if _applies(rule, frame, ""):
                    own.append(Evidence(rule.chapter, rule.reason, frame.where, frame.code, rule.also, False))
                    break
            else:
                if frame is innermost and not re.search(INSTALLED, frame.path) and _applies(OWN_LINE, frame, ""):
                    own.append(Evidence(OWN_LINE.chapter, OWN_LINE.reason, frame.where, frame.code, OWN_LINE.also,
                                        False))
    return library[:1] + own[:2]


def rules_for_export() -> dict[str, object]:
    """The rules as plain data for the paste page."""

    def rule(r: FrameRule) -> dict[str, object]:
        return {"reason": r.reason, "chapter": r.chapter, "torch_path": r.torch_path, "func": r.func, "code": r.code,
                "code_not": r.code_not, "also": list(r.also)}

    def js(pattern: re.Pattern[str]) -> str:
        return pattern.pattern.replace("(?P<", "(?<")

    return {
        "library": [rule(r) for r in LIBRARY_RULES], "user": [rule(r) for r in USER_RULES], "own_line": rule(OWN_LINE),
        "installed": INSTALLED,
        "amp": AMP_WORDS,
        "python": js(_PYTHON), "ipython": js(_IPYTHON), "cell": js(_CELL), "old_ipython": js(_OLD_IPYTHON),
        "arrow": js(_ARROW), "torch": js(_TORCH),
    }
