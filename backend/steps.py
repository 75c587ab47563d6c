"""Long dataset-level steps (an index build, a method's stage 1) and their progress, process-wide.

Whoever computes a step publishes its ``Stage`` here under what it computes (a preparation by the runner's flight
key, an index by its location and collection: ``backend.runner``); anyone who waits for the same computation (another
run, another session, a page opened after a reload) finds that same ``Stage`` by the key: its name, done / total,
its original start and its measured pace. A step outlives the session that started it (the worker thread keeps
reporting) and leaves the registry when its computation ends.

The time left is measured, never assumed [ours]: the pace is the slowest over the recent windows between two
advances of the count (``Stage._pace``), so a burst of items that cost nothing (cached replies, pairs with no
document: RA-RAG's stage 1 on a generated file reports 2,374 of 4,000 items in its first half second, then 90/s) does
not make the rest look quick, and the estimate follows the items that take time; the time to the first item
(start-up) is left out. No estimate before ``MIN_S`` seconds and ``MIN_ITEMS`` items of evidence ("estimating"). A shown
estimate counts down with the clock while fresh measurements stay within ``SLACK`` of it, so it neither jitters
nor runs backward; a measurement outside that band replaces it. No Streamlit here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from backend.report.text import progress_text

Clock = Callable[[], float]
Progress = Callable[[int, int], None]

#: Seconds of recent progress the pace is measured over.
WINDOW_S = 15.0
#: Evidence needed before any estimate: seconds since the first report and items done since then.
MIN_S = 2.0
MIN_ITEMS = 3
#: Reports closer than this are merged into one measurement (a burst of 2,000 reports in half a second is one).
MERGE_S = 0.05
#: A new measurement within this fraction (or ``SLACK_S`` seconds) of the shown estimate's countdown keeps the
#: countdown.
SLACK = 0.25
SLACK_S = 2.0


@dataclass(eq=False)  # one object per step: compared and hashed by identity
class Stage:
    """Progress of a step that is not one method's answer (a stage 1, an index build, a sweep): done / total of
    ``unit``s since ``started`` (the ``clock``'s time), with a measured estimate of the time left."""

    label: str
    unit: str = "call"
    done: int = 0
    total: int = 0
    #: Each item is ``times`` of something else, named ``each`` ("question × method pairs"), shown beside.
    times: int = 1
    each: str = ""
    clock: Clock = field(default=time.perf_counter, repr=False)
    started: float = field(default=-1.0)
    #: (time, done) when the count moved: the first report, then each advance (close ones merged).
    _marks: list[tuple[float, int]] = field(default_factory=list, init=False, repr=False)
    _origin: tuple[float, int] = field(default=(0.0, 0), init=False, repr=False)  # the first report's
    _moved: bool = field(default=False, init=False, repr=False)  # whether the count moved since the first report
    _shown: tuple[float, float] | None = field(default=None, init=False, repr=False)  # (when, seconds left)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    #: set when the step's computation has ended (``step``), however it ended
    ended: threading.Event = field(default_factory=threading.Event, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.started < 0:
            self.started = self.clock()

    @property
    def elapsed(self) -> float:
        return self.clock() - self.started

    @property
    def fraction(self) -> float:
        return min(self.done / max(self.total, 1), 1.0)

    def report(self, done: int, total: int) -> None:
        """An ``on_progress(done, total)`` callback (any thread). The first report's count is the baseline: items
        already done then (a resumed attack's rows) say nothing of the pace."""
        now = self.clock()
        with self._lock:
            self.done, self.total = done, total
            marks = self._marks
            if not marks or marks[0][1] > done:  # the first report, or a count that restarted
                self._marks, self._origin, self._shown = [(now, done)], (now, done), None
                self._moved = False
                return
            if done <= marks[-1][1]:
                return
            if not self._moved:  # the time to the first item is start-up (a model loading, an index opening)
                self._moved = True
                self._marks, self._origin = [(now, done)], (now, done)
                return
            if len(marks) >= 2 and now - marks[-2][0] < MERGE_S:
                marks[-1] = (now, done)
            else:
                marks.append((now, done))
            while len(marks) > 2 and marks[1][0] < now - WINDOW_S:  # keep one mark at or before the window
                del marks[0]

    def _pace(self, now: float) -> float | None:
        """Seconds per item: the slowest pace over the windows that end at the last advance and start at an earlier
        one, at least ``MIN_S`` long and starting within the last ``WINDOW_S`` seconds (the shortest longer one when
        none does). Windows end on advances, so items that come in clumps (concurrent calls, batches) are counted
        whole; the slowest pace wins, so a burst of free items weighs only on the windows that hold it. A wait since
        the last advance longer than any gap seen in the window counts as a window that ends now (a stall)."""
        marks = self._marks
        t_last, d_last = marks[-1]
        candidates = [(t_last - t, d_last - d) for t, d in marks[:-1] if t_last - t >= MIN_S]
        if not candidates:
            return None
        recent = [c for c in candidates if c[0] <= WINDOW_S] or [min(candidates)]
        pace = max(span / items for span, items in recent)
        gaps = [t1 - t0 for (t0, _), (t1, _) in zip(marks, marks[1:]) if t1 >= t_last - WINDOW_S]
        if (waiting := now - t_last) > max(gaps, default=0.0):
            pace = max(pace, max((span + waiting) / items for span, items in recent))
        return pace

    def left(self) -> float | None:
        """Seconds left, from the measured pace; None until there is enough evidence (or when done)."""
        now = self.clock()
        with self._lock:
            if not self._marks or not 0 <= self.done < self.total:
                return None
            if now - self._origin[0] < MIN_S or self.done - self._origin[1] < MIN_ITEMS:
                return None
            pace = self._pace(now)
            if pace is None:
                return None
            fresh = pace * (self.total - self.done)
            if self._shown is not None:
                when, was = self._shown
                countdown = was - (now - when)
                if countdown > 0 and abs(fresh - countdown) <= max(SLACK * countdown, SLACK_S):
                    return countdown
            self._shown = (now, fresh)
            return fresh

    def text(self) -> str:
        """``"Evaluating: 4/20 questions · 10 s elapsed · about 40 s left · 8/40 question × method pairs"``."""
        left = self.left()
        text = progress_text(self.label, self.done, self.total, self.elapsed, self.unit, left_s=left,
                             estimating=left is None and 0 < self.total and self.done < self.total)
        if self.each and self.times > 1:
            text += f" · {self.done * self.times:,}/{self.total * self.times:,} {self.each}"
        return text


# --- the registry: one Stage per computation in the process ---------------------------------------------------

_STEPS: dict[Hashable, Stage] = {}
_LOCK = threading.Lock()


def current(key: Hashable) -> Stage | None:
    """The step computing ``key`` now (any thread, any session), if any."""
    with _LOCK:
        return _STEPS.get(key)


def active() -> dict[Hashable, Stage]:
    with _LOCK:
        return dict(_STEPS)


@contextmanager
def step(key: Hashable, label: str, unit: str = "call", also: Progress | None = None,
         clock: Clock = time.perf_counter) -> Iterator[Progress]:
    """Publish the step computing ``key`` while the block runs; yields its ``on_progress(done, total)``, which also
    calls ``also``. When the same key is being computed already (the caller will wait for that computation, e.g. on
    a lock), the block is a follower: it sees the owner's ``Stage`` and its reports go to ``also`` only."""
    with _LOCK:
        stage = _STEPS.get(key)
        owner = stage is None
        if owner:
            stage = _STEPS[key] = Stage(label, unit, clock=clock)

    def report(done: int, total: int) -> None:
        if owner:
            stage.report(done, total)
        if also is not None:
            also(done, total)
    try:
        yield report
    finally:
        if owner:
            with _LOCK:
                if _STEPS.get(key) is stage:
                    del _STEPS[key]
            stage.ended.set()
