"""Long steps' progress (``backend.steps``): a measured estimate of the time left, on a fake clock, and one Stage per
computation in the process, seen by every runner (every app session) that waits for it."""

import asyncio
import threading

import pytest
from pydantic import BaseModel

from backend import steps
from backend.data import load_dataset
from backend.llm.client import LLMConfig
from backend.methods import unregister
from backend.methods.base import Method, Outcome, RunContext
from backend.paths import SAMPLE_DATA
from backend.report.text import ESTIMATING, left_text, progress_text
from backend.runner import Runner, index_step
from backend.schema import BaselineTrace
from tests.test_runner import registered

WAIT = 30  # seconds; a bound on a hang, never reached when the code works


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _stage(total: int = 1000) -> tuple[steps.Stage, Clock]:
    clock = Clock()
    stage = steps.Stage("Stage 1", "call", clock=clock)
    stage.report(0, total)
    return stage, clock


def _steady(stage: steps.Stage, clock: Clock, per_second: int, seconds: int, step: float = 0.5) -> None:
    for _ in range(int(seconds / step)):
        clock.now += step
        stage.report(stage.done + int(per_second * step), stage.total)


# --- the estimate --------------------------------------------------------------------------------------------

def test_no_estimate_before_two_seconds_and_a_few_items_of_evidence():
    stage, clock = _stage()
    assert stage.left() is None and stage.text() == "Stage 1: 0/1,000 calls · 0.00 s elapsed · " + ESTIMATING
    clock.now += 3
    stage.report(1, 1000)  # the first item, after a start-up: the pace starts here
    clock.now += 1.5
    stage.report(100, 1000)  # many items, but 1.5 s of evidence
    assert stage.left() is None and stage.text().endswith(ESTIMATING)
    clock.now += 1
    stage.report(102, 1000)  # 2.5 s: enough
    assert stage.left() is not None and ESTIMATING not in stage.text()

    slow, clock = _stage()
    for _ in range(3):  # seconds of evidence, but only two items after the first (the start-up's)
        clock.now += 5
        slow.report(slow.done + 1, 1000)
    assert slow.left() is None
    clock.now += 5
    slow.report(4, 1000)
    assert slow.left() is not None


def test_a_burst_of_cached_items_then_slow_ones_estimates_the_slow_pace():
    stage, clock = _stage(4000)
    clock.now += 2.3
    stage.report(1, 4000)
    for _ in range(24):  # 2,400 cached replies in a quarter of a second
        clock.now += 0.01
        stage.report(stage.done + 100, 4000)
    _steady(stage, clock, per_second=50, seconds=4)  # then 50 calls a second
    left = stage.left()
    true = (4000 - stage.done) / 50
    assert 0.9 * true <= left <= 1.6 * true, (left, true)  # the naive pace since the start said about 6 s
    naive = (clock.now - 102.3) * (4000 - stage.done) / stage.done
    assert naive < 0.25 * true


def test_items_in_clumps_are_measured_whole():
    """Batches of 32 documents every 2 s (an index build): 16 documents a second, not a clump's instant rate."""
    stage, clock = _stage(3200)
    for _ in range(10):
        clock.now += 2
        stage.report(stage.done + 32, 3200)
    clock.now += 1  # half-way to the next batch
    left, true = stage.left(), (3200 - stage.done) / 16
    assert 0.9 * true <= left <= 1.1 * true, (left, true)


def test_the_estimate_counts_down_with_the_clock_and_never_jumps_back_up_on_noise():
    stage, clock = _stage(2000)
    clock.now += 1
    stage.report(1, 2000)
    seen = []
    for i in range(40):  # 20 ± 4 items a second
        clock.now += 0.5
        stage.report(stage.done + (12 if i % 2 else 8), 2000)
        if (left := stage.left()) is not None:
            seen.append(left)
    assert len(seen) > 30
    assert all(b <= a for a, b in zip(seen, seen[1:])), seen  # a countdown, however the pace wobbles


def test_a_stall_raises_the_estimate():
    stage, clock = _stage(1000)
    clock.now += 1
    stage.report(1, 1000)
    _steady(stage, clock, per_second=20, seconds=5)
    before = stage.left()
    clock.now += 30  # nothing for 30 s
    assert stage.left() > before + 20


def test_progress_text_and_the_time_left_as_precise_as_an_estimate():
    assert progress_text("Stage 1", 0, 1600, 0.0) == "Stage 1: 0/1,600 calls · 0.00 s elapsed"
    assert progress_text("Stage 1", 400, 1600, 10.0, left_s=31) == ("Stage 1: 400/1,600 calls · 10 s elapsed · "
                                                                    "about 30 s left")
    assert progress_text("Stage 1", 400, 1600, 10.0, estimating=True).endswith("10 s elapsed · " + ESTIMATING)
    assert progress_text("Stage 1", 1600, 1600, 40.0, left_s=3).endswith("40 s elapsed")  # done: no estimate
    assert progress_text("Indexing", 0, 0, 3.2) == "Indexing · 3.20 s elapsed"  # no total yet
    assert [left_text(s) for s in (0.2, 7.3, 23, 58, 200, 4000)] == [
        "about 1 s", "about 8 s", "about 25 s", "about 1 min", "about 3 min", "about 1 h 07 min"]


