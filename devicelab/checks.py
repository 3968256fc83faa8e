"""Exercise checks in the spirit of Kaggle's learntools: check(), hint(), solution(), three verdicts."""

from __future__ import annotations

import re
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from .messages import code_in_language, text
from .trust import untrusted

NOT_ATTEMPTED, INCORRECT, CORRECT = "not_attempted", "incorrect", "correct"


class Blank:
    """The placeholder `____` a learner replaces with an answer."""

    def __repr__(self) -> str:
        return "____"

    def __getattr__(self, name: str) -> object:
        # Code below an unfinished exercise uses its `____` (`model.parameters()`): say so in a sentence.
        if name.startswith("_"):
            raise AttributeError(name)  # Python's and IPython's own probes (__deepcopy__, _repr_html_, ...)
        raise AttributeError(text("blank.used", name=name))


____ = Blank()
_MISSING = object()


@dataclass
class Verdict:
    """The outcome of a check: a status, and the catalogue key and values of its explanation."""

    status: str
    key: str
    params: dict[str, object] = field(default_factory=dict)

    def message(self) -> str:
        """The explanation in the chosen language, with its verdict prefix (and a word on `meta` if it shows)."""
        reason = text(self.key, **self.params).replace("!.", "!")  # a quoted error's "!" ends the sentence
        if _META.search(reason) and not explains_meta(reason):
            reason += " " + text("check.meta_note")
        return text(f"verdict.{self.status}", reason=reason)

    def __str__(self) -> str:
        return self.message()


_META = re.compile(r"\bmeta\b")
# What a message that names `meta` must also say: that it stands in for the learner's GPU.
_EXPLAINED = (re.compile(r"stand(s|ing)? in for (a|your) GPU|stand-in for (a|your) GPU"), re.compile(r"代替.{0,6}GPU"))


def explains_meta(message: str) -> bool:
    """True when `message` says that `meta` stands in for the learner's GPU (in either language)."""
    return any(pattern.search(message) for pattern in _EXPLAINED)


def incorrect(key: str, **params: object) -> Verdict:
    """A wrong answer, explained by the catalogue message `key`."""
    return Verdict(INCORRECT, key, params)


def correct(key: str, **params: object) -> Verdict:
    """A right answer, with a short confirmation from the catalogue."""
    return Verdict(CORRECT, key, params)


class TimeLimit(BaseException):
    """Raised inside a check when the learner's code runs past the check's time limit.

    A BaseException, so that a learner's `except Exception:` cannot swallow it.
    """


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Stop the code inside after `seconds` with TimeLimit (main thread on POSIX; elsewhere no limit)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable or seconds <= 0:
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise TimeLimit(seconds)

    previous = signal.signal(signal.SIGALRM, stop)
    earlier_delay, _ = signal.getitimer(signal.ITIMER_REAL)
    signal.setitimer(signal.ITIMER_REAL, seconds if not earlier_delay else min(seconds, earlier_delay))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def bounded(iterable: Iterable[object], limit: int) -> list[object]:
    """At most `limit` items of the learner's iterable, so that an endless `__iter__` cannot hang a check."""
    # One iter() call only: islice(iter(x)) would call __iter__ twice on an object that is its own iterator.
    iterator = iter(iterable)
    items: list[object] = []
    for _ in range(limit):
        try:
            items.append(next(iterator))
        except StopIteration:
            break
    return items


