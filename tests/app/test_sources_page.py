"""Sources page: RA-RAG run with the offline model on a multisource question (stage 1 on 30 calibration
questions, to keep the test short), the truth overlay, and a source-less (RAMDocs) dataset."""

import json

from streamlit.testing.v1 import AppTest

from backend.llm.providers import scripted
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")


def _frame(at, column):
    return next(f.value for f in at.dataframe if column in f.value.columns)


def _answers(at) -> dict[str, str]:
    """The Answer row: our variant label (caption) over the answer (plain text) in each column."""
    return {c.caption[0].value: c.text[0].value for c in at.columns if len(c.caption) == len(c.text) == 1}


def _charts(at) -> dict[str, dict]:
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return {s["layout"]["title"]["text"]: s for s in specs}


def _sources_page(dataset: str | None = None, question: str | None = None, model: str | None = None,
                  calibration: int | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["methods"] = "no_rag"  # keep the home page's automatic runs (in the background) cheap
    at.run()
    for kind, name, value in (("selectbox", "dataset", dataset), ("selectbox", "question", question),
                              ("text_input", "model", model)):
        if value is not None:  # look each widget up after the previous change: the dataset changes the questions
            getattr(at, kind)(key=f"app.{name}").set_value(value).run()
    at.switch_page("pages/sources.py").run()
    assert not at.exception, at.exception
    if calibration is not None:
        at.number_input(key="sources.calibration").set_value(calibration).run()
    return at


def test_sources_page_runs_ra_rag_and_shows_walk_votes_and_reliability():
    at = _sources_page("multisource", "ms-0036", calibration=30)
    wait_for_runs(at.button(key="sources.run").click().run())
    assert not at.exception, at.exception

    answers = _answers(at)
    assert answers["MV"] == "Zuru" and answers["RA-RAG (κ-RRSS)"] == "Viu"  # MV misled, RA-RAG right
    per_source = _frame(at, "ROUGE-1 P")
    assert len(per_source) == 8 and "true p" not in per_source.columns  # truth hidden by default
    weights = list(per_source["weight v"])
    assert weights == sorted(weights, reverse=True)
    walk = _frame(at, "step")
    assert list(walk["step"]).count("✔ selected") == 4 and list(walk["step"]).count("∅ never queried") == 1
    assert any("stage 1 on 30 unlabelled calibration questions" in t.value for t in at.text)
    assert any("never queried" in t.value and "κ = 4" in t.value for t in at.text)
    charts = _charts(at)
    votes = charts["Votes per answer: MV vs WMV vs RA-RAG (κ-RRSS)"]
    assert [d["name"] for d in votes["data"]] == ["MV → Zuru", "WMV → Viu", "RA-RAG (κ-RRSS) → Viu"]
    assert any(t.startswith("Stage 1 convergence") for t in charts)
    assert "Estimated source reliability ŵ (turn on ground truth to compare with the truth)" in charts

    at.toggle(key="app.show_truth").set_value(True).run()
    assert not at.exception, at.exception
    per_source = _frame(at, "ROUGE-1 P")
    assert {"true p", "document types", "answer type (EM)"} <= set(per_source.columns)
    scatter = next(s for t, s in _charts(at).items() if t.startswith("Estimated vs true source reliability"))
    assert scatter["data"][0]["x"] == [0, 1] and scatter["data"][0]["y"] == [0, 1]  # the y = x line
    assert sorted(scatter["data"][1]["text"]) == [f"src-{i}" for i in range(1, 9)]
    assert scatter["layout"]["xaxis"]["title"]["text"] == "true reliability p (ground truth)"


def test_sources_page_on_a_dataset_without_named_sources():
    at = _sources_page()
    assert any("each document is its own source" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "sources.stage1"]
    wait_for_runs(at.button(key="sources.run").click().run())
    assert not at.exception, at.exception
    assert _answers(at) == {"MV": "3,559"}
    assert len(_frame(at, "ROUGE-1 P")) == 3 and not [f for f in at.dataframe if "step" in f.value.columns]
    assert not any(t.startswith("Stage 1") for t in _charts(at))


def test_a_failing_stage_1_is_an_error_message_not_a_traceback(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the hosted model fails in stage 1
    for button in ("sources.stage1", "sources.run"):
        at = _sources_page("multisource", model="openai/gpt-4o-mini", calibration=2)
        wait_for_runs(at.button(key=button).click().run())
        assert not at.exception, at.exception
        assert [e.value for e in at.error] == ["Stage 1 (source reliability) failed:"]
        assert any("openai/gpt-4o-mini" in t.value and "auth" in t.value for t in at.text)
        assert ("No API key for openai: set OPENAI_API_KEY (environment or .streamlit/secrets.toml), or choose the "
                "offline model") in [t.value for t in at.text]
        assert not [f for f in at.dataframe if "ROUGE-1 P" in f.value.columns]  # the run was skipped


def test_answers_are_plain_text_not_markdown():
    # every source answers with Markdown the readers keep (they strip emphasis, not strikethrough)
    with scripted({"*": "3,559 ~~people~~"}):
        at = _sources_page(model="scripted/markdown-answer")
        wait_for_runs(at.button(key="sources.run").click().run())
    assert not at.exception, at.exception
    assert not at.metric  # st.metric renders its value as Markdown
    assert _answers(at) == {"MV": "3,559 ~~people~~"}