# --- the registry: one Stage per computation, whoever waits for it -------------------------------------------

class Art(BaseModel):
    n: int
    key: str = ""


class Held(Method):
    """A preparation that reports 2 of 4 items, then waits for the test's gate."""

    name = "held_prep"
    steps = ("answer", "prepare")
    prepared_type = Art
    prepared_folder = "held"
    prepare_label = "Held preparation"
    gate: threading.Event = threading.Event()
    computed = 0

    def prepare_key(self, dataset, ctx):
        return "held-" + dataset.name

    async def prepare(self, dataset, ctx, on_progress=None):
        type(self).computed += 1
        on_progress(0, 4)
        on_progress(2, 4)
        while not type(self).gate.is_set():
            await asyncio.sleep(0.01)
        on_progress(4, 4)
        return Art(n=len(dataset.questions), key=self.prepare_key(dataset, ctx))

    async def _run(self, question, ctx: RunContext):
        return Outcome([str(ctx.prepared.n)], False, BaselineTrace(evidence_mode="none"))


@pytest.fixture
def held(monkeypatch):
    registered(Held)
    monkeypatch.setattr(Held, "gate", threading.Event())
    monkeypatch.setattr(Held, "computed", 0)
    ds = load_dataset(SAMPLE_DATA / "ramdocs_dev")
    yield ds.model_copy(update={"name": f"held-{id(monkeypatch)}", "questions": ds.questions[:2]})
    Held.gate.set()
    unregister(Held.name)


def _until(condition) -> None:
    for _ in range(WAIT * 100):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError("the condition never held")


def test_two_sessions_one_preparation_both_see_the_same_stage(held):
    """Two runners of one dataset (two app sessions: a page, then the same page after a reload): one computes, the
    other waits for it; both show the one Stage, its start and its count; it leaves the registry when done."""
    first, second = (Runner(held, llm=LLMConfig(cache_mode="off")) for _ in range(2))
    out: dict[str, dict] = {}
    a = threading.Thread(target=lambda: out.update(a=first.run(held.questions[0], [Held.name, "no_rag"])))
    a.start()
    _until(lambda: first.waiting([Held.name]) and first.waiting([Held.name])[0][0].done == 2)
    b = threading.Thread(target=lambda: out.update(b=second.run(held.questions[1], [Held.name])))
    b.start()
    (stage, who), = first.waiting([Held.name, "no_rag"])
    assert who == [Held.name] and stage.label == "Held preparation" and (stage.done, stage.total) == (2, 4)
    seen = second.waiting([Held.name])
    assert seen == [(stage, [Held.name])] and seen[0][0] is stage  # the same object: its start, its pace
    assert steps.current(("prepare", "held", held.name, "held-" + held.name, False)) is stage
    Held.gate.set()
    a.join(WAIT)
    b.join(WAIT)
    assert out["a"][Held.name].answers == out["b"][Held.name].answers == ["2"] and Held.computed == 1
    assert first.waiting([Held.name]) == [] and second.waiting([Held.name]) == [] and stage.ended.is_set()


class FakeIndex:
    """A retriever whose build reports 3 of 10 documents, then waits for ``gate``."""

    stage = "Indexing documents"

    def __init__(self, location: str) -> None:
        self.location, self.collection_name = location, "c1"
        self.gate, self.builds, self._ready = threading.Event(), 0, False

    def ready(self) -> bool:
        return self._ready

    def build(self, on_progress=None):
        self.builds += 1
        on_progress(0, 10)
        on_progress(3, 10)
        assert self.gate.wait(WAIT)
        on_progress(10, 10)
        self._ready = True


def test_an_index_build_is_one_step_that_a_second_runner_waits_for(ramdocs):
    index = FakeIndex("/tmp/somewhere/index")
    first, second = (Runner(ramdocs, llm=LLMConfig(cache_mode="off"), _retriever=index) for _ in range(2))
    reports: list[tuple[int, int]] = []
    a = threading.Thread(target=first.build_index, args=(lambda d, t: reports.append((d, t)),))
    a.start()
    _until(lambda: (s := steps.current(index_step(index))) is not None and s.done == 3)
    b = threading.Thread(target=second.build_index)  # the same index, asked for again meanwhile
    b.start()
    (stage, who), = second.waiting(["bridge", "no_rag"])
    assert who == ["bridge"] and stage.label == "Indexing documents" and stage.unit == "document"
    assert first.waiting(["bridge"])[0][0] is stage and (stage.done, stage.total) == (3, 10)
    index.gate.set()
    a.join(WAIT)
    b.join(WAIT)
    assert index.builds == 1 and reports == [(0, 10), (3, 10), (10, 10)]  # built once; its caller saw each report
    assert steps.current(index_step(index)) is None
