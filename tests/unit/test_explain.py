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
SHORT_FORM = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
DTYPE = "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
GENERATOR = "RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_confident_device_error_says_meaning_cause_fix_and_chapter(lang):
    text = render(INDEX_CPU_IDS, lang)
    assert text.startswith(LABELS["device"][lang])
    assert "wrapper_CUDA__index_select" in text and "index" in text and "cpu" in text and "cuda:0" in text
    assert CAUSES["ids_not_moved"][lang] in text  # the cause, with its fix
    assert chapter_path("03-embedding", lang) in text
    assert LABELS["unsure"][lang] not in text and CHECK[lang] not in text  # one cause, nothing to tell apart


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_ambiguous_message_lists_the_causes_ranked_and_how_to_tell_which(lang):
    text = render(SHORT_FORM, lang)
    assert LABELS["causes"][lang] in text and "1. " in text and "2. " in text
    assert LABELS["unsure"][lang] in text and CHECK[lang] in text
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
