"""Run a small measurement on a CUDA GPU and log its figures, or show the figures a real GPU measured."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from numbers import Real

import torch

from . import captures, messages
from .devices import environment_report
from .messages import text
from .reproduce import STRICT_ENV, BrokenLabError, log_capture

KIND = "measurement"  # the `kind` of a measurement's record in the capture log and file
Step = Callable[[], Mapping[str, float]]  # a measurement: returns named figures


@dataclass
class Measurement:
    """What a measurement step did: 'measured' here, 'shown' (a GPU's capture) or 'missing' (none yet)."""

    status: str
    name: str
    message: str  # the one-line summary, as logged
    source: str  # "this machine", "captured", "none"
    figures: dict[str, float] = field(default_factory=dict)


def summary(figures: Mapping[str, float]) -> str:
    """The one-line summary of some figures: `name=value` pairs in order, floats to 3 significant digits."""
    return ", ".join(f"{name}={value:.3g}" if isinstance(value, float) else f"{name}={value}"
                     for name, value in figures.items())


def parse_summary(line: str) -> dict[str, float]:
    """The figures of a one-line summary (the inverse of `summary`, up to rounding)."""
    figures = {}
    for pair in line.split(", "):
        name, _, value = pair.partition("=")
        figures[name] = float(value)
    return figures


def measure(name: str, *, device: torch.device, lab: str) -> Callable[[Step], Measurement]:
    """Decorator: on a CUDA GPU run the function below at once, print and log its figures; elsewhere show a capture."""

    def run(step: Step) -> Measurement:
        if torch.device(device).type != "cuda":
            if os.environ.get(STRICT_ENV) == "1":
                raise BrokenLabError(text("measure.strict_no_cuda", env=STRICT_ENV, device=device))
            return _show_captured(name, lab, device)
        figures = step()
        if not isinstance(figures, Mapping) or not figures or not all(
            isinstance(key, str) and isinstance(value, Real) and not isinstance(value, bool)
            for key, value in figures.items()
        ):
            raise BrokenLabError(text("measure.not_figures", name=name, got=repr(figures)[:200]))
        figures = {key: value if isinstance(value, int) else float(value) for key, value in figures.items()}
        line = summary(figures)
        print(text("measure.measured", gpu=environment_report(device)["gpu"], torch=torch.__version__))
        print(textwrap.indent(line, "    "))
        log_capture(lab, name, KIND, line, device)
        return Measurement("measured", name, line, "this machine", dict(figures))

    return run


def _show_captured(name: str, lab: str, device: torch.device) -> Measurement:
    print(text("measure.no_cuda", device=device))
    if f"measure.what.{name}" in messages.CATALOGUE:  # what the cell would show on a GPU
        print(text(f"measure.what.{name}"))
    capture = captures.latest(lab, name)
    if capture is None:
        print(text("measure.not_yet"))
        return Measurement("missing", name, "", "none")
    print(text("measure.captured", gpu=capture["gpu"], torch=capture["torch"], date=capture["date"]))
    print(textwrap.indent(capture["message"], "    "))
    return Measurement("shown", name, capture["message"], "captured", parse_summary(capture["message"]))


messages.add(
    {
        "measure.measured": {
            "en": "Measured here ({gpu}, torch {torch}):",
            "zh": "在本机测得（{gpu}，torch {torch}）：",
        },
        "measure.no_cuda": {
            "en": "This measurement needs a CUDA GPU (device here: {device}); it was not run.",
            "zh": "这项测量需要 CUDA GPU（这里的设备：{device}），所以没有运行。",
        },
        "measure.captured": {
            "en": "Measured on a real GPU ({gpu}, torch {torch}, {date}):",
            "zh": "在真实 GPU 上测得（{gpu}，torch {torch}，{date}）：",
        },
        "measure.not_yet": {
            "en": "Not yet measured on a GPU: there is no figure to show.",
            "zh": "尚未在 GPU 上测量：没有可以展示的数字。",
        },
        "measure.strict_no_cuda": {
            "en": "Strict mode ({env}=1) needs a CUDA GPU for measurements, but the device is {device}.",
            "zh": "严格模式（{env}=1）下测量需要 CUDA GPU，但当前设备是 {device}。",
        },
        "measure.not_figures": {
            "en": "Broken lab: measurement '{name}' should return a dict of named numbers, but it returned {got}.",
            "zh": "实验有误：测量“{name}”应当返回一个由名字和数字组成的 dict，实际返回的是 {got}。",
        },
    }
)
