"""Exercise checks in the spirit of Kaggle's learntools: check(), hint(), solution(), three verdicts."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from .messages import text

NOT_ATTEMPTED, INCORRECT, CORRECT = "not_attempted", "incorrect", "correct"


class Blank:
    """The placeholder `____` a learner replaces with an answer."""

    def __repr__(self) -> str:
        return "____"


____ = Blank()
_MISSING = object()


@dataclass
class Verdict:
    """The outcome of a check: a status, and the catalogue key and values of its explanation."""

    status: str
    key: str
    params: dict[str, object] = field(default_factory=dict)

    def message(self) -> str:
        """The explanation in the chosen language, with its verdict prefix."""
        return text(f"verdict.{self.status}", reason=text(self.key, **self.params))

    def __str__(self) -> str:
        return self.message()


def incorrect(key: str, **params: object) -> Verdict:
    """A wrong answer, explained by the catalogue message `key`."""
    return Verdict(INCORRECT, key, params)


def correct(key: str, **params: object) -> Verdict:
    """A right answer, with a short confirmation from the catalogue."""
    return Verdict(CORRECT, key, params)


class Exercise:
    """One exercise. Subclasses name the notebook variables they read and judge them in `judge`."""

    name = "ex"
    reads: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    solution_key = ""
    not_attempted_key = ""

    def __init__(self) -> None:
        self._hints_shown = 0

    def judge(self, **values: object) -> Verdict:  # pragma: no cover - abstract
        """Judge the learner's values; every value is present and not `____`."""
        raise NotImplementedError

    def evaluate(self, namespace: dict[str, object] | None = None, **given: object) -> Verdict:
        """The verdict for explicit values, falling back to `namespace` for names not given."""
        namespace = namespace or {}
        values = {n: given.get(n, namespace.get(n, _MISSING)) for n in self.reads}
        if any(v is _MISSING or isinstance(v, Blank) for v in values.values()):
            return Verdict(NOT_ATTEMPTED, self.not_attempted_key)
        return self.judge(**values)

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
        print(text(self.solution_key))


def _caller_namespace() -> dict[str, object]:
    # The notebook's globals: the frame that called check() or all_correct().
    frame = sys._getframe(2)
    return dict(frame.f_globals)
