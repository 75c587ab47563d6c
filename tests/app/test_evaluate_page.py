"""Evaluate page: open a results file written by the CLI (and the errors of a bad path or a half-written line), and a
small run from the page that completes on its worker thread and shows the tables."""

import json
import subprocess
import sys
import time

from streamlit.testing.v1 import AppTest

from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
LENIENT = "answer match (lenient) % · tolerant"
OWN, OWN_PAPER = "paper's metric", "paper's metric % · paper"


def _page() -> AppTest:
    at = wait_for_runs(AppTest.from_file(APP, default_timeout=120).run())  # the home page's run, done
    at.switch_page("pages/evaluate.py").run()
    assert not at.exception, at.exception
    return at


def _frame(at, column):
    """The first table (``st.dataframe``, or ``st.table`` with its cells escaped for Markdown) holding ``column``."""
    for f in at.dataframe:
        if column in f.value.columns:
            return f.value
    for t in at.table:  # the answers table: a static table whose cells wrap, escaped (components.safe.md)
        plain = t.value.rename(columns=lambda c: c.replace("\\", "")).map(lambda v: str(v).replace("\\", ""))
        if column in plain.columns:
            return plain
    raise AssertionError(f"no table with the column {column!r}")


def _charts(at) -> set[str]:
    return {json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")}


def _open(at, path) -> AppTest:
    at.radio(key="evaluate.source").set_value("open").run()
    at.text_input(key="evaluate.path").input(str(path)).run()
    at.button(key="evaluate.open").click().run()
    assert not at.exception, at.exception
    return at


def test_open_results_written_by_the_cli(tmp_path):
    out = tmp_path / "ev"
    done = subprocess.run([sys.executable, "-m", "backend", "evaluate", "--dataset", "sample_data/ramdocs_dev",
                           "--methods", "no_rag,vanilla_rag", "--limit", "5", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    at = _open(_page(), out)
    summary = _frame(at, LENIENT).set_index("method")
    assert list(summary.index) == ["no_rag", "vanilla_rag"] and set(summary["n"]) == {"5"}
    written = json.loads((out / "summary.json").read_text())["methods"]
    assert summary.loc["vanilla_rag", LENIENT] == f"{written['vanilla_rag']['lenient_match']:.1f}"
    # each method's own paper's metric under its paper's name, read both ways (the CLI runs the other reading)
    assert list(summary[OWN]) == ["EM (SQuAD)", "EM (SQuAD)"]
    assert summary.loc["vanilla_rag", "paper's metric % · tolerant"] == f"{written['vanilla_rag']['squad_em']:.1f}"
    paper = written["vanilla_rag"]["other_reading"]["scores"]["squad_em"]
    assert summary.loc["vanilla_rag", OWN_PAPER] == f"{paper:.1f}"
    assert summary.loc["vanilla_rag", "reading-dependent"].startswith("0/")
    assert not [c for c in summary.columns if "accuracy" in c]
    details = _frame(at, "tokens / q").set_index("method")  # the second table: counts, other metrics, risk, cost
    assert "tokens / q" not in summary.columns and set(details["errors"]) == {0}
    assert details.loc["no_rag", "risk % ↓"] == "n/a" and details.loc["vanilla_rag", "risk % ↓"] == "—"
    questions = _frame(at, "question")
    assert list(questions["id"]) == [f"ramdocs-000{i}" for i in range(1, 6)]
    assert set(questions["no_rag"]) == {"abstained"}
    link = "./?dataset=ramdocs_dev&question=ramdocs-0001&methods=no_rag%2Cvanilla_rag"
    assert questions["inspect"].iloc[0] == link
    charts = _charts(at)
    assert "Answer match (lenient) and own paper's metric (95% CI)" in charts
    assert {"Answer match (lenient) per evidence mix",
            "Cost per question, per method (means)",
            "Agreement between methods (share of questions)"} <= charts
    assert {b.label for b in at.get("download_button")} == {"Questions (CSV)", "Results (JSONL)", "Summary (JSON)"}

    at.radio(key="evaluate.filter").set_value("one_right").run()
    shown = _frame(at, "question")
    assert list(shown["right"]) == [1] * len(shown) and len(shown) < 5
    at.radio(key="evaluate.filter").set_value("all").run()

    # a kill mid-write: the half line is left out and said, the file is not touched
    path = out / "results.jsonl"
    path.write_bytes(path.read_bytes() + b'{"dataset": "ramdocs_dev", "question_id": "ramdocs-0006"')
    at.button(key="evaluate.open").click().run()
    assert not at.exception, at.exception
    assert any("half\\-written" in w.value for w in at.warning)
    assert len(_frame(at, "question")) == 5

    for bad, said in ((tmp_path / "nope", "no such file or folder"),
                      (ROOT / "sample_data" / "ramdocs_dev" / "questions.jsonl", "not a results file")):
        at.text_input(key="evaluate.path").input(str(bad)).run()
        at.button(key="evaluate.open").click().run()
        assert not at.exception, at.exception
        assert len(at.error) == 1 and said in at.error[0].value.replace("\\", "")
        assert not at.dataframe  # the earlier results are gone: they are not what the path names


def test_run_now_completes_and_shows_the_tables():
    at = _page()
    at.multiselect(key="evaluate.methods").set_value(["no_rag", "vanilla_rag"]).run()
    at.number_input(key="evaluate.limit").set_value(3).run()
    at.button(key="evaluate.run").click().run()
    assert not at.exception, at.exception
    deadline = time.time() + 240
    while not at.dataframe and time.time() < deadline:  # the page polls its worker thread; so do we
        time.sleep(0.5)
        at.run()
        assert not at.exception, at.exception
    summary = _frame(at, LENIENT)
    assert list(summary["method"]) == ["no_rag", "vanilla_rag"] and set(summary["n"]) == {"3"}
    assert OWN_PAPER in summary.columns  # "Also read the replies the paper way" is on by default
    assert list(_frame(at, "question")["id"]) == ["ramdocs-0001", "ramdocs-0002", "ramdocs-0003"]
    caption = " ".join(c.value for c in at.caption)
    assert "evaluations/ramdocs\\_dev\\-" in caption  # written under the cache folder

    at.radio(key="evaluate.source").set_value("open").run()  # the run's results stay for the session
    at.radio(key="evaluate.source").set_value("run").run()
    assert set(_frame(at, LENIENT)["n"]) == {"3"}
