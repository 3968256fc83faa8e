"""The error index scored on the held-out part of the corpus (tests/errors/heldout.json).

Whoever writes or changes the index's rules does not open heldout.json (see tests/errors/README.md): these messages
measure how the index does on pastes it was not tuned on. So every failure message below names counts and entry ids
only, never a message text. `.venv/bin/python tools/corpus_report.py --heldout` prints the same figures.

The bar: no device error sent to a wrong chapter with confidence, no other error claimed as a device error, and the
right chapter named first for at least RIGHT_FIRST_FLOOR of the device errors.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if "corpus_report" in sys.modules:
    corpus_report = sys.modules["corpus_report"]
else:
    _spec = importlib.util.spec_from_file_location("corpus_report", ROOT / "tools" / "corpus_report.py")
    assert _spec and _spec.loader
    corpus_report = importlib.util.module_from_spec(_spec)
    sys.modules["corpus_report"] = corpus_report
    _spec.loader.exec_module(corpus_report)

RIGHT_FIRST_FLOOR = 0.80
# Held-out entries the index gets wrong today, by id only, pending a fix in the index: they are left out of the two
# strict checks, and test_pending_entries_still_fail asks for each to be removed once the index answers it right.
# Never add an id here to let an index change pass.
PENDING: dict[str, str] = {}


@pytest.fixture(scope="module")
def figures():
    """The index's figures on the held-out part (counts and ids only)."""
    from devicelab.errors import diagnose

    report = corpus_report.score(corpus_report.load_corpus(corpus_report.HELDOUT), diagnose)
    return corpus_report.heldout_figures(report)


def test_diagnose_never_raises(figures):
    """diagnose() answers every held-out text without raising."""
    assert figures["ids"]["raised"] == []


def test_no_device_error_gets_a_wrong_chapter_with_confidence(figures):
    """Confident answers on held-out device errors always name an acceptable chapter."""
    wrong = [i for i in figures["ids"]["confident_wrong"] if i not in PENDING]
    assert wrong == [], f"{len(wrong)} confident and wrong: {wrong}"


def test_no_other_error_is_claimed_as_a_device_error(figures):
    """No held-out negative (dtype, shape, OOM, missing CUDA, NCCL...) is claimed as a device error."""
    claimed = [i for i in figures["ids"]["false_positives"] if i not in PENDING]
    assert claimed == [], f"{len(claimed)} of {figures['negatives']} claimed as device errors: {claimed}"


def test_right_first_chapter_rate(figures):
    """The first chapter named is an acceptable one for at least RIGHT_FIRST_FLOOR of the held-out device errors."""
    rate = figures["right_first"] / figures["device_errors"]
    print(f"right first chapter {figures['right_first']}/{figures['device_errors']} ({rate:.3f}), "
          f"within two {figures['right_within_two']}")
    assert rate >= RIGHT_FIRST_FLOOR, (
        f"right first chapter {figures['right_first']}/{figures['device_errors']} = {rate:.3f} < "
        f"{RIGHT_FIRST_FLOOR}; declined: {figures['ids']['declined']}; "
        f"wrong first chapter: {figures['ids']['wrong_first_chapter']}"
    )


def test_pending_entries_still_fail(figures):
    """An entry the index now answers right leaves PENDING, so that a later regression on it is caught."""
    failing = {i: "confident_wrong" for i in figures["ids"]["confident_wrong"]}
    failing.update({i: "false_positive" for i in figures["ids"]["false_positives"]})
    fixed = sorted(i for i, how in PENDING.items() if failing.get(i) != how)
    assert fixed == [], f"answered right now, remove from PENDING in {Path(__file__).name}: {fixed}"


