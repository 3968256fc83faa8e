"""Every link of the built site leads somewhere, checked offline: internal links and anchors in both
languages, "Open in Colab" and "Download" links to the repository's notebooks, the language switcher
to each page's twin, and a 404 page in each language.

Run on any built site:  python tests/site/test_links.py site/
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urljoin, urlsplit
from xml.etree import ElementTree

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from build_notebooks import repo_url  # noqa: E402

LANGS = {"en": "", "zh": "zh/"}  # language → folder of its pages in the site
COLAB = "https://colab.research.google.com/github/"
LINKING = (("a", "href"), ("link", "href"), ("script", "src"), ("img", "src"), ("source", "src"), ("iframe", "src"))
NOT_FETCHED = ("mailto:", "javascript:", "data:", "tel:")
SITEMAP, XHTML = "{http://www.sitemaps.org/schemas/sitemap/0.9}", "{http://www.w3.org/1999/xhtml}"


def site_url() -> str:
    """The site's own address, as mkdocs.yml sets it (with its environment override)."""
    from mkdocs.utils.yaml import yaml_load

    with open(ROOT / "mkdocs.yml", encoding="utf-8") as config:
        return (yaml_load(config).get("site_url") or "http://localhost/").rstrip("/") + "/"


@dataclass
class Report:
    """What the checker saw, and every broken link as 'page: what is wrong'."""

    pages: int = 0
    links: int = 0
    external: int = 0
    seconds: float = 0.0
    broken: dict[str, list[str]] = field(
        default_factory=lambda: {"internal": [], "colab": [], "download": [], "switcher": [], "404": []})

    def figures(self) -> str:
        """One line for a log: pages, links checked, time, broken links."""
        count = sum(len(found) for found in self.broken.values())
        return (f"link check: {self.pages} pages, {self.links} links checked ({self.external} external, "
                f"not fetched), {self.seconds:.1f} s, {count} broken")


def page_language(rel: PurePosixPath) -> str:
    """The language of a page of the site, from its folder."""
    return next((lang for lang, folder in LANGS.items() if folder and rel.as_posix().startswith(folder)), "en")


def twin(rel: PurePosixPath, lang: str) -> PurePosixPath:
    """The same page in another language."""
    plain = rel.as_posix().removeprefix(LANGS[page_language(rel)])
    return PurePosixPath(LANGS[lang] + plain)


class Site:
    """A built site on disk, addressed the way a browser at its hosted address would address it."""

    def __init__(self, folder: Path, address: str) -> None:
        self.folder = folder
        parts = urlsplit(address)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.base = parts.path.rstrip("/") + "/"
        self._ids: dict[Path, set[str]] = {}
        self._soups: dict[Path, BeautifulSoup] = {}

    def url(self, rel: PurePosixPath) -> str:
        """The address of a page: a folder's index.html is served as the folder."""
        path = rel.as_posix()
        path = path[: -len("index.html")] if path == "index.html" or path.endswith("/index.html") else path
        return f"{self.origin}{self.base}{path}"

    def address(self, rel: PurePosixPath, soup: BeautifulSoup) -> str:
        """What the page's relative links are resolved against: its address, or its <base> (the 404 pages)."""
        base = soup.find("base", href=True)
        return urljoin(self.url(rel), base["href"]) if base else self.url(rel)

    def soup(self, file: Path) -> BeautifulSoup:
        """The parsed page (parsed once)."""
        if file not in self._soups:
            self._soups[file] = BeautifulSoup(file.read_text(encoding="utf-8"), "html.parser")
        return self._soups[file]

    def ids(self, file: Path) -> set[str]:
        """Every anchor a link can point at in a page."""
        if file not in self._ids:
            soup = self.soup(file)
            self._ids[file] = {tag["id"] for tag in soup.find_all(id=True)} | {
                tag["name"] for tag in soup.find_all("a", attrs={"name": True})}
        return self._ids[file]

    def local(self, address: str) -> Path | None:
        """The file an address of the site is served from, None when the address is not the site's."""
        parts = urlsplit(address)
        if f"{parts.scheme}://{parts.netloc}" != self.origin or not (parts.path + "/").startswith(self.base):
            return None
        path = unquote(parts.path)[len(self.base):]
        file = self.folder / path
        return file / "index.html" if path.endswith("/") or path == "" or file.is_dir() else file


