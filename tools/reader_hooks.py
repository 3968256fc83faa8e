"""MkDocs hooks for what a reader meets around the chapters: the search keywords of each page, chapter pages
whose next/previous links follow the chapters, and the 404 page in the reader's language."""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.plugins import event_priority

# The words readers use for a chapter's problem ("model on the GPU, data on the CPU"), from the `keywords` of
# its front matter: docs/assets/javascripts/workers/course-search.js ranks a page higher when they hold the
# query's words. Kept by page URL across the builds of both languages, written into the one search index.
_KEYWORDS: dict[str, list[str]] = {}


_HAN = re.compile(r"[\u4e00-\u9fff]")


def page_keywords(meta: dict) -> list[str]:
    """The reader phrases of a page's front matter `keywords` (a list, or one comma-separated string).

    Chinese phrases come cut into words by jieba, separated by U+200B as in the rest of the index, so that
    the search can cut a reader's sentence into the same words.
    """
    found = meta.get("keywords") or []
    if isinstance(found, str):
        found = found.split(",")
    phrases = [str(word).strip() for word in found if str(word).strip()]
    if any(_HAN.search(phrase) for phrase in phrases):
        import jieba

        phrases = ["\u200b".join(jieba.cut(phrase)) if _HAN.search(phrase) else phrase for phrase in phrases]
    return phrases


def with_keywords(index: dict, keywords: dict[str, list[str]]) -> dict:
    """The search index with each page's keywords on the page's own entry (the one without '#')."""
    for doc in index.get("docs", []):
        if doc.get("location") in keywords:
            doc["keywords"] = keywords[doc["location"]]
    return index


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Remember the page's search keywords."""
    if page_keywords(page.meta):
        _KEYWORDS[page.url] = page_keywords(page.meta)
    return markdown


@event_priority(-100)  # after the search plugin has written the index, and the 404 pages are in place
def on_post_build(config) -> None:
    """Keywords into the search index, a sitemap in each language's folder, the 404 pages in their language."""
    site = Path(config["site_dir"])
    index_file = site / "search" / "search_index.json"
    if _KEYWORDS and index_file.exists():
        index = with_keywords(json.loads(index_file.read_text(encoding="utf-8")), _KEYWORDS)
        index_file.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    folders = sorted(set(language_roots(config).values()))
    for folder in folders:
        page = site / folder / "404.html"
        if page.exists():
            text = page.read_text(encoding="utf-8")
            fixed = localized_not_found(text, site_path(config), folders, _CHAPTERS)
            if fixed != text:
                page.write_text(fixed, encoding="utf-8")


# ------------------------------------------------------------------------------ the language switcher

# The language switcher's links. mkdocs-static-i18n writes them from site_url's path on the home pages
# ("/pytorch-device-errors/zh/"), which leads nowhere when the site is served at another path (a fork, a
# preview, `mkdocs serve`): they become relative to the page. The head's <link rel="alternate" hreflang>
# go: Material fetches a sitemap.xml next to each of them, in the page's own folder, where there is none
# (two 404s on every page), and takes over the switcher's clicks when it finds one. Search engines read
# each page's languages from sitemap.xml, which lists them (<xhtml:link rel="alternate" hreflang>).
_SWITCHER_LINK = re.compile(r'(<a href=")([^"]*)(" hreflang="[\w-]+")')
_ALTERNATE_LINK = re.compile(r'[ \t]*<link rel="alternate" href="[^"]*" hreflang="[\w-]+">\n?')


def site_path(config) -> str:
    """The path of site_url, with a trailing slash ('/' when none is set)."""
    return urlsplit(config.get("site_url") or "/").path.rstrip("/") + "/"


def _relative(target: str, page_url: str) -> str:
    """The address of a site path ('zh/', 'zh/01-devices/', '404.html') from a page's URL."""
    folder = page_url.rstrip("/") if page_url.endswith("/") or not page_url else posixpath.dirname(page_url)
    relative = posixpath.relpath(target.rstrip("/") or ".", folder or ".")
    if target.endswith("/") or not target:
        return "./" if relative == "." else relative + "/"
    return relative


def relative_switcher(output: str, page_url: str, base: str) -> str:
    """A page's HTML whose language links work at any base path, without the head's alternate links."""
    def link(found: re.Match) -> str:
        href = found.group(2)
        if not href.startswith(base):
            return found.group(0)
        return f"{found.group(1)}{_relative(href[len(base):], page_url)}{found.group(3)}"

    return _ALTERNATE_LINK.sub("", _SWITCHER_LINK.sub(link, output))


