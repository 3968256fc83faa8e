"""Run a buggy snippet and prove that it fails the way the lab says it does."""

from __future__ import annotations

import datetime
import json
import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import torch

from . import captures
from .devices import environment_report, is_accelerator
from .errors import KINDS, match_kind
from .messages import text

STRICT_ENV = "DEVICELAB_STRICT"
CAPTURE_LOG_ENV = "DEVICELAB_CAPTURE_LOG"


class BrokenLabError(AssertionError):
    """A reproduce step did not fail the way its lab promises: the lab itself is wrong."""


@dataclass
class Outcome:
    """What a reproduce step did: 'raised' (checked on this machine) or 'shown' (GPU capture shown)."""

    status: str
    kind: str
    message: str
    source: str  # "this machine", "captured", "expected"


def _print_block(message: str) -> None:
    print(textwrap.indent(textwrap.fill(message, 96, break_long_words=False), "    "))


def log_capture(lab: str, step: str, kind: str, message: str, device: torch.device) -> None:
    path = os.environ.get(CAPTURE_LOG_ENV)
    if not path:
        return
    env = environment_report(device)
    record = {
        "lab": lab,
        "step": step,
        "kind": kind,
        "message": message,
        "torch": torch.__version__,
        "gpu": env["gpu"],
        "cuda": env["cuda"],
        "date": datetime.date.today().isoformat(),
    }
    with open(path, "a", encoding="utf-8") as log:
        log.write(json.dumps(record, ensure_ascii=False) + "\n")


def reproduce(
    expect: str, *, device: torch.device, lab: str, needs_accelerator: bool = True, example: str | None = None
) -> Callable[[Callable[[], object]], Outcome]:
    """Decorator: run the function below at once and assert it raises the `expect` kind of error.

    `example` is the wording this step prints on a GPU, shown (labelled as expected) on machines
    without one until a GPU capture exists; it defaults to the kind's own example.
    """
    kind = KINDS[expect]
    example = example or kind.example
    if match_kind(kind.name, example) is None:
        raise ValueError(f"example does not match the {kind.name} wordings: {example!r}")

    def run(snippet: Callable[[], object]) -> Outcome:
        step = snippet.__name__
        can_fail_here = is_accelerator(device) or not needs_accelerator
        if not can_fail_here:
            if os.environ.get(STRICT_ENV) == "1":
                raise BrokenLabError(
                    text("reproduce.strict_no_accelerator", env=STRICT_ENV, device=device)
                )
            return _show_from_elsewhere(kind.name, lab, step, device, example)
        try:
            snippet()
        except Exception as error:  # noqa: BLE001 - any error is judged below
            message = str(error)
            found = match_kind(kind.name, message)
            if found is None:
                raise BrokenLabError(
                    text(
                        "reproduce.wrong_error",
                        key=step,
                        kind=kind.name,
                        expected=kind.example,
                        got=f"{type(error).__name__}: {message}",
                    )
                ) from error
            print(text("reproduce.raised", device=device, kind=type(error).__name__))
            _print_block(message)
            print()
            _print_block(found.reading())
            log_capture(lab, step, kind.name, message, device)
            return Outcome("raised", kind.name, message, "this machine")
        raise BrokenLabError(
            text("reproduce.did_not_raise", key=step, kind=kind.name, device=device)
        )

    return run


def _show_from_elsewhere(kind: str, lab: str, step: str, device: torch.device, example: str) -> Outcome:
    print(text("reproduce.no_accelerator", device=device))
    capture = captures.latest(lab, step)
    if capture is not None:
        print(text("reproduce.captured", gpu=capture["gpu"], torch=capture["torch"], date=capture["date"]))
        message, source = capture["message"], "captured"
    else:
        print(text("reproduce.expected_only"))
        message, source = example, "expected"
    _print_block(message)
    found = match_kind(kind, message)
    if found is not None:
        print()
        _print_block(found.reading())
    return Outcome("shown", kind, message, source)
