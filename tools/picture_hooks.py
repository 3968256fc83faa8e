"""MkDocs hooks for the pictures of where tensors live (devicelab/pictures.py).

A chapter page marks its picture's place with `<!-- picture: 01-devices -->`; the built page holds the
inline SVG there. The paste page shows the picture of the chapter it diagnoses: every chapter's figure is
also written, per language, to assets/pictures/<lang>/<chapter>.html, which docs/assets/javascripts/explain.js
fetches from the same site.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from devicelab import messages, pictures  # noqa: E402

MARKER = re.compile(r"(?:<p>)?<!-- picture: ([0-9a-z-]+) -->(?:</p>)?")


def page_language(page) -> str:
    """The page's language, from its folder (docs/zh/...: zh; otherwise en)."""
    parts = PurePosixPath(page.file.src_uri).parts
    return parts[0] if len(parts) > 1 and parts[0] in messages.LANGUAGES else "en"


def with_pictures(html_text: str, lang: str) -> str:
    """The page's HTML with each picture marker replaced by its figure (an unknown chapter fails the build)."""
    def draw(found: re.Match) -> str:
        chapter = found.group(1)
        if chapter not in pictures.PICTURES:
            raise ValueError(f"<!-- picture: {chapter} -->: no such picture in devicelab/pictures.py")
        return pictures.figure(chapter, lang)

    return MARKER.sub(draw, html_text)


def on_page_content(html_text: str, page, config, files) -> str:
    """Draw the page's pictures in its language."""
    return with_pictures(html_text, page_language(page))


def on_post_build(config) -> None:
    """Every chapter's figure, per language, for the paste page: once, in the default language's build (each
    language's build would otherwise write the same files again)."""
    if (config["theme"].get("language") or "en") != "en":
        return
    for lang in messages.LANGUAGES:
        folder = Path(config["site_dir"]) / "assets" / "pictures" / lang
        folder.mkdir(parents=True, exist_ok=True)
        for chapter in pictures.PICTURES:
            (folder / f"{chapter}.html").write_text(pictures.figure(chapter, lang), encoding="utf-8")
