"""The CLI's terminal output treats dataset and model text as text, never as rich markup."""

import json
import subprocess
import sys

from tests.conftest import ROOT


def test_inspect_table_survives_markup_like_text(tmp_path):
    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps({"id": "q[/0]", "question": "Who wrote [/0] and [red]this[/red]?",
                                "documents": [{"text": "[bold]Ann[/bold] wrote [/0] in 1900."}]}) + "\n")
    proc = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", str(data), "--question", "@1",
                           "--methods", "no_rag", "--cache-dir", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "q[/0]" in proc.stdout and "[red]this[/red]" in proc.stdout


def test_inspect_json_scores_each_method_by_its_own_papers_metric(tmp_path):
    """``inspect --json``: the results as MethodResults (with how their replies were read) and, per method, the key of
    its own paper's metric, every paper's metric on the question (with its gold answers) and the lenient verdict."""
    from backend.schema import MethodResult
    from backend.scoring import PAPER_METRICS

    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps({"id": "q1", "question": "When was the treaty signed?", "gold_answers": ["24 June 1630"],
                                "documents": [{"id": "d1", "text": "The treaty was signed on 24 June 1630."}]}) + "\n")
    proc = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", str(data), "--question", "@1",
                           "--methods", "no_rag,vanilla_rag,madam,counterfactual", "--cache-dir", str(tmp_path),
                           "--json"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"question", "results", "metrics"}
    for name, result in out["results"].items():
        parsed = MethodResult.model_validate(result)  # still a MethodResult, as the trace viewers read it
        assert parsed.reading == "tolerant" and result["decisions_read"] >= 1 and result["reading_differences"] == []
    metrics = out["metrics"]
    assert {m: metrics[m]["own_metric"] for m in metrics} == {
        "no_rag": "squad_em", "vanilla_rag": "squad_em", "madam": "ramdocs_em", "counterfactual": "risk"}
    for name, m in metrics.items():
        assert set(m["paper_metrics"]) == set(PAPER_METRICS)
        assert m["verdict"] in ("correct", "correct + extras", "partly correct", "wrong", "abstained", "unreadable")
    closed = metrics["no_rag"]
    assert closed["verdict"] == "abstained" and closed["paper_metrics"] == dict.fromkeys(PAPER_METRICS, 0.0)
    vanilla = metrics["vanilla_rag"]
    assert out["results"]["vanilla_rag"]["answers"] == ["24 June 1630"]  # the offline reader quotes the document
    assert vanilla["verdict"] == "correct" and vanilla["paper_metrics"] == dict.fromkeys(PAPER_METRICS, 1.0)
    assert metrics["counterfactual"]["fold"] == "AK"  # a right answer kept
    assert "fold" not in vanilla
