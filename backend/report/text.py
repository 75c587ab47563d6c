"""Small wording helpers shared by the app, the terminal and the HTML report."""

from __future__ import annotations

import math
from html import escape


def snippet(text: str | None, limit: int) -> str:
    """``text`` on one line (runs of whitespace as one space), cut to ``limit`` characters with an ellipsis."""
    one = " ".join((text or "").split())
    return one if len(one) <= limit else one[:limit - 1] + "…"


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``"1 document"``, ``"3 documents"``, ``"1,112 calls"``; ``many`` for irregular plurals (``queries``)."""
    return f"{n:,} {noun if n == 1 else many or noun + 's'}"


def duration(seconds: float) -> str:
    """``"0.42 s"``, ``"34 s"``, ``"3 min 05 s"``."""
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def left_text(seconds: float) -> str:
    """An estimate of the time left, as precise as an estimate is: ``"about 8 s"``, ``"about 25 s"`` (5 s steps
    under a minute), ``"about 4 min"``, ``"about 1 h 10 min"``."""
    if seconds < 10:
        return f"about {max(1, math.ceil(seconds))} s"
    if seconds < 57.5:
        return f"about {5 * round(seconds / 5)} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60:02d} min"


ESTIMATING = "estimating the time left…"


def progress_text(label: str, done: int, total: int, elapsed_s: float, unit: str = "call", *,
                  left_s: float | None = None, estimating: bool = False) -> str:
    """``"RA-RAG stage 1: 400/1,600 calls · 10 s elapsed · about 30 s left"``: ``left_s`` is a measured estimate
    (``backend.steps.Stage``), never derived here; ``estimating``: none yet, and it says so. A step whose total is
    not known yet is its label and the time elapsed."""
    if not total and not done:
        return f"{label} · {duration(elapsed_s)} elapsed"
    text = f"{label}: {done:,}/{total:,} {unit if total == 1 else unit + 's'} · {duration(elapsed_s)} elapsed"
    if done < total:
        if left_s is not None:
            text += f" · {left_text(left_s)} left"
        elif estimating:
            text += f" · {ESTIMATING}"
    return text


def html_text(value: object) -> str:
    """``value`` as text inside HTML (``& < >`` and both quotes escaped): untrusted text never becomes markup."""
    return escape(str(value), quote=True)
