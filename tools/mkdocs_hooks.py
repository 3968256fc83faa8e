"""MkDocs hooks: notebook pages under mkdocs-static-i18n, and the action bar of every lab page."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path, PurePosixPath

import mkdocs_static_i18n.folder
import mkdocs_static_i18n.reconfigure
from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the course's helper, without installing it
from devicelab import captures  # noqa: E402


class _NotebookAwareFile(File):
    # mkdocs-static-i18n 1.3.1 rebuilds every File after mkdocs-jupyter has wrapped the
    # notebooks, so .ipynb files turn back into static assets and are published as raw JSON
    # (ultrabug/mkdocs-static-i18n#198). Files it builds from this class stay pages.
    def is_documentation_page(self) -> bool:
        return self.src_uri.endswith(".ipynb") or super().is_documentation_page()


mkdocs_static_i18n.folder.File = _NotebookAwareFile
mkdocs_static_i18n.reconfigure.File = _NotebookAwareFile

_JUPYTER_THEME = re.compile(r'<style type="text/css">\s*@charset "UTF-8";\.jupyter-wrapper\{.*?</style>', re.S)
_MATHJAX = re.compile(r'<script type="text/x-mathjax-config">.*?</script>|<script src=""> </script>', re.S)

ACTION_TEXT = {
    "en": {
        "colab": "Open in Colab",
        "download": "Download notebook",
        "verified": "Last verified on GPU: {gpu}, torch {torch}, {date}.",
        "unverified": "Not yet verified on a GPU (run `make gpu-check` on a CUDA machine).",
        "lab": "Student version",
        "solution": "Solution",
    },
    "zh": {
        "colab": "在 Colab 中打开",
        "download": "下载笔记本",
        "verified": "最近一次 GPU 验证：{gpu}，torch {torch}，{date}。",
        "unverified": "尚未在 GPU 上验证（在有 CUDA 的机器上运行 `make gpu-check`）。",
        "lab": "学生版",
        "solution": "参考答案",
    },
}


def _notebook_parts(page) -> tuple[str, str, str] | None:
    # (language, "labs" | "solutions", lab id) of a notebook page, else None.
    parts = PurePosixPath(page.file.src_uri).parts
    if len(parts) == 3 and parts[1] in ("labs", "solutions") and parts[2].endswith(".ipynb"):
        return parts[0], parts[1], parts[2][: -len(".ipynb")]
    return None


def verification_line(lab: str, lang: str, known: list[dict[str, str]] | None = None) -> str:
    """The 'last verified on GPU' line of a lab page, from the committed capture file."""
    verified = captures.last_verified(lab, known)
    words = ACTION_TEXT[lang]
    return words["verified"].format(**verified) if verified else words["unverified"]


def _inline_code(text: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def on_page_content(html_text: str, page, config, files) -> str:
    """Put 'Open in Colab', 'Download' and the last GPU verification at the top of each lab page."""
    found = _notebook_parts(page)
    if found is None:
        return html_text
    lang, version, lab = found
    # Readers who search an error message should land on the chapter page, which links to the
    # lab; four notebook copies of the same text would crowd it out of the results.
    page.meta["search"] = {"exclude": True}
    words = ACTION_TEXT[lang]
    repo = config["repo_url"].rstrip("/").removeprefix("https://github.com/")
    colab = f"https://colab.research.google.com/github/{repo}/blob/main/{version}/{lang}/{lab}.ipynb"
    other = "solutions" if version == "labs" else "labs"
    stamp = verification_line(lab, lang)
    bar = (
        '<div class="lab-actions">'
        f'<a class="md-button md-button--primary" href="{html.escape(colab)}">{words["colab"]}</a>'
        f'<a class="md-button" href="{lab}.ipynb" download>{words["download"]}</a>'
        f'<a class="md-button" href="../../{other}/{lab}/">{words["lab" if other == "labs" else "solution"]}</a>'
        f'<span class="lab-verified">{_inline_code(html.escape(stamp))}</span>'
        "</div>"
    )
    return bar + _MATHJAX.sub("", _JUPYTER_THEME.sub("", html_text))
