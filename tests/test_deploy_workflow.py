"""Hosting: the Pages workflow builds what the README builds and publishes it with the standard actions;
the repository's address is set in one place, a fork overrides it through the environment, and the
build says so loudly while the default (placeholder) address is in use."""

import importlib.util
import json
import logging
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"
VARIABLES = ("DEVICELAB_REPO_URL", "DEVICELAB_SITE_URL")
sys.path.insert(0, str(ROOT / "tools"))
import build_notebooks  # noqa: E402

spec = importlib.util.spec_from_file_location("mkdocs_hooks_for_hosting", ROOT / "tools" / "mkdocs_hooks.py")
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)


@pytest.fixture
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


@pytest.fixture
def no_address_variables(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def uses(workflow: dict, action: str) -> dict:
    [step] = [step for step in steps(workflow) if step.get("uses", "").startswith(f"{action}@")]
    return step


def test_the_workflow_publishes_every_push_to_main(workflow):
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["push"]["branches"] == ["main"]
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    assert workflow["concurrency"]["group"] == "pages"
    assert workflow["concurrency"]["cancel-in-progress"] is False  # never cut a deployment in half


def test_the_workflow_uses_the_standard_pages_actions(workflow):
    for action in ("actions/checkout", "actions/configure-pages", "actions/upload-pages-artifact",
                   "actions/deploy-pages"):
        assert re.fullmatch(r"v\d+", uses(workflow, action)["uses"].split("@")[1]), action
    assert uses(workflow, "actions/upload-pages-artifact")["with"]["path"] == "site"
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert not any("git push" in step.get("run", "") for step in steps(workflow))


def test_the_workflow_installs_from_requirements_and_the_package(workflow):
    install = " ".join(step.get("run", "") for step in steps(workflow))
    assert "pip install -r requirements.txt -e ." in install


def test_the_workflow_builds_with_the_readmes_build_command(workflow):
    [build] = [step for step in steps(workflow) if "build" in step.get("run", "")]
    assert build["run"].strip() == "make build"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"^make build\b", readme, re.M), "the README shows `make build`"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^build:.*\n\t(.+)", makefile, re.M).group(1)
    assert "mkdocs build --strict" in recipe and " -d " not in recipe  # into site/, which is uploaded


def test_the_workflow_builds_with_the_addresses_of_its_repository(workflow):
    runs = [step.get("run", "") for step in steps(workflow)]
    addresses = next(i for i, run in enumerate(runs) if "GITHUB_ENV" in run)
    assert addresses < runs.index("make build")  # set for every later step: the build and the link check
    exported = dict(re.findall(r'echo "(\w+)=(.*)" >> "\$GITHUB_ENV"', runs[addresses]))
    assert set(exported) == set(VARIABLES)
    assert "github.repository" in exported["DEVICELAB_REPO_URL"]
    assert "steps.pages.outputs.base_url" in exported["DEVICELAB_SITE_URL"]
    assert uses(workflow, "actions/configure-pages")["id"] == "pages"


def test_the_workflow_publishes_only_a_site_whose_links_all_lead_somewhere(workflow):
    runs = [step.get("run", "").strip() for step in steps(workflow)]
    check = runs.index(".venv/bin/python tests/site/test_links.py site")
    upload = next(i for i, step in enumerate(steps(workflow)) if "upload-pages-artifact" in step.get("uses", ""))
    assert runs.index("make build") < check < upload


# ------------------------------------------------------------------------------- the address


def mkdocs_config() -> dict:
    from mkdocs.utils.yaml import yaml_load

    with open(ROOT / "mkdocs.yml", encoding="utf-8") as config:
        return yaml_load(config)


def test_the_site_and_the_notebooks_read_the_same_default_address(no_address_variables):
    config = mkdocs_config()
    assert config["repo_url"].rstrip("/") == build_notebooks.repo_url()
    assert config["site_url"].startswith("https://")


def test_a_fork_overrides_both_addresses_through_the_environment(monkeypatch):
    monkeypatch.setenv("DEVICELAB_REPO_URL", "https://github.com/someone/fork")
    monkeypatch.setenv("DEVICELAB_SITE_URL", "https://someone.github.io/fork/")
    config = mkdocs_config()
    assert config["repo_url"] == "https://github.com/someone/fork"
    assert config["site_url"] == "https://someone.github.io/fork/"
    assert build_notebooks.repo_url() == "https://github.com/someone/fork"


def test_the_labs_setup_cell_follows_the_address(monkeypatch):
    monkeypatch.setenv("DEVICELAB_REPO_URL", "https://github.com/someone/fork/")
    source = next(build_notebooks.SOURCES.glob("*.md"))
    outputs = build_notebooks.build(source)
    lab = next(text for path, text in outputs.items() if path.parts[-2:-1] == ("en",) and "labs" in path.parts)
    assert 'HELPER = \\"git+https://github.com/someone/fork\\"' in lab


