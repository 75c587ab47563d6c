"""Consolidation page (Astute RAG): a live offline run on a question with a simulated memory (memory right,
document wrong) and the truth overlay, a question where the model generates nothing, malformed replies from a
scripted model (no groups, no <ANSWER> tag), a fresh tab replaying the cache, and a failing hosted model."""

import json

from streamlit.testing.v1 import AppTest

from backend.llm.providers import scripted
from components import astute as view
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")


def _astute(dataset: str | None = None, question: str | None = None, model: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["methods"] = "no_rag"  # keep the home page's automatic run cheap
    at.run()
    for kind, name, value in (("selectbox", "dataset", dataset), ("selectbox", "question", question),
                              ("text_input", "model", model)):
        if value is not None:  # look each widget up after the previous change: the dataset changes the questions
            getattr(at, kind)(key=f"app.{name}").set_value(value).run()
    at.switch_page("pages/astute.py").run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Consolidation (Astute RAG)"
    return at


def _run(at: AppTest) -> AppTest:
    wait_for_runs(at.button(key="astute.run").click().run())
    assert not at.exception, at.exception
    return at


def _frame(at, column):
    return next(f.value for f in at.dataframe if column in f.value.columns)


def _badges(at) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


def _texts(at) -> list[str]:
    return [t.value for t in at.text]


def test_run_with_the_offline_model_on_a_question_with_memory():
    at = _run(_astute("scenarios", "sc-0013"))  # FI: memory right (Lee Hazlewood), the document wrong
    texts = _texts(at)
    assert "D0: 2 passages (1 external + 1 internal) · 1 consolidation round · final: Lee Hazlewood" in texts
    assert any(t.startswith("m̂ = 1 · t = 1 · order reversed · prompt mode paper") and
               t.endswith("· model offline/reader · 2 calls (t + 1 = 2)") for t in texts)
    calls = _frame(at, "completion tokens")
    assert list(calls["step"]) == ["generate_passages", "consolidate_answer"]
    assert "Kept 1 of at most m̂ = 1 generated passage, marked internal." in texts
    d0 = _frame(at, "snippet")
    assert list(d0["origin"]) == ["external", "internal"] and "document type" not in d0.columns
    assert [t.label for t in at.tabs] == ["Round 1 (final answer call)"]
    badges = _badges(at)
    for badge in (":violet-badge[internal]", ":red-badge[conflict: 2 distinct answers]",
                  ":gray-badge[★ final pick]", ":blue-badge[answer parse: tag]"):
        assert badge in badges, badges
    candidates = _frame(at, "final pick")
    assert sorted(candidates["candidate answer"]) == ["Bob Dylan", "Lee Hazlewood"]
    assert list(candidates["internal passages"] + candidates["external passages"]) == [1, 1]
    final = _frame(at, "rests on documents")
    assert list(final["answer"]) == ["Lee Hazlewood"]
    assert "Agrees with the internal passage (2)." in "\n".join(texts)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert charts[0]["layout"]["title"]["text"] == view.CHART_TITLE
    assert any(e.label == "Raw prompts and outputs (2 calls)" for e in at.expander)
    assert not any(b.startswith(":green-badge[all gold, no wrong") for b in badges)

    at.toggle(key="app.show_truth").set_value(True).run()
    assert not at.exception, at.exception
    d0 = _frame(at, "snippet")
    assert list(d0["document type"]) == ["misinformation", "internal: no label"]
    assert list(_frame(at, "final pick")["verdict"]) == ["wrong", "gold"]
    badges = _badges(at)
    assert ":green-badge[all gold, no wrong (lenient) ✓]" in badges and ":green-badge[answer match (lenient) ✓]" in badges
    assert "Retrieval precision: 0 of 1 external passages contain a gold answer (0%)." in _texts(at)


def test_the_model_generated_nothing():
    at = _run(_astute())  # RAMDocs carries no simulated memory: the offline model says it does not know
    assert [i.value for i in at.info] == [view.GENERATED_NOTHING]
    assert ":gray-badge[dropped]" in _badges(at) and ":violet-badge[internal]" not in _badges(at)
    d0 = _frame(at, "snippet")
    assert set(d0["origin"]) == {"external"} and len(d0) == 3
    assert "No internal passage to agree with (the model generated nothing)." in "\n".join(_texts(at))
    assert list(_frame(at, "rests on documents")["answer"]) == ["3,559"]


def test_malformed_replies_show_the_parse_failure():
    replies = {"generate_passage": "I recall that the answer is 3,559.",
               "consolidate_answer": "Hmm, the documents disagree.\nProbably 3,559"}
    with scripted(replies):
        at = _run(_astute(model="scripted/astute-malformed"))
    badges = _badges(at)
    assert ":red-badge[parse: failed]" in badges and ":red-badge[answer parse: last_line]" in badges
    texts = "\n".join(_texts(at))
    assert "answer parse: last_line (no tag: the reply's last line)" in texts
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert charts[0]["layout"]["annotations"][0]["text"].startswith("No data")
    # the raw reply is there, verbatim, for the user to read
    assert any(c.value == replies["consolidate_answer"] for c in at.code)


def test_a_fresh_tab_shows_the_cached_run_instead_of_press_run():
    _run(_astute("scenarios", "sc-0001"))  # the replies are now in the on-disk cache
    fresh = _astute("scenarios", "sc-0001")
    assert not any("Press Run" in i.value for i in fresh.info)
    assert list(_frame(fresh, "rests on documents")["answer"]) == ["Andy Williams"]
    other = _astute("scenarios", "sc-0048")
    assert any("Press Run" in i.value for i in other.info)


def test_a_failing_hosted_model_is_one_short_message(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = _run(_astute(model="openai/gpt-4o-mini"))
    assert [e.value for e in at.error] == ["Astute RAG failed on this question:"]
    assert ("No API key for openai: set OPENAI_API_KEY (environment or .streamlit/secrets.toml), or choose the "
            "offline model") in _texts(at)
