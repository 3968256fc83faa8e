"""A learner's path through every lab, in a real kernel: placeholder → a wrong answer → every hint → a right
answer → the proof.

It fails when an exercise's hints jump to the answer (a hint holds the solution's answer line, or the last hint
is not a partial line with a blank), when a check message shows `meta` without saying that it stands in for the
learner's GPU, or when the proof's curve does not move.
"""

from __future__ import annotations

import re

import pytest
from learner_path import BLANK, ROOT, gives_the_answer, walk

from devicelab.checks import explains_meta

LABS = sorted(p.stem for p in (ROOT / "solutions" / "source").glob("*.md"))
# Every lab in English; a few in Chinese too, where the messages and hints are read in the other language.
PATHS = [(lab, "en") for lab in LABS] + [("05-inside", "zh"), ("08-amp", "zh")]
META = re.compile(r"\bmeta\b")


def _param(lab: str, lang: str):
    return pytest.param(lab, lang, id=f"{lang}/{lab}", marks=pytest.mark.xdist_group(f"learner-{lab[:2]}"))


def problems(path) -> list[str]:
    """Everything on the walk that would stop or mislead a learner."""
    found = [f"{path.lab}: {error}" for error in path.errors]
    for step in path.steps:
        where = f"{path.lang}/{path.lab} {step.exercise}"
        verdicts = (("placeholder", step.placeholder, "not_attempted"), (f"wrong [{step.wrong_name}]", step.wrong,
                    "incorrect"), (f"right [{step.right_name}]", step.right, "correct"))
        for what, verdict, status in verdicts:
            if verdict.get("status") != status:
                found.append(f"{where}: {what} got {verdict.get('status')}, not {status}: {verdict.get('message')}")
            message = verdict.get("message", "")
            if META.search(message) and not explains_meta(message):
                found.append(f"{where}: {what}: `meta` without a word on what it stands for: {message}")
        if len(step.hints) < 3:
            found.append(f"{where}: {len(step.hints)} hints, a ladder needs 3 (look at → API → a partial line)")
        for number, hint in enumerate(step.hints, 1):
            if gives_the_answer(hint, step.answer_lines):
                found.append(f"{where}: hint {number} is the answer itself: {hint}")
        if step.hints and BLANK not in step.hints[-1]:
            found.append(f"{where}: the last hint is no partial line with a blank `{BLANK}`: {step.hints[-1]}")
        if len(set(step.hints)) != len(step.hints):
            found.append(f"{where}: two hints are the same")
        if not step.solution.strip():
            found.append(f"{where}: solution() printed nothing")
    training = path.training
    if not training:
        found.append(f"{path.lang}/{path.lab}: the proof plotted nothing")
    else:
        loss, accuracy = training["loss"], training["accuracy"]
        if len(loss) < 3 or not loss[-1] < 0.8 * loss[0]:
            found.append(f"{path.lang}/{path.lab}: the proof's loss does not move: {loss}")
        if accuracy and not (accuracy[0] < 0.99 and max(accuracy) - accuracy[0] >= 0.03):
            found.append(f"{path.lang}/{path.lab}: the proof's accuracy is flat from its first point: {accuracy}")
    return found


@pytest.mark.parametrize(("lab", "lang"), [_param(lab, lang) for lab, lang in PATHS])
def test_a_learner_walks_the_lab_from_placeholder_to_proof(lab, lang):
    path = walk(lab, lang)
    assert path.steps, f"{lab}: no exercise was found"
    found = problems(path)
    assert not found, "\n".join(found)
