"""Sources page: RA-RAG run with the offline model on a multisource question (stage 1 on 30 calibration
questions, to keep the test short), the truth overlay, and a source-less (RAMDocs) dataset."""

import json

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

APP = str(ROOT / "app.py")


def _frame(at, column):
    return next(f.value for f in at.dataframe if column in f.value.columns)


def _charts(at) -> dict[str, dict]:
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return {s["layout"]["title"]["text"]: s for s in specs}


def test_sources_page_runs_ra_rag_and_shows_walk_votes_and_reliability():
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.selectbox(key="app.dataset").set_value("multisource").run()
    at.selectbox(key="app.question").set_value("ms-0036").run()
    at.switch_page("pages/sources.py").run()
    assert not at.exception, at.exception
    at.number_input(key="sources.calibration").set_value(30).run()
    at.button(key="sources.run").click().run()
    assert not at.exception, at.exception

    metrics = {m.label: m.value for m in at.metric}
    assert metrics["MV"] == "Zuru" and metrics["RA-RAG (κ-RRSS)"] == "Viu"  # MV misled, RA-RAG right
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

    at.toggle(key="sources.show_truth").set_value(True).run()
    assert not at.exception, at.exception
    per_source = _frame(at, "ROUGE-1 P")
    assert {"true p", "document types", "answer type (EM)"} <= set(per_source.columns)
    scatter = next(s for t, s in _charts(at).items() if t.startswith("Estimated vs true source reliability"))
    assert scatter["data"][0]["x"] == [0, 1] and scatter["data"][0]["y"] == [0, 1]  # the y = x line
    assert sorted(scatter["data"][1]["text"]) == [f"src-{i}" for i in range(1, 9)]
    assert scatter["layout"]["xaxis"]["title"]["text"] == "true reliability p (ground truth)"


def test_sources_page_on_a_dataset_without_named_sources():
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("pages/sources.py").run()
    assert not at.exception, at.exception
    assert any("each document is its own source" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "sources.stage1"]
    at.button(key="sources.run").click().run()
    assert not at.exception, at.exception
    assert {m.label: m.value for m in at.metric} == {"MV": "3,559"}
    assert len(_frame(at, "ROUGE-1 P")) == 3 and not [f for f in at.dataframe if "step" in f.value.columns]
    assert not any(t.startswith("Stage 1") for t in _charts(at))
