"""Small wording helpers shared by the app, the terminal and the HTML report."""

from __future__ import annotations


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


def progress_text(label: str, done: int, total: int, elapsed_s: float, unit: str = "call", *,
                  since: int = 0, since_s: float = 0.0) -> str:
    """``"RA-RAG stage 1: 400/1,600 calls · 10 s elapsed · about 30 s left"`` (no estimate before the first item).
    ``since`` items were done ``since_s`` seconds in, before this work began (a resumed run's rows): the estimate
    is from the pace of the items done after them."""
    text = f"{label}: {done:,}/{total:,} {unit if total == 1 else unit + 's'} · {duration(elapsed_s)} elapsed"
    if since < done < total:
        text += f" · about {duration((elapsed_s - since_s) * (total - done) / (done - since))} left"
    return text
