"""The background-run store without Streamlit: a job's results appear one method at a time, a key in flight is
not started twice, and whatever the work raises becomes the unfinished methods' error, not a traceback."""

import threading

from backend.schema import MethodResult
from components.session.jobs import Jobs

WAIT = 30  # seconds; a bound on a hang, never reached when the code works


def _wait(job) -> None:
    for _ in range(WAIT * 100):
        if not job.running:
            return
        threading.Event().wait(0.01)
    raise AssertionError("the job did not finish")


def test_results_appear_as_each_method_finishes_and_the_key_is_not_started_twice():
    gates = {"a": threading.Event(), "b": threading.Event()}
    calls = []

    def work(job):
        calls.append(job)
        for name in ("a", "b"):
            assert gates[name].wait(WAIT)
            job.add(MethodResult(method=name, question_id="q1", answers=[name.upper()]))

    store = Jobs()
    job = store.start("k", work, ["a", "b"], "q1")
    assert job.running and job.results() == {} and job.pending() == ["a", "b"]
    assert store.start("k", work, ["a", "b"], "q1") is job  # a second Run while it runs joins it
    assert store.running("k") is job and store.busy()

    gates["a"].set()
    for _ in range(WAIT * 100):
        if job.results():
            break
        threading.Event().wait(0.01)
    assert list(job.results()) == ["a"] and job.pending() == ["b"] and job.running  # the finished column, alone
    assert store.collect() == {}  # nothing is taken while it runs

    gates["b"].set()
    _wait(job)
    assert [r.answers for r in job.results().values()] == [["A"], ["B"]] and job.error is None
    assert len(calls) == 1 and not store.busy() and store.running("k") is None
    assert store.collect("other") == {} and store.collect("k") == {"k": job}  # taken once
    assert store.get("k") is None


def test_an_exception_in_the_work_is_every_unfinished_methods_error():
    def work(job):
        job.add(MethodResult(method="a", question_id="q1", answers=["A"]))
        job.progress("Stage 1", "call")(3, 10)
        raise RuntimeError("the index cannot be opened")

    store = Jobs()
    job = store.start("k", work, ["a", "b", "c"], "q1")
    _wait(job)
    results = job.results()
    assert results["a"].error is None and results["a"].answers == ["A"]  # what finished is kept
    assert results["b"].error == results["c"].error == job.error == "RuntimeError: the index cannot be opened"
    assert results["b"].question_id == "q1" and job.stage is None


def test_a_finished_key_starts_again():
    store = Jobs()
    first = store.start("k", lambda job: None)
    _wait(first)
    second = store.start("k", lambda job: None)
    assert second is not first
    _wait(second)
    assert store.collect() == {"k": second}


def test_wait_returns_when_the_job_ends_or_at_the_timeout():
    gate = threading.Event()
    store = Jobs()
    job = store.start("k", lambda job: gate.wait(WAIT), ["a"], "q1")
    assert job.wait(0.05) is False and job.running  # still held: the page polls it instead
    gate.set()
    assert job.wait(WAIT) is True and not job.running
    assert store.start("quick", lambda job: None).wait(WAIT) is True