def language_roots(config) -> dict[str, str]:
    """Each language's folder in the site ('' for the default language), by locale."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return {}
    return {lang.locale: "" if lang.default else f"{lang.locale}/" for lang in i18n.config.languages}


def on_post_page(output: str, page, config) -> str:
    """Language links that work at any base path."""
    return relative_switcher(output, page.url, site_path(config))


# ----------------------------------------------------------------------------------- chapter pages

_CHAPTER = re.compile(r"^(?:[a-z]{2}/)?\d\d-[^/]*\.md$")
_CHAPTERS: dict[str, list[tuple[str, str]]] = {}  # language folder ("" or "zh/") -> [(url, title)]


def chapter_pages(pages: list) -> list:
    """The chapter pages (NN-name.md) among a language's pages, in the order of the navigation."""
    return [page for page in pages if _CHAPTER.match(page.file.src_uri)]


_NOTEBOOK = re.compile(r"^(?:[a-z]{2}/)?(labs|solutions)/\d\d-[^/]*\.ipynb$")
# What a notebook page is, before its chapter's title: "Lab 01 · Devices 101", "参考答案 01 · 设备入门"
NOTEBOOK_KIND = {"labs": {"en": "Lab", "zh": "实验"}, "solutions": {"en": "Solution", "zh": "参考答案"}}


def notebook_pages(pages: list) -> dict[str, list]:
    """The lab pages and the solution pages among a language's pages, each kind in the order of the navigation."""
    kinds: dict[str, list] = {"labs": [], "solutions": []}
    for page in pages:
        found = _NOTEBOOK.match(page.file.src_uri)
        if found:
            kinds[found.group(1)].append(page)
    return kinds


def on_nav(nav, config, files):
    """Chapter pages lead to the previous and next chapter (not to the instructors' page or to Lab 01); lab pages
    lead from lab to lab and solution pages from solution to solution (lab 09 does not lead on to solution 01)."""
    for pages in notebook_pages(nav.pages).values():
        for number, page in enumerate(pages):
            page.previous_page = pages[number - 1] if number else None
            page.next_page = pages[number + 1] if number + 1 < len(pages) else None
    chapters = chapter_pages(nav.pages)
    if not chapters:
        return nav
    folder = url_folder(chapters[0].url)  # "" for the default language, "zh/" for Chinese
    home = next((page for page in nav.pages if page.url in (folder, f"{folder}index.html")), None)
    for number, page in enumerate(chapters):
        page.previous_page = chapters[number - 1] if number else home
        page.next_page = chapters[number + 1] if number + 1 < len(chapters) else None
    _CHAPTERS[folder] = [(page.url, page.title) for page in chapters]
    return nav


def url_folder(url: str) -> str:
    """The language folder of a page's URL: 'zh/' for 'zh/01-devices/', '' for '01-devices/'."""
    parent = posixpath.dirname(url.rstrip("/"))
    return f"{parent}/" if parent else ""


def on_page_context(context, page, config, nav):
    """A notebook page's browser title says which kind it is; remember each chapter's title as its page shows it
    (in its language), for the 404 pages."""
    found = _NOTEBOOK.match(page.file.src_uri)
    if found and page.title:
        lang = "zh" if page.file.src_uri.startswith("zh/") else "en"
        page.meta["title"] = f"{NOTEBOOK_KIND[found.group(1)][lang]} {page.title}"
    for chapters in _CHAPTERS.values():
        for number, (url, _) in enumerate(chapters):
            if url == page.url and page.title:
                chapters[number] = (url, page.title)
    return context


# ------------------------------------------------------------------------------------------ 404 page

NOT_FOUND_TEXT = {
    "en": {
        "title": "Page not found",
        "lead": "This address leads to no page of the course. It may have moved, or the link was mistyped.",
        "search": "Search the course",
        "explain": "Paste your error message",
        "chapters": "The chapters",
    },
    "zh": {
        "title": "页面不存在",
        "lead": "这个地址没有对应的课程页面：页面可能已经移动，或者链接有误。",
        "search": "搜索课程",
        "explain": "粘贴报错信息",
        "chapters": "各章",
    },
}
_NOT_FOUND_MARK = "data-course-404"
_HTML_LANG = re.compile(r'<html[^>]*\blang="([\w-]+)"')