def test_the_labs_setup_cell_falls_back_on_the_wheel_of_the_sites_address(monkeypatch):
    monkeypatch.setenv("DEVICELAB_SITE_URL", "https://someone.github.io/fork")
    source = next(build_notebooks.SOURCES.glob("*.md"))
    lab = next(text for path, text in build_notebooks.build(source).items() if "labs" in path.parts)
    assert 'HELPER_INDEX = \\"https://someone.github.io/fork/simple/\\"' in lab


def test_the_committed_labs_fall_back_on_the_default_sites_wheel(no_address_variables):
    found = hooks.labs_helper_addresses(pattern=hooks._HELPER_INDEX)
    assert len(found) == len(hooks.labs_helper_addresses())
    assert set(found.values()) == {build_notebooks.helper_index_url().rstrip("/")}
    assert hooks.address_notices(build_notebooks.repo_url(), build_notebooks._address("site_url"),
                                 environ={"DEVICELAB_SITE_URL": "x"}) == []


def test_the_build_says_when_the_labs_fall_back_on_another_sites_wheel():
    [notice] = hooks.address_notices("https://github.com/o/c", "https://o.github.io/c/",
                                      environ={"DEVICELAB_SITE_URL": "https://o.github.io/c/"},
                                     helpers={}, indexes={"labs/en/01.ipynb": "https://elsewhere.example/simple"})
    assert "https://elsewhere.example/simple" in notice and "DEVICELAB_SITE_URL=https://o.github.io/c/" in notice


def test_the_committed_labs_install_the_helper_from_the_default_address(no_address_variables):
    found = hooks.labs_helper_addresses()
    assert found and set(found.values()) == {build_notebooks.repo_url()}


def test_the_build_warns_while_the_default_address_is_in_use():
    [notice] = hooks.address_notices("https://github.com/o/c", "https://o.github.io/c/", environ={}, helpers={},
                                      indexes={})
    assert notice.startswith("PLACEHOLDER ADDRESSES") and "DEVICELAB_REPO_URL" in notice


def test_the_build_is_quiet_with_real_addresses():
    environ = {"DEVICELAB_REPO_URL": "https://github.com/o/c", "DEVICELAB_SITE_URL": "https://o.github.io/c/"}
    helpers = {"labs/en/01-devices.ipynb": "https://github.com/o/c"}
    notices = hooks.address_notices("https://github.com/o/c/", "https://o.github.io/c/", environ, helpers, indexes={})
    assert notices == []


def test_the_build_says_when_the_labs_install_the_helper_from_elsewhere():
    environ = {"DEVICELAB_REPO_URL": "https://github.com/o/fork"}
    helpers = {"labs/en/01-devices.ipynb": "https://github.com/o/c"}
    [notice] = hooks.address_notices("https://github.com/o/fork", "https://o.github.io/fork/", environ, helpers,
                                      indexes={})
    assert "make notebooks" in notice and "https://github.com/o/c" in notice


def test_the_warning_is_printed_not_logged_so_a_strict_build_still_passes(no_address_variables, capsys, caplog):
    hooks._told.clear()
    # the default addresses, which the committed labs use: the one warning is the placeholders'
    config = {"repo_url": build_notebooks.repo_url(), "site_url": build_notebooks._address("site_url")}
    with caplog.at_level(logging.DEBUG):
        hooks.on_config(config)
        hooks.on_config(config)  # once per language: said once
    err = capsys.readouterr().err
    assert err.count("!!! ADDRESS WARNING") == 1 and "PLACEHOLDER ADDRESSES" in err
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]


# ------------------------------------------------------------------------- pieces of the site hooks


def test_a_404_page_switches_to_the_404_page_of_the_other_language():
    page = ('<link rel="alternate" href="/c/solutions/04/" hreflang="en">'
            '<a href="/c/zh/solutions/04/" hreflang="zh" class="md-select__link">中文</a>')
    fixed = hooks.page_not_found_html(page, "/c/", {"en": "", "zh": "zh/"})
    assert fixed == ('<link rel="alternate" href="/c/404.html" hreflang="en">'
                     '<a href="/c/zh/404.html" hreflang="zh" class="md-select__link">中文</a>')


def test_a_notebook_pages_contents_lead_to_its_headings():
    content = ('<h1 id="lab">Lab<a class="anchor-link" href="#lab">¶</a></h1>'
               '<h2 id="1-keep-what-to-returns">1. Keep <code>.to()</code><a class="anchor-link" href="#1-keep-what'
               '-to-returns">¶</a></h2><h2 id="">要点回顾<a class="anchor-link" href="#">¶</a></h2>')
    toc = [SimpleNamespace(id="1-keep-what-returns", level=2, children=[]), SimpleNamespace(id="_1", level=2,
                                                                                              children=[])]
    fixed = hooks.matched_anchors(content, toc)
    assert [link.id for link in toc] == ["1-keep-what-to-returns", "_1"]
    assert '<h2 id="_1">要点回顾<a class="anchor-link" href="#_1">' in fixed
    assert '<h1 id="lab">' in fixed and json.dumps(fixed).count("#1-keep-what-to-returns") == 1
