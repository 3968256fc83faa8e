"""Chapter 09's exercises: each gives not attempted / incorrect / correct on constructed answers; the lab shows the
same mystery model, resume and build_model the checks use."""

import math
from pathlib import Path

import pytest
import torch
from torch import nn

import devicelab
from devicelab.chapters.debugging import (
    BUILD_MODEL_SOURCE,
    FIXED_ATTENTION_SOLUTION,
    FIXED_EMBED_SOLUTION,
    MYSTERY_SOURCE,
    RESUME_SOLUTION,
    START_TRAINING_SOURCE,
    FixedAttentionPart,
    FixedEmbedPart,
    Resume,
)
from devicelab.checks import CORRECT, INCORRECT, NOT_ATTEMPTED
from devicelab.messages import CATALOGUE

ROOT = Path(__file__).resolve().parents[2]
CPU = torch.device("cpu")
SOURCE = (ROOT / "solutions" / "source" / "09-debugging.md").read_text(encoding="utf-8")


def verdict_of(exercise, **values):
    verdict = exercise.evaluate(**values)
    return verdict.status, verdict.key


def solved(*replacements: tuple[str, str], target: str = "") -> dict:
    """The lab's namespace with the three solutions; `replacements` are applied to the solution named `target`."""
    namespace = {"math": math, "torch": torch, "nn": nn}
    exec(MYSTERY_SOURCE, namespace)
    exec(START_TRAINING_SOURCE, namespace)
    for name, code in (("FixedEmbed", FIXED_EMBED_SOLUTION), ("FixedAttention", FIXED_ATTENTION_SOLUTION),
                       ("build_model", BUILD_MODEL_SOURCE), ("resume", RESUME_SOLUTION)):
        if name == target:
            for old, new in replacements:
                assert old in code, old
                code = code.replace(old, new)
        exec(code, namespace)
    return namespace


# --- the lab shows what the checks use ----------------------------------------------------------------


@pytest.mark.parametrize("code", [MYSTERY_SOURCE, START_TRAINING_SOURCE, BUILD_MODEL_SOURCE],
                         ids=["mystery model", "start_training", "build_model"])
def test_the_lab_source_shows_the_same_code(code):
    assert code in SOURCE


@pytest.mark.parametrize("code", [FIXED_EMBED_SOLUTION, FIXED_ATTENTION_SOLUTION],
                         ids=["FixedEmbed", "FixedAttention"])
def test_the_solution_messages_are_the_lab_solutions(code):
    assert code in SOURCE


def test_the_resume_solution_is_the_labs_body():
    body = [line.strip() for line in RESUME_SOLUTION.splitlines()[2:]]
    for line in body:
        assert line in SOURCE, line


def test_every_message_has_both_languages():
    keys = [k for k in CATALOGUE if k.startswith("ch09.")]
    assert len(keys) > 30
    for key in keys:
        assert set(CATALOGUE[key]) == {"en", "zh"} and all(CATALOGUE[key].values()), key


# --- exercise 1: FixedEmbed ---------------------------------------------------------------------------


def test_ex1_not_attempted_when_missing_or_blank():
    assert verdict_of(FixedEmbedPart(CPU)) == (NOT_ATTEMPTED, "ch09.ex1.todo")
    assert verdict_of(FixedEmbedPart(CPU), FixedEmbed=devicelab.____) == (NOT_ATTEMPTED, "ch09.ex1.todo")


def test_ex1_the_solution_is_correct():
    assert verdict_of(FixedEmbedPart(CPU), FixedEmbed=solved()["FixedEmbed"]) == (CORRECT, "ch09.ex1.ok")


@pytest.mark.parametrize("replacements", [
    [('self.register_buffer("pos", sinusoids(max_len, dim), persistent=False)', "self.max_len = max_len"),
     ("return self.tok(ids) + self.pos[: ids.shape[1]]",
      "return self.tok(ids) + sinusoids(ids.shape[1], self.tok.embedding_dim).to(ids.device)")],
    [('"pos"', '"table"'), ("self.pos[", "self.table[")],
], ids=["recomputed in forward on ids.device", "another buffer name"])
def test_ex1_other_right_answers_are_correct(replacements):
    answer = solved(*replacements, target="FixedEmbed")["FixedEmbed"]
    assert verdict_of(FixedEmbedPart(CPU), FixedEmbed=answer) == (CORRECT, "ch09.ex1.ok")


