"""Terminal rendering of results for the CLI (rich tables); no logic beyond formatting."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from backend.schema import MethodResult, Question, ReliabilityEstimate
from backend.report.text import plural


def print_inspect(question: Question, results: dict[str, MethodResult]) -> None:
    console = Console()
    # dataset and model text go in as Text, never as rich markup ("[/0]" in a question must not crash)
    console.print(Text.assemble((question.id, "bold"), ": ", question.question))
    table = Table("method", "answers", "abstained", "calls (cached)", "wall s", "error")
    for name, r in results.items():
        cached = sum(c.cache_hit for c in r.calls)
        table.add_row(name, Text("; ".join(r.answers) or "—"), "yes" if r.abstained else "no",
                      f"{len(r.calls)} ({cached})", f"{r.wall_s:.2f}", Text(r.error or ""))
    console.print(table)


def print_reliability(report: dict, est: ReliabilityEstimate) -> None:
    """RA-RAG stage 1: per source ŵ, v, true p_i (when known), counts; then MAE, r and convergence."""
    console = Console()
    table = Table("source", "ŵ", "v", "true p", "|ŵ−p|", "answered", "agreed", "IDK", "no docs",
                  title=Text(f"RA-RAG stage 1 on {est.dataset} ({plural(est.questions, 'question')}, {est.model}, "
                             f"evidence {est.evidence_mode})"))
    for s in report["sources"]:
        table.add_row(Text(s["name"]), _num(s["estimated"]), _num(s["weight"]), _num(s["true_reliability"]),
                      _num(s["abs_error"]), str(s["answered"]), str(s["agreed"]), str(s["idk"]),
                      str(s["no_documents"]))
    console.print(table)
    state = "converged" if est.converged else "stopped at a cycle" if est.cycle else "hit the iteration limit"
    console.print(f"MAE {_num(report['mae'])} · Pearson r {_num(report['pearson_r'])} · "
                  f"{plural(est.iterations, 'iteration')} ({state}) · {plural(est.calls, 'model call')} "
                  f"({est.cache_hits} cached)", highlight=False)


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"
