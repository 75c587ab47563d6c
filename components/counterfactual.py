"""Counterfactual prompting's views (the Risk page, RC-RAG): pure shaping of a ``CounterfactualTrace`` (one question)
and of a ``RiskSweep`` (a dataset) into strings, frames and plotly figures, and the page's panels (``render_*``, each
given the Streamlit module or a container as ``st``). Spec:
docs/methods/counterfactual.md §7 (the § numbers below are that file's).

Everything shown comes from the trace (what ran and what it decided), the recorded calls, or the sweep's folds and
metrics; the truth (the A/U label and the fold) is joined only through ``backend.scoring``, and for one question only
when the overlay is on.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from backend.report.layout import AXIS_TITLE_PX, count_axis, every_category, legend_above, no_data
from backend.report.palette import BADGE_COLORS, KIND_COLORS, KIND_LABELS, STRATEGY_COLORS
from backend.report.text import plural
from backend.methods.counterfactual.risk import REFERENCE, RiskPoint, RiskSweep
from backend.schema import CFBranch, CFMatch, CFReply, CounterfactualTrace, LLMCall, MethodResult, Question
from backend.scoring import CODE_ONLY_METRICS, FOLDS, RISK_METRICS, doc_kind, risk_fold
from components.calls import render_call
from components.documents import PREVIEW_CHARS
from components.failures import render_failure
from components.safe import md
from components.views import View

#: this method's page (the app's view registry, ``components.views``)
VIEW = View("Risk (counterfactual prompting)", ":material/shield:", "counterfactual", "pages/counterfactual.py", method="counterfactual")

IDK = "I don't know"
NA = "n/a"
DECISION_WORDS = {"keep": "KEEP", "discard": "ABSTAIN"}
DECISION_BADGES = {"keep": "green", "discard": "gray"}
SCENARIO_TITLES = {"quality": "CF-quality: “your passages were of poor quality”",
                   "usage": "CF-usage: “you used the passages improperly”"}
SCENARIO_SHORT = {"quality": "CF-quality", "usage": "CF-usage"}
STRATEGY_LABELS = {"direct": "direct selection", "probability": "probability comparison",
                   "safety": "safety (code only, not in the paper)"}
STRATEGY_SHORT = {"direct": "direct selection", "probability": "probability comparison", "safety": "safety (code only)"}
CODE_ONLY = "code only, not in the paper"
#: Which passages an answer cited: the RAG answer's and CF-quality's re-selection, as badge colours.
CITE_BADGES = {"rag": "blue", "quality": "violet"}
CITE_COLORS = {"rag": "#1565c0", "quality": "#7b1fa2"}
RAG_COLUMN, QUALITY_COLUMN = "cited by the RAG answer", "re-selected by CF-quality"
TEXT_PREVIEW = 160  # characters of a passage in the table; the whole text is in the expander below it
FOLD_BADGES = {"AK": "green", "UD": "green", "AD": "orange", "UK": "red"}
FOLD_MEANING = {"AK": "a right answer kept", "AD": "a right answer withheld (costs coverage, carries no risk)",
                "UK": "a wrong answer kept: the only risky fold", "UD": "a wrong answer withheld"}
#: Fold cells of the 2×2 matrix: the right decisions green, the risky one red, lost coverage grey.
FOLD_CELL_COLORS = {"AK": KIND_COLORS["correct"], "UD": KIND_COLORS["correct"], "UK": KIND_COLORS["misinfo"],
                    "AD": KIND_COLORS["noise"]}
ROWS = {"A": "A (right)", "U": "U (wrong)"}
COLUMNS = {"K": "K (kept)", "D": "D (discarded)"}
PATHS = ("both keep", "both discard", "disagree → keep", "disagree → discard", "override (refusal kept → discard)")
METRIC_COLUMNS = {"risk": "risk ↓", "carefulness": "carefulness ↑", "alignment": "alignment ↑",
                  "coverage": "coverage ↑", "overcaution": "overcaution ↓ (code only)",
                  "recall": "recall ↑ (code only)"}
STEP_NAMES = {"rag_answer": "RAG answer", "cf_quality": "CF-quality", "cf_usage": "CF-usage", "fusion": "fusion"}


def _yes(flag: bool) -> str:
    return "✓" if flag else "✗"


def _pct(value: float | None) -> str:
    return NA if value is None else f"{value:.2f}"


def _calls_by_id(calls: Sequence[LLMCall]) -> dict[str, LLMCall]:
    return {c.id: c for c in calls}


# --- one question ------------------------------------------------------------------------------------------

def config_line(trace: CounterfactualTrace, calls: Sequence[LLMCall] = ()) -> str:
    models = sorted({c.model for c in calls})
    scope = "the whole reply" if trace.refusal_scope == "output" else "the answer only"
    return (f"{plural(len(trace.passages), 'passage')} · T = {plural(trace.iterations, 'round')} per branch · "
            f"fusion: {STRATEGY_LABELS[trace.fusion_strategy]} · θ = {trace.threshold:g} for F1 and ROUGE-L recall · "
            f"substring test {trace.substring} · refusal phrases searched in {scope}"
            + (f" · model {', '.join(models)}" if models else ""))


def calls_text(calls: Sequence[LLMCall]) -> str:
    """``4 model calls (RAG answer 1, CF-quality 1, CF-usage 1, fusion 1; 4 from the cache)``."""
    counts: dict[str, int] = {}
    for c in calls:
        name = next((v for k, v in STEP_NAMES.items() if c.step.startswith(k)), c.step)
        counts[name] = counts.get(name, 0) + 1
    parts = ", ".join(f"{name} {n}" for name, n in counts.items())
    cached = sum(c.cache_hit for c in calls)
    return (f"{plural(len(calls), 'model call')}" + (f" ({parts}; {cached:,} from the cache)" if calls else ""))


def final_view(result: MethodResult) -> dict:
    """The decision: KEEP with the RAG answer or ABSTAIN ("I don't know"), the one-line reason, the calls."""
    trace: CounterfactualTrace = result.trace
    keep = trace.decision == "keep"
    return {"decision": trace.decision, "word": DECISION_WORDS[trace.decision],
            "answer": result.answers[0] if keep and result.answers else IDK,
            "reason": trace.reason, "calls": calls_text(result.calls), "notes": list(trace.notes)}


def _quality_cites(trace: CounterfactualTrace) -> dict[int, list[int]]:
    """Passage number -> the CF-quality rounds whose reply cited it."""
    cites: dict[int, list[int]] = {}
    for b in trace.branches:
        if b.scenario == "quality":
            for r in b.rounds:
                for n in r.reply.passages:
                    cites.setdefault(n, []).append(r.round)
    return cites


def passage_rows(trace: CounterfactualTrace, question: Question, show_truth: bool) -> list[dict]:
    """One row per passage the prompt gave (``Passage-{n}``): cited by the RAG answer, re-selected by CF-quality
    (in which rounds), and with the overlay its document's true type and the answer it supports."""
    rag = set(trace.rag.passages) if trace.rag else set()
    quality = _quality_cites(trace)
    docs = {d.id: d for d in question.documents}
    rows = []
    for p in trace.passages:
        row = {"passage": f"Passage-{p.number}", "document": p.document_id, "rag": p.number in rag,
               "quality": p.number in quality,
               "quality rounds": quality.get(p.number, []), "text": p.text}
        if show_truth:
            doc = docs.get(p.document_id)
            row["kind"] = doc_kind(doc) if doc else "unlabelled"
            row["supports"] = doc.label.answer if doc and doc.label and doc.label.answer else None
        rows.append(row)
    return rows


