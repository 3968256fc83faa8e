"""One notebook's session: its language, device, reproduce steps and exercises."""

from __future__ import annotations

from collections.abc import Callable

import torch

from . import measure as _measure
from . import reproduce as _reproduce
from .chapters import exercises_for
from .checks import CORRECT, Exercise, _caller_namespace
from .devices import environment_report, is_accelerator, pick_device
from .messages import set_language, text


class Lab:
    """What a lab notebook uses after its setup cell: `device`, `reproduce`, `exercises`."""

    def __init__(self, lab: str, lang: str, device: torch.device) -> None:
        self.id = lab
        self.lang = lang
        self.device = device
        self.exercises: list[Exercise] = exercises_for(lab, device)
        self.last_training: dict[str, object] | None = None  # what the proof plotted last
        self._trained: set[int] = set()  # ids of the models a proof has trained (lab.untrained)

    def reproduce(
        self, expect: str, needs_accelerator: bool = True, example: str | None = None
    ) -> Callable[[Callable[[], object]], _reproduce.Outcome]:
        """Decorator: run the function below now and assert it fails with the `expect` error."""
        return _reproduce.reproduce(
            expect, device=self.device, lab=self.id, needs_accelerator=needs_accelerator, example=example
        )

    def measure(self, name: str) -> Callable[[_measure.Step], _measure.Measurement]:
        """Decorator: on a CUDA GPU run the function below now and log its figures; elsewhere show a GPU's."""
        return _measure.measure(name, device=self.device, lab=self.id)

    def plot_training(self, loss, accuracy=None, xlabel: str = "epoch", resumed_after: int | None = None):
        """Draw the proof's loss (and accuracy) per step in the notebook's language, say in one line what it
        shows, and return the figure. `resumed_after`: how many steps ran before a resume from a checkpoint
        (marked on the plot and named in the line)."""
        from .plotting import plot_training

        losses = [float(v) for v in loss]
        accuracies = [float(v) for v in accuracy] if accuracy is not None else None
        self.last_training = {"loss": losses, "accuracy": accuracies, "xlabel": xlabel, "resumed_after": resumed_after}
        figure = plot_training(losses, accuracies, xlabel=xlabel, lang=self.lang, resumed_after=resumed_after)
        print(caption(losses, accuracies, xlabel, resumed_after))
        return figure

    def gpu_note(self, key: str, expected: str | None = None, needs: str | None = None) -> None:
        """Where the cell above shows nothing useful without a GPU (or without `needs`, e.g. "cuda"): say in one
        line what it shows on one, and show the expected output, labelled as expected."""
        if (self.device.type == needs) if needs else is_accelerator(self.device):
            return
        line = "gpu_note.line_cuda" if needs == "cuda" else "gpu_note.line"
        print(text(line, device=self.device, what=text(f"gpu_note.{key}")))
        if expected is not None:
            print(text("gpu_note.expected"))
            print("    " + expected)

    def untrained(self, model: object, rerun: str) -> bool:
        """True the first time a proof trains `model`; after that, say which cell builds a fresh one (the proof
        cell run twice would train a trained model and show nothing)."""
        if id(model) in self._trained:
            print(text("proof.trained_already", cell=rerun))
            return False
        self._trained.add(id(model))
        return True

    def all_correct(self) -> bool:
        """True when every exercise's check passes; otherwise say which are still open."""
        namespace = _caller_namespace()
        still_open = [ex.name for ex in self.exercises if ex.evaluate(namespace).status != CORRECT]
        if still_open:
            print(text("proof.locked", open=", ".join(still_open)))
        return not still_open


def caption(loss: list[float], accuracy: list[float] | None, xlabel: str = "epoch",
            resumed_after: int | None = None) -> str:
    """One line that says what the proof's plot shows, from its own numbers, in the chosen language: one axis
    (the loss) or two (the loss on the left, the accuracy on the right), and the mark of a resume if there is one."""
    unit = text(f"proof.unit_{xlabel}") if xlabel in ("epoch", "step") else xlabel
    numbers = {"unit": unit, "first": f"{loss[0]:.3f}", "last": f"{loss[-1]:.3f}"}
    line = text("proof.caption_two_axes" if accuracy else "proof.caption", **numbers)
    if accuracy:
        line += text("proof.caption_accuracy", first=f"{accuracy[0]:.2f}", last=f"{accuracy[-1]:.2f}")
    if resumed_after is not None:
        line += text("proof.caption_resumed", unit=unit, n=resumed_after)
    learned = len(loss) > 1 and loss[-1] < 0.8 * loss[0]
    return line + text("proof.learns" if learned else "proof.flat")


def start_lab(lab: str, lang: str = "en") -> Lab:
    """Set the language, pick the device, print the environment: the first line of every lab."""
    set_language(lang)
    device = pick_device()
    for key, value in environment_report(device).items():
        print(f"{key:>7}: {value}")
    print(text("setup.ready", lab=lab))
    if not is_accelerator(device):
        print(text("setup.cpu_note"))
    return Lab(lab, lang, device)
