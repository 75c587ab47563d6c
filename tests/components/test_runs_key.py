"""The app's one run service: a result is found only under the settings it was computed with. Each field of the
``RunKey`` changed in turn misses the session's results (so the page runs afresh, never shows a stale result) and,
where the runner depends on it, gets a runner built for it; a result is found from any run of the same settings that
included its method. The helpers run outside ``streamlit run`` (bare mode: ``st.session_state`` still works)."""

import dataclasses

import pytest
import streamlit as st

from backend.data import load_dataset
from backend.paths import SAMPLE_DATA
from backend.schema import MethodResult
from components.session import runs
from components.session.results import Results, RunKey
from components.session.state import ModelChoice, Selection

METHODS = ["no_rag"]
FIELDS = {f.name for f in dataclasses.fields(RunKey) if f.compare}


@pytest.fixture
def session():
    """A clean session state, emptied again afterwards (bare mode shares one)."""
    st.session_state.clear()
    yield
    st.session_state.clear()


def _wait(job) -> None:
    assert job.wait(120), "the run did not finish in 120 s"


def _selection(ds, question=None, **model) -> Selection:
    return Selection(dataset=ds, question=question or ds.questions[0], model=ModelChoice(**model))


def test_every_field_of_the_key_changed_in_turn_misses_and_gets_its_own_runner(session):
    ds = load_dataset(SAMPLE_DATA / "ramdocs_dev")
    base = _selection(ds)
    _wait(runs.start_run(base, METHODS))
    first = runs.cached_results(base, METHODS)
    assert first is not None and first["no_rag"].error is None and first["no_rag"].question_id == ds.questions[0].id
    edited = ds.questions[0].model_copy(update={"question": ds.questions[0].question + " (edited)"})

    variations = {  # field -> (selection, settings) differing from the base run in that field only
        "dataset": (_selection(load_dataset(SAMPLE_DATA / "scenarios")), {}),
        "version": (_selection(ds.model_copy(update={"questions": ds.questions[:50]})), {}),  # the file changed
        "question": (_selection(ds, ds.questions[1]), {}),
        "model": (_selection(ds, model="offline/other"), {}),
        "api_base": (_selection(ds, api_base="http://127.0.0.1:9"), {}),
        "structured_output": (_selection(ds, structured_output=True), {}),
        "reading": (_selection(ds, reading="paper"), {}),
        "methods": (base, {"methods": ["no_rag", "vanilla_rag"]}),
        "evidence_mode": (base, {"evidence_mode": "retrieve"}),
        "method_params": (base, {"method_params": {"no_rag": {"top_k": 5}}}),
        "chroma_url": (dataclasses.replace(base, chroma_url="http://127.0.0.1:9"), {}),
    }
    assert set(variations) == FIELDS  # every field is tried (a new field needs a line here)
    base_key, base_runner = runs.run_key(base, METHODS), runs.runner(base)
    for name, (selection, settings) in variations.items():
        methods = settings.pop("methods", METHODS)
        key = runs.run_key(selection, methods, **settings)
        assert {f for f in FIELDS if getattr(key, f) != getattr(base_key, f)} >= {name}, name
        assert runs.cached_results(selection, methods, **settings) is None, f"{name}: a stale result was found"
        if name not in ("question", "methods"):  # what a runner is built for
            run = runs.runner(selection, **{k: v for k, v in settings.items() if k != "question"})
            assert run is not base_runner, name
            assert (run.dataset, run.llm.model, run.llm.api_base, run.evidence_mode, run.method_params,
                    run.chroma_url, run.reading) == (selection.dataset, selection.model.model,
                                                     selection.model.api_base, settings.get("evidence_mode", "given"),
                                                     settings.get("method_params", {}), selection.chroma_url,
                                                     selection.model.reading), name
    assert runs.runner(base) is base_runner  # one long-lived runner per settings

    # the cheap ones run afresh: each is a new result, and the base run's is still the base's
    for selection, settings in (variations["question"], variations["version"], (base, {"question": edited})):
        _wait(runs.start_run(selection, METHODS, **settings))
        again = runs.cached_results(selection, METHODS, **settings)
        assert again is not None and again["no_rag"] is not first["no_rag"]
    assert runs.cached_results(base, METHODS)["no_rag"] is first["no_rag"]
    assert runs.cached_results(base, METHODS, question=edited)["no_rag"].question_id == edited.id


def test_a_methods_result_is_found_from_any_run_of_the_same_settings():
    key = RunKey(dataset="d", version="1", question="q1", model="m", api_base=None, methods=("a", "b"))
    results = Results()
    ra, rb = (MethodResult(method=m, question_id="q1", answers=[m]) for m in "ab")
    results.put(key, {"a": ra, "b": rb})
    assert results.get(key) == {"a": ra, "b": rb} and results.get(key.with_methods(["a"])) is None
    assert results.lookup(key.with_methods(["b"])) == {"b": rb}  # e.g. Inspect's run, on one method's page
    assert results.lookup(key.with_methods(["b", "c"])) is None  # c never ran
    newer = MethodResult(method="b", question_id="q1", answers=["newer"])
    results.put(key.with_methods(["b"]), {"b": newer})
    assert results.lookup(key) == {"a": ra, "b": newer}  # the latest run of each
    for name in FIELDS - {"methods"}:
        other = dataclasses.replace(key, **{name: "other"})
        assert results.lookup(other) is None, name


def test_the_reply_cache_follows_the_cache_folder(monkeypatch, tmp_path):
    """The process keeps one open cache per folder: an app process (or a test) that moves ``CONFLICTLENS_CACHE_DIR``
    reads and writes the new folder's replies, never those of the folder opened first."""
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "a"))
    first = runs.call_cache()
    assert runs.call_cache() is first  # opened once per folder
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "b"))
    assert runs.call_cache().path == tmp_path / "b" / "llm_cache.sqlite"
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "a"))
    assert runs.call_cache() is first
