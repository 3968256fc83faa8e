"""A reader who runs nothing opens a solution page and sees what the notebook did: the reproduce step's
outcome, the checks' ✅, the proof's plot, and where those outputs ran."""

import os
import shutil

import pytest

pytestmark = pytest.mark.browser
if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the browser test: install Debian's chromium")
    pytestmark = [pytest.mark.browser, pytest.mark.skip(reason="Debian's chromium is not installed")]

PAGES = [
    ("/solutions/01-devices/", "ran on"),
    ("/zh/solutions/01-devices/", "运行于"),
    ("/solutions/02-dataparallel/", "ran on"),
    ("/zh/solutions/02-dataparallel/", "运行于"),
]


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


def code_cells_with(page, text: str):
    return page.locator(".jp-CodeCell").filter(has=page.locator(".jp-InputArea", has_text=text))


@pytest.mark.parametrize(("path", "ran_on"), PAGES)
def test_a_solution_page_shows_the_reproduce_outcome_the_checks_and_the_plot(page, base_url, path, ran_on):
    page.goto(base_url + path)
    stamp = page.locator(".solution-ran-on")
    assert stamp.is_visible() and ran_on in stamp.inner_text()

    reproduce = code_cells_with(page, "@lab.reproduce(")
    assert reproduce.count() >= 1
    for i in range(reproduce.count()):
        outcome = reproduce.nth(i).locator(".jp-OutputArea-output").first
        assert outcome.is_visible() and outcome.inner_text().strip(), "each reproduce step shows its outcome"

    checks = code_cells_with(page, ".check()")
    assert checks.count() >= 1
    for i in range(checks.count()):
        assert "✅" in checks.nth(i).locator(".jp-OutputArea").inner_text(), "each check shows its ✅"

    plot = code_cells_with(page, "plot_training(").locator(".jp-OutputArea-output img").last
    plot.scroll_into_view_if_needed()
    assert plot.is_visible()
    width = plot.evaluate("img => img.complete ? img.naturalWidth : 0")
    assert width > 200, "the proof's plot is drawn"


def test_a_student_page_shows_no_outputs(page, base_url):
    page.goto(base_url + "/labs/01-devices/")
    assert page.locator(".jp-CodeCell").count() > 5
    assert page.locator(".jp-OutputArea-output").count() == 0
    assert page.locator(".solution-ran-on").count() == 0