def passages_frame(trace: CounterfactualTrace, question: Question, show_truth: bool) -> pd.DataFrame:
    """The passages as a table: id, document, cited by the RAG answer, re-selected by CF-quality (+ truth)."""
    multi = trace.iterations > 1
    rows = []
    for r in passage_rows(trace, question, show_truth):
        q = ("✓" + (f" (round {', '.join(map(str, r['quality rounds']))})" if multi else "")) if r["quality"] else ""
        row = {"passage": r["passage"], "document": r["document"], RAG_COLUMN: "✓" if r["rag"] else "",
               QUALITY_COLUMN: q}
        if show_truth:
            row |= {"document type": KIND_LABELS[r["kind"]], "supports": r["supports"] or "—"}
        row["text"] = r["text"] if len(r["text"]) <= TEXT_PREVIEW else r["text"][:TEXT_PREVIEW - 1] + "…"
        rows.append(row)
    return pd.DataFrame(rows)


def passages_colors(frame: pd.DataFrame) -> pd.DataFrame:
    """CSS per cell of ``passages_frame``: the RAG answer's citations in blue, CF-quality's re-selection in violet;
    with the overlay, each document type in its kind's colour."""
    colors = pd.DataFrame("", index=frame.index, columns=frame.columns)
    for column, color in ((RAG_COLUMN, CITE_COLORS["rag"]), (QUALITY_COLUMN, CITE_COLORS["quality"])):
        colors[column] = [f"background-color: {color}40; font-weight: bold" if str(v).startswith("✓") else ""
                          for v in frame[column]]
    if "document type" in frame:  # the truth overlay, in the colours every page gives the kinds
        kinds = {label: kind for kind, label in KIND_LABELS.items()}
        colors["document type"] = [f"background-color: {KIND_COLORS[kinds.get(v, 'unlabelled')]}40"
                                   for v in frame["document type"]]
    return colors


