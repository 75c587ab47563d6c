"""md(): data placed in Markdown-rendering elements renders as the literal text, nothing else."""

import html
import re

import pytest
from markdown_it import MarkdownIt

from components.safe import WORD_JOINER, md

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])

NASTY = [
    "![x](http://127.0.0.1:9/px.png) **bold**",
    "q1 ![x](http://127.0.0.1:9/px.png) **bold**",
    "[click](https://evil.example) <a href='https://evil.example'>x</a> <img src=x onerror=alert(1)>",
    "# heading", "- item", "+ item", "* item", "1. first", "2) second", "> quote", "```py", "~~~", "    indented",
    "| a | b |", "~~struck~~", "_em_ __strong__", "`code`", "a\\*b", "&lt;b&gt; &amp;", "$x^2$",
    ":red[danger] :material/home: :smile:", "www.evil.example http://evil.example a@evil.example",
    "/data/my_file.v2.jsonl: 3 rows skipped (bad *json*)",
]


def _rendered(text: str) -> str:
    return MARKDOWN.render(md(text)).strip().replace(WORD_JOINER, "")  # the joiners are invisible: see below


@pytest.mark.parametrize("text", NASTY)
def test_md_renders_as_the_literal_text(text):
    # a CommonMark renderer turns the escaped string back into exactly the text: no image, link, emphasis,
    # heading, list, quote, code or HTML
    assert _rendered(text) == f"<p>{html.escape(text.strip())}</p>".replace("&#x27;", "'")


def test_md_escapes_image_link_and_bold():
    out = md("![x](http://h/p.png) **b**")
    assert not re.search(r"(?<!\\)!(?=\[)", out) and "**" not in out and "](" not in out
    assert out == r"\!\[x\]\(http\:" + WORD_JOINER + r"//h/p\.png\) \*\*b\*\*"


def test_md_keeps_one_line():
    assert md("a\n\n    b\r\n===") == r"a b \=\=\="


# What remark-gfm (mdast-util-gfm-autolink-literal, in Streamlit's frontend) turns into links: it searches text nodes
# after escapes are resolved, so escaping alone leaves ``http\://x`` a link. Its two patterns, as in the bundle:
GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)", re.IGNORECASE | re.ASCII)
GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)


@pytest.mark.parametrize("text", ["http://evil.example/x", "see https://evil.example.", "www.evil.example",
                                  "(WWW.EVIL.EXAMPLE)", "HTTP://EVIL.EXAMPLE", "mail a@evil.example",
                                  "mailto:a@evil.example", "d1 [link](http://127.0.0.1:9/d)"])
def test_md_leaves_no_bare_url_for_gfm_to_link(text):
    shown = html.unescape(re.sub(r"<[^>]+>", "", MARKDOWN.render(md(text))))  # the text nodes, escapes resolved
    assert GFM_URL.search(text) or GFM_EMAIL.search(text)  # a link before
    assert not GFM_URL.search(shown) and not GFM_EMAIL.search(shown), shown
    assert shown.strip().replace(WORD_JOINER, "") == text  # and it still reads the same
