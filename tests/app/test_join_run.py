"""A method page joins a run already going (issue 27): while Inspect's run of several methods is in flight, the
BRIDGE page shows that run's progress, not "Press Run", and starts nothing of its own; once it is done the page
shows BRIDGE's result from it. The run's work is held on an event, so "in flight" is a state, not a race."""

import threading

import pytest
from streamlit.testing.v1 import AppTest

from backend.methods import title
from backend.schema import MethodResult
from components.session import runs
from components.session.results import RunKey
from components.session.run_block import PRESS_RUN
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")


@pytest.fixture
def held(monkeypatch):
    """Runs whose work waits for the returned event (then each method answers "held"); the methods each run had."""
    release, started = threading.Event(), []

    def run_work(run, question, methods):
        started.append(tuple(methods))

        def work(job):
            assert release.wait(120), "the test never released the run"
            for m in methods:
                job.add(MethodResult(method=m, question_id=question.id, answers=["held"]))
        return work

    monkeypatch.setattr(runs, "_run_work", run_work)
    yield release, started
    release.set()


def _texts(at) -> str:
    return "\n".join([i.value for i in at.info] + [p.proto.text for p in at.get("progress")]).replace("\\", "")


def test_a_method_page_follows_the_run_inspect_started(held):
    release, started = held
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"methods": "no_rag,bridge"})
    at.run()  # Inspect: the offline model runs without a click; held, so still in flight
    assert not at.exception, at.exception
    assert started == [("no_rag", "bridge")]
    at.switch_page("pages/bridge.py").run()
    assert not at.exception, at.exception
    shown = _texts(at)
    assert PRESS_RUN not in shown, shown
    assert f"0/2 methods done · still running: {title('no_rag')}, {title('bridge')}" in shown, shown  # display names
    at.button(key="bridge.run").click().run()  # Run while it is in flight: joined, not doubled
    assert started == [("no_rag", "bridge")]
    release.set()
    wait_for_runs(at)
    assert not at.exception, at.exception
    assert PRESS_RUN not in _texts(at) and "still running" not in _texts(at)
    assert started == [("no_rag", "bridge")]  # the page took BRIDGE's result from Inspect's run


def test_covers_needs_the_same_question_settings_and_parameters():
    base = RunKey(dataset="d", version="v", question="q1", model="offline/reader", api_base=None,
                  methods=("no_rag", "bridge"))
    page = RunKey(dataset="d", version="v", question="q1", model="offline/reader", api_base=None,
                  methods=("bridge",))
    assert runs.covers(base, page)
    assert not runs.covers(page, base)
    for other in (RunKey(**{**page.__dict__, "question": "q2"}), RunKey(**{**page.__dict__, "model": "x/y"}),
                  RunKey(**{**page.__dict__, "methods": ("madam",)}),
                  RunKey(**{**page.__dict__, "method_params": RunKey.params_text({"bridge": {"k": 1}})})):
        assert not runs.covers(base, other), other
    same_params = RunKey(**{**base.__dict__, "method_params": RunKey.params_text({"no_rag": {"k": 1}})})
    assert runs.covers(same_params, page)  # another method's parameters do not matter to BRIDGE's result