def passages_styled(trace: CounterfactualTrace, question: Question, show_truth: bool):
    frame = passages_frame(trace, question, show_truth)
    colors = passages_colors(frame)
    return frame.style.apply(lambda _: colors, axis=None)


def _ids(numbers: Sequence[int]) -> str:
    return ", ".join(f"Passage-{n}" for n in numbers)


def reselection_text(trace: CounterfactualTrace) -> str:
    """What CF-quality's re-selection did to the RAG answer's passages (the quality factor's footprint)."""
    rag = list(trace.rag.passages) if trace.rag else []
    before = _ids(rag) if rag else "no passage (internal knowledge or none named)"
    quality = next((b for b in trace.branches if b.scenario == "quality"), None)
    if quality is None or not quality.rounds:
        return f"The RAG answer cited {before}; CF-quality did not run."
    after = list(quality.rounds[-1].reply.passages)
    if not after:
        return f"The RAG answer cited {before}; CF-quality re-selected no passage (its reply names none)."
    if set(after) == set(rag):
        return f"The RAG answer cited {before}; CF-quality re-selected the same: {_ids(after)}."
    dropped, added = [n for n in rag if n not in after], [n for n in after if n not in rag]
    change = "; ".join(p for p in (f"dropped {_ids(dropped)}" if dropped else "",
                                   f"added {_ids(added)}" if added else "") if p)
    return f"The RAG answer cited {before}; CF-quality re-selected {_ids(after)} ({change})."


def evidence_text(reply: CFReply) -> str:
    """The parsed evidence and the passages it names; a reply with no evidence part says so (the parser then takes
    the whole reply as the evidence, §3.2)."""
    if reply.passages:
        return f"{reply.evidence} → cites {_ids(reply.passages)}"
    if "##" in reply.raw or "Evidence" in reply.raw or "Passage-" in reply.raw:
        return f"{reply.evidence or '(empty)'} → names no passage (internal knowledge)"
    return "none given (the reply has no evidence part)"


def rag_view(trace: CounterfactualTrace) -> dict:
    """The RAG answer card: raw reply, parsed answer and evidence, cited passages, the refusal flag and phrase."""
    rag = trace.rag
    return {"raw": rag.raw, "answer": rag.answer or "(empty: the reply gave only evidence)",
            "evidence": evidence_text(rag),
            "refusal": f"yes: “{rag.reject_phrase}”" if rag.reject else "no", "reject": rag.reject,
            "call_id": rag.call_id}


def _score(name: str, value: float, threshold: float) -> str:
    return f"{name} {value:.2f} {'>' if value > threshold else '≤'} {threshold:g}"


def match_text(m: CFMatch) -> str:
    """The match evidence against the RAG answer: every test, the scores against θ, which test fired."""
    if m.compared == "nothing":
        return ("nothing to compare: an answer is empty and there is no evidence to compare (or the reply refused) "
                "→ changed")
    tests = (f"exact {_yes(m.exact)} · substring {_yes(m.substring)} · {_score('F1', m.f1, m.threshold)} · "
             f"{_score('ROUGE-L recall', m.rouge_l, m.threshold)}")
    verdict = f"same ({m.fired} fired)" if m.same else "changed (no test fired)"
    prefix = "compared evidence (an answer was empty): " if m.compared == "evidence" else ""
    return f"{prefix}{tests} → {verdict}"


def changed(branch: CFBranch) -> bool:
    """The branch's answer changed from the RAG answer (in its last round: it stops at the first change)."""
    return bool(branch.rounds) and not branch.rounds[-1].match.same


def round_rows(branch: CFBranch) -> list[dict]:
    """Per round: the parsed reply, the match evidence, changed yes/no and the round's judgment."""
    return [{"round": r.round, "raw": r.reply.raw, "answer": r.reply.answer or "(empty)",
             "evidence": evidence_text(r.reply),
             "refusal": r.reply.reject_phrase if r.reply.reject else None,
             "match": match_text(r.match), "compared": r.match.compared, "changed": not r.match.same,
             "decision": r.decision, "call_id": r.reply.call_id} for r in branch.rounds]


def rounds_frame(branch: CFBranch) -> pd.DataFrame:
    """One row per round (for T > 1): answer, scores against θ, the test that fired, changed, keep/discard."""
    rows = [{"round": r.round, "answer": r.reply.answer or "(empty)", "compared": r.match.compared,
             "exact": _yes(r.match.exact), "substring": _yes(r.match.substring), "F1": r.match.f1,
             "ROUGE-L recall": r.match.rouge_l, "fired": r.match.fired or "—",
             "changed": "yes" if not r.match.same else "no", "judgment": r.decision} for r in branch.rounds]
    return pd.DataFrame(rows, columns=["round", "answer", "compared", "exact", "substring", "F1", "ROUGE-L recall",
                                       "fired", "changed", "judgment"])


