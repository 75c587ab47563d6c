"""The local model in the app (no server is started here: the real-model tier runs it): the sidebar's one-click
"SmolLM2 135M on this CPU (a real language model)", beside the offline voices; the pages then say it is a real
language model, never "the heuristic reader"; it waits for Run (no run without a click, no server at start-up); the
estimate above Run gives the time at the speeds measured on this machine; a run in flight counts its calls against
that estimate; the Model calls page shows a reply that looped until max_tokens as text. When its weights or llama.cpp's
server are missing, the sidebar says so in one line with what to install."""

from __future__ import annotations

import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from backend.llm.client import LLMConfig
from backend.llm.local import BUNDLED_TITLE, SMOLLM2, throughput
from backend.llm.local import server as local_server
from backend.llm.local.weights import INSTALL_WEIGHTS, MODELS_DIR_ENV
from backend.schema import LLMCall, MethodResult
from components.models import local_missing
from components.session import runs
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
TIMINGS = {"prompt_n": 200, "prompt_per_second": 100.0, "predicted_n": 40, "predicted_per_second": 10.0}
LOOPED = "Broken Bow. " + "The population is <i>3,559</i>. " * 12 + "The pop"


def _captions(at) -> str:
    return " ".join(c.value for c in at.caption).replace("\\", "")


def _open() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["methods"] = "no_rag,vanilla_rag"
    wait_for_runs(at.run())  # the offline model answers at once
    assert not at.exception, at.exception
    return at


@pytest.fixture
def installed(monkeypatch):
    """The weights and llama.cpp's server count as installed, whatever this machine has (nothing is started)."""
    monkeypatch.setattr("components.session.sidebar.local_problem", lambda: None)


def test_one_click_picks_the_real_model_which_waits_for_run_and_is_never_called_heuristic(installed):
    at = _open()
    assert "heuristic reader" in _captions(at)  # the offline reader, said so
    button = at.button(key="app.use_local")
    assert button.label == BUNDLED_TITLE and not button.disabled
    assert "real language model running on this CPU" in button.help and "llama.cpp" in button.help
    assert {b.key for b in at.sidebar.button} >= {"app.use_offline/reader", "app.use_offline/chatty"}  # beside them
    button.click().run()
    assert not at.exception, at.exception
    assert at.text_input(key="app.model").value == SMOLLM2
    captions = _captions(at)
    assert "heuristic" not in captions
    assert "SmolLM2-135M-Instruct, a real language model running on this CPU" in captions
    assert "Estimate: 2 model calls" in captions and "this CPU" in captions  # before anything is sent: no price asked
    assert not [c for c in at.checkbox if c.key.startswith("inspect.confirm.")]
    assert not at.session_state["app.jobs.run"].busy()  # a real model waits for Run: nothing started by choosing it
    assert not any(key[0] == "smollm2" for key in local_server._servers)
    at.switch_page("pages/debate.py").run()  # a method page says the same
    assert not at.exception, at.exception
    assert "heuristic" not in _captions(at) and "a real language model" in _captions(at)


def test_the_sidebar_says_what_to_install_when_the_weights_are_missing(monkeypatch):
    monkeypatch.setattr("components.session.sidebar.local_problem", lambda: local_missing(weights=False, server=True))
    at = _open()
    assert at.button(key="app.use_local").disabled
    assert any(INSTALL_WEIGHTS in c.value for c in at.sidebar.caption)
    at.text_input(key="app.model").set_value(SMOLLM2).run()  # typed, or from a link: said outside the expander too
    assert not at.exception, at.exception
    assert any(INSTALL_WEIGHTS in w.value for w in at.sidebar.warning)


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """``local/tiny``: a file that starts like a GGUF, in a models folder of its own, with its speeds measured once
    (100 prompt, 10 generated tokens/s; kept under its weights' hash, which no other test's file has). Never served:
    its runs are held (below)."""
    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny.gguf").write_bytes(b"GGUF" + str(tmp_path).encode())
    monkeypatch.setenv(MODELS_DIR_ENV, str(models))
    throughput.record(LLMConfig(model="local/tiny").identity.rpartition("#")[2], TIMINGS)
    return "local/tiny"


@pytest.fixture
def held_run(monkeypatch):
    """A local model's runs make their calls as its server would (recorded in the session's log as each ends: one
    answered, one that looped until max_tokens), then wait to be released; the offline model's run as ever."""
    release, called = threading.Event(), threading.Event()
    original = runs._run_work

    def run_work(run, question, methods):
        if not run.llm.model.startswith("local/"):
            return original(run, question, methods)

        def work(job):
            common = dict(step="answer", task="keyword_answer", model=run.llm.model, dataset=run.stripped.name,
                          question_id=question.id, messages=[{"role": "user", "content": "Question: how many?"}],
                          started_at=time.time(), prompt_tokens=600, completion_tokens=8)
            run.log.add(LLMCall(id="no_rag:answer:1", method="no_rag", response="unknown", read_status="exact",
                                queued_s=0.1, **common))
            run.log.add(LLMCall(id="vanilla_rag:answer:1", method="vanilla_rag", response="", cut_off=LOOPED,
                                finish_reason="length", read_status="unreadable", read_note="cut off at max_tokens "
                                "while repeating 'The population is <i>3,559</i>.': read as no reply", **common))
            job.add(MethodResult(method="no_rag", question_id=question.id, answers=["unknown"]))
            called.set()
            assert release.wait(120), "the test never released the run"
            job.add(MethodResult(method="vanilla_rag", question_id=question.id, abstained=True))
        return work

    monkeypatch.setattr(runs, "_run_work", run_work)
    yield release, called
    release.set()


def test_the_estimate_gives_the_time_and_the_run_counts_its_calls_then_shows_a_looped_reply(tiny, held_run):
    release, called = held_run
    at = _open()
    at.text_input(key="app.model").set_value(tiny).run()
    assert not at.exception, at.exception
    captions = _captions(at)
    assert "Estimate: 2 model calls" in captions and "at measured speeds" in captions, captions
    assert "100 prompt and 10 generated tokens/s, measured on this machine" in captions
    frame = next(f.value for f in at.dataframe if "time" in f.value.columns)
    assert all(t.startswith("~") for t in frame["time"]) and set(frame["cost"]) == {"$0"}

    at.button(key="inspect.run").click().run()
    assert not at.exception, at.exception
    assert called.wait(60)
    at.run()  # the page's poll: AppTest runs no fragment timers
    progress = _captions(at)
    assert "Model calls: 2 done, of 2 expected (~" in progress and "at measured speeds)" in progress, progress
    assert "1 cut off at max_tokens (looping)" in progress

    release.set()
    wait_for_runs(at)
    assert not at.exception, at.exception
    assert "Model calls:" not in _captions(at)  # done: the results are drawn instead
    at.switch_page("pages/calls.py").run()
    assert not at.exception, at.exception
    frame = next(f.value for f in at.dataframe if "cut" in f.value.columns)
    mine = frame[frame["model"] == tiny].set_index("method")  # beside the offline model's calls made at start
    assert list(mine.loc[["vanilla_rag", "no_rag"], "cut"]) == ["reply", ""]
    at.selectbox(key="calls.call").set_value("vanilla_rag:answer:1").run()
    assert not at.exception, at.exception
    assert any(w.value.replace("\\", "").startswith("cut off at max_tokens while repeating") for w in at.warning)
    assert LOOPED in [c.value for c in at.code]  # the text the model wrote, as text
