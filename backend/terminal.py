"""Untrusted text on a terminal: dataset text, model replies and names from files may hold escape sequences that set
the window title, clear the screen, rewrite the line or make links (a reply did, through ``inspect``). What the
command line prints goes through here, once per way of printing:

* ``print``: the builtin print with every argument ``clean``ed (the CLI modules import it in place of the builtin);
* ``console``: a rich ``Console`` whose rendered text is ``clean``ed (rich's own colours and layout stay);
* ``json_text``: JSON with the characters ``clean`` would drop escaped, so ``--json`` output keeps every value exactly;
* ``write_data``: an export written to standard output: cleaned at a terminal, exact into a pipe or a file.
"""

from __future__ import annotations

import builtins
import json
import re
import sys
from typing import Any, TextIO

#: whole escape sequences (their parameters are not text either): CSI, OSC (ended by BEL or ST), DCS/SOS/PM/APC
#: (ended by ST), the 8-bit forms of each, and two-character escapes. A string sequence with no end on its line (rich
#: drops the BEL that ends an OSC) is cut at the next space, so the text after it stays.
_SEQUENCE = re.compile(r"""
      \x1b\[[0-?]*[ -/]*[@-~]?
    | \x1b\](?:[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)|[^\s\x07\x1b\x9c]*)
    | \x1b[PX^_](?:[^\x1b\x9c\n]*(?:\x1b\\|\x9c)|[^\s\x1b\x9c]*)
    | \x1b[ -/]*[0-~]?
    | \x9b[0-?]*[ -/]*[@-~]?
    | \x9d(?:[^\x07\x9c\n]*(?:\x07|\x9c)|[^\s\x07\x9c]*)
    | [\x90\x98\x9e\x9f](?:[^\x9c\n]*\x9c|[^\s\x9c]*)
""", re.VERBOSE)
#: any other C0 or C1 control character and DEL; newline and tab are text
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """``text`` without terminal control sequences or control characters (newline and tab kept)."""
    text = str(text)
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


def print(*values: Any, sep: str = " ", end: str = "\n", file: TextIO | None = None,  # noqa: A001
          flush: bool = False) -> None:
    """``builtins.print`` of the values ``clean``ed (``sep`` and ``end`` are the caller's own)."""
    builtins.print(*(clean(str(v)) for v in values), sep=sep, end=end, file=file, flush=flush)


def json_text(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)`` with DEL and the C1 controls escaped too (JSON escapes C0 itself): the
    same values, and nothing a terminal acts on."""
    text = json.dumps(value, ensure_ascii=False)
    return re.sub(r"[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)


def write_data(text: str, stream: TextIO | None = None) -> None:
    """An export to ``stream`` (standard output): ``clean``ed when it is a terminal, exact otherwise (a pipe or a
    redirect gets the file as it would be written)."""
    stream = stream or sys.stdout
    isatty = getattr(stream, "isatty", None)
    stream.write(clean(text) if isatty is not None and isatty() else text)


def console(min_width: int | None = None, **kwargs: Any):
    """A rich ``Console`` (at least ``min_width`` columns: a pipe reports 80) whose printed text is ``clean``ed: a
    render hook wraps whatever is printed, so tables, titles and plain strings are all covered."""
    from rich.console import Console, RenderHook

    class CleanHook(RenderHook):
        def process_renderables(self, renderables):
            return [_Cleaned(r) for r in renderables]

    out = Console(**kwargs)
    if min_width is not None and out.width < min_width:
        out = Console(width=min_width, **kwargs)
    out.push_render_hook(CleanHook())
    return out


class _Cleaned:
    """A rich renderable drawn as it would be, its text ``clean``ed (rich's own control segments kept)."""

    def __init__(self, renderable: Any):
        self.renderable = renderable

    def __rich_console__(self, cons, options):
        from rich.cells import cell_len
        from rich.segment import Segment

        for seg in cons.render(self.renderable, options):
            if seg.control or not _CONTROL.search(seg.text):
                yield seg
                continue
            text = clean(seg.text)
            # rich counted the sequences' printable parameters as cells: pad, so the columns stay aligned
            yield Segment(text + " " * max(0, cell_len(seg.text) - cell_len(text)), seg.style)

    def __rich_measure__(self, cons, options):
        from rich.measure import Measurement

        return Measurement.get(cons, options, self.renderable)


__all__ = ["clean", "console", "json_text", "print", "write_data"]