@pytest.mark.parametrize(("replacements", "key"), [
    ([('self.register_buffer("pos", sinusoids(max_len, dim), persistent=False)',
       "self.pos = sinusoids(max_len, dim)")], "ch09.ex1.left_on_cpu"),
    ([(", persistent=False", "")], "ch09.ex1.old_checkpoint"),
    ([('self.register_buffer("pos", sinusoids(max_len, dim), persistent=False)',
       "self.pos = nn.Parameter(sinusoids(max_len, dim), requires_grad=False)")], "ch09.ex1.old_checkpoint"),
    ([("self.tok = nn.Embedding", "self.token = nn.Embedding"), ("self.tok(ids)", "self.token(ids)")],
     "ch09.ex1.old_checkpoint"),
    ([("return self.tok(ids) + self.pos[: ids.shape[1]]", "return self.tok(ids) + self.pos[: ids.shape[1]] * 2")],
     "ch09.ex1.values"),
    ([("return self.tok(ids) + self.pos[: ids.shape[1]]", "return (self.tok(ids) + self.pos[: ids.shape[1]]).cpu()")],
     "ch09.ex1.output_on_cpu"),
    ([("return self.tok(ids) + self.pos[: ids.shape[1]]", "return self.tok(ids) + self.pos[:11]")],
     "ch09.ex1.raised"),
    ([("super().__init__()", "super().__init__()\n        raise ValueError('no')")], "ch09.ex1.raised"),
], ids=["plain attribute", "persistent buffer", "frozen parameter", "renamed layer", "other values",
        "output to cpu", "fixed length", "init raises"])
def test_ex1_wrong_answers_are_incorrect(replacements, key):
    answer = solved(*replacements, target="FixedEmbed")["FixedEmbed"]
    assert verdict_of(FixedEmbedPart(CPU), FixedEmbed=answer) == (INCORRECT, key)


def test_ex1_a_to_in_forward_is_the_fix_step_5_calls_wrong():
    # `.to(ids.device)` in forward runs on every device, but the table stays a plain attribute on the CPU,
    # copied at every call: the chapter calls it a patch that hides the error, and so does the check.
    answer = solved(("self.pos[: ids.shape[1]]", "self.pos[: ids.shape[1]].to(ids.device)"),
                    ('self.register_buffer("pos", sinusoids(max_len, dim), persistent=False)',
                     "self.pos = sinusoids(max_len, dim)"), target="FixedEmbed")["FixedEmbed"]
    assert verdict_of(FixedEmbedPart(CPU), FixedEmbed=answer) == (INCORRECT, "ch09.ex1.left_on_cpu")


def test_ex1_a_to_override_is_judged_inside_a_model():
    # A model's .to() reaches its parts through _apply, never through their own .to().
    namespace = solved()

    class MovesItself(namespace["Embed"]):
        def to(self, *args, **kwargs):
            self.pos = self.pos.to(*args, **kwargs)
            return super().to(*args, **kwargs)

    assert verdict_of(FixedEmbedPart(CPU), FixedEmbed=MovesItself) == (INCORRECT, "ch09.ex1.left_on_cpu")


def test_ex1_the_old_embed_and_a_function_are_incorrect():
    namespace = solved()
    assert verdict_of(FixedEmbedPart(CPU), FixedEmbed=namespace["Embed"]) == (INCORRECT, "ch09.ex1.left_on_cpu")
    assert verdict_of(FixedEmbedPart(CPU), FixedEmbed=lambda v, d, m: None) == (INCORRECT, "ch09.ex1.not_module")


# --- exercise 2: FixedAttention -----------------------------------------------------------------------


def test_ex2_not_attempted_when_missing_or_blank():
    assert verdict_of(FixedAttentionPart(CPU)) == (NOT_ATTEMPTED, "ch09.ex2.todo")
    assert verdict_of(FixedAttentionPart(CPU), FixedAttention=devicelab.____) == (NOT_ATTEMPTED, "ch09.ex2.todo")


def test_ex2_the_solution_is_correct():
    answer = solved()["FixedAttention"]
    assert verdict_of(FixedAttentionPart(CPU), FixedAttention=answer) == (CORRECT, "ch09.ex2.ok")


@pytest.mark.parametrize("replacements", [
    [('mask = torch.ones(steps, steps, dtype=torch.bool, device=x.device).triu(1)  # born where x is\n'
      '        scores = scores.masked_fill(mask, float("-inf"))\n'
      '        y = scores.softmax(dim=-1) @ v',
      "y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)")],
    [("torch.ones(steps, steps, dtype=torch.bool, device=x.device).triu(1)",
      "~torch.ones(steps, steps, dtype=torch.bool, device=scores.device).tril()")],
], ids=["scaled_dot_product_attention", "tril on scores.device"])
def test_ex2_other_right_answers_are_correct(replacements):
    answer = solved(*replacements, target="FixedAttention")["FixedAttention"]
    assert verdict_of(FixedAttentionPart(CPU), FixedAttention=answer) == (CORRECT, "ch09.ex2.ok")


@pytest.mark.parametrize(("replacements", "key"), [
    ([(", device=x.device", "")], "ch09.ex2.left_on_cpu"),
    ([(", device=x.device", ', device="cpu"')], "ch09.ex2.left_on_cpu"),
    ([(".triu(1)", ".tril(1)")], "ch09.ex2.values"),
    ([("self.qkv = nn.Linear(dim, 3 * dim)", "self.proj = nn.Linear(dim, 3 * dim)"),
      ("self.qkv(x)", "self.proj(x)")], "ch09.ex2.old_checkpoint"),
    ([("self.out = nn.Linear(dim, dim)", "self.dim = dim"),
      ("return self.out(", "return nn.Linear(self.dim, self.dim).to(x.device)(")], "ch09.ex2.old_checkpoint"),
    ([("return self.out(y.transpose(1, 2).reshape(batch, steps, dim))",
       "return self.out(y.transpose(1, 2).reshape(batch, steps, dim)).cpu()")], "ch09.ex2.output_on_cpu"),
    ([("super().__init__()", "super().__init__()\n        raise ValueError('no')")], "ch09.ex2.raised"),
], ids=["no device", "cpu", "wrong mask", "renamed layer", "layer built in forward", "output to cpu",
        "init raises"])
