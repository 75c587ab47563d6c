"""A reply that ran into ``max_tokens`` repeating itself -- what a small model does when it loops -- is read as what it
is: a cut-off reply, not an answer (``backend.llm.client`` records it as ``LLMCall.cut_off`` and hands the method an
empty reply, which its reader reads as unreadable, so the method takes the paper's default and says so).

``repetition(text)`` finds a run of words at the end of the reply that repeats with a fixed period at least
``MIN_REPEATS`` times (the last, cut-off repetition may be partial), or a run of characters that does ("1,000,000,…"):
e.g. an answer followed by the same sentence ten times, or a JSON object whose value loops. A long reply cut off without looping keeps its text: its reader decides.
"""

from __future__ import annotations

MIN_REPEATS = 3
MAX_PERIOD_WORDS = 80
MIN_SPAN_WORDS = 9


MAX_PERIOD_CHARS = 40
MIN_SPAN_CHARS = 60


def repetition(text: str) -> str | None:
    """The repeating unit at the end of ``text`` (its words, clipped to 80 characters), or None: a run of words, or a
    run of characters with no space in it ("1,000,000,000,…")."""
    return _word_loop(text) or _char_loop(text)


def _char_loop(text: str) -> str | None:
    tail = text[-2000:]
    n = len(tail)
    for period in range(1, MAX_PERIOD_CHARS + 1):
        j = n - 1 - period
        while j >= 0 and tail[j] == tail[j + period]:
            j -= 1
        span = n - 1 - j
        if span >= MIN_REPEATS * period and span >= MIN_SPAN_CHARS:
            return tail[n - span:n - span + period]
    return None


def _word_loop(text: str) -> str | None:
    words = text.split()[:-1]  # the last word may be cut mid-word
    n = len(words)
    for period in range(1, min(MAX_PERIOD_WORDS, n // MIN_REPEATS) + 1):
        j = n - 1 - period
        while j >= 0 and words[j] == words[j + period]:
            j -= 1
        span = n - 1 - j
        if span >= MIN_REPEATS * period and span >= MIN_SPAN_WORDS:
            unit = " ".join(words[n - span:n - span + period])
            return unit if len(unit) <= 80 else unit[:80] + " …"
    return None
