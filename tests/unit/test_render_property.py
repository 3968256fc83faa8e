"""Every corpus message, rendered in both languages, reads cleanly: no blank slot, no sentence said twice, no
internal name of the index shown to a reader. (tests/site/test_explain_page.py holds the page's script to the same.)"""

import json
from pathlib import Path

import pytest

from devicelab.errors import KINDS
from devicelab.explain import render
from devicelab.explain import render_problems as problems

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [e["text"] for e in json.loads((ROOT / "tests" / "errors" / "corpus.json").read_text(encoding="utf-8"))]
TEXTS += [kind.example for kind in KINDS.values()]

def test_the_checker_catches_each_problem():
    assert problems("The operation (?) got `?` on ?.")
    assert problems("Read {chapter}.")
    assert problems("A device-placement error (family: same_device)")
    assert problems("Move the model to the GPU first. Move the model to the GPU first.")
    assert not problems("A device-placement error · devices: cpu, cuda:0\n\nWhat it means\n  Move it.")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_corpus_message_renders_cleanly(lang):
    bad = []
    for text in TEXTS:
        found = problems(render(text, lang))
        if found:
            bad.append(f"{text[-80:]!r}: {found}")
    assert not bad, f"{len(bad)} of {len(TEXTS)}:\n" + "\n".join(bad[:20])
