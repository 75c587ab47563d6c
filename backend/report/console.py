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



def own_metric_cells(m: dict) -> tuple[str, str]:
    """A method's own paper's metric, as (its paper's name, the value in percent): RC-RAG's is risk and coverage."""
    from backend.scoring import PAPER_METRICS, RISK_METRIC_NAME

    key = m.get("own_metric")
    if key == "risk":
        risk = m.get("risk") or {}
        return RISK_METRIC_NAME, f"{pct(risk.get('risk'))} / {pct(risk.get('coverage'))}" if risk else "n/a"
    if key in PAPER_METRICS:
        return PAPER_METRICS[key].name, pct(m.get(key))
    return "—", "—"


def by_reading(m: dict) -> dict[str, str]:
    """A method's own metric per reading ("tolerant", "paper"): the run's, and the other's when it was run."""
    values = {m.get("reading") or "tolerant": own_metric_cells(m)[1]}
    if other := m.get("other_reading"):
        values[other["reading"]] = own_metric_cells({**(other.get("scores") or {}), "risk": other.get("risk"),
                                                     "own_metric": m.get("own_metric")})[1]
    return values


def print_evaluation(summary: dict) -> None:
    """Batch evaluation: one row per method, its own paper's metric under the paper's name, read the tolerant way and
    the paper's (percent; the other reading when it was run), beside the project's lenient match, the share of
    decisions that depend on the reading, abstention risk, cost; then what is missing or failed."""
    console = safe_console(170)  # a pipe reports 80 columns: the columns would be cut to "accura…"
    reading = next((m.get("reading") for m in summary["methods"].values() if m.get("reading")), "tolerant")
    table = Table("method", "n", "paper's metric", "tolerant", "paper", "answer match (lenient)", "EM (SQuAD)",
                  "refusal", "risk ↓", "coverage", "reading-\ndependent", "calls", "tokens", "wall s",
                  title=Text(f"Evaluation of {summary['dataset']} with {summary['model']} "
                             f"({plural(summary['questions'], 'question')}; percent; decided by the {reading} "
                             "reading)"))
    table.columns[0].no_wrap = True
    for name, m in summary["methods"].items():
        risk = m.get("risk") or {}
        tokens = (m["mean_prompt_tokens"] or 0) + (m["mean_completion_tokens"] or 0) if m["n"] else None
        values = by_reading(m)
        dependent = (f"{m.get('reading_dependent', 0)}/{m.get('decisions_read', 0)}"
                     + (f" ({pct(m['reading_dependent_pct'])})" if m.get("reading_dependent_pct") else ""))
        table.add_row(Text(name), str(m["n"]), Text(own_metric_cells(m)[0]), values.get("tolerant", "—"),
                      values.get("paper", "—"),
                      *(pct(m.get(k)) for k in ("lenient_match", "squad_em", "refusal_rate")),
                      pct(risk.get("risk")) if risk else "—", pct(risk.get("coverage")) if risk else "—",
                      dependent,
                      _num(m["mean_calls"]) if m["mean_calls"] is not None else "n/a",
                      f"{tokens:.0f}" if tokens is not None else "n/a",
                      _num(m["mean_wall_s"]) if m["mean_wall_s"] is not None else "n/a")
    console.print(table)
    console.print("Paper's metric: the method's own paper's, by its rule (README, \"Which number to compare with "
                  "which paper\"); answer match (lenient) is the project's, none of the papers'. EM: SQuAD's. "
                  "Reading-dependent: decisions the other reading of the same replies would have read differently. "
                  "Metrics over rows without error; calls, tokens and wall s are means per question. Risk (RC-RAG) "
                  "for methods that abstain; an abstention is labelled by RC-RAG's RAG answer "
                  "to the question (as in `risk --also`).", highlight=False)
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
    table = Table("method", "k", "n", "errors", "missing", "attack success", "answer match (lenient)", "abstention",
                  title=Text(f"Attack on {dataset} with {model} (percent; k = injected passages)"))
    for name, per_k in summary.items():
        for k, e in per_k.items():
            table.add_row(Text(name), k, str(e["n"]), str(e["errors"]), str(e["missing"]),
                          pct(e["attack_success_rate"]), pct(e["accuracy"]), pct(e["abstention"]))
    console.print(table)
    console.print("Attack success: the method's answers include the target wrong answer; answer match (lenient): "
                  "they include a gold answer (containment either way: the project's rule, none of the papers' "
                  "metrics; summary.json's `accuracy`); rates over rows without error.", highlight=False)
    _print_format_failures(console, [(f"{name} k={k}", e) for name, per_k in summary.items() for k, e in per_k.items()])
    console.print(Text(f"summary: {out}/summary.json · rows: {out}/results.jsonl · settings: {out}/attack.json"),
                  highlight=False)
