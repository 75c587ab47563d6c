"""The Inspect home page: columns per method, truth verdicts, charts, download, URL round trip, a failing
hosted model explained once per cause, and a run that goes on while the user clicks elsewhere."""

import threading

import pytest
from streamlit.testing.v1 import AppTest

from backend.llm.providers import scripted
from backend.methods import METHODS, SPECS
from components.safe import md
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")


def test_home_page_is_inspect_and_fills_every_column():
    at = wait_for_runs(AppTest.from_file(APP, default_timeout=180).run())
    assert not at.exception, at.exception
    assert at.title[0].value == "Inspect"
    frame = next(f.value for f in at.dataframe if "method" in f.value.columns)
    registered = list(METHODS)
    titles = [SPECS[m].title for m in registered]  # display names on the page; ids stay in the link
    assert list(frame["method"]) == titles and "verdict" not in frame.columns
    assert not any(frame["error"]), frame
    assert len(at.get("plotly_chart")) == 2
    assert at.get("download_button")
    assert set(titles) <= {m.value.strip("*") for m in at.markdown}
    at.toggle(key="app.show_truth").set_value(True).run()
    frame = next(f.value for f in at.dataframe if "verdict" in f.value.columns)
    verdicts = dict(zip(frame["method"], frame["verdict"]))
    assert verdicts["Closed book"] == "abstained" and verdicts["Vanilla RAG"] == "correct"


def test_query_params_restore_the_view():
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"dataset": "ramdocs_dev", "question": "ramdocs-0002", "methods": "vanilla_rag"})
    wait_for_runs(at.run())
    assert not at.exception, at.exception
    assert "What sport is William Carrier associated with?" in [t.value for t in at.text]
    assert at.multiselect(key="inspect.methods").value == ["vanilla_rag"]
    frame = next(f.value for f in at.dataframe if "method" in f.value.columns)
    assert list(frame["method"]) == ["Vanilla RAG"]
    # and the page writes the current view back into the URL
    wait_for_runs(at.multiselect(key="inspect.methods").set_value(["no_rag", "vanilla_rag"]).run())
    assert at.query_params["methods"] == ["no_rag,vanilla_rag"] or at.query_params["methods"] == "no_rag,vanilla_rag"
    assert at.query_params["question"] in ("ramdocs-0002", ["ramdocs-0002"])


def test_stage1_is_reported_apart_from_the_questions_own_calls():
    """On a multi-source dataset RA-RAG's stage 1 runs first (with its own progress bar) and its cost is shown
    as dataset-level work under the column and in the table, not folded into the question's calls."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"dataset": "multisource", "question": "ms-0003", "methods": "ra_rag"})
    wait_for_runs(at.run())
    assert not at.exception, at.exception
    captions = [c.value for c in at.caption]
    stage1 = next(c for c in captions if c.startswith("Dataset-level"))
    assert "once per dataset and model: RA-RAG stage 1" in stage1 and "calls" in stage1
    question_calls = next(c for c in captions if " · " in c and c.split(" ")[1] in ("call", "calls"))
    frame = next(f.value for f in at.dataframe if "method" in f.value.columns)
    row = frame.set_index("method").loc["RA-RAG"]
    assert row["dataset-level calls"] > 100 > row["calls"] and question_calls.startswith(f"{row['calls']} call")


SECRET = "sk-inspect-FAKE-0123456789abcdef"


@pytest.mark.parametrize("model, api_base, message", [
    ("openai/gpt-4o-mini", "",
     "No API key for openai: set OPENAI_API_KEY (environment or .streamlit/secrets.toml), or choose the offline model"),
    ("ollama/llama3", "http://127.0.0.1:9", "Cannot reach http://127.0.0.1:9: is the server running?"),
])
def test_a_failing_hosted_model_says_why_once(monkeypatch, model, api_base, message):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)  # a key in the environment never reaches the screen
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["methods"] = "no_rag,vanilla_rag,madam"
    at.run()
    at.text_input(key="app.model").set_value(model).run()
    at.text_input(key="app.api_base").set_value(api_base).run()
    wait_for_runs(at.button(key="inspect.run").click().run())
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [md(message)]  # one cause: one message, not one per method
    (details,) = [x for x in at.expander if x.label.startswith("Details")]
    assert details.label == r"Details (3 methods: no\_rag, vanilla\_rag, madam)"
    raw = [t.value for t in details.text]
    assert raw and all(t.startswith(f"model call failed: {model}: ") for t in raw)
    problem = message.split(": ")[0]
    outside = [t.value for t in at.text if t.value not in raw]
    assert outside.count(problem) == 3 and not any("litellm" in t for t in outside)  # columns: the cause only
    frame = next(f.value for f in at.dataframe if "method" in f.value.columns)
    assert list(frame["error"]) == [problem] * 3  # the table too: the cause, not the provider text
    shown = [e.value for kind in ("error", "text", "caption", "markdown") for e in getattr(at, kind)]
    assert not any(SECRET in s for s in shown + [str(frame)])


def test_a_run_goes_on_while_the_user_looks_elsewhere_and_runs_once():
    """Run with a model that answers only when released; meanwhile rerun, press Run again, pick another question,
    visit another page and come back: the run was neither cancelled nor repeated, and its columns are all there."""
    released = threading.Event()

    def slow(fields):
        assert released.wait(120), "never released"
        return "3,559"

    with scripted({"*": slow}) as llm:
        try:
            at = AppTest.from_file(APP, default_timeout=180)
            at.query_params["methods"] = "no_rag,vanilla_rag"
            at.run()
            at.text_input(key="app.model").set_value("scripted/inspect-background").run()
            at.button(key="inspect.run").click().run()
            assert not at.exception, at.exception
            assert [c.value for c in at.caption].count("running…") == 2 and not at.dataframe
            at.run()
            at.button(key="inspect.run").click().run()  # a second Run while it runs joins it
            at.selectbox(key="app.question").set_value("ramdocs-0002").run()
            assert any("Press Run" in i.value for i in at.info)  # another question: nothing run there
            at.switch_page("pages/calls.py").run()
            at.switch_page("pages/inspect.py").run()
            at.selectbox(key="app.question").set_value("ramdocs-0001").run()
            assert [c.value for c in at.caption].count("running…") == 2  # still in flight, picked up again
        finally:
            released.set()
        wait_for_runs(at)
        assert not at.exception, at.exception
    frame = next(f.value for f in at.dataframe if "method" in f.value.columns)
    assert list(frame["method"]) == ["Closed book", "Vanilla RAG"] and not any(frame["error"]), frame
    assert "3,559" in frame.set_index("method").loc["Vanilla RAG", "answers"]
    assert sorted(f["task"] for f in llm.received) == ["closed_book", "keyword_answer"]  # one call each, once
    logged = [c for c in at.session_state["app.call_log"].all() if c.model.startswith("scripted/")]
    assert sorted(c.method for c in logged) == ["no_rag", "vanilla_rag"]
