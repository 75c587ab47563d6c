"""Terminal rendering of results for the CLI (rich tables); no logic beyond formatting. Every console comes from
``backend.terminal.console``, which prints dataset text and model replies without terminal control sequences."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from backend.report.text import plural
from backend.schema import MethodResult, Question, ReliabilityEstimate
from backend.terminal import console as safe_console


def print_inspect(question: Question, results: dict[str, MethodResult]) -> None:
    console = safe_console()
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
    console = safe_console()
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


def pct(x: float | None) -> str:
    """A percentage, or "n/a" when its denominator was 0."""
    return "n/a" if x is None else f"{x:.2f}"


def print_risk(dataset: str, questions: int, points) -> None:
    """RC-RAG risk control: per operating point the folds and the paper's four metrics (+ the code's two)."""
    console = safe_console(130)  # a pipe reports 80 columns: twelve columns would be cut to "car…"
    table = Table("point", "AK", "AD", "UK", "UD", "risk ↓", "carefulness ↑", "alignment ↑", "coverage ↑",
                  "overcaution*", "recall*", "calls",
                  title=Text(f"Risk control on {dataset} ({plural(questions, 'question')}; percent)"))
    for p in points:
        m = p.metrics
        table.add_row(Text(p.label), *(str(p.folds[f]) for f in ("AK", "AD", "UK", "UD")),
                      *(pct(m[k]) for k in ("risk", "carefulness", "alignment", "coverage", "overcaution", "recall")),
                      str(p.calls))
    console.print(table)
    console.print("* in the released RC-RAG code, not in the paper. A = the RAG answer is correct, K = kept.",
                  highlight=False)



def print_evaluation(summary: dict) -> None:
    """Batch evaluation: one row per method, the answer metrics (percent), abstention risk, cost; then what is
    missing or failed."""
    console = safe_console(160)  # a pipe reports 80 columns: fifteen columns would be cut to "accura…"
    table = Table("method", "n", "errors", "missing", "accuracy", "strict EM", "P", "R", "F1", "refusal",
                  "risk ↓", "coverage", "calls", "tokens", "wall s",
                  title=Text(f"Evaluation of {summary['dataset']} with {summary['model']} "
                             f"({plural(summary['questions'], 'question')}; percent)"))
    table.columns[0].no_wrap = True
    for name, m in summary["methods"].items():
        risk = m.get("risk") or {}
        tokens = (m["mean_prompt_tokens"] or 0) + (m["mean_completion_tokens"] or 0) if m["n"] else None
        table.add_row(Text(name), str(m["n"]), str(m["errors"]), str(m["missing"]),
                      *(pct(m[k]) for k in ("accuracy", "strict_em", "precision", "recall", "f1", "refusal_rate")),
                      pct(risk.get("risk")) if risk else "—", pct(risk.get("coverage")) if risk else "—",
                      _num(m["mean_calls"]) if m["mean_calls"] is not None else "n/a",
                      f"{tokens:.0f}" if tokens is not None else "n/a",
                      _num(m["mean_wall_s"]) if m["mean_wall_s"] is not None else "n/a")
    console.print(table)
    console.print("Metrics over rows without error; calls, tokens and wall s are means per question. Risk (RC-RAG) "
                  "for methods that abstain; an abstention is labelled by vanilla RAG's answer.", highlight=False)
    gold = summary.get("gold") or {}
    if gold.get("from", "dataset") != "dataset":
        from backend.labels.gold import settled_text

        console.print(Text(f"Gold answers: analysts' labels from {gold['from']}"
                           + (f" (by {gold['analyst']})" if gold.get("analyst") else "")
                           + (f": {settled_text(gold)}" if "agreed" in gold else "")  # older summaries: no counts
                           + f"; a question labelled unanswerable ({gold.get('unanswerable', 0)}) is answered "
                           "correctly by abstaining."), highlight=False)
    if summary["missing"]:
        console.print(Text("missing (not run): " + ", ".join(f"{m} {n}" for m, n in summary["missing"].items()),
                           style="bold red"))
    if summary["errors"]:
        console.print(Text("errors: " + ", ".join(f"{m} {n}" for m, n in summary["errors"].items())
                           + " (run again with --resume --retry-errors)", style="bold yellow"))
    _print_format_failures(console, summary["methods"].items())


def _print_format_failures(console, entries) -> None:
    """The methods whose replies were not in the expected format (``format_failures``), if any."""
    hit = [f"{name} {e['unreadable_calls']} ({pct(e.get('format_failures'))} % of replies)"
           for name, e in entries if e.get("unreadable_calls")]
    if hit:
        console.print(Text("replies not in the expected format (the method used its paper's default): "
                           + ", ".join(hit), style="bold yellow"))


def print_attack(summary: dict, dataset: str, model: str, out) -> None:
    """An attack over a dataset (``backend.whatif.campaign``): one row per method and k."""
    console = safe_console(120)
    table = Table("method", "k", "n", "errors", "missing", "attack success", "accuracy", "abstention",
                  title=Text(f"Attack on {dataset} with {model} (percent; k = injected passages)"))
    for name, per_k in summary.items():
        for k, e in per_k.items():
            table.add_row(Text(name), k, str(e["n"]), str(e["errors"]), str(e["missing"]),
                          pct(e["attack_success_rate"]), pct(e["accuracy"]), pct(e["abstention"]))
    console.print(table)
    console.print("Attack success: the method's answers include the target wrong answer; rates over rows without "
                  "error.", highlight=False)
    _print_format_failures(console, [(f"{name} k={k}", e) for name, per_k in summary.items() for k, e in per_k.items()])
    console.print(Text(f"summary: {out}/summary.json · rows: {out}/results.jsonl · settings: {out}/attack.json"),
                  highlight=False)