def _last_user(call: LLMCall | None) -> str | None:
    if call is None:
        return None
    return next((m.get("content", "") for m in reversed(call.messages) if m.get("role") == "user"), None)


def _branch_of(call: LLMCall, trace: CounterfactualTrace) -> str | None:
    """The branch whose conversation a fusion call continued: its parent is that branch's last reply."""
    last = {b.rounds[-1].reply.call_id: b.scenario for b in trace.branches if b.rounds}
    return next((last[p] for p in call.parents if p in last), None)


def fusion_view(trace: CounterfactualTrace, calls: Sequence[LLMCall] = ()) -> dict:
    """How the branches' judgments became one: agreement (no call), direct selection (the branch asked, its prompt,
    the raw reply, the parsed choice), probability comparison (p per branch, the winner or a tie) or safety."""
    decisions = {b.scenario: b.decision for b in trace.branches}
    if trace.agree or trace.fusion is None:
        d = trace.fused or next(iter(decisions.values()), "discard")
        return {"kind": "agree", "decision": d, "calls": 0,
                "headline": f"The branches agree (both {d}): no fusion call, the decision is {d}."}
    f = trace.fusion
    split = ", ".join(f"{SCENARIO_SHORT[s]} {d}" for s, d in decisions.items())
    out = {"kind": f.strategy, "decision": f.decision, "notes": list(f.notes), "calls": len(f.call_ids)}
    by_id = _calls_by_id(calls)
    if f.strategy == "direct":
        call = by_id.get(f.call_ids[0]) if f.call_ids else None
        out |= {"headline": f"The branches disagree ({split}): direct selection, the paper's default, asks the branch "
                            f"that said discard ({SCENARIO_SHORT[f.branch]}) whether to keep the RAG answer.",
                "branch": f.branch, "prompt": _last_user(call), "raw": f.raw or "", "choice": f.choice,
                "call": call}
    elif f.strategy == "probability":
        rows = [{"branch": SCENARIO_SHORT[s], "its judgment": decisions.get(s, "—"),
                 "reply": f.raw_probabilities.get(s, ""), "p (parsed)": f.probabilities.get(s),
                 "winner": "✓" if f.winner == s else ""} for s in ("quality", "usage")]
        result = (f"{SCENARIO_SHORT[f.winner]} is more confident: its judgment ({f.decision}) wins" if f.winner
                  else f"tie at p = {f.probabilities.get('quality', 0.0):.2f}: discard (the released code's rule)")
        out |= {"headline": f"The branches disagree ({split}): probability comparison asks both branches how likely "
                            "their regenerated answer is right; the more confident branch's judgment wins.",
                "rows": rows, "winner": f.winner, "result": result,
                "calls_list": [(_branch_of(by_id[i], trace), by_id[i]) for i in f.call_ids if i in by_id]}
    else:
        out |= {"headline": f"The branches disagree ({split}): safety discards without a call. Safety is in the "
                            "released code only, not in the paper (an ablation)."}
    return out


def override_text(trace: CounterfactualTrace) -> str:
    """Whether the "unknown" rule (§3.7) fired: a kept RAG answer that is a refusal becomes a discard."""
    if trace.override:
        return (f"Fired: the RAG answer is a refusal (“{trace.rag.reject_phrase}”), and keeping “unknown” is "
                "discarding: keep → discard.")
    if trace.fused == "discard":
        return "Not applicable: the decision was already discard."
    if trace.rag is not None and trace.rag.reject:
        return "Did not fire."  # unreachable: a kept refusal always fires; kept for loaded traces
    return "Did not fire: the RAG answer is not a refusal."


def truth_view(result: MethodResult, question: Question) -> dict:
    """The truth overlay: the label (A: the RAG answer is right, U: it is wrong) and the fold, from
    ``backend.scoring.risk_fold``; None when the question has no gold answers."""
    fold = risk_fold(result, question)
    gold = "; ".join(question.gold_answers) or "—"
    if fold is None:
        why = "this question has no gold answers" if not question.gold_answers else "the run failed"
        return {"fold": None, "label": None, "gold": gold, "text": f"No label or fold: {why}."}
    label = "answerable (A): the RAG answer is right" if fold[0] == "A" else "unanswerable (U): the RAG answer is wrong"
    return {"fold": fold, "label": fold[0], "gold": gold, "text": f"{label} · {fold}: {FOLD_MEANING[fold]}",
            "color": FOLD_BADGES[fold]}


# --- many questions -----------------------------------------------------------------------------------------

def point_label(p: RiskPoint) -> str:
    return f"RC-RAG, {STRATEGY_LABELS.get(p.label, p.label)}" if p.method == "counterfactual" else p.label


