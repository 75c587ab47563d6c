"""CSV exports that are safe to open in a spreadsheet: the only place CSV text is written (a test holds every other
module to it).

A cell a spreadsheet would run as a formula — text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return (OWASP, "CSV Injection") — is written with a leading ``'``: dataset text, model replies and analysts' notes
are data, and ``=HYPERLINK("http://…", "…")`` in one must not become a link or a command on an analyst's machine.
``restore`` removes the quote again, so an export that is read back (labels) round-trips exactly: a cell that
already starts with quotes before such a character gets one more, which ``restore`` takes off.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: RFC 4180's line end: with it the csv module quotes a cell holding a carriage return (with "\n" alone Python 3.11
#: leaves it bare, and the file no longer reads back)
NEWLINE = "\r\n"
#: text a spreadsheet would run: a formula start, after any quotes this module added
_FORMULA = re.compile(r"'*[=+\-@\t\r]")


def neutralise(text: str) -> str:
    """``text`` as a cell a spreadsheet shows as text (a leading ``'`` when it would start a formula)."""
    return "'" + text if _FORMULA.match(text) else text


def restore(text: str) -> str:
    """``neutralise`` undone (reading an export back)."""
    return text[1:] if text.startswith("'") and _FORMULA.match(text[1:]) else text


def _cell(value: Any) -> Any:
    return neutralise(value) if isinstance(value, str) else value


def csv_text(header: Sequence[str], rows: Iterable[Mapping[str, Any] | Sequence[Any]]) -> str:
    """CSV of ``rows`` (mappings by column name, or sequences in ``header``'s order) under ``header``, every text
    cell ``neutralise``d; numbers stay numbers."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=NEWLINE)
    writer.writerow([_cell(str(h)) for h in header])
    for row in rows:
        values = [row.get(h, "") for h in header] if isinstance(row, Mapping) else list(row)
        writer.writerow(["" if v is None else _cell(v) for v in values])
    return buf.getvalue()


def frame_csv(frame) -> str:
    """CSV of a pandas frame (no index), every text cell and column name ``neutralise``d."""
    safe = frame.rename(columns=lambda c: _cell(str(c))).map(_cell)
    return safe.to_csv(index=False, lineterminator=NEWLINE)


__all__ = ["csv_text", "frame_csv", "neutralise", "restore"]
