"""The bilingual catalogue: every message in both languages, with the same placeholders."""

import string

import pytest

import devicelab.chapters.dataparallel  # noqa: F401 - registers the chapter's messages
from devicelab import messages
from devicelab.messages import CATALOGUE, add, get_language, set_language, text


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def test_the_chapter_messages_are_in_the_catalogue():
    assert "ch02.ex1.todo" in CATALOGUE
    assert "verdict.correct" in CATALOGUE


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_every_message_exists_in_english_and_chinese(key):
    entry = CATALOGUE[key]
    assert set(entry) == {"en", "zh"}
    assert entry["en"].strip() and entry["zh"].strip()


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_both_languages_use_the_same_placeholders(key):
    entry = CATALOGUE[key]
    assert placeholders(entry["en"]) == placeholders(entry["zh"])




@pytest.mark.parametrize(
    "key",
    [
        key
        for key in sorted(CATALOGUE)
    ],
)
def test_every_message_formats_with_its_placeholders_filled(key):
    for lang in messages.LANGUAGES:
        values = {name: f"<{name}>" for name in placeholders(CATALOGUE[key][lang])}
        filled = text(key, lang, **values)
        assert all(value in filled for value in values.values())


def test_english_is_the_default_language():
    assert get_language() == "en"


def test_set_language_switches_every_message():
    set_language("zh")
    assert get_language() == "zh"
    assert text("setup.ready", lab="02") == "实验 02 已就绪。"
    assert text("setup.ready", "en", lab="02") == "Lab 02 ready."


@pytest.mark.parametrize("lang", ["fr", "EN", "zh-CN", ""])
def test_set_language_rejects_an_unknown_language(lang):
    with pytest.raises(ValueError, match="language must be one of"):
        set_language(lang)
    assert get_language() == "en"


def test_add_refuses_a_key_defined_twice():
    before = dict(CATALOGUE["setup.ready"])
    with pytest.raises(KeyError, match="setup.ready"):
        add({"setup.ready": {"en": "replaced", "zh": "替换"}})
    assert CATALOGUE["setup.ready"] == before


def test_add_registers_a_new_key(monkeypatch):
    monkeypatch.setattr(messages, "CATALOGUE", dict(CATALOGUE))
    add({"test.new": {"en": "new {x}", "zh": "新 {x}"}})
    assert messages.text("test.new", x=1) == "new 1"


def test_what_follows_correct_starts_a_sentence():
    """ "Correct! the loss ..." reads as a typo: every reason a `correct(...)` verdict gives starts with a capital
    letter (or with code, which keeps its own spelling)."""
    import re
    from pathlib import Path

    from devicelab.chapters import MODULES, exercises_for

    for lab in MODULES:
        exercises_for(lab)  # registers every chapter's messages
    folder = Path(devicelab.chapters.dataparallel.__file__).parent
    source = "\n".join(path.read_text(encoding="utf-8") for path in [*folder.glob("*.py"), folder.parent / "checks.py"])
    keys = set(re.findall(r'(?<![\w.])correct\(\s*"([^"]+)"', source))
    assert len(keys) > 20  # every chapter's right answers
    lower = [key for key in sorted(keys) if not re.match(r"[A-Z`0-9]", CATALOGUE[key]["en"])]
    assert not lower, lower