class Exercise:
    """One exercise. Subclasses name the notebook variables they read and judge them in `judge`.

    `device` is the lab's device, given by the lab when it starts (never read from a notebook variable
    the learner could rebind). A judge never has to catch the learner's errors itself: `evaluate`
    turns any exception, and any run past `seconds`, into an "incorrect" verdict with a short reason.
    """

    name = "ex"
    reads: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    solution_key = ""
    not_attempted_key = ""
    seconds = 60.0  # the most a check may spend running the learner's code
    picks_device = False  # the learner's code chooses a device itself (it is not handed one)

    def __init__(self, device: torch.device | str | None = None) -> None:
        self._hints_shown = 0
        self.device = torch.device(device) if device is not None else torch.device("cpu")

    def judge(self, **values: object) -> Verdict:  # pragma: no cover - abstract
        """Judge the learner's values; every value is present and not `____`."""
        raise NotImplementedError

    def evaluate(self, namespace: dict[str, object] | None = None, **given: object) -> Verdict:
        """The verdict for explicit values, falling back to `namespace` for names not given."""
        namespace = namespace or {}
        values = {n: given.get(n, namespace.get(n, _MISSING)) for n in self.reads}
        if any(v is _MISSING or isinstance(v, Blank) for v in values.values()):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        try:
            distrust = untrusted()
            if not distrust:
                with time_limit(self.seconds):
                    verdict = self.judge(**values)
                distrust = untrusted()  # a class made while the learner's code ran
            if distrust:
                return incorrect("check.untrusted", what="; ".join(distrust[:3]))
        except TimeLimit:
            return incorrect("check.too_slow", seconds=int(self.seconds))
        except Exception as error:  # noqa: BLE001 - a check never raises: the learner's code may fail any way
            return self._explained(incorrect("check.crashed", error=short_error(error)))
        if not isinstance(verdict, Verdict):  # pragma: no cover - a bug in a judge, reported not raised
            return incorrect("check.crashed", error=f"no verdict ({type(verdict).__name__})")
        return self._explained(verdict)

    def _explained(self, verdict: Verdict) -> Verdict:
        """The verdict, or a sentence in place of a raw error it quotes that says what the learner's code did wrong.

        Every judge quotes the error of the learner's code as `error` (see `short_error`). Some errors are never about
        the exercise itself but about this machine: `.cuda()` (or "cuda") where there is no CUDA GPU fails inside
        PyTorch, whatever the exercise; the check says so in one sentence instead of PyTorch's driver message.
        """
        error = verdict.params.get("error")
        if verdict.status != INCORRECT or not isinstance(error, str) or self.device.type == "cuda":
            return verdict
        if no_cuda_here(error):
            return incorrect("check.no_cuda_pick" if self.picks_device else "check.no_cuda", device=self.device)
        return verdict

    def check(self, **given: object) -> None:
        """Print the verdict; names not given are read from the notebook. Never raises for a wrong answer."""
        verdict = self.evaluate(_caller_namespace(), **given)
        mark = {CORRECT: "✅", INCORRECT: "❌", NOT_ATTEMPTED: "📝"}[verdict.status]
        print(f"{mark} {self.name}: {verdict.message()}")

    def hint(self, level: int | None = None) -> None:
        """Print the next hint (or hint number `level`); each is more precise than the last."""
        total = len(self.hints)
        if level is None:
            if self._hints_shown >= total:
                print(text("hint.no_more", name=self.name))
                return
            level = self._hints_shown + 1
        level = max(1, min(level, total))
        self._hints_shown = max(self._hints_shown, level)
        print(text("hint.header", level=level, total=total), text(self.hints[level - 1]))

    def solution(self) -> None:
        """Print one correct answer."""
        print(text("solution.header"))
        print(code_in_language(text(self.solution_key)))


def no_cuda_here(error: str) -> bool:
    """True when a quoted error is PyTorch saying that this machine (or this torch) has no CUDA GPU to use, and
    nothing more specific: a checkpoint saved on a GPU, loaded without `map_location`, also names
    `torch.cuda.is_available()`, and that one is a chapter's own lesson (the error index tells them apart)."""
    from .errors import lookup, match_kind  # the error index knows every wording of both

    if match_kind("cuda_unavailable", error) is not None and not lookup(error):
        return True
    # In a forked process (a grader's or a test's fork of the notebook) the same `.cuda()` stops earlier, before
    # PyTorch looks for a driver: on a machine with no CUDA GPU it means the same.
    return "Cannot re-initialize CUDA in forked subprocess" in error and not torch.cuda.is_available()


def short_error(error: BaseException) -> str:
    """The error's type and the first line of its message, at most 300 characters: what a verdict quotes."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {first}"[:300] if first else type(error).__name__


def _caller_namespace() -> dict[str, object]:
    # The notebook's globals: the frame that called check() or all_correct().
    frame = sys._getframe(2)
    return dict(frame.f_globals)
