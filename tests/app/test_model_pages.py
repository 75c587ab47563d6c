"""Inspect runs the baselines; Model calls lists them, shows a prompt, clears the cache; test connection."""

import re

from streamlit.testing.v1 import AppTest

from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")


BASELINES = ["no_rag", "vanilla_rag"]


def _on(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["methods"] = "no_rag,vanilla_rag"  # these tests count the baselines' calls only
    wait_for_runs(at.run())
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_inspect_runs_baselines_then_calls_page_lists_them():
    at = _on("pages/inspect.py")  # the offline model runs without a click
    assert "heuristic reader" in " ".join(c.value for c in at.caption)
    frame = next(f.value for f in at.dataframe if "method" in f.value.columns)
    assert set(frame["method"]) == {"Closed book", "Vanilla RAG"}  # display names on the page
    vanilla = frame.set_index("method").loc["Vanilla RAG"]
    assert "3,559" in vanilla["answers"] and vanilla["calls"] == 1
    at.toggle(key="app.show_truth").set_value(True).run()
    frame = next(f.value for f in at.dataframe if "verdict" in f.value.columns)
    assert frame.set_index("method").loc["Vanilla RAG", "verdict"] == "correct"
    assert frame.set_index("method").loc["Closed book", "verdict"] == "abstained"

    at.switch_page("pages/calls.py").run()
    assert not at.exception, at.exception
    calls = next(f.value for f in at.dataframe if "step" in f.value.columns)
    assert set(calls["method"]) == {"no_rag", "vanilla_rag"} and len(calls) == 2
    at.multiselect(key="calls.methods").set_value(["vanilla_rag"]).run()
    calls = next(f.value for f in at.dataframe if "step" in f.value.columns)
    assert list(calls["method"]) == ["vanilla_rag"]
    shown = "\n".join(c.value for c in at.code)
    assert "Question: What is the population of Broken Bow?" in shown and "3,559" in shown
    assert set(calls["question"]) == {"ramdocs-0001"} and set(calls["dataset"]) == {"ramdocs_dev"}
    # clearing the cache asks first, says how many replies go, and can be cancelled
    at.button(key="calls.clear_cache").click().run()
    warning = at.warning[0].value
    assert "This deletes" in warning and "cached replies" in warning
    at.button(key="calls.cancel").click().run()
    # "1,240 cached replies" is not "0 cached replies"
    assert not at.warning and not re.search(r"(?<![\d,])0 cached replies", " ".join(c.value for c in at.caption))
    at.button(key="calls.clear_cache").click().run()
    at.button(key="calls.confirm").click().run()
    assert not at.exception
    assert at.success and at.success[0].value.startswith("Deleted ") and "cached repl" in at.success[0].value
    assert "0 cached replies" in " ".join(c.value for c in at.caption)


def test_calls_page_shows_the_selected_question_by_default():
    at = _on("pages/inspect.py")  # runs ramdocs-0001
    at.switch_page("pages/calls.py").run()
    at.selectbox(key="app.question").set_value("ramdocs-0002").run()  # nothing ran for this one yet
    assert not at.exception, at.exception
    assert any("No model calls yet for this question" in i.value for i in at.info)
    at.toggle(key="calls.this_question").set_value(False).run()
    calls = next(f.value for f in at.dataframe if "step" in f.value.columns)
    assert set(calls["question"]) == {"ramdocs-0001"}


def test_rerun_is_served_from_cache():
    at = _on("pages/inspect.py")
    at.switch_page("pages/calls.py").run()
    before = next(f.value for f in at.dataframe if "step" in f.value.columns)
    at.switch_page("pages/inspect.py").run()
    wait_for_runs(at.button(key="inspect.run").click().run())
    at.switch_page("pages/calls.py").run()
    after = next(f.value for f in at.dataframe if "step" in f.value.columns)
    assert len(after) == len(before) + 2
    assert after["cache hit"].iloc[-2:].all()


def test_test_connection_with_offline_model():
    at = wait_for_runs(AppTest.from_file(APP, default_timeout=180).run())
    at.button(key="app.test_connection").click().run()
    assert not at.exception, at.exception
    assert at.success and "Connected" in at.success[0].value
    assert "ready" in " ".join(t.value for t in at.text)


def test_test_connection_failure_is_the_short_message(monkeypatch):
    secret = "sk-sidebar-FAKE-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)  # set, but the provider is unknown: the key must not show
    at = wait_for_runs(AppTest.from_file(APP, default_timeout=180).run())
    at.text_input(key="app.model").set_value("nosuchprovider/x").run()
    at.button(key="app.test_connection").click().run()
    assert not at.exception, at.exception
    assert len(at.error) == 1 and at.error[0].value.startswith("Failed in ") and not at.success
    texts = [t.value for t in at.text]
    assert "litellm does not know the provider 'nosuchprovider': check the model name (provider/model)" in texts
    (details,) = [x for x in at.expander if x.label == "Provider message"]
    assert "LLM Provider NOT provided" in details.text[0].value
    assert not any(secret in s for s in texts + [e.value for e in at.error])
