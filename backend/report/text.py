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


def progress_text(label: str, done: int, total: int, elapsed_s: float, unit: str = "call") -> str:
    """``"RA-RAG stage 1: 400/1,600 calls · 10 s elapsed · about 30 s left"`` (no estimate before the first item)."""
    text = f"{label}: {done:,}/{total:,} {unit if total == 1 else unit + 's'} · {duration(elapsed_s)} elapsed"
    if 0 < done < total:
        text += f" · about {duration(elapsed_s * (total - done) / done)} left"
    return text