def test_ex2_wrong_answers_are_incorrect(replacements, key):
    answer = solved(*replacements, target="FixedAttention")["FixedAttention"]
    assert verdict_of(FixedAttentionPart(CPU), FixedAttention=answer) == (INCORRECT, key)


def test_ex2_a_layer_built_in_forward_with_the_old_names_is_caught():
    answer = solved(("return self.out(", "return nn.Linear(dim, dim).to(x.device)("),
                    target="FixedAttention")["FixedAttention"]
    assert verdict_of(FixedAttentionPart(CPU), FixedAttention=answer) == (INCORRECT, "ch09.ex2.layer_in_forward")


def test_ex2_the_old_attention_is_incorrect():
    answer = solved()["Attention"]
    assert verdict_of(FixedAttentionPart(CPU), FixedAttention=answer) == (INCORRECT, "ch09.ex2.left_on_cpu")


# --- exercise 3: resume -------------------------------------------------------------------------------


def test_ex3_not_attempted_when_missing_blank_or_a_stub():
    assert verdict_of(Resume(CPU)) == (NOT_ATTEMPTED, "ch09.ex3.todo")
    assert verdict_of(Resume(CPU), resume=devicelab.____) == (NOT_ATTEMPTED, "ch09.ex3.todo")
    assert verdict_of(Resume(CPU), resume=lambda path, device: devicelab.____) == (NOT_ATTEMPTED, "ch09.ex3.todo")


def test_ex3_the_solution_is_correct():
    assert verdict_of(Resume(CPU), resume=solved()["resume"]) == (CORRECT, "ch09.ex3.ok")


@pytest.mark.parametrize("replacements", [
    [('map_location=device', 'map_location="cpu"')],
    [("optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)",
      "optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)")],
], ids=["loaded on the cpu", "AdamW without decay"])
def test_ex3_other_right_answers_are_correct(replacements):
    answer = solved(*replacements, target="resume")["resume"]
    assert verdict_of(Resume(CPU), resume=answer) == (CORRECT, "ch09.ex3.ok")


@pytest.mark.parametrize(("replacements", "key"), [
    ([("model = build_model().to(device)  # 1. move the model", "model = build_model()"),
      ("    return model, optimizer", "    model.to(device)\n    return model, optimizer")],
     "ch09.ex3.other_parameters"),
    ([('    optimizer.load_state_dict(checkpoint["optimizer"])  # its state follows each parameter\'s device\n', "")],
     "ch09.ex3.no_state"),
    ([("build_model().to(device)", "MysteryModel().to(device)")], "ch09.ex3.left_on_cpu"),
    ([("torch.optim.Adam(model.parameters(), lr=3e-3)", "torch.optim.SGD(model.parameters(), lr=3e-3)")],
     "ch09.ex3.not_adam"),
    ([("return model, optimizer", "return model")], "ch09.ex3.not_pair"),
    ([("build_model().to(device)", 'build_model().to("cpu")')], "ch09.ex3.model_device"),
    ([('    model.load_state_dict(checkpoint["model"])  # 3. load both states\n', "")], "ch09.ex3.weights"),
], ids=["moved after loading", "no optimizer state", "the mystery model", "SGD", "no optimizer",
        "a fixed device", "no weights"])
def test_ex3_wrong_answers_are_incorrect(replacements, key):
    answer = solved(*replacements, target="resume")["resume"]
    assert verdict_of(Resume(CPU), resume=answer) == (INCORRECT, key)


def test_ex3_the_colleagues_order_is_incorrect():
    assert verdict_of(Resume(CPU), resume=solved()["start_training"])[0] == INCORRECT


def test_ex3_state_moved_after_the_fact_on_an_optimizer_built_before_the_move_is_incorrect():
    answer = solved(
        ("model = build_model().to(device)  # 1. move the model", "model = build_model()"),
        ("    return model, optimizer",
         "    model.to(device)\n    for state in optimizer.state.values():\n"
         "        for key, value in state.items():\n"
         "            if key != 'step':\n                state[key] = value.to(device)\n    return model, optimizer"),
        target="resume")["resume"]
    assert verdict_of(Resume(CPU), resume=answer) == (INCORRECT, "ch09.ex3.other_parameters")


def test_ex3_a_hostile_answer_is_incorrect_not_raised():
    def boom(path, device):
        raise KeyError("nope")

    assert verdict_of(Resume(CPU), resume=boom) == (INCORRECT, "ch09.ex3.raised")
    assert verdict_of(Resume(CPU), resume=42) == (INCORRECT, "ch09.ex3.not_function")
