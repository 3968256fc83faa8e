"""The learner's-path rules themselves: a hint that is the answer is caught, a partial line is not."""

from learner_path import ROOT, answer_lines, gives_the_answer


def test_a_hint_that_spells_the_answer_line_is_caught():
    lines = answer_lines(
        "def start_state(x, hidden_size):\n    return x.new_zeros(1, x.shape[0], hidden_size)\n",
        "def start_state(x, hidden_size):\n    return ____  # TODO\n",
    )
    assert lines == ["return x.new_zeros(1, x.shape[0], hidden_size)"]
    assert gives_the_answer("`x.new_zeros(1, x.shape[0], hidden_size)` takes both the device and dtype.", lines)
    assert not gives_the_answer("`return x.new_zeros(1, ____, hidden_size)`: the blank is the batch size.", lines)


def test_every_line_of_a_longer_answer_must_be_there_to_count_as_the_answer():
    lines = ["scaler.scale(loss).backward()", "scaler.unscale_(optimizer)", "scaler.step(optimizer)",
             "scaler.update()", "optimizer.zero_grad(set_to_none=True)"]
    spelled = ("`scaler.scale(loss).backward()`, `scaler.unscale_(optimizer)`, `scaler.step(optimizer)`, "
               "`scaler.update()`, `optimizer.zero_grad()`.")
    assert gives_the_answer(spelled, lines)
    assert not gives_the_answer(spelled.replace("scaler.step(", "scaler.____("), lines)


def test_a_keyword_that_is_the_point_of_the_answer_still_counts():
    lines = ['self.register_buffer("pos", sinusoids(max_len, dim), persistent=False)']
    assert gives_the_answer('`self.register_buffer("pos", sinusoids(max_len, dim), persistent=False)`', lines)
    assert not gives_the_answer('`self.register_buffer("pos", sinusoids(max_len, dim), persistent=____)`', lines)


def test_a_check_message_that_shows_meta_says_what_it_stands_for_in_both_languages():
    from devicelab.checks import explains_meta, incorrect
    from devicelab.messages import set_language

    verdict = incorrect("check.crashed", error="RuntimeError: Tensor on device meta is not on the expected device cpu!")
    try:
        for lang in ("en", "zh"):
            set_language(lang)
            message = verdict.message()
            assert explains_meta(message) and message.count("meta") >= 2, message
            assert "!." not in message
    finally:
        set_language("en")
    plain = incorrect("check.crashed", error="ValueError: bad").message()
    assert "stand-in" not in plain  # no word on meta where it does not show


def test_a_printed_solution_reads_in_chinese_in_a_chinese_notebook_with_the_same_code():
    import io
    import sys
    import tokenize

    from devicelab.chapters import MODULES, exercises_for
    from devicelab.messages import code_in_language, text

    sys.path.insert(0, str(ROOT / "tools"))
    from build_notebooks import code_without_comments

    for lab in MODULES:
        for exercise in exercises_for(lab):
            english = text(exercise.solution_key, "en")
            chinese = code_in_language(english, "zh")
            assert code_without_comments(chinese) == code_without_comments(english), exercise.solution_key
            tokens = tokenize.generate_tokens(io.StringIO(chinese + "\n").readline)
            prose = [t.string for t in tokens if t.type == tokenize.COMMENT
                     or (t.type == tokenize.STRING and t.string.startswith('"""'))]
            untranslated = [p for p in prose if not any("\u4e00" <= ch <= "\u9fff" for ch in p)]
            assert not untranslated, (exercise.solution_key, untranslated)


def test_a_gpu_only_cell_says_what_a_gpu_shows_and_labels_the_expected_output(capsys):
    import torch

    from devicelab.lab import Lab
    from devicelab.messages import set_language

    try:
        for lang in ("en", "zh"):
            set_language(lang)
            Lab("05-inside", lang, torch.device("cpu")).gpu_note("ch05.devices", expected="mean: cpu | gru: cuda:0")
            lines = capsys.readouterr().out.splitlines()
            assert len(lines) == 3 and "GPU" in lines[0] and "CUDA GPU" in lines[1], lines
            assert lines[2] == "    mean: cpu | gru: cuda:0"
        set_language("en")
        Lab("08-amp", "en", torch.device("cuda")).gpu_note("ch08.half_conv", needs="cuda", expected="x")
        assert capsys.readouterr().out == ""  # on the GPU the cell itself shows it
        Lab("08-amp", "en", torch.device("mps")).gpu_note("ch08.half_conv", needs="cuda")
        assert capsys.readouterr().out.startswith("(No CUDA GPU here, device: mps.)")
    finally:
        set_language("en")


def test_the_proof_caption_says_what_the_curve_shows_from_its_own_numbers():
    from devicelab.lab import caption

    moving = caption([0.68, 0.40, 0.20], [0.60, 0.90, 0.99])
    assert "from 0.680 to 0.200" in moving and "from 0.60 to 0.99" in moving and "learning" in moving
    assert "not learning" in caption([0.68, 0.67, 0.66], None, "step")


def test_the_proof_caption_names_the_axes_the_plot_has_and_the_resume_it_marks():
    from devicelab.lab import caption
    from devicelab.messages import set_language

    try:
        for lang, left, right, resumed in (("en", "left axis", "right axis", "resumed from the checkpoint"),
                                           ("zh", "左轴", "右轴", "从检查点恢复训练")):
            set_language(lang)
            one_axis = caption([0.68, 0.40], None, "step")  # the loss only: no left or right to speak of
            assert left not in one_axis and right not in one_axis and resumed not in one_axis
            two_axes = caption([0.68, 0.40], [0.5, 0.9])
            assert left in two_axes and right in two_axes
            assert resumed in caption([0.9, 0.7, 0.5, 0.4], None, "epoch", resumed_after=3)
            assert "3" in caption([0.9, 0.7, 0.5, 0.4], None, "epoch", resumed_after=3).split("0.400")[1]
    finally:
        set_language("en")


def test_every_check_message_that_names_meta_says_in_its_own_words_that_it_stands_in_for_the_gpu():
    import re

    from devicelab.chapters import MODULES, exercises_for
    from devicelab.checks import explains_meta
    from devicelab.messages import CATALOGUE

    for lab in MODULES:
        exercises_for(lab)  # registers the chapter's messages
    unexplained = [(key, lang) for key, entry in CATALOGUE.items() if key.startswith(("ch0", "check."))
                   for lang in ("en", "zh") if re.search(r"\bmeta\b", entry[lang]) and not explains_meta(entry[lang])]
    assert not unexplained
