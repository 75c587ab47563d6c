"""A run's page names the long step its methods wait for (issue 27): "BRIDGE is waiting for Indexing documents:
3/10 documents · …", from the process-wide step, so a second session (the same page after a reload) shows the same
step with its original start, not a clock at 0. The step is held on an event, so "in flight" is a state."""

import re
import threading

import pytest
from streamlit.testing.v1 import AppTest

from backend import steps
from backend.methods import title
from backend.schema import MethodResult
from components.session import runs
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
KEY = ("index", "test-waiting-step")


@pytest.fixture
def held_step(monkeypatch):
    """Runs whose BRIDGE waits for one index step: the first run computes it (3 of 10 documents, then held), a later
    run (another session) waits for the same step; each answers once the step has ended."""
    release, published = threading.Event(), threading.Event()

    def run_work(run, question, methods):
        def work(job):
            job.waits = lambda: [(s, ["bridge"])] if (s := steps.current(KEY)) is not None else []
            job.add(MethodResult(method="no_rag", question_id=question.id, answers=["quick"]))
            if (other := steps.current(KEY)) is not None:
                assert other.ended.wait(120)
            else:
                with steps.step(KEY, "Indexing documents", "document") as report:
                    report(0, 10)
                    report(3, 10)
                    published.set()
                    assert release.wait(120), "the test never released the step"
            job.add(MethodResult(method="bridge", question_id=question.id, answers=["held"]))
        return work

    monkeypatch.setattr(runs, "_run_work", run_work)
    yield release, published
    release.set()


def _texts(at) -> str:
    return "\n".join(p.proto.text for p in at.get("progress")).replace("\\", "")


def _elapsed(text: str) -> float:
    return float(re.search(r"Indexing documents: 3/10 documents · ([\d.]+) s elapsed", text).group(1))


def test_the_step_a_method_waits_for_is_named_and_a_second_session_sees_it_from_its_start(held_step):
    release, published = held_step
    first = AppTest.from_file(APP, default_timeout=120)
    first.query_params.update({"methods": "no_rag,bridge"})
    first.run()  # the offline model runs without a click; BRIDGE waits for the held step
    assert not first.exception, first.exception
    assert published.wait(60)
    first.run()
    shown = _texts(first)
    assert f"{title('bridge')} is waiting for Indexing documents: 3/10 documents · " in shown, shown
    assert "estimating the time left…" in shown, shown  # no evidence of a pace yet: no number
    assert f"1/2 methods done · still running: {title('bridge')}" in shown, shown  # the quick one is in
    before = _elapsed(shown)

    again = AppTest.from_file(APP, default_timeout=120)  # a reload: a new session, its own run of the same methods
    again.query_params.update({"methods": "no_rag,bridge"})
    again.run()
    assert not again.exception, again.exception
    shown = _texts(again)
    assert f"{title('bridge')} is waiting for Indexing documents: 3/10 documents · " in shown, shown
    assert _elapsed(shown) >= before  # the step's own clock, not the new run's

    release.set()
    for at in (first, again):
        wait_for_runs(at)
        assert not at.exception, at.exception
        assert "waiting for" not in _texts(at) and "still running" not in _texts(at)
