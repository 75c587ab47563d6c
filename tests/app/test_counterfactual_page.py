"""Risk page (RC-RAG): one question run with the offline model (the branches disagree on ramdocs-0002), the truth
overlay's fold, a scripted refusal (the override), a failing hosted model; the dataset view on the first 6 questions
(fold matrices, metrics, the risk–coverage chart, a second sweep from the cache), a dataset without gold answers,
and dataset text escaped in labels."""

import json

from streamlit.testing.v1 import AppTest

from backend.llm.providers import scripted
from components.safe import md
from tests.app.test_untrusted_labels import QID, RAW, _labels
from tests.app.test_untrusted_labels import _open as _open_own_file
from tests.app.test_untrusted_labels import dataset  # noqa: F401 - the fixture, shared
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
PAGE = "pages/counterfactual.py"


def _page(question: str | None = None, model: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["methods"] = "no_rag"  # keep the home page's automatic run cheap
    at.run()
    if question:
        at.selectbox(key="app.question").set_value(question).run()
    if model:
        at.text_input(key="app.model").set_value(model).run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Risk (counterfactual prompting)"
    return at


def _texts(at) -> list[str]:
    return [t.value for t in at.text]


def _badges(at) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


def _frame(at, column):
    return next(f.value for f in at.dataframe if column in f.value.columns)


def _charts(at) -> dict[str, dict]:
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return {s["layout"]["title"]["text"]: s for s in specs}


def test_one_question_where_the_branches_disagree():
    at = _page("ramdocs-0002")
    assert any("Press Run" in i.value for i in at.info)
    wait_for_runs(at.button(key="counterfactual.run").click().run())
    assert not at.exception, at.exception
    texts = _texts(at)
    reason = ("quality changed 'hockey'→'football' (F1 0.00) → discard; usage unchanged (exact) → keep; disagreement "
              "→ direct selection in quality → keep → KEEP")
    assert reason in texts
    badges = _badges(at)
    assert ":green-badge[KEEP]" in badges and "hockey" in texts
    assert ":orange-badge[changed: yes]" in badges and ":blue-badge[changed: no]" in badges
    assert ":orange-badge[disagree]" in badges and ":gray-badge[strategy: direct selection]" in badges
    passages = _frame(at, "re-selected by CF-quality")
    assert list(passages["passage"]) == [f"Passage-{i}" for i in range(5)]
    assert list(passages["cited by the RAG answer"]) == ["", "✓", "", "", ""]
    assert list(passages["re-selected by CF-quality"]) == ["✓", "", "", "", ""]
    assert "document type" not in passages.columns  # the truth waits for the toggle
    assert any(t.startswith("The RAG answer cited Passage-1; CF-quality re-selected Passage-0") for t in texts)
    assert "answer: hockey\nevidence: Passage-1 → cites Passage-1\nrefusal: no" in texts
    assert "parsed choice: keep" in texts
    assert "Did not fire: the RAG answer is not a refusal." in texts
    assert any(c.value.startswith("Your answer is likely to be wrong because the retrieved passages are of poor")
               for c in at.code)  # the direct-selection prompt, verbatim
    assert any(e.label == "Round 1 call: the 3 messages sent and the reply" for e in at.expander)
    calls = "4 model calls (RAG answer 1, CF-quality 1, CF-usage 1, fusion 1"
    assert any(c.value.startswith(calls) for c in at.caption)
    assert not any(":red-badge[" in b for b in badges)

    at.toggle(key="app.show_truth").set_value(True).run()
    assert not at.exception, at.exception
    assert ":red-badge[U · UK]" in _badges(at)  # a wrong answer kept: the risky fold
    assert any(t.startswith("gold answers: Football\nunanswerable (U): the RAG answer is wrong · UK") for t in
               _texts(at))
    passages = _frame(at, "re-selected by CF-quality")
    assert list(passages["document type"]) == ["correct", "correct", "correct", "noise", "noise"]


def test_a_scripted_refusal_is_overridden_and_model_text_stays_text():
    answer = "**unknown** [x](http://127.0.0.1:9/x)"  # a refusal, in Markdown
    script = {"cf_answer": f"Answer: {answer}.\nEvidence: ## none ##", "cf_quality": answer, "cf_usage": answer,
              "*": "3,559"}
    with scripted(script):
        at = _page(model="scripted/refusal")
        wait_for_runs(at.button(key="counterfactual.run").click().run())
    assert not at.exception, at.exception
    texts = _texts(at)
    assert ":gray-badge[ABSTAIN]" in _badges(at) and "I don't know" in texts
    assert any(t.startswith("Fired: the RAG answer is a refusal (“unknown”)") for t in texts)
    assert ":orange-badge[refusal: “unknown”]" in _badges(at)
    assert "The branches agree (both keep): no fusion call, the decision is keep." in texts
    # the reader drops the emphasis ("removed Markdown"); the link it keeps is shown as text, never rendered
    assert any(t.startswith("answer: unknown [x](http://127.0.0.1:9/x)\n") for t in texts)
    assert not any("[x](" in m.value for m in at.markdown)


def test_a_failing_hosted_model_is_one_short_message(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = _page(model="openai/gpt-4o-mini")
    wait_for_runs(at.button(key="counterfactual.run").click().run())
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["Counterfactual prompting failed on this question:"]
    assert ("No API key for openai: set OPENAI_API_KEY (environment or .streamlit/secrets.toml), or choose the "
            "offline model") in _texts(at)


def test_the_dataset_view_on_six_questions():
    at = _page()
    assert at.multiselect(key="counterfactual.strategies").value == ["direct", "probability", "safety"]
    at.number_input(key="counterfactual.limit").set_value(6).run()
    assert any("Press Run over the dataset: 6 questions × 3 configurations" in i.value for i in at.info)
    wait_for_runs(at.button(key="counterfactual.sweep").click().run())
    assert not at.exception, at.exception
    caption = next(c.value for c in at.caption if "configurations per question" in c.value)
    assert caption.startswith(md("6 questions of ramdocs_dev · 3 configurations per question"))
    matrices = [f.value for f in at.dataframe if "K (kept)" in f.value.columns]
    assert len(matrices) == 4 and all(int(m.to_numpy().sum()) == 6 for m in matrices)
    keep_all = matrices[-1]
    assert list(keep_all["D (discarded)"]) == [0, 0]  # the reference keeps every answer
    metrics = _frame(at, "risk ↓")
    assert list(metrics["point"]) == ["RC-RAG, direct selection", "RC-RAG, probability comparison",
                                      "RC-RAG, safety (code only, not in the paper)",
                                      "keep everything (the RAG answer)"]
    assert {"overcaution ↓ (code only)", "recall ↑ (code only)"} <= set(metrics.columns)
    assert metrics.iloc[-1]["coverage ↑"] == "100.00"
    assert all(v == "n/a" or float(v) >= 0 for v in metrics["risk ↓"])
    charts = _charts(at)
    scatter = next(s for t, s in charts.items() if t.startswith("Risk vs coverage"))
    assert "keep everything (the RAG answer)" in [d["name"] for d in scatter["data"]]
    assert next(d for d in scatter["data"] if d["name"] == "keep everything (the RAG answer)")["x"] == [100.0]
    assert {"Decision paths per fusion strategy",
            "How often each counterfactual changed the RAG answer, by label"} <= set(charts)
    paths = _frame(at, "decision path")
    assert int(paths["RC-RAG, direct selection"].sum()) == 6
    assert len(_frame(at, "changed: A (%)")) == 2
    assert len(_frame(at, "RAG answer")) == 6  # the per-question table

    wait_for_runs(at.button(key="counterfactual.sweep").click().run())  # again: every reply comes from the cache
    caption = next(c.value for c in at.caption if "configurations per question" in c.value).replace("\\", "")
    calls, cached = caption.split(" · ")[-1].split(" model calls (")
    assert cached == f"{calls} from the cache)"

    at.multiselect(key="counterfactual.strategies").set_value(["direct"]).run()  # other settings: the last sweep
    assert any(c.value.startswith("Showing an earlier sweep") for c in at.caption)


def test_a_dataset_without_gold_answers_says_risk_cannot_be_measured(dataset):  # noqa: F811
    at = _open_own_file(dataset, PAGE)
    assert any("risk cannot be measured" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "counterfactual.sweep"]


def test_dataset_text_in_labels_is_escaped(dataset):  # noqa: F811
    labels = _labels(_open_own_file(dataset, PAGE))
    assert any(md(QID) in c for c in labels), labels
    assert not [label for label in labels if any(r in label for r in RAW)], labels
