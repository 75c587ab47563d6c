"""Progress bars for long work started from a page (a method's dataset-level preparation, index builds)."""

from __future__ import annotations

import time
from collections.abc import Callable

from backend.report.text import progress_text


def bar(slot, label: str, unit: str = "call") -> Callable[[int, int], None]:
    """An ``on_progress(done, total)`` callback drawing into ``slot`` (an ``st.empty()``): done / total and an ETA,
    redrawn at most once per percent (a stage 1 of 1,600 calls would otherwise send 1,600 updates)."""
    start, last = time.perf_counter(), {"pct": -1}

    def update(done: int, total: int) -> None:
        pct = int(100 * done / max(total, 1))
        if pct != last["pct"] or done == total:
            last["pct"] = pct
            slot.progress(pct / 100, text=progress_text(label, done, total, time.perf_counter() - start, unit))
    return update
