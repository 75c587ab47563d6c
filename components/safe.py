"""Data inside Markdown-rendering elements (st.caption, expander labels, st.markdown): escaped to plain text.

Prefer ``st.text`` for data. Where a label must carry data (an id, a source name, a file path), wrap the data,
never our own formatting, in ``md()``.
"""

from __future__ import annotations

import re

#: Every character Markdown, GFM or Streamlit's extensions give a meaning to (emphasis, links and images,
#: code, headings, lists, quotes, tables, strikethrough, HTML, LaTeX ``$``, ``:emoji:`` / ``:red[...]``
#: directives, autolinks ``<http://…>`` (bare URLs: see ``_AUTOLINK``), entities ``&amp;``). CommonMark lets any ASCII
#: punctuation be backslash-escaped, so escaping one too many is harmless.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&@^%\"'])")
_LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")
#: Escapes do not stop GFM's bare-URL autolinks: Streamlit's Markdown (remark-gfm, mdast-util-gfm-autolink-literal)
#: finds ``http(s)://``, ``www.`` and ``a@b.c`` in text nodes *after* escapes are resolved, so ``http\://evil\.x`` is
#: still a clickable link (seen in Chromium). A WORD JOINER (U+2060: invisible, no line break) after ``http:`` /
#: ``www`` and before ``@`` breaks the patterns those finders need (``https?://``, ``www.``, ``\w@``).
_AUTOLINK = re.compile(r"https?:(?=//)|www(?=\.)|(?=@)", re.IGNORECASE)
WORD_JOINER = "\u2060"


def md(text: str) -> str:
    """``text`` escaped so Markdown shows it literally, on one line, with no link. Escaping every marker character
    also neutralises leading list, heading, quote, table and code-fence markers (``- ``, ``1. ``, ``# ``, ``> ``)."""
    one_line = _LINE_BREAKS.sub(" ", str(text)).strip()  # labels are one line; no setext headings, no code blocks
    unlinked = _AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, one_line)
    return _SPECIAL.sub(r"\\\1", unlinked)
