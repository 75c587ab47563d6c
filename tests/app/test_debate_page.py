"""Debate page: the real released Llama-3.3-70B trace (early stop, no round-2 aggregation) opened from a
file, the truth overlay, a live offline run, a bad trace file, and a failing hosted model."""

from streamlit.testing.v1 import AppTest

from tests.app.conftest import wait_for_runs
from tests.conftest import FIXTURES, ROOT

APP = str(ROOT / "app.py")
TRACE = str(FIXTURES / "madam" / "RAMDocs_test_madam_rag_Llama-3.3-70B-Instruct_rounds3.jsonl")


def _debate() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["methods"] = "no_rag"  # keep the home page's automatic run cheap
    at.run()
    at.switch_page("pages/debate.py").run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Debate (MADAM-RAG)"
    return at


def _frame(at, column):
    return next(f.value for f in at.dataframe if column in f.value.columns)


def _open(at, path):
    at.radio(key="debate.source").set_value("Open a trace file").run()
    at.text_input(key="debate.path").input(path).run()
    assert not at.exception, at.exception


def test_released_trace_renders_with_the_early_stop():
    at = _debate()
    _open(at, TRACE)
    texts = [t.value for t in at.text]
    assert "stopped at round 2 of 3: converged · final aggregation: round 1" in texts
    grid = _frame(at, "trajectory")
    assert list(grid["round 1"]) == ["3,559", "3,506", "10,000"] == list(grid["round 2"])
    assert "document type" not in grid.columns  # truth hidden until asked
    rounds = _frame(at, "stop test")
    assert list(rounds["aggregation"]) == ["final", "none"] and list(rounds["stop"]) == ["", "■ stop"]
    badges = [m.value for m in at.markdown if "-badge[" in m.value]
    assert ":green-badge[final]" in badges and ":gray-badge[not aggregated]" in badges
    assert "All Correct Answers: 3,559; 3,506" in texts
    assert any(t.startswith("converged: no agent changed its answer, so round 2 was not aggregated") for t in texts)
    final = _frame(at, "agents")
    assert final.to_dict("records")[0] == {"answer": "3,559", "agents": "Agent 1", "documents": "ramdocs-0001-d1"}
    rejected = next(f.value for f in at.dataframe if "rounds" in f.value.columns)
    assert list(rejected["answer"]) == ["10,000"]
    # explanations and histories are collapsed, and shown as plain text
    assert any(t.startswith("Answer: 10,000\nExplanation: To find the population") for t in texts)
    assert any(c.value.startswith("Agent 2: Answer: 3,506.") for c in at.code)
    assert not any("Agent 2: Answer" in m.value for m in at.markdown)

    at.toggle(key="app.show_truth").set_value(True).run()
    assert not at.exception, at.exception
    grid = _frame(at, "trajectory")
    assert list(grid["document type"]) == ["correct", "correct", "noise"]
    rejected = next(f.value for f in at.dataframe if "tag" in f.value.columns)
    assert list(rejected["tag"]) == ["misinfo-suppressed"]
    badges = [m.value for m in at.markdown if "-badge[" in m.value]
    assert ":green-badge[all gold, no wrong (lenient) ✓]" in badges and ":green-badge[answer match (lenient) ✓]" in badges


def test_bad_trace_file_shows_the_problem():
    at = _debate()
    at.selectbox(key="app.question").set_value("ramdocs-0002").run()
    _open(at, TRACE)
    shown = "\n".join(c.value for c in at.code)
    assert "round1 has 3 answers and 3 explanations, but question ramdocs-0002 has 5 documents" in shown


def test_run_with_the_offline_model():
    at = _debate()
    wait_for_runs(at.button(key="debate.run").click().run())
    assert not at.exception, at.exception
    grid = _frame(at, "trajectory")
    assert list(grid["round 1"]) == ["3,559", "3,559", "unknown"]
    rounds = _frame(at, "stop test")
    assert list(rounds["agent calls"]) == [3, 3] and list(rounds["aggregator calls"]) == [1, 0]
    assert list(_frame(at, "agents")["answer"]) == ["3,559"]
    assert any(t.value.endswith("· run · model offline/reader") for t in at.text)
    at.switch_page("pages/calls.py").run()
    calls = next(f.value for f in at.dataframe if "step" in f.value.columns)
    madam = calls[calls["method"] == "madam"]
    assert set(calls["method"]) == {"madam", "no_rag"} and len(madam) == 7


def test_a_fresh_tab_shows_the_cached_debate_instead_of_press_run():
    at = _debate()
    wait_for_runs(at.button(key="debate.run").click().run())  # the replies are now in the on-disk cache
    fresh = _debate()  # a new session (a shared link opened in a new tab): nothing run in it yet
    assert not any("Press Run" in i.value for i in fresh.info)
    assert list(_frame(fresh, "trajectory")["round 1"]) == ["3,559", "3,559", "unknown"]
    other = _debate()
    other.selectbox(key="app.question").set_value("ramdocs-0100").run()  # never debated: nothing cached
    assert any("Press Run" in i.value for i in other.info)


def test_a_failing_hosted_model_is_one_short_message(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = _debate()
    at.text_input(key="app.model").set_value("openai/gpt-4o-mini").run()
    wait_for_runs(at.button(key="debate.run").click().run())
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["MADAM-RAG failed on this question:"]
    assert ("No API key for openai: set OPENAI_API_KEY (environment or .streamlit/secrets.toml), or choose the "
            "offline model") in [t.value for t in at.text]
    (details,) = [x for x in at.expander if x.label == "Provider message"]
    assert "Missing credentials" in details.text[0].value