def check(folder: Path, repo: str | None = None, address: str | None = None) -> Report:
    """Check every link of the site built in `folder`; `repo` and `address` default to mkdocs.yml's."""
    repo = (repo or repo_url()).rstrip("/")
    site = Site(folder, address or site_url())
    started = time.perf_counter()
    report = Report()
    broken = report.broken
    blob = f"{repo}/blob/main/"
    tree = f"{repo}/tree/main/"
    # (simple/ is the pip index that serves the helper's wheel: not a page of the course)
    pages = sorted(p for p in folder.rglob("*.html") if not {"assets", "simple"} & set(p.relative_to(folder).parts))
    report.pages = len(pages)
    for file in pages:
        rel = PurePosixPath(file.relative_to(folder).as_posix())
        lang = page_language(rel)
        soup = site.soup(file)
        here = site.address(rel, soup)
        for tag_name, attribute in LINKING:
            for tag in soup.find_all(tag_name, attrs={attribute: True}):
                href = tag[attribute].strip()
                if not href or href.startswith(NOT_FETCHED):
                    continue
                report.links += 1
                target = urljoin(here, href)
                if target.startswith(COLAB):
                    _check_colab(target, rel, lang, repo, broken["colab"])
                    continue
                local = site.local(target)
                if local is None and target.startswith(f"{site.origin}/"):
                    broken["internal"].append(f"{rel}: {href} leaves the site for another one at its address")
                    continue
                if local is None:
                    report.external += 1
                    for prefix in (blob, tree):  # a link into the repository names a file that exists
                        if target.startswith(prefix) and not (ROOT / unquote(target[len(prefix):])).exists():
                            broken["internal"].append(f"{rel}: {href} is not in the repository")
                    continue
                if not local.is_file():
                    broken["internal"].append(f"{rel}: {href} leads nowhere")
                    continue
                fragment = unquote(urlsplit(target).fragment)
                if fragment and local.suffix == ".html" and fragment not in site.ids(local):
                    broken["internal"].append(f"{rel}: {href} has no anchor #{fragment}")
                if tag_name == "a" and tag.has_attr("download"):
                    _check_download(local, rel, lang, href, broken["download"])
        _check_switcher(site, soup, rel, lang, broken["switcher"])
    sitemap = folder / "sitemap.xml"
    if sitemap.is_file():  # every address the sitemap gives search engines is a page of the site
        tree = ElementTree.parse(sitemap)
        for address in [loc.text.strip() for loc in tree.iter(f"{SITEMAP}loc")] + [
                link.get("href") for link in tree.iter(f"{XHTML}link")]:
            report.links += 1
            local = site.local(address)
            if local is None or not local.is_file():
                broken["internal"].append(f"sitemap.xml: {address} is not a page of the site")
    for lang, prefix in LANGS.items():
        page_404 = folder / prefix / "404.html"
        if not page_404.is_file():
            broken["404"].append(f"{prefix}404.html does not exist")
        elif f' lang="{lang}"' not in page_404.read_text(encoding="utf-8")[:400]:
            broken["404"].append(f"{prefix}404.html is not in {lang}")
    report.seconds = time.perf_counter() - started
    return report


def _notebook_of(rel: PurePosixPath) -> tuple[str, str] | None:
    # (version, lab) of a notebook page such as zh/labs/01-devices/index.html
    parts = rel.as_posix().removeprefix("zh/").split("/")
    return (parts[0], parts[1]) if len(parts) == 3 and parts[0] in ("labs", "solutions") else None