# --- the novel wordings ------------------------------------------------------------------------------------------
# The held-out stratum whose error lines are not 90% similar to any development entry (corpus_report.heldout_strata):
# the tail readers keep bringing. Its floor is today's figure less a margin; raise it as the index improves. A new
# held-out batch can lower today's figure without any index change: the tenth batch's half scored 9/22 right first
# and 14/22 within two when it was added, taking the stratum from 67% and 77% to 64% and 75%; the eleventh's scored
# 10/24 and 13/24 (most of its device errors told in words); the twelfth's 8/29 and 14/29 (12 declined, most told in
# words or cut before the message); the fourteenth's 7/27 and 15/27 (9 declined, most told in a pull request's or an
# issue's own words); the sixteenth's 18/33 and 19/33 (8 declined), and with the rules written from the fifteenth to
# seventeenth batches' development halves the stratum stood at 59% and 72%; the eighteenth's half scored 10/32 and
# 19/32 (12 declined, most told in a title or a poster's words), and with the rules written from its development half
# (which gained nothing on it) the stratum stands at 57% and 71%; the nineteenth's half scored 7/15 and 10/15 before
# and after its development half's rules, the twentieth's 6/18 and 10/18 (7 declined), which took the stratum to 55.6%
# and 69.8%; the twenty-second's 6/19 and 8/19 (10 declined), the twenty-third's 13/28 and 16/28 (12 declined, most
# told in a question's or a pull request's words), before and after their development halves' rules, which took it to
# 54.1% and 67.6%.
NOVEL_RIGHT_FIRST_FLOOR = 0.52
NOVEL_WITHIN_TWO_FLOOR = 0.65
# Novel held-out entries the index gets wrong today (a negative claimed as a device error, or a device error given a
# wrong chapter with confidence), by id only, added with their entries and never to let an index change pass.
NOVEL_PENDING = {"gh-mmdetection-6701": "false_positive",
                 "gh-infinitystar-16": "false_positive",
                 # the fifth batch's held-out half (novel_heldout4.json), added with its entries
                 "gh-deepdrr-69": "false_positive", "gh-fastai-dev-182": "false_positive",
                 "gh-vox-fusion-6": "false_positive",
                 # the sixth batch's held-out half (novel_heldout5.json), added with its entries
                 "gh-pytorch-23377": "false_positive",
                 # the eighth batch's held-out half (novel_heldout7.json), added with its entries
                 "gh-efficiency-nodes-comfyui-350": "confident_wrong",
                 # the tenth batch's held-out half (novel_heldout9.json), added with its entries
                 "gh-2dpass-37": "false_positive",
                 # the fourteenth batch's held-out half (novel_heldout13.json), added with its entries
                 "gh-detectron2-624": "false_positive",
                 # the seventeenth batch's held-out half (novel_heldout16.json), added with its entries
                 "gh-deepsolo-22": "false_positive",
                 # the eighteenth batch's held-out half (novel_heldout17.json), added with its entries
                 "gh-centerpoint-201": "false_positive", "gh-pytorch-136302": "false_positive",
                 # the twenty-first batch's held-out half (novel_heldout20.json), added with its entries
                 "gh-dmasif-30": "false_positive"}


@pytest.fixture(scope="module")
def novel():
    """The index's figures on the novel stratum of the held-out part (counts and ids only)."""
    from devicelab.errors import diagnose

    return corpus_report.heldout_figures(corpus_report.score(corpus_report.heldout_strata()["novel"], diagnose))


def test_novel_wordings_get_no_confident_wrong_chapter_and_few_false_positives(novel):
    """No confident wrong chapter on the novel stratum and no negative claimed, beyond the pending ones."""
    wrong = [i for i in novel["ids"]["confident_wrong"] if NOVEL_PENDING.get(i) != "confident_wrong"]
    assert wrong == [], wrong
    claimed = [i for i in novel["ids"]["false_positives"] if NOVEL_PENDING.get(i) != "false_positive"]
    assert claimed == [], f"{len(claimed)} of {novel['negatives']} claimed as device errors: {claimed}"
    failing = {i: "confident_wrong" for i in novel["ids"]["confident_wrong"]}
    failing.update({i: "false_positive" for i in novel["ids"]["false_positives"]})
    fixed = sorted(i for i, how in NOVEL_PENDING.items() if failing.get(i) != how)
    assert fixed == [], f"answered right now, remove from NOVEL_PENDING: {fixed}"


def test_novel_wordings_right_first_and_within_two(novel):
    """The first chapter is right for NOVEL_RIGHT_FIRST_FLOOR of the novel device errors; one of two for more."""
    first = novel["right_first"] / novel["device_errors"]
    two = novel["right_within_two"] / novel["device_errors"]
    print(f"novel: right first {first:.3f}, within two {two:.3f}, declined {novel['declined']}")
    assert first >= NOVEL_RIGHT_FIRST_FLOOR and two >= NOVEL_WITHIN_TWO_FLOOR, (first, two, novel["ids"]["declined"])