def _point_color(p: RiskPoint) -> str:
    return STRATEGY_COLORS.get(p.label, STRATEGY_COLORS["reference"]) if p.method == "counterfactual" \
        else STRATEGY_COLORS["reference"]


def fold_matrix(p: RiskPoint) -> pd.DataFrame:
    """The 2×2 answerable × kept matrix of one point (counts)."""
    return pd.DataFrame([[p.folds.get(a + k, 0) for k in COLUMNS] for a in ROWS], index=list(ROWS.values()),
                        columns=list(COLUMNS.values()))


def fold_matrix_colors(p: RiskPoint) -> pd.DataFrame:
    """CSS per cell of ``fold_matrix``: AK and UD (right decisions) green, UK (risky) red and bold, AD grey."""
    frame = fold_matrix(p)
    return pd.DataFrame([[f"background-color: {FOLD_CELL_COLORS[a + k]}40" + ("; font-weight: bold" if a + k == "UK"
                          else "") for k in COLUMNS] for a in ROWS], index=frame.index, columns=frame.columns)


def fold_matrix_styled(p: RiskPoint):
    colors = fold_matrix_colors(p)
    return fold_matrix(p).style.apply(lambda _: colors, axis=None)


def metrics_frame(points: Sequence[RiskPoint]) -> pd.DataFrame:
    """One row per point: folds, the paper's four metrics, the code's two (marked), as text ("n/a" for None)."""
    rows = []
    for p in points:
        row = {"point": point_label(p), **{f: p.folds.get(f, 0) for f in FOLDS},
               **{METRIC_COLUMNS[m]: _pct(p.metrics.get(m)) for m in RISK_METRICS + CODE_ONLY_METRICS},
               "unlabelled": p.unlabelled, "errors": p.errors, "calls": p.calls}
        rows.append(row)
    return pd.DataFrame(rows)


RISK_COVERAGE_TITLE = "Risk vs coverage: one point per configuration"


def risk_coverage_figure(points: Sequence[RiskPoint]) -> go.Figure:
    """Risk (↓) against coverage (↑), one labelled marker per fusion strategy and one for keeping every answer (the
    reference, coverage 100%). A point whose risk is n/a (nothing kept) cannot be placed; the title says so."""
    placed = [p for p in points if p.metrics.get("risk") is not None and p.metrics.get("coverage") is not None]
    left_out = [point_label(p) for p in points if p not in placed]
    if not placed:
        return no_data(RISK_COVERAGE_TITLE, "no configuration kept a labelled answer, so risk is n/a everywhere")
    fig = go.Figure()
    for p in placed:
        ref = p.method != "counterfactual"
        fig.add_scatter(x=[p.metrics["coverage"]], y=[p.metrics["risk"]], mode="markers+text",
                        name=html.escape(point_label(p)), text=[html.escape(point_label(p))],
                        textposition="top center" if not ref else "top left",
                        marker=dict(size=14, color=_point_color(p), symbol="diamond" if ref else "circle",
                                    line=dict(width=1, color="#424242")),
                        hovertemplate=(f"{html.escape(point_label(p))}<br>coverage %{{x:.2f}}%<br>"
                                       "risk %{y:.2f}%<extra></extra>"))
    top = max(p.metrics["risk"] for p in placed)
    title = RISK_COVERAGE_TITLE + (f" (not placed, risk n/a: {', '.join(left_out)})" if left_out else "")
    fig.update_layout(title=html.escape(title), height=460, legend_title="configuration",
                      margin=dict(b=AXIS_TITLE_PX + 30, l=AXIS_TITLE_PX + 30, r=20))
    fig.update_xaxes(title="coverage ↑ (% of questions whose answer is kept)", range=[-3, 108], automargin=True)
    fig.update_yaxes(title="risk ↓ (% of kept answers that are wrong)", range=[-2, max(10.0, 1.25 * top)],
                     automargin=True)
    return legend_above(fig)


def _cf_points(points: Sequence[RiskPoint]) -> list[RiskPoint]:
    return [p for p in points if p.method == "counterfactual"]


def paths_frame(points: Sequence[RiskPoint]) -> pd.DataFrame:
    """Decision paths (both keep / both discard / disagree → keep / disagree → discard / override) per strategy,
    counted over the labelled questions."""
    cf = _cf_points(points)
    rows = [{"decision path": path, **{point_label(p): p.paths.get(path, 0) for p in cf}} for path in PATHS]
    return pd.DataFrame(rows, columns=["decision path", *(point_label(p) for p in cf)])


PATHS_TITLE = "Decision paths per fusion strategy"