def _check_colab(target: str, rel: PurePosixPath, lang: str, repo: str, broken: list[str]) -> None:
    # Colab opens github/<owner>/<repo>/blob/<branch>/<path>: this repository, its main branch, a notebook
    # that exists at that path, and the notebook of the page the button is on.
    owner_repo = urlsplit(repo).path.strip("/")
    expected = f"{COLAB}{owner_repo}/blob/main/"
    if not target.startswith(expected):
        broken.append(f"{rel}: {target} does not open {repo} on its main branch")
        return
    path = target[len(expected):]
    if not path.endswith(".ipynb") or not (ROOT / path).is_file():
        broken.append(f"{rel}: {target} opens {path}, which is not a notebook of the repository")
    notebook = _notebook_of(rel)
    if notebook and path != f"{notebook[0]}/{lang}/{notebook[1]}.ipynb":
        broken.append(f"{rel}: {target} opens {path}, not this page's notebook")


def _check_download(local: Path, rel: PurePosixPath, lang: str, href: str, broken: list[str]) -> None:
    # The download is the repository's notebook for this page, byte for byte.
    notebook = _notebook_of(rel)
    if local.suffix != ".ipynb" or notebook is None:
        broken.append(f"{rel}: the download {href} is not a lab page's notebook")
        return
    source = ROOT / notebook[0] / lang / f"{notebook[1]}.ipynb"
    if not source.is_file() or source.read_bytes() != local.read_bytes():
        broken.append(f"{rel}: the download {href} is not {source.relative_to(ROOT)} as committed")


def _check_switcher(site: Site, soup: BeautifulSoup, rel: PurePosixPath, lang: str, broken: list[str]) -> None:
    # Each language of the switcher (and of the head's alternate links, where a page has them) leads to this
    # page in that language, a language's root for alternate links that name one.
    switcher = {a["hreflang"]: a["href"] for a in soup.select("a.md-select__link[hreflang]")}
    if set(switcher) != set(LANGS):
        broken.append(f"{rel}: the language switcher offers {sorted(switcher)}, not {sorted(LANGS)}")
    alternates = [(link["hreflang"], link["href"]) for link in soup.select('link[rel="alternate"][hreflang]')]
    here = site.address(rel, soup)
    for other, href, is_root in [*((o, h, False) for o, h in switcher.items()), *((o, h, True) for o, h in alternates)]:
        if other not in LANGS:
            continue
        if rel.name == "404.html":
            is_root = False  # a 404 page's links all lead to the other language's 404 page
        expected = site.folder / (PurePosixPath(LANGS[other] + "index.html") if is_root else twin(rel, other))
        found = site.local(urljoin(here, href))
        if found is None or found.resolve() != expected.resolve():
            broken.append(f"{rel}: the {other} link {href} does not lead to {expected.relative_to(site.folder)}")
        elif not found.is_file():
            broken.append(f"{rel}: the {other} twin {twin(rel, other)} does not exist")


# ------------------------------------------------------------------------------------------------ tests


@pytest.fixture(scope="module")
def report(site: Path) -> Report:
    return check(site)


def test_the_checker_saw_the_whole_site(report):
    assert report.pages >= 20 and report.links > 1000, report.figures()


@pytest.mark.parametrize("kind", ["internal", "colab", "download", "switcher", "404"])
def test_no_broken_links(report, kind):
    assert report.broken[kind] == [], "\n".join(report.broken[kind])


def test_both_languages_have_the_same_pages(site):
    shown = [PurePosixPath(p.relative_to(site).as_posix()) for p in site.rglob("*.html")]
    shown = [p for p in shown if not {"assets", "simple"} & set(p.parts)]  # simple/: the pip index, not a page
    pages = {lang: {p for p in shown if page_language(p) == lang} for lang in LANGS}
    assert {twin(p, "zh") for p in pages["en"]} == pages["zh"]


def test_figures(report, capsys):
    with capsys.disabled():
        print(f"\n{report.figures()}")
    assert sum(len(found) for found in report.broken.values()) == 0