def base_script(base: str, folders: list[str]) -> str:
    """The <base> of a 404 page and the script that finds the site's root when it is served at another path.

    A 404 page is served at any depth, so its links cannot be relative to itself: they are relative to
    <base>, which is site_url's path; when the page was reached at another path (a fork, a preview, a
    local server), the root is read from the address of the page opened by name (.../zh/404.html), else
    taken to be the server's root.
    """
    names = "|".join(re.escape(folder.rstrip("/")) + "\\/" for folder in folders if folder)
    script = (
        "(function(){var b=document.querySelector('base'),p=" + json.dumps(base) + ",path=location.pathname;"
        "if(path.indexOf(p)===0)return;"
        "var m=path.match(/^(.*?\\/)(?:" + (names or "(?!)") + ")?404\\.html$/);b.href=m?m[1]:'/'})()"
    )
    return f'<base href="{base}"><script>{script}</script>'


def language_switch(folders: list[str]) -> str:
    """For the root 404.html, the only one GitHub Pages (and `mkdocs serve`) serves: when the missing address lies
    in another language's folder (zh/...), the page becomes that language's 404 page, at the same address."""
    names = "|".join(re.escape(folder.rstrip("/")) for folder in folders if folder)
    if not names:
        return ""
    script = (
        "(function(){var root=new URL(document.querySelector('base').href),"
        "rest=location.pathname.slice(root.pathname.length),m=rest.match(/^(" + names + r")\//);"
        "if(!m||/^[^/]+\/404\.html$/.test(rest))return;document.documentElement.style.visibility='hidden';"
        "fetch(root.href+m[1]+'/404.html').then(function(r){return r.ok?r.text():null}).then(function(t){"
        "if(t){document.open();document.write(t);document.close()}else{document.documentElement.style.visibility=''}"
        "},function(){document.documentElement.style.visibility=''})})()"
    )
    return f"<script>{script}</script>"


def not_found_body(lang: str, folder: str, chapters: list[tuple[str, str]]) -> str:
    """The 404 page's text in its language: search, the paste page and the chapter list (links relative to <base>)."""
    words = NOT_FOUND_TEXT.get(lang, NOT_FOUND_TEXT["en"])
    items = "".join(f'<li><a href="{html_escape(url)}">{html_escape(title)}</a></li>' for url, title in chapters)
    return (
        f'<h1 {_NOT_FOUND_MARK}>{html_escape(words["title"])}</h1>\n'
        f'<p>{html_escape(words["lead"])}</p>\n'
        '<p class="course-404-actions">'
        f'<label class="md-button md-button--primary" for="__search">{html_escape(words["search"])}</label> '
        f'<a class="md-button" href="{folder}explain/">{html_escape(words["explain"])}</a></p>\n'
        f'<h2>{html_escape(words["chapters"])}</h2>\n<ul>{items}</ul>'
    )


def html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def localized_not_found(output: str, base: str, folders: list[str], chapters: dict[str, list]) -> str:
    """A built 404 page in its own language, with links that work at any base path."""
    if _NOT_FOUND_MARK in output:
        return output
    found = _HTML_LANG.search(output)
    lang = found.group(1)[:2] if found else "en"
    folder = next((f for f in folders if f and f.rstrip("/") == lang), "")
    body = not_found_body(lang, folder, chapters.get(folder, []))
    output = re.sub(r"<h1>[^<]*</h1>", lambda _: body, output, count=1)
    # every address below site_url's path becomes relative to <base>
    output = re.sub(r'((?:href|src)=")' + re.escape(base), r"\1", output)
    output = output.replace(f'new URL("{base}",location)', "new URL(document.baseURI)")
    output = _ALTERNATE_LINK.sub("", output)  # as on every page (on_post_page)
    output = re.sub(r"(<head[^>]*>)", lambda m: m.group(1) + base_script(base, folders) +
                    (language_switch(folders) if not folder else ""), output, count=1)
    config_fix = ("<script>(function(){var c=document.getElementById('__config'),j=JSON.parse(c.textContent);"
                  "j.base=document.baseURI;j.search=new URL(j.search.replace(" + json.dumps(base) + ",''),"
                  "document.baseURI).href;c.textContent=JSON.stringify(j)})()</script>")
    return re.sub(r'(<script id="__config" type="application/json">.*?</script>)',
                  lambda m: m.group(1) + config_fix, output, count=1, flags=re.S)
