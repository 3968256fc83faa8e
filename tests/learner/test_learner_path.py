"""A learner's path through every lab, in a real kernel: placeholder → a wrong answer → every hint → a right
answer → the proof.

It fails when an exercise's hints jump to the answer (a hint holds the solution's answer line, or the last hint
is not a partial line with a blank), when a check message shows `meta` without saying that it stands in for the
learner's GPU, when the proof's curve does not move, or when running the notebook again (the answers kept)
breaks something: a cell that raises, a check that no longer accepts its answer, a proof that neither trains
again nor says which cell to run.
"""

from __future__ import annotations

import re

import pytest
from learner_path import BLANK, ROOT, gives_the_answer, walk

from devicelab.checks import explains_meta
from devicelab.messages import CATALOGUE

LABS = sorted(p.stem for p in (ROOT / "solutions" / "source").glob("*.md"))
# Every lab in both languages: the messages, hints and printed words are read in each.
PATHS = [(lab, lang) for lab in LABS for lang in ("en", "zh")]
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
    found += rerun_problems(path)
    return found


def rerun_problems(path) -> list[str]:
    """What running the notebook again, the answers kept, broke."""
    where = f"{path.lang}/{path.lab}"
    found = [f"{where}: {error}" for error in path.rerun_errors]
    for exercise, verdict in path.rerun_verdicts.items():
        if verdict.get("status") != "correct":
            found.append(f"{where} {exercise}: after running the notebook again, {verdict.get('status')}: "
                         f"{verdict.get('message')}")
    said = CATALOGUE["proof.trained_already"][path.lang].split("{cell}")[0]
    trained_again = bool(path.rerun_training) and len(path.rerun_training["loss"]) >= 3
    if not trained_again and said not in path.rerun_proof_output:
        found.append(f"{where}: the proof run again neither trained nor said which cell builds a fresh model: "
                     f"{path.rerun_proof_output.strip()[-300:]!r}")
    if trained_again:
        loss = path.rerun_training["loss"]
        if not loss[-1] < 0.8 * loss[0]:
            found.append(f"{where}: the proof run again trained a trained model (its loss does not move): {loss}")
    return found


@pytest.mark.parametrize(("lab", "lang"), [_param(lab, lang) for lab, lang in PATHS])
def test_a_learner_walks_the_lab_from_placeholder_to_proof(lab, lang):
    path = walk(lab, lang)
    assert path.steps, f"{lab}: no exercise was found"
    found = problems(path)
    assert not found, "\n".join(found)