# A small site, to show that every rule fails when it should.

PAGE = """<!doctype html><html lang="{lang}"><head>{head}</head><body id="top">
<a href="{en}" hreflang="en" class="md-select__link">English</a>
<a href="{zh}" hreflang="zh" class="md-select__link">中文</a>
<h2 id="fix">Fix</h2>{body}</body></html>"""


def _write(folder: Path, rel: str, lang: str, en: str, zh: str, body: str = "", head: str = "") -> None:
    file = folder / rel
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(PAGE.format(lang=lang, en=en, zh=zh, body=body, head=head), encoding="utf-8")


def _small_site(folder: Path, body: str = "", zh_switch: str = "../../01-devices/") -> Path:
    _write(folder, "index.html", "en", "./", "zh/")
    _write(folder, "zh/index.html", "zh", "../", "./")
    _write(folder, "01-devices/index.html", "en", "./", "../zh/01-devices/", body)
    _write(folder, "zh/01-devices/index.html", "zh", zh_switch, "./")
    _write(folder, "404.html", "en", "/c/404.html", "/c/zh/404.html")
    _write(folder, "zh/404.html", "zh", "/c/404.html", "/c/zh/404.html")
    return folder


def _broken(folder: Path) -> dict[str, list[str]]:
    found = check(folder, repo="https://github.com/o/c", address="https://o.github.io/c/").broken
    return {kind: problems for kind, problems in found.items() if problems}


def test_a_correct_small_site_passes(tmp_path):
    assert _broken(_small_site(tmp_path, '<a href="../#top">home</a><a href="#fix">fix</a>')) == {}


@pytest.mark.parametrize("body, kind", [
    ('<a href="../02-dataparallel/">next</a>', "internal"),
    ('<a href="../#nowhere">home</a>', "internal"),
    ('<a href="/elsewhere/">outside the site</a>', "internal"),
    ('<a href="https://github.com/o/c/blob/main/no/such/file.py">source</a>', "internal"),
    (f'<a href="{COLAB}o/c/blob/main/labs/en/99-none.ipynb">Colab</a>', "colab"),
    (f'<a href="{COLAB}someone/else/blob/main/labs/en/01-devices.ipynb">Colab</a>', "colab"),
    ('<a href="../index.html" download>Download</a>', "download"),
])
def test_each_rule_catches_what_it_is_for(tmp_path, body, kind):
    assert set(_broken(_small_site(tmp_path, body))) == {kind}


def test_a_switcher_that_leads_to_another_page_is_caught(tmp_path):
    assert set(_broken(_small_site(tmp_path, zh_switch="../../"))) == {"switcher"}


def test_a_missing_404_in_one_language_is_caught(tmp_path):
    (_small_site(tmp_path) / "zh" / "404.html").unlink()
    assert set(_broken(tmp_path)) == {"404", "switcher", "internal"}


def test_a_sitemap_address_that_is_no_page_is_caught(tmp_path):
    (_small_site(tmp_path) / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://o.github.io/c/01-devices/</loc></url>"
        "<url><loc>https://o.github.io/c/02-dataparallel/</loc></url></urlset>", encoding="utf-8")
    assert _broken(tmp_path) == {"internal": ["sitemap.xml: https://o.github.io/c/02-dataparallel/ is not a page "
                                              "of the site"]}


if __name__ == "__main__":
    result = check(Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "site"))
    for kind, problems in result.broken.items():
        for problem in problems:
            print(f"{kind}: {problem}")
    print(result.figures())
    sys.exit(1 if any(result.broken.values()) else 0)


def test_a_page_with_a_base_resolves_its_links_against_it(tmp_path):
    site = _small_site(tmp_path)
    _write(site, "zh/404.html", "zh", "404.html", "zh/404.html", '<a href="zh/01-devices/">01</a>',
           head='<base href="/c/">')
    assert _broken(site) == {}
