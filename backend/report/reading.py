"""The line saying which of a method's decisions depend on how its replies were read (``backend.methods.reading``),
as the HTML report and the terminal show it (pure text; the app's ``components.reading`` words it alike):
"2 of this method's 9 decisions depend on the tolerant reader: responder: option D (paper: nothing (unreadable)); …",
or, with none, "Replies read the tolerant way: none of this method's 9 decisions would be read otherwise by the paper's
rule."

The values come from model replies: a caller that renders markup escapes them (the HTML report does).
"""

from __future__ import annotations

from backend.methods.reading import other
from backend.report.text import plural, snippet
from backend.schema import MethodResult
from backend.schema.result import ReadingDifference

#: How the line names the reading a result was read with ("… depend on the tolerant reader").
READER = {"tolerant": "the tolerant reader", "paper": "the paper's reading"}
HOW = {"tolerant": "Replies read the tolerant way", "paper": "Replies read by each paper's own rule"}
RULE = {"tolerant": "the tolerant reader", "paper": "the paper's rule"}
#: A value longer than this is cut in the line (a table shows it whole).
VALUE_CHARS = 80


def difference_text(diff: ReadingDifference, reading: str) -> str:
    """"responder: option D (paper: nothing (unreadable))" for a result read ``reading``."""
    what = f"{diff.what} " if diff.what else ""
    return (f"{diff.step}: {what}{snippet(diff.used, VALUE_CHARS)} "
            f"({other(reading)}: {snippet(diff.other, VALUE_CHARS)})")  # type: ignore[arg-type]


def decisions(result: MethodResult) -> int:
    """The decisions the result read (never fewer than those it lists as different)."""
    return max(result.decisions_read, len(result.reading_differences))


def dependent_text(result: MethodResult, limit: int = 3) -> str | None:
    """"2 of this method's 9 decisions depend on the tolerant reader: …" (the first ``limit`` differences, then how
    many more), or None when no decision depends on the reading."""
    diffs = result.reading_differences
    if not diffs:
        return None
    n, total = len(diffs), decisions(result)
    head = (f"{n} of this method's {plural(total, 'decision')} {'depends' if n == 1 else 'depend'} on "
            f"{READER.get(result.reading, f'the {result.reading} reading')}")
    more = f"; and {n - limit} more" if n > limit else ""
    return f"{head}: " + "; ".join(difference_text(d, result.reading) for d in diffs[:limit]) + more


def quiet_text(result: MethodResult) -> str | None:
    """"Replies read the tolerant way: none of this method's 9 decisions would be read otherwise by the paper's
    rule."; None when some decision depends on the reading or none was read (an error, a method that reads none)."""
    if result.reading_differences or not result.decisions_read:
        return None
    how = HOW.get(result.reading, f"Replies read the {result.reading} way")
    rule = RULE.get(other(result.reading), "the other reading")  # type: ignore[arg-type]
    if result.decisions_read == 1:
        return f"{how}: this method's one decision would not be read otherwise by {rule}."
    many = plural(result.decisions_read, "decision")
    return f"{how}: none of this method's {many} would be read otherwise by {rule}."


def reading_text(result: MethodResult, limit: int = 3) -> str | None:
    """``dependent_text``, else ``quiet_text``: the one line a method's view says about its reading."""
    return dependent_text(result, limit) or quiet_text(result)


__all__ = ["READER", "VALUE_CHARS", "difference_text", "decisions", "dependent_text", "quiet_text", "reading_text"]