def paths_figure(points: Sequence[RiskPoint]) -> go.Figure:
    cf = _cf_points(points)
    if not cf or not any(p.paths for p in cf):
        return no_data(PATHS_TITLE, "no labelled RC-RAG run to count")
    fig = go.Figure()
    for p in cf:
        fig.add_bar(name=html.escape(STRATEGY_SHORT.get(p.label, p.label)), x=list(PATHS),
                    y=[p.paths.get(x, 0) for x in PATHS],
                    marker_color=_point_color(p), text=[p.paths.get(x, 0) for x in PATHS], textposition="outside")
    top = max(max(p.paths.values(), default=0) for p in cf)
    fig.update_layout(barmode="group", title=PATHS_TITLE, height=420, legend_title="fusion strategy",
                      margin=dict(b=AXIS_TITLE_PX + 30, l=AXIS_TITLE_PX + 30, r=10))
    fig.update_xaxes(title="decision path", **every_category(list(PATHS)))
    fig.update_yaxes(title="questions", automargin=True, range=[0, 1.2 * max(top, 1)], **count_axis(top))
    return legend_above(fig)


def change_rates_frame(points: Sequence[RiskPoint]) -> pd.DataFrame:
    """Per branch (and strategy, when they differ), the % of answerable and unanswerable questions whose answer it
    changed. The branches do not depend on the fusion strategy, so identical rows are shown once."""
    cf = _cf_points(points)
    distinct = {repr(sorted((k, sorted(v.items())) for k, v in p.change_rates.items())) for p in cf}
    shown = cf[:1] if len(distinct) <= 1 else cf
    rows = [{"branch": SCENARIO_SHORT.get(s, s) + ("" if len(shown) == 1 else f" ({point_label(p)})"),
             "changed: A (%)": _pct(rates.get("A")), "changed: U (%)": _pct(rates.get("U"))}
            for p in shown for s, rates in p.change_rates.items()]
    return pd.DataFrame(rows, columns=["branch", "changed: A (%)", "changed: U (%)"])


CHANGE_TITLE = "How often each counterfactual changed the RAG answer, by label"


def change_rates_figure(points: Sequence[RiskPoint]) -> go.Figure:
    frame = change_rates_frame(points)
    if frame.empty:
        return no_data(CHANGE_TITLE, "no labelled RC-RAG run")
    fig = go.Figure()
    branches = [html.escape(b) for b in frame["branch"]]
    for column, label, color in (("changed: A (%)", "answerable (A)", KIND_COLORS["correct"]),
                                 ("changed: U (%)", "unanswerable (U)", KIND_COLORS["misinfo"])):
        values = [None if v == NA else float(v) for v in frame[column]]
        fig.add_bar(name=label, x=branches, y=[v or 0.0 for v in values], marker_color=color,
                    text=[NA if v is None else f"{v:.1f}%" for v in values], textposition="outside")
    fig.update_layout(barmode="group", title=CHANGE_TITLE, height=400, legend_title="label",
                      margin=dict(b=AXIS_TITLE_PX + 30, l=AXIS_TITLE_PX + 30, r=10))
    fig.update_xaxes(title="counterfactual branch", **every_category(branches))
    fig.update_yaxes(title="answers changed (% of the label's questions)", range=[0, 115], automargin=True)
    return legend_above(fig)


def sweep_caption(sweep: RiskSweep) -> str:
    """``100 questions of ramdocs_dev · 4 runs per question · 1,240 model calls (1,240 from the cache)``."""
    calls = [c for by_q in sweep.results.values() for r in by_q.values() for c in r.calls]
    cached = sum(c.cache_hit for c in calls)
    runs = plural(len(sweep.results), "configuration")
    return (f"{plural(sweep.questions, 'question')} of {sweep.dataset} · {runs} per question "
            f"({', '.join(sweep.results)}) · {plural(len(calls), 'model call')} ({cached:,} from the cache)")


def questions_frame(sweep: RiskSweep, questions: Sequence[Question]) -> pd.DataFrame:
    """One row per question: the RAG answer, its label, and per strategy the decision and fold (UK is risky)."""
    strategies = [label for label in sweep.results if label != REFERENCE]
    reference = sweep.results.get(REFERENCE, {})
    rows = []
    for q in questions:
        first = next((sweep.results[s][q.id] for s in strategies if q.id in sweep.results[s]), None)
        trace = first.trace if first is not None and first.error is None else None
        row = {"question": q.id, "RAG answer": (trace.rag.answer or "(empty)") if trace and trace.rag else "—"}
        fold = risk_fold(first, q, reference.get(q.id)) if first is not None else None
        row["label"] = fold[0] if fold else "—"
        for s in strategies:
            r = sweep.results[s].get(q.id)
            f = risk_fold(r, q, reference.get(q.id)) if r is not None else None
            row[STRATEGY_LABELS.get(s, s)] = ("error" if r is not None and r.error
                                              else f"{DECISION_WORDS[r.trace.decision]} · {f or '—'}" if r else "—")
        rows.append(row)
    return pd.DataFrame(rows)


