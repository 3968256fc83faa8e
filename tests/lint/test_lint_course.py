"""The course's own code: the solutions flag exactly the mistakes their labs make on purpose, and nothing else;
devicelab/ and tools/ lint clean."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from devicelab.lint import Config, lint_file, lint_paths
from devicelab.lint.core import cells_source, lint_source

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks  # noqa: E402

# Every finding in each lab's solution: (rule, the source line it is on). The reproduce steps make these
# mistakes on purpose (and 01's quiz, 08's demonstration of the deprecation warning); anything else is a
# false positive.
PLANTED: dict[str, list[tuple[str, str]]] = {
    "01-devices": [("DL101", "x.to(target)"), ("DL101", "input_data.to(device)")],
    "02-dataparallel": [("DL201", "net = nn.DataParallel(blog_model)")],
    "03-embedding": [("DL301", "model(token_ids)"), ("DL301", "criterion(logits, labels)")],
    "04-batches": [],
    "05-inside": [("DL502", "self.mean = mean"), ("DL502", "self.std = std"),
                  ("DL501", "time = torch.arange(steps) / steps"),
                  ("DL501", "h0 = torch.zeros(1, batch, self.hidden_size)"),
                  ("DL501", "h0 = torch.zeros(1, batch, self.hidden_size)"),
                  ("DL503", "head = nn.Linear(self.hidden_size, self.classes)"),
                  ("DL503", "head = nn.Linear(self.hidden_size, self.classes)")],
    "06-multigpu": [("DL201", "wrapped = nn.DataParallel(model)")],
    # (its `torch.load(whole_path, weights_only=True)` reads what the notebook itself saved just before: no DL701)
    "07-checkpoints": [("DL701", "torch.load(weights_path)")],
    "08-amp": [("DL801", "torch.cuda.amp.GradScaler()"), ("DL801", "torch.cuda.amp.autocast()")],
    "09-debugging": [("DL502", "self.pos = sinusoids(max_len, dim)"),
                     ("DL501", "mask = torch.ones(steps, steps, dtype=torch.bool).triu(1)"),
                     ("DL702", 'optimizer.load_state_dict(checkpoint["optimizer"])')],
}
# The mistake each lab's reproduce steps make, as the linter sees it before anything runs. Lab 04's (a batch
# moved only at its top level) and 02's second one (a weighted loss left on the CPU) need the data and the
# objects: devicelab.locate and devicelab.audit find those when the code runs.
REPRODUCED = {
    "01-devices": {"DL101"}, "02-dataparallel": {"DL201"}, "03-embedding": {"DL301"},
    "05-inside": {"DL501", "DL502", "DL503"}, "06-multigpu": {"DL201"}, "07-checkpoints": {"DL701"},
    "08-amp": {"DL801"}, "09-debugging": {"DL501", "DL502", "DL702"},
}
LABS = sorted(PLANTED)


def findings(lines: list[str], problems: list) -> Counter:
    return Counter((p.code, lines[p.source_line - 1].split("#")[0].strip()) for p in problems)


def source_problems(lab: str) -> tuple[list[str], list]:
    cells = [(n, text) for n, (kind, text) in enumerate(build_notebooks.parse(ROOT / "solutions" / "source" /
                                                                                f"{lab}.md"), 1)
             if kind == "code"]
    source = cells_source(cells)
    return source.text.split("\n"), lint_source(source, f"solutions/source/{lab}.md", Config())


def planted_in(lines: list[str], problems: list) -> Counter:
    found = findings(lines, problems)
    return Counter({(code, line): n for (code, line), n in found.items()})


def matches(found: Counter, lab: str) -> bool:
    expected = Counter(PLANTED[lab])
    got = Counter()
    for (code, line), n in found.items():
        key = next(((c, s) for c, s in expected if c == code and s in line), (code, line))
        got[key] += n
    return got == expected


@pytest.mark.parametrize("lab", LABS)
def test_the_solution_source_flags_exactly_the_planted_mistakes(lab: str) -> None:
    lines, problems = source_problems(lab)
    assert matches(findings(lines, problems), lab), sorted(findings(lines, problems).items())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_generated_solution_notebooks_flag_exactly_the_planted_mistakes(lang: str) -> None:
    for lab in LABS:
        path = ROOT / "solutions" / lang / f"{lab}.ipynb"
        from devicelab.lint.core import read_source

        source = read_source(path)
        problems = lint_file(path, Config())
        lines = source.text.split("\n")
        assert matches(findings(lines, problems), lab), (lab, sorted(findings(lines, problems).items()))


@pytest.mark.parametrize("lab", sorted(REPRODUCED))
def test_each_labs_reproduce_steps_are_found(lab: str) -> None:
    _, problems = source_problems(lab)
    assert REPRODUCED[lab] <= {p.code for p in problems}


def test_the_course_package_and_tools_lint_clean() -> None:
    problems = lint_paths([ROOT / "devicelab", ROOT / "tools"], Config())
    assert [p.render("en") for p in problems] == []


def test_the_course_configuration_is_read_from_pyproject() -> None:
    from devicelab.lint import load_config

    config = load_config(ROOT)
    assert config.select == ("DL",) and "solutions" in config.exclude
