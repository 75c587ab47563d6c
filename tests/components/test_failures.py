"""The failure panels rendered alone (AppTest.from_function): one error per cause, the raw texts inside an
expander, the short cause in a method's column, and never a key."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from backend.schema import MethodResult
from components.safe import md

SECRET = "sk-panel-FAKE-0123456789abcdef"
MISSING = ("model call failed: openai/gpt-4o-mini: auth: litellm.InternalServerError: InternalServerError: "
           "OpenAIException - Missing credentials. Please pass an `api_key`, `workload_identity`, `admin_api_key`, "
           "or set the `OPENAI_API_KEY` or `OPENAI_ADMIN_KEY` environment variable.")
REFUSED = ("model call failed: ollama/llama3: connection: litellm.APIConnectionError: OllamaException - "
           f"[Errno 111] Connection refused (key {SECRET}) [api_base http://127.0.0.1:9]")
NO_KEY = "No API key for openai: set OPENAI_API_KEY (environment or .streamlit/secrets.toml), or choose the offline model"
NO_SERVER = "Cannot reach http://127.0.0.1:9: is the server running?"


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch):
    monkeypatch.setenv("OLLAMA_API_KEY", SECRET)  # a provider echoing it must not put it on the screen


def _panel(results_json: list[str]):
    import streamlit as st

    from backend.schema import MethodResult
    from components.failures import render_failures

    render_failures(st, [MethodResult.model_validate_json(r) for r in results_json])


def _shown(at: AppTest) -> str:
    parts = [e.value for kind in ("error", "text", "caption", "markdown") for e in getattr(at, kind)]
    return "\n".join(parts + [e.label for e in at.expander])


def test_one_error_per_cause_with_the_raw_texts_in_an_expander():
    results = [MethodResult(method=m, question_id="q", error=MISSING) for m in ("no_rag", "vanilla_rag", "madam")]
    results += [MethodResult(method="ra_rag", question_id="q", error=REFUSED),
                MethodResult(method="astute", question_id="q", answers=["fine"])]
    at = AppTest.from_function(_panel, args=([r.model_dump_json() for r in results],), default_timeout=60).run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [md(NO_KEY), md(NO_SERVER)]
    assert [x.label for x in at.expander] == [r"Details (3 methods: no\_rag, vanilla\_rag, madam)",
                                              r"Details (1 method: ra\_rag)"]
    first, second = at.expander
    assert [t.value for t in first.text] == [MISSING]  # the same raw text, said once for the three methods
    assert not first.caption  # the label names the three methods already
    assert [t.value for t in second.text] == [REFUSED.replace(SECRET, "***")]
    assert len(at.text) == 2  # every raw text is inside an expander
    assert SECRET not in _shown(at)


def test_nothing_failed_nothing_shown():
    ok = MethodResult(method="no_rag", question_id="q", answers=["x"])
    at = AppTest.from_function(_panel, args=([ok.model_dump_json()],), default_timeout=60).run()
    assert not at.exception and not at.error and not at.expander


def _column(result_json: str):
    import streamlit as st

    from backend.schema import MethodResult, Question
    from components.inspect import render_column

    render_column(st, "my_method", MethodResult.model_validate_json(result_json), Question(id="q", question="?", documents=[]),
                  False)


def test_a_failed_column_shows_the_cause_not_the_provider_text():
    result = MethodResult(method="no_rag", question_id="q", error=MISSING)
    at = AppTest.from_function(_column, args=(result.model_dump_json(),), default_timeout=60).run()
    assert not at.exception, at.exception
    assert [t.value for t in at.text] == ["No API key for openai"] and not at.error


def _single(error: str | None, model: str | None):
    import streamlit as st

    from components.failures import render_failure

    render_failure(st, "Failed in 0.1 s", error, model=model, missing="no trace")


def test_a_single_failure_gives_heading_message_and_raw_text():
    raw = "connection: litellm.APIConnectionError: OllamaException - [Errno 111] Connection refused"
    # the form LLMCall.error and test_connection() give: no model in the text
    at = AppTest.from_function(_single, args=(raw, "ollama/llama3"), default_timeout=60).run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["Failed in 0.1 s"]
    assert at.text[0].value == "Cannot reach http://localhost:11434: is the server running?"
    assert [x.label for x in at.expander] == ["Provider message"] and at.expander[0].text[0].value == raw
    at = AppTest.from_function(_single, args=(None, None), default_timeout=60).run()
    assert [t.value for t in at.text] == ["no trace"] and not at.expander


def test_different_raw_texts_of_one_cause_say_which_method_said_what():
    other = MISSING.replace("Missing credentials.", "Missing credentials!")
    results = [MethodResult(method="no_rag", question_id="q", error=MISSING),
               MethodResult(method="madam", question_id="q", error=other)]
    at = AppTest.from_function(_panel, args=([r.model_dump_json() for r in results],), default_timeout=60).run()
    assert [e.value for e in at.error] == [md(NO_KEY)]
    (details,) = at.expander
    assert [c.value for c in details.caption] == [md("no_rag"), md("madam")]
    assert [t.value for t in details.text] == [MISSING, other]
