"""`devicelab explain`: each verdict, in both languages, from the command line and in a notebook."""

import subprocess
import sys
from pathlib import Path

import pytest

import devicelab
from devicelab import messages
from devicelab.errors import CAUSES, CHECK, LABELS
from devicelab.explain import chapter_path, explain, main, render

ROOT = Path(__file__).resolve().parents[2]
INDEX_CPU_IDS = (
    "RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different from other "
    "tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)"
)
# The same error with the frame of nn.Embedding above it: the traceback shows which index_select it was.
IN_EMBEDDING = (
    'Traceback (most recent call last):\n  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/sparse.py",'
    ' line 190, in forward\n    return F.embedding(\n' + INDEX_CPU_IDS
)
SHORT_FORM = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
DTYPE = "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
GENERATOR = "RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_confident_device_error_says_meaning_cause_fix_and_chapter(lang):
    text = render(IN_EMBEDDING, lang)
    assert text.startswith(LABELS["device"][lang])
    assert "wrapper_CUDA__index_select" in text and "index" in text and "cpu" in text and "cuda:0" in text
    assert CAUSES["ids_not_moved"][lang] in text  # the cause, with its fix
    assert chapter_path("03-embedding", lang) in text
    assert LABELS["guess"][lang] not in text and CHECK[lang] not in text  # one cause, nothing to tell apart


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_ambiguous_message_lists_the_causes_ranked_and_how_to_tell_which(lang):
    text = render(SHORT_FORM, lang)
    assert LABELS["causes"][lang] in text and "1. " in text and "2. " in text
    assert LABELS["guess"][lang] in text and CHECK[lang] in text
    assert "next(model.parameters()).device" in text
    assert chapter_path("01-devices", lang) in text and chapter_path("05-inside", lang) in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_dtype_mismatch_is_plainly_not_a_device_error_and_points_to_chapter_08(lang):
    text = render(DTYPE, lang)
    assert text.startswith(LABELS["not_device"][lang])
    assert chapter_path("08-amp", lang) in text and LABELS["device"][lang] not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unrelated_known_error_is_declined_without_a_chapter(lang):
    text = render(OOM, lang)
    assert text.startswith(LABELS["not_device"][lang]) and LABELS["chapter"][lang] + ":" not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unknown_text_is_said_to_be_unrecognised(lang):
    assert render("hello world", lang) == LABELS["unknown"][lang]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_family_without_its_own_chapter_says_so_and_offers_chapter_09(lang):
    text = render(GENERATOR, lang)
    assert LABELS["fallback"][lang] in text and chapter_path("09-debugging", lang) in text
    assert "torch.Generator(device=...)" in text


def test_chapter_paths_follow_the_site_layout():
    assert chapter_path("03-embedding", "en") == "03-embedding/"
    assert chapter_path("03-embedding", "zh") == "zh/03-embedding/"


def test_explain_takes_an_exception_and_prints_in_the_chosen_language(capsys):
    try:
        raise RuntimeError(INDEX_CPU_IDS.removeprefix("RuntimeError: "))
    except RuntimeError as error:
        devicelab.explain(error)
        english = capsys.readouterr().out
        explain(error, lang="zh")
        chinese = capsys.readouterr().out
    assert english.strip() == render(INDEX_CPU_IDS, "en") and chinese.strip() == render(INDEX_CPU_IDS, "zh")


def test_explain_follows_the_session_language(capsys):
    messages.set_language("zh")
    devicelab.explain(SHORT_FORM)
    assert capsys.readouterr().out.strip() == render(SHORT_FORM, "zh")


def test_the_command_reads_a_file(tmp_path, capsys):
    path = tmp_path / "traceback.txt"
    path.write_text(f'Traceback (most recent call last):\n  File "train.py", line 9\n{DTYPE}\n', encoding="utf-8")
    assert main([str(path), "--lang", "zh"]) == 0
    assert capsys.readouterr().out.strip() == render(DTYPE, "zh")


def test_python_dash_m_reads_stdin():
    done = subprocess.run([sys.executable, "-m", "devicelab.explain", "--lang", "en"], input=INDEX_CPU_IDS,
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.strip() == render(INDEX_CPU_IDS, "en")


PAGE_01 = {lang: (ROOT / "docs" / lang / "01-devices.md").read_text(encoding="utf-8") for lang in ("en", "zh")}
PAGE_01_WARNING = {
    "en": "The argument named is not always the one to move",
    "zh": "报错里点名的参数，不一定就是该移动的那个",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_01_reading_rule_says_the_named_argument_is_not_always_the_one_to_move(lang):
    """Page 01 teaches "decide which device you meant, then move the other", not "move the argument named"."""
    assert PAGE_01_WARNING[lang] in PAGE_01[lang]
    for false_rule in ("tells you which tensor to move", "告诉你该移动哪个张量", "点名的参数就是要移动的"):
        assert false_rule not in PAGE_01[lang]


def test_the_two_messages_page_01_quotes_read_as_opposite_mistakes():
    """Page 01's pair (GPU model, CPU batch; CPU model, GPU batch) both name mat1; explain tells them apart."""
    quoted = [line.strip().removeprefix("RuntimeError: ") for line in PAGE_01["en"].splitlines()
              if "but got mat1 is on" in line and "wrapper_CUDA_addmm" in line]
    batch_left = next(m for m in quoted if "mat1 is on cpu" in m)
    model_left = next(m for m in quoted if "mat1 is on cuda:0" in m)
    assert devicelab.errors.diagnose(batch_left).causes[0] == "batch_not_moved"
    assert devicelab.errors.diagnose(model_left).causes[0] == "model_not_moved"