# --- panels (each given the Streamlit module or a container as ``st``; what they place goes into containers they
# create from it, never through ``with``: a ``with`` block redirects only the module's calls) ----------------------

def _messages(parent, label: str, call: LLMCall | None) -> None:
    """The exact messages of one call and its reply, on demand (collapsed)."""
    if call is None:
        parent.caption(f"{label}: no call record")
        return
    render_call(parent.expander(f"{label}: the {plural(len(call.messages), 'message')} sent and the reply"), call)


def render_final(st, result: MethodResult, question: Question, show_truth: bool) -> None:
    """The decision (KEEP with the answer / ABSTAIN "I don't know"), the reason, the calls, the truth overlay."""
    v = final_view(result)
    t = truth_view(result, question) if show_truth else None
    box = st.container(border=True)
    row = box.container(horizontal=True, vertical_alignment="center")
    row.badge(v["word"], color=DECISION_BADGES[v["decision"]])
    row.text(v["answer"])  # model output: plain text
    if t and t["fold"]:
        row.badge(f"{t['label']} · {t['fold']}", color=t["color"])
    box.text(v["reason"])
    box.caption(v["calls"])
    for note in v["notes"]:
        box.text(f"Note: {note}")
    if t:
        box.caption("Ground truth (the method never sees it)")
        box.text(f"gold answers: {t['gold']}\n{t['text']}")


def render_passages(st, trace: CounterfactualTrace, question: Question, show_truth: bool, page: str) -> None:
    """The passages with their ids, marked where the RAG answer cited them and where CF-quality re-selected them."""
    st.subheader("1 · Passages")
    st.text(reselection_text(trace))
    st.dataframe(passages_styled(trace, question, show_truth), hide_index=True)
    texts = st.expander(f"Passage texts ({len(trace.passages)}), as the prompt gave them")
    for row in passage_rows(trace, question, show_truth):
        box = texts.container(border=True)
        head = box.container(horizontal=True, vertical_alignment="center")
        head.markdown(f"**{row['passage']}**")  # our label
        head.caption(md(row["document"]))
        if row["rag"]:
            head.badge("cited by the RAG answer", color=CITE_BADGES["rag"])
        if row["quality"]:
            head.badge("re-selected by CF-quality", color=CITE_BADGES["quality"])
        if show_truth:
            head.badge(KIND_LABELS[row["kind"]], color=BADGE_COLORS[row["kind"]])
        text = row["text"]
        if len(text) > PREVIEW_CHARS and not box.toggle(f"show all {len(text):,} characters",
                                                        key=f"{page}.passage.{row['passage']}.full"):
            text = text[:PREVIEW_CHARS] + " …"
        box.text(text)


def render_rag(st, trace: CounterfactualTrace, calls: Sequence[LLMCall]) -> None:
    """The RAG answer: raw reply, parsed answer, evidence, the refusal flag and the phrase that set it."""
    st.subheader("2 · RAG answer")
    v = rag_view(trace)
    box = st.container(border=True)
    box.container(horizontal=True).badge(f"refusal: “{trace.rag.reject_phrase}”" if v["reject"] else "not a refusal",
                                         color="orange" if v["reject"] else "gray")
    box.text(f"answer: {v['answer']}\nevidence: {v['evidence']}\nrefusal: {v['refusal']}")
    box.caption("raw reply")
    box.code(v["raw"] or "(empty)", language=None, wrap_lines=True)
    _messages(box, "RAG call", _calls_by_id(calls).get(v["call_id"] or ""))


def render_branch(st, branch: CFBranch, calls: Sequence[LLMCall]) -> None:
    """One counterfactual branch: per round the parsed reply, the match evidence against the RAG answer, changed
    yes/no and keep/discard; the messages sent, on demand."""
    by_id = _calls_by_id(calls)
    box = st.container(border=True)
    box.markdown(f"**{SCENARIO_TITLES[branch.scenario]}**")
    badges = box.container(horizontal=True)
    badges.badge(f"changed: {'yes' if changed(branch) else 'no'}", color="orange" if changed(branch) else "blue")
    badges.badge(branch.decision, color=DECISION_BADGES[branch.decision])
    rows = round_rows(branch)
    if len(rows) > 1:
        box.dataframe(rounds_frame(branch), hide_index=True)
    for r in rows:
        lines = [f"answer: {r['answer']}", f"evidence: {r['evidence']}"]
        if r["refusal"]:
            lines.append(f"refusal: “{r['refusal']}”")
        lines += [f"match: {r['match']}", f"round {r['round']}: {'changed' if r['changed'] else 'unchanged'} → "
                                          f"{r['decision']}"]
        box.text("\n".join(lines))
        _messages(box, f"Round {r['round']} call", by_id.get(r["call_id"] or ""))


