"""report.html: report.md rendered by markdown-it-py into a small page, images embedded as data URIs.

The HTML is made from the Markdown text itself, so it holds every heading, paragraph, bullet and table row
of report.md and nothing else. Raw HTML in the Markdown is escaped, not passed through (titles and series
ids are data). The page is a plain :class:`string.Template` (``$title``, ``$body``): the body is HTML
markdown-it already escaped, so a template engine would add a dependency and nothing to do.
"""

from __future__ import annotations

import base64
import html
import mimetypes
import re
from importlib.resources import files
from pathlib import Path
from string import Template

from markdown_it import MarkdownIt
from markdown_it.token import Token

TEMPLATE = files("forecaster.evaluation") / "templates" / "report.html"


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")

    def table_open(self, tokens, idx, options, env):  # each table in its own horizontally scrolling box
        return '<div class="table-wrap" style="overflow-x:auto">\n' + self.renderToken(tokens, idx, options, env)

    def table_close(self, tokens, idx, options, env):
        return self.renderToken(tokens, idx, options, env) + "</div>\n"

    def image(self, tokens, idx, options, env):  # each figure in its own horizontally scrolling box, as tables
        return (
            '<span class="figure-wrap" style="display:block;overflow-x:auto">' + self.image(tokens, idx, options, env) + "</span>"
        )

    md.add_render_rule("table_open", table_open)
    md.add_render_rule("table_close", table_close)
    md.add_render_rule("image", image)
    return md


# The narrowest a figure is drawn (CSS pixels; its own width where smaller): on a phone-sized page a wide figure
# keeps readable legends and axes and scrolls sideways in its box, instead of shrinking with the page; from an
# 800 px page up every figure fits the page's width.
MIN_FIGURE_WIDTH = 520


def _png_width(data: bytes) -> int | None:
    """The pixel width of a PNG (its IHDR chunk), None for anything else."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big")
    return None


def _embed(tokens, folder: Path, images: set[str]) -> None:
    """Point every image of the report at its file's bytes (a data URI), so the page stands alone; figures keep
    at least :data:`MIN_FIGURE_WIDTH` pixels of width (their own where smaller)."""
    for token in tokens:
        if token.type == "image" and token.attrGet("src") in images:
            name = str(token.attrGet("src"))
            kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
            data = (folder / name).read_bytes()
            token.attrSet("src", f"data:{kind};base64,{base64.b64encode(data).decode()}")
            width = _png_width(data)
            if width is not None:
                token.attrSet("style", f"min-width:{min(width, MIN_FIGURE_WIDTH)}px")
        if token.children:
            _embed(token.children, folder, images)


def _breakable_headers(tokens) -> None:
    """Let long column names (``rel_mase_vs_seasonal_naive``) wrap after underscores, so wide tables fit."""
    for before, token in zip(tokens, tokens[1:], strict=False):
        if before.type == "th_open" and token.type == "inline" and token.children:
            token.children = [
                Token("html_inline", "", 0, content=html.escape(t.content).replace("_", "_<wbr>")) if t.type == "text" else t
                for t in token.children
            ]


_HEADING = re.compile(r"<h([1-6])>(.*?)</h\1>\n", re.S)


def fold_sections(body: str, folded: tuple[str, ...]) -> str:
    """``body`` with each section whose heading's text starts with one of ``folded`` in a closed ``<details>``.

    A section runs from its heading to the next heading of its level or above; its heading becomes the summary, so
    the page shows one line for it until a click opens it. Nothing is dropped: the folded HTML is all still there.
    """
    if not folded:
        return body
    headings = list(_HEADING.finditer(body))
    out, at, closing = [], 0, []  # closing: (level, end offset) of open <details>
    for heading in headings:
        level, text = int(heading.group(1)), html.unescape(re.sub("<[^>]+>", "", heading.group(2)))
        while closing and level <= closing[-1]:
            out.append(body[at : heading.start()] + "</details>\n")
            at = heading.start()
            closing.pop()
        if not closing and text.startswith(folded):
            out.append(body[at : heading.start()])
            out.append(f'<details class="fold"><summary>{heading.group(0).strip()}</summary>\n')
            at = heading.end()
            closing.append(level)
    out.append(body[at:] + "</details>\n" * len(closing))
    return "".join(out)


def render_html(markdown_text: str, folder: Path, images: list[str], title: str, folded: tuple[str, ...] = ()) -> str:
    """The HTML page of ``markdown_text``; ``images`` are file names in ``folder`` the text links to; the sections
    whose headings start with one of ``folded`` open on a click (:func:`fold_sections`)."""
    md = _markdown()
    env: dict = {}
    tokens = md.parse(markdown_text, env)
    _embed(tokens, Path(folder), set(images))
    _breakable_headers(tokens)
    body = fold_sections(md.renderer.render(tokens, md.options, env), folded)
    return Template(TEMPLATE.read_text(encoding="utf-8")).substitute(title=html.escape(title), body=body)
