"""Every corpus message, rendered in both languages, reads cleanly: no blank slot, no sentence said twice, no
internal name of the index shown to a reader. (tests/site/test_explain_page.py holds the page's script to the same.)"""

import json
from pathlib import Path

import pytest
from test_errors_general_reading import DEVELOPMENT_HALVES, SOURCES  # the same files the general reading is tested on

from devicelab.errors import KINDS
from devicelab.explain import render
from devicelab.explain import render_problems as problems

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [e["text"] for e in json.loads((ROOT / "tests" / "errors" / "corpus.json").read_text(encoding="utf-8"))]
TEXTS += [kind.example for kind in KINDS.values()]
# The general reading's sources: the device checks mined from PyTorch's and libraries' code, and the development halves
# of the ninth batch on (posters' own words, two GPUs by number, checkpoints loaded without the GPU).
for _path in [SOURCES, *DEVELOPMENT_HALVES]:
    TEXTS += [e["text"] for e in json.loads(_path.read_text(encoding="utf-8"))]
# Wordings whose reading was once empty or did not fit (they name no operation, no argument, or no device).
TEXTS += [
    "NotImplementedError: Cannot copy out of meta tensor; no data!",
    "NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of "
    "torch.nn.Module.to() when moving module from meta to a different device.",
    "RuntimeError: Tensor.item() cannot be called on meta tensors",
    "RuntimeError: Placeholder storage has not been allocated on MPS device!",
    "RuntimeError: Expected object of backend CPU but got backend CUDA for argument #2 'weight'",
    "RuntimeError: expected device cuda:0 and dtype Float but got device cpu and dtype Float",
]


def test_a_reading_fits_its_wording():
    """The short form's reading is for a wording that names neither operation nor argument; each marker its own."""
    argument = render("Expected object of backend CPU but got backend CUDA for argument #2 'weight'", "en")
    assert "names neither the operation nor the argument" not in argument and "`weight`" in argument
    expected = render("RuntimeError: expected device cuda:0 and dtype Float but got device cpu and dtype Float", "en")
    assert "fixed order" not in expected and "expected device first" in expected
    mps = render("RuntimeError: Placeholder storage has not been allocated on MPS device!", "en")
    assert "first argument that differs" not in mps and "mps" in mps

def test_the_checker_catches_each_problem():
    assert problems("The operation (?) got `?` on ?.")
    assert problems("Read {chapter}.")
    assert problems("A device-placement error (family: same_device)")
    assert problems("Move the model to the GPU first. Move the model to the GPU first.")
    assert problems("A device-placement error\n\nWhat it means\n  \n\nLikely causes, most likely first\n  1. x")
    assert problems("A device-placement error\nWhat it means\nLikely cause\nA tensor is on meta.")  # the page's text
    assert not problems("A device-placement error · devices: cpu, cuda:0\n\nWhat it means\n  Move it.")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_corpus_message_renders_cleanly(lang):
    bad = []
    for text in TEXTS:
        found = problems(render(text, lang))
        if found:
            bad.append(f"{text[-80:]!r}: {found}")
    assert not bad, f"{len(bad)} of {len(TEXTS)}:\n" + "\n".join(bad[:20])