def render_fusion(st, trace: CounterfactualTrace, calls: Sequence[LLMCall]) -> None:
    st.subheader("4 · Fusion")
    v = fusion_view(trace, calls)
    box = st.container(border=True)
    badges = box.container(horizontal=True)
    agree = v["kind"] == "agree"
    badges.badge("agree" if agree else "disagree", color="blue" if agree else "orange")
    badges.badge(f"strategy: {STRATEGY_LABELS[trace.fusion_strategy]}", color="gray")
    badges.badge(f"→ {v['decision']}", color=DECISION_BADGES[v["decision"]])
    box.text(v["headline"])
    if v["kind"] == "direct":
        box.caption(f"the prompt, in the {SCENARIO_SHORT[v['branch']]} branch's conversation")
        box.code(v["prompt"] or "(no call record)", language=None, wrap_lines=True)
        box.caption("raw reply")
        box.code(v["raw"] or "(empty)", language=None, wrap_lines=True)
        box.text(f"parsed choice: {v['choice']}")
        _messages(box, "Fusion call", v["call"])
    elif v["kind"] == "probability":
        box.dataframe(pd.DataFrame(v["rows"]), hide_index=True)
        box.text(v["result"])
        for scenario, call in v["calls_list"]:
            _messages(box, f"Probability call in the {SCENARIO_SHORT.get(scenario, 'other')} branch", call)
    for note in v.get("notes", []):
        box.text(f"parse note: {note}")


def render_question(st, result: MethodResult, question: Question, show_truth: bool, page: str) -> None:
    """One question's RC-RAG run: the decision first, then the paper's order: passages, RAG answer, the two
    branches, fusion, the override."""
    trace = result.trace
    if result.error or not isinstance(trace, CounterfactualTrace) or trace.rag is None:
        render_failure(st, "Counterfactual prompting failed on this question:", result.error, missing="no trace")
        return
    st.text(config_line(trace, result.calls))
    render_final(st, result, question, show_truth)
    render_passages(st, trace, question, show_truth, page)
    render_rag(st, trace, result.calls)
    st.subheader("3 · Counterfactual branches")
    st.caption("Each branch continues the RAG conversation on its own (the assistant turn holds the parsed answer "
               "only) and is judged against the RAG answer: same → keep, changed → discard. The tests: exact "
               "(normalised), the RAG answer inside the reply, token F1 > θ, ROUGE-L recall > θ.")
    for column, branch in zip(st.columns(len(trace.branches) or 1), trace.branches):
        render_branch(column, branch, result.calls)
    render_fusion(st, trace, result.calls)
    st.subheader("5 · Override")
    st.text(override_text(trace))


def render_dataset(st, sweep: RiskSweep, questions: Sequence[Question], page: str) -> None:
    """A sweep: the fold matrix per point, the metrics, risk vs coverage, decision paths, change rates."""
    st.caption(md(sweep_caption(sweep)))  # names the dataset: data
    st.subheader("Answerable × kept")
    st.caption("A: the RAG answer is right (matches a gold answer); K: it was kept. AK and UD are right decisions, "
               "AD withholds a right answer, UK (red) gives a wrong one: the only risky fold.")
    for column, p in zip(st.columns(len(sweep.points)), sweep.points):
        column.markdown(f"**{point_label(p)}**")  # our label
        column.dataframe(fold_matrix_styled(p))
    st.subheader("Metrics (percent)")
    st.caption("risk = UK/(AK+UK) · carefulness = UD/(UK+UD) · alignment = (AK+UD)/N · coverage = (AK+UK)/N; "
               f"overcaution = AD/(AD+UD) and recall = AK/(AK+AD) are {CODE_ONLY}. n/a: the denominator is 0.")
    st.dataframe(metrics_frame(sweep.points), hide_index=True)
    st.plotly_chart(risk_coverage_figure(sweep.points), key=f"{page}.risk_coverage")
    st.caption("Each configuration is one point (the method has no threshold to sweep). Keeping every answer is the "
               "reference: coverage 100%, risk = the share of wrong RAG answers.")
    st.plotly_chart(paths_figure(sweep.points), key=f"{page}.paths")
    st.expander("Decision paths as a table").dataframe(paths_frame(sweep.points), hide_index=True)
    cols = st.columns([3, 2], vertical_alignment="center")
    cols[0].plotly_chart(change_rates_figure(sweep.points), key=f"{page}.change_rates")
    cols[1].dataframe(change_rates_frame(sweep.points), hide_index=True)
    cols[1].caption("A branch changes the RAG answer → it says discard. In the paper CF-quality changes answers more "
                    "often than CF-usage (Table 5); a useful branch changes wrong (U) answers more than right (A) "
                    "ones.")
    with st.expander(f"Per question ({len(questions)}): the decision and fold under each strategy"):
        st.dataframe(questions_frame(sweep, questions), hide_index=True)
