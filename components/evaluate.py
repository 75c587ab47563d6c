"""Evaluate page shaping and charts: pure functions of a batch evaluation (``backend.outputs.Evaluation``: its
typed ``Summary`` and results, read from disk by ``backend.outputs.open_evaluation``) plus small ``render_*`` panels
that take Streamlit as an argument.

Every metric comes from ``backend.evaluate.summarize`` and every per-question label from ``backend.scoring.verdict``;
nothing here decides what is correct. Each method is shown with its own paper's metric under the paper's name
(``MethodSummary.own_metric``, ``backend.scoring.PAPER_METRICS``: "EM (SQuAD)" for RA-RAG, "accuracy (RAMDocs exact
match)" for MADAM-RAG, "risk / coverage" for RC-RAG...), read both ways when the evaluation ran the other reading
(``MethodSummary.other_reading``), beside the project's lenient match ("answer match (lenient)": none of the papers'
rules, never called accuracy here).
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend import uploads
from backend.exports import frame_csv
from backend.llm.pricing import is_free, usd
from backend.outputs import Evaluation
from backend.deployment import shown_path
from backend.agreement import agree, disagree
from backend.report.layout import (AXIS_TITLE_PX, count_axis, every_category, legend_above, no_data,
                                   size_heatmap)
from backend.report.palette import VERDICT_COLORS, method_color
from backend.report.text import plural
from backend.schema import Dataset, MethodResult
from backend.methods.reading import READINGS
from components.reading import read_phrase
from backend.schema.summary import MethodSummary, RiskSummary, Scores, Summary
from backend.scoring import PAPER_METRICS, RISK_METRIC_NAME, verdict

Pair = tuple[str, str]

#: The verdicts that are ``backend.scoring.strict_em`` (every gold answer, no wrong one, by the lenient match): the
#: "right" of the filters.
RIGHT = ("correct", "correct + extras")
NOT_RUN = "not run"
NA = "n/a"          # a metric with nothing to compute it from (no scored row)
NOT_APPLICABLE = "—"  # a metric that does not apply (risk for a method that never abstains)

FILTERS = {"all": "all questions", "disagree": "methods disagree (answer sets differ)",
           "all_wrong": "all wrong (no method correct)", "one_right": "one method right (exactly one correct)"}
SLICE_LABELS = {"mix": "evidence mix (a question can be in several)", "scenario": "scenario",
                "documents": "number of documents"}


# --- numbers -------------------------------------------------------------------------------------------------

def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion ``k / n`` (95 % for z = 1.96), as fractions; None when n = 0."""
    if n <= 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _pct(value: float | None, digits: int = 1) -> str:
    return NA if value is None else f"{value:.{digits}f}"


#: The project's lenient match (``backend.scoring.accuracy``) and its every-gold form (``backend.scoring.strict_em``):
#: none of the papers' rules, so never called "accuracy" or "EM" here.
LENIENT = "answer match (lenient)"
LENIENT_ALL_GOLD = "all gold, no wrong (lenient)"
OWN_NAME = "paper's metric"
DEPENDENT = "reading-dependent"


def own_metric_name(key: str | None) -> str:
    """The name a method's own paper gives its metric (``PAPER_METRICS[key].name``; RC-RAG's "risk / coverage"), "—"
    for a method without one."""
    if key == "risk":
        return RISK_METRIC_NAME
    return PAPER_METRICS[key].name if key in PAPER_METRICS else NOT_APPLICABLE


def own_metric_value(key: str | None, scores: Scores, risk: RiskSummary | None) -> str:
    """A method's own paper's metric in percent as the table shows it: RC-RAG's as "risk / coverage" ("12.5 / 80.0";
    n/a without a risk summary), "—" for a method without one."""
    if key == "risk":
        return f"{_pct(risk.risk)} / {_pct(risk.coverage)}" if risk else NA
    return _pct(scores.paper(key)) if key in PAPER_METRICS else NOT_APPLICABLE


def run_reading(m: MethodSummary) -> str:
    """The reading a method's rows were read with (a summary written before readings were kept: tolerant, what its
    readers did). A value from a file that is no reading (``backend.methods.reading.READINGS``, "mixed") is shown as
    "unknown": it reaches captions, and file data is never Markdown."""
    reading = m.reading or "tolerant"
    return reading if reading in (*READINGS, "mixed") else "unknown"


def by_reading(m: MethodSummary) -> dict[str, tuple[str, str]]:
    """A method's (own paper's metric, lenient match) per reading: its run's and, when the evaluation ran it, the
    other's (``MethodSummary.other_reading``)."""
    values = {run_reading(m): (own_metric_value(m.own_metric, m, m.risk), _pct(m.lenient_match))}
    if (o := m.other_reading) is not None:
        values[o.reading] = (own_metric_value(m.own_metric, o.scores, o.risk), _pct(o.scores.lenient_match))
    return values


def dependent_cell(m: MethodSummary) -> str:
    """The decisions the other reading of the same replies would have read differently, of those read: "3/21
    (14.3 %)", "0/21"; "—" when the method read no decision (or the file predates readings)."""
    if not m.decisions_read:
        return NOT_APPLICABLE
    share = f" ({_pct(m.reading_dependent_pct)} %)" if m.reading_dependent else ""
    return f"{m.reading_dependent}/{m.decisions_read}{share}"


def readings_shown(summary: Summary) -> list[str]:
    """The readings some method of ``summary`` has metrics for, tolerant first."""
    found = {run_reading(m) for m in summary.methods.values()} | {
        m.other_reading.reading for m in summary.methods.values() if m.other_reading is not None}
    return [r for r in READINGS if r in found] + sorted(found - set(READINGS))


def reading_of(summary: Summary) -> str:
    """The reading that decided the evaluation's answers ("mixed" when its methods differ)."""
    found = {run_reading(m) for m in summary.methods.values()}
    return found.pop() if len(found) == 1 else ("mixed" if found else "tolerant")


def own_column(reading: str) -> str:
    return f"{OWN_NAME} % · {reading}"


def lenient_column(reading: str) -> str:
    return f"{LENIENT} % · {reading}"


#: The summary's first table (what each method answered, by its own paper's metric and by ours, per reading, and
#: how much of it rests on the reading); the second holds the rest (counts, other metrics, risk, cost, format).
ANSWER_COLUMNS = ("method", "n", OWN_NAME)


def answer_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of ``summary_frame`` shown in the answers table, in order."""
    return [c for c in frame.columns if c in ANSWER_COLUMNS or c.startswith((f"{OWN_NAME} %", f"{LENIENT} %"))
            or c == DEPENDENT]


def detail_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of ``summary_frame`` in the second table: the method, then everything ``answer_columns`` leaves."""
    shown = set(answer_columns(frame))
    return ["method"] + [c for c in frame.columns if c not in shown]


def answers_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The answers table as ``st.table`` shows it (a static table whose cells wrap, so it reads at 1024 px): the
    answer columns of ``summary_frame``, every cell escaped (``components.safe.md``: ``st.table`` renders Markdown,
    and a method's name comes from the results file)."""
    from components.safe import md

    part = frame[answer_columns(frame)]
    return pd.DataFrame([[md(str(v)) for v in row] for row in part.itertuples(index=False)],
                        columns=[md(c) for c in part.columns])


def summary_frame(summary: Summary) -> pd.DataFrame:
    """One row per method: counts; its own paper's metric (its name, then percent per reading: the run's and, when
    run, the other's) beside the project's lenient match per reading; the share of decisions that depend on the
    reading; refusal, risk / coverage when the method abstains; the other answer metrics and mean cost per
    question. Shown as text: ``n/a`` where nothing could be scored, ``—`` where a metric does not apply. ``scored``
    and ``missing`` only when they say something (a row not scored, a pair not run)."""
    readings = readings_shown(summary)
    rows = []
    for name, m in summary.methods.items():
        risk = m.risk
        values = by_reading(m)
        rows.append({"method": name, "n": m.n, "scored": m.scored, "errors": m.errors, "missing": m.missing,
                     OWN_NAME: own_metric_name(m.own_metric),
                     **{own_column(r): values[r][0] if r in values else NOT_RUN for r in readings},
                     **{lenient_column(r): values[r][1] if r in values else NOT_RUN for r in readings},
                     DEPENDENT: dependent_cell(m),
                     f"{LENIENT_ALL_GOLD} %": _pct(m.lenient_all_gold), "EM (SQuAD) %": _pct(m.squad_em),
                     "P %": _pct(m.precision), "R %": _pct(m.recall), "F1 %": _pct(m.f1),
                     "refusal %": _pct(m.refusal_rate),
                     "risk % ↓": _pct(risk.risk) if risk else NOT_APPLICABLE,
                     "coverage %": _pct(risk.coverage) if risk else NOT_APPLICABLE,
                     "calls / q": _pct(m.mean_calls, 2), "tokens / q": _pct(m.mean_tokens, 0),
                     "wall s / q": _pct(m.mean_wall_s, 2), "format failures %": _pct(m.format_failures),
                     "cost": cost_of(m, summary.model)})
    frame = pd.DataFrame(rows)
    if not frame.empty:  # columns that say nothing here: every row scored, nothing missing
        if (frame["scored"] == frame["n"]).all():
            frame = frame.drop(columns="scored")
        if (frame["missing"] == 0).all():
            frame = frame.drop(columns="missing")
    return frame


def cost_of(m: MethodSummary, model: str | None) -> str:
    """A method's cost over the run's rows (``MethodSummary.cost_usd``; cache hits cost $0): "$0" for the offline
    model, "price unknown" when no call's cost is known, "—" for a summary written before costs were recorded."""
    if model and is_free(model):
        return "$0"
    if m.cost_usd is None:
        return "price unknown" if m.cost_unknown_calls else NA
    return usd(m.cost_usd) + (f" + {m.cost_unknown_calls} unpriced calls" if m.cost_unknown_calls else "")


def format_warning(summary: Summary) -> str | None:
    """One line naming the methods with replies their readers could not read (``MethodSummary.format_failures``),
    or None when every reply was read."""
    hit = [(name, m) for name, m in summary.methods.items() if m.unreadable_calls]
    if not hit:
        return None
    parts = [f"{name} {plural(m.unreadable_calls, 'reply', 'replies')} ({_pct(m.format_failures)} %)"
             for name, m in hit]
    return ("Replies not in the expected format: " + ", ".join(parts) + ". For those the method used its paper's "
            "default; a question's method page names the default and shows the reply.")


def interval_frame(summary: Summary) -> pd.DataFrame:
    """Per method the lenient match and its own paper's metric (``own_metric``, under the paper's name; none for
    RC-RAG, whose own metrics are risk and coverage) with their Wilson 95 % intervals (percent), over the scored
    rows. ``group``: "lenient" or "paper" (the chart's two bars per method)."""
    rows = []
    for name, m in summary.methods.items():
        n = m.scored
        measured = [(m.lenient_match, LENIENT, "lenient")]
        if m.own_metric in PAPER_METRICS:
            measured.append((m.paper(m.own_metric), PAPER_METRICS[m.own_metric].name, "paper"))
        for value, label, group in measured:
            k = round(value * n / 100) if value is not None and n else 0
            ci = wilson(k, n) if value is not None else None
            rows.append({"method": name, "metric": label, "group": group, "value": value, "k": k, "n": n,
                         "low": None if ci is None else round(100 * ci[0], 2),
                         "high": None if ci is None else round(100 * ci[1], 2)})
    return pd.DataFrame(rows, columns=["method", "metric", "group", "value", "k", "n", "low", "high"])


ACCURACY_TITLE = "Answer match (lenient) and own paper's metric (95% CI)"
#: The lenient match in blue, each paper's metric in its own colour (the legend names the paper's metric).
METRIC_COLORS = {LENIENT: "#1565c0", "EM (SQuAD)": "#2e7d32", "accuracy (gold in response)": "#ef6c00",
                 "accuracy (RAMDocs exact match)": "#6a1b9a", "F1 (SQuAD)": "#00838f"}


def _percent_axis(fig: go.Figure, title: str = "percent of scored questions") -> None:
    fig.update_yaxes(title=title, range=[0, 105], tickvals=[0, 20, 40, 60, 80, 100], automargin=True)


def answer_match_figure(summary: Summary) -> go.Figure:
    frame = interval_frame(summary)
    if frame.empty or frame["value"].isna().all():
        return no_data(ACCURACY_TITLE, "no method has a scored question")
    fig = go.Figure()
    methods = summary.method_names
    for label, part in frame.groupby("metric", sort=False):
        value = part["value"].fillna(0)
        # two bars per method: the lenient match, and its paper's metric (whichever it is: one slot for them all)
        fig.add_bar(name=html.escape(label), x=[html.escape(m) for m in part["method"]], y=value,
                    offsetgroup=part["group"].iloc[0], marker_color=METRIC_COLORS.get(label, "#616161"),
                    error_y=dict(type="data", symmetric=False, array=(part["high"] - value).fillna(0),
                                 arrayminus=(value - part["low"]).fillna(0), color="#424242", thickness=1.2),
                    customdata=part[["k", "n", "low", "high"]].values,
                    hovertemplate="%{x}: %{y:.1f}% (%{customdata[0]}/%{customdata[1]})<br>95% CI "
                                  "%{customdata[2]:.1f}–%{customdata[3]:.1f}%<extra>" + html.escape(label)
                                  + "</extra>")
    fig.update_layout(barmode="group", title=ACCURACY_TITLE, height=400, legend_title="metric",
                      margin=dict(b=AXIS_TITLE_PX + 20, l=AXIS_TITLE_PX + 30, r=10))
    fig.update_xaxes(title="method", **every_category([html.escape(m) for m in methods]))
    _percent_axis(fig)
    return legend_above(fig)


def slice_frame(summary: Summary, family: str) -> pd.DataFrame:
    """The lenient match (and its every-gold form) per slice of one family (``summary.methods[M].slices[family]``)
    and method, with each n."""
    rows = []
    for name, m in summary.methods.items():
        for slice_name, s in m.slices.get(family, {}).items():
            rows.append({"slice": slice_name, "method": name, "lenient_match": s.lenient_match,
                         "lenient_all_gold": s.lenient_all_gold, "n": s.scored})
    return pd.DataFrame(rows, columns=["slice", "method", "lenient_match", "lenient_all_gold", "n"])


def slice_families(summary: Summary) -> list[str]:
    found = summary.slice_families()
    return [f for f in SLICE_LABELS if f in found] + sorted(found - set(SLICE_LABELS))


def _slice_key(name: str) -> tuple:
    return (0, int(name), "") if name.isdigit() else (1, 0, name)


def slice_figure(summary: Summary, family: str) -> go.Figure:
    title = f"Answer match (lenient) per {SLICE_LABELS.get(family, family).split(' (')[0]}"
    frame = slice_frame(summary, family)
    if frame.empty:
        return no_data(title, "no question falls in this family of slices")
    names = sorted(frame["slice"].unique(), key=_slice_key)
    sizes = frame.groupby("slice")["n"].max()
    labels = [html.escape(f"{s} (n={sizes[s]})") for s in names]  # a 0 % bar is invisible: the n says it is there
    fig = go.Figure()
    for method, part in frame.groupby("method", sort=False):
        part = part.set_index("slice").reindex(names)
        fig.add_bar(name=html.escape(method), x=labels, y=part["lenient_match"],
                    marker_color=method_color(method), customdata=part[["n"]].fillna(0).values,
                    hovertemplate="%{x}: %{y:.1f}% of %{customdata[0]} questions<extra>" + html.escape(method)
                                  + "</extra>")
    fig.update_layout(barmode="group", title=title, height=380, legend_title="method",
                      margin=dict(b=AXIS_TITLE_PX + 20, l=AXIS_TITLE_PX + 30, r=10))
    fig.update_xaxes(title=SLICE_LABELS.get(family, family).split(" (")[0], **every_category(labels))
    _percent_axis(fig, f"{LENIENT} (%)")
    return legend_above(fig)


COST_TITLE = "Cost per question, per method (means)"


def cost_figure(summary: Summary) -> go.Figure:
    methods = [m for m, e in summary.methods.items() if e.mean_calls is not None]
    if not methods:
        return no_data(COST_TITLE, "no method has a result yet")
    entries = [summary.methods[m] for m in methods]
    labels = [html.escape(m) for m in methods]
    colors = [method_color(m) for m in methods]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("model calls", "tokens (prompt + completion)"),
                        horizontal_spacing=0.12)
    fig.add_bar(x=labels, y=[e.mean_calls for e in entries], marker_color=colors, showlegend=False,
                hovertemplate="%{x}: %{y:.2f} calls per question<extra></extra>", row=1, col=1)
    tokens = [e.mean_tokens or 0 for e in entries]
    fig.add_bar(x=labels, y=tokens, marker_color=colors, showlegend=False,
                hovertemplate="%{x}: %{y:,.0f} tokens per question<extra></extra>", row=1, col=2)
    fig.update_layout(title=COST_TITLE, height=400, margin=dict(t=90, b=AXIS_TITLE_PX + 20, l=60, r=10))
    fig.update_xaxes(**every_category(labels))
    fig.update_yaxes(title="calls per question", row=1, col=1, **count_axis(max(e.mean_calls for e in entries)))
    fig.update_yaxes(title="tokens per question", row=1, col=2, rangemode="tozero")
    return fig


# --- agreement between methods over the questions --------------------------------------------------------------

def agreement_counts(results: dict[Pair, MethodResult], methods: list[str], question_ids: list[str]
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """For each pair of methods: the questions where both have a result without error (``compared``) and the
    share of them where they agree (``backend.agreement.agree``: the same answer set, abstaining counts as an
    answer); NaN where nothing could be compared."""
    share = pd.DataFrame(math.nan, index=methods, columns=methods, dtype=float)
    compared = pd.DataFrame(0, index=methods, columns=methods, dtype=int)
    for a in methods:
        for b in methods:
            votes = [agree(results[(q, a)], results[(q, b)]) for q in question_ids
                     if (q, a) in results and (q, b) in results]
            votes = [float(v) for v in votes if v is not None]
            compared.loc[a, b] = len(votes)
            if votes:
                share.loc[a, b] = sum(votes) / len(votes)
    return share, compared


def agreement_matrix(results: dict[Pair, MethodResult], methods: list[str], question_ids: list[str]) -> pd.DataFrame:
    return agreement_counts(results, methods, question_ids)[0]


AGREEMENT_TITLE = "Agreement between methods (share of questions)"


def agreement_figure(results: dict[Pair, MethodResult], methods: list[str], question_ids: list[str]) -> go.Figure:
    if len(methods) < 2 or not results:
        return no_data(AGREEMENT_TITLE, "needs results of at least two methods")
    share, compared = agreement_counts(results, methods, question_ids)
    text = [[NA if math.isnan(v) else f"{100 * v:.0f}% of {n}" for v, n in zip(row, counts)]
            for row, counts in zip(share.values, compared.values)]
    labels = [html.escape(m) for m in methods]
    fig = go.Figure(go.Heatmap(z=share.values, x=labels, y=labels, zmin=0, zmax=1, text=text, texttemplate="%{text}",
                               colorscale=[[0, "#f4cccc"], [1, "#c8e6c9"]], showscale=False, xgap=2, ygap=2,
                               hovertemplate="%{y} vs %{x}: %{text}<extra></extra>"))
    fig.update_layout(title=AGREEMENT_TITLE, xaxis_title="method", yaxis_title="method")
    return size_heatmap(fig, row_px=40)


# --- the questions -------------------------------------------------------------------------------------------

def inspect_link(dataset_param: str, question_id: str, methods: list[str]) -> str:
    """A relative link to the question on the Inspect page, the app's default page, served at the root (``/inspect``
    is "Page not found"); the sidebar reads ``dataset`` and ``question``, Inspect ``methods``."""
    return "./?" + urlencode({"dataset": dataset_param, "question": question_id, "methods": ",".join(methods)})


def dataset_param(ds: Dataset, bundled: dict[str, Path]) -> str:
    """How a link names the dataset: a bundled one by name, an upload by its hash (``upload:<hash>``), any other as
    ``file:<path>`` (the sidebar's forms)."""
    if ds.name in bundled and Path(ds.path).resolve() == Path(bundled[ds.name]).resolve():
        return ds.name
    if (digest := uploads.digest_of(ds.path)) is not None:
        return uploads.PREFIX + digest
    return "file:" + ds.path


def answers_text(result: MethodResult | None) -> str:
    if result is None:
        return ""
    if result.error:
        return "error: " + result.error.splitlines()[0][:120]
    return "; ".join(result.answers) or "—"


def question_frame(ev: Evaluation, link_dataset: str | None = None) -> pd.DataFrame:
    """One row per question: id, text, per method its verdict (``backend.scoring.verdict``) and answers, how many
    methods are right (verdict correct / correct + extras: every gold answer and no wrong one by the lenient match,
    ``backend.scoring.strict_em``; empty without gold answers), whether the
    methods disagree (``backend.agreement.disagree``: more than one answer set among the methods that ran without
    error; abstaining is an answer of its own) and a link to Inspect."""
    methods = ev.methods
    rows = []
    for q in ev.questions:
        row: dict[str, Any] = {"id": q.id}
        if link_dataset is not None:
            row["inspect"] = inspect_link(link_dataset, q.id, methods)
        row["question"] = q.question
        ran = {m: ev.results.get((q.id, m)) for m in methods}
        verdicts = {m: verdict(r, q) if r is not None else NOT_RUN for m, r in ran.items()}
        row["right"] = sum(v in RIGHT for v in verdicts.values()) if q.gold_answers else None
        row["differ"] = disagree({m: r for m, r in ran.items() if r is not None})
        for m in methods:
            row[m] = verdicts[m]
            row[f"{m} answers"] = answers_text(ran[m])
        rows.append(row)
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["right"] = frame["right"].astype("Int64")
    return frame


#: ``VERDICT_COLORS`` (badge colour names) as text colours for the question table.
_TEXT_COLORS = {"green": "#2e7d32", "blue": "#1565c0", "orange": "#ef6c00", "red": "#c62828", "gray": "#757575"}


def verdict_styled(frame: pd.DataFrame, methods: list[str]):
    """The question table with each verdict in its colour (``backend.report.palette.VERDICT_COLORS``)."""
    def color(v):
        c = _TEXT_COLORS.get(VERDICT_COLORS.get(v, ""), "")
        return f"color: {c}; font-weight: 600" if c else ""
    cols = [m for m in methods if m in frame.columns]
    return frame.style.map(color, subset=cols) if cols and not frame.empty else frame


def filter_questions(frame: pd.DataFrame, how: str) -> pd.DataFrame:
    """``how`` (a key of ``FILTERS``): all, methods disagree (``backend.agreement``), all wrong (no method right, the
    question has gold answers), exactly one method right."""
    if frame.empty or how == "all":
        return frame
    if how == "disagree":
        keep = frame["differ"].astype(bool)
    elif how == "all_wrong":
        keep = frame["right"].eq(0).fillna(False)
    elif how == "one_right":
        keep = frame["right"].eq(1).fillna(False)
    else:
        raise ValueError(f"unknown filter {how!r}; choose from {', '.join(FILTERS)}")
    return frame[keep.astype(bool)]


def verdict_counts(frame: pd.DataFrame) -> dict[str, int]:
    """How many questions each filter keeps (for the filter's labels)."""
    return {how: len(filter_questions(frame, how)) for how in FILTERS}


# --- exports -------------------------------------------------------------------------------------------------

def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The frame as CSV with formula cells made text (``backend.exports``): question text and answers are data."""
    return frame_csv(frame).encode("utf-8")


def jsonl_bytes(ev: Evaluation) -> bytes:
    """The rows of ``results.jsonl`` (one per question × method, the newest row of a pair), question order first."""
    name, model = ev.summary.dataset, ev.summary.model
    seen = [q.id for q in ev.dataset.questions] if ev.dataset is not None else []
    order = {q: i for i, q in enumerate(dict.fromkeys(seen + [q for q, _ in ev.results]))}
    rank = {m: i for i, m in enumerate(ev.methods)}
    pairs = sorted(ev.results, key=lambda p: (order[p[0]], rank.get(p[1], len(rank)), p[1]))
    lines = [json.dumps({"dataset": name, "model": model, "question_id": q, "method": m,
                         "result": ev.results[(q, m)].model_dump(mode="json")}, ensure_ascii=False) for q, m in pairs]
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


# --- panels --------------------------------------------------------------------------------------------------

def render_notes(st, ev: Evaluation) -> None:
    from components.safe import md

    for note in ev.notes:
        st.warning(md(note), icon=":material/warning:")


def summary_caption(summary: Summary) -> str:
    """What the answers table says (Markdown of ours: no data in it)."""
    reading = reading_of(summary)
    both = len(readings_shown(summary)) > 1
    return ("Percent over the scored rows (no error, gold answers known). Paper's metric: the method's own paper's, "
            "by its rule, under its name (README, \"Which number to compare with which paper\"); RC-RAG's is risk / "
            "coverage. Answer match (lenient): the project's match (a predicted answer matches a gold answer, in any "
            "order or form), none of the papers' rules. "
            + (f"Both readings of the same replies: {reading} decided the run, the other was read from the reply "
               "cache. " if both else f"Replies {read_phrase(reading)} (the sidebar's Model → Reading of replies). ")
            + "Reading-dependent: the decisions the other reading would have read differently, of those read. "
              "Risk / coverage for methods that abstain; n/a: nothing to compute it from; —: does not apply.")


def not_replayed_text(summary: Summary) -> str | None:
    """The methods whose rows the other reading could not run from the reply cache (a reply never asked for), or
    None."""
    hit = [(name, m.other_reading) for name, m in summary.methods.items()
           if m.other_reading is not None and m.other_reading.not_replayed]
    if not hit:
        return None
    parts = ", ".join(f"{name} {plural(o.not_replayed, 'row')}" for name, o in hit)
    return (f"Not {read_phrase(hit[0][1].reading)} (a reply that reading needs was never asked for, and the other "
            f"reading asks for none): {parts}; its metrics leave them out.")


def render_summary(st, ev: Evaluation, page: str) -> None:
    from components.safe import md

    s = ev.summary
    st.caption(f"{md(s.dataset)} · model {md(s.model or '?')} · {plural(s.questions, 'question')} · "
               f"{plural(len(ev.methods), 'method')}" + (f" · {md(shown_path(ev.path))}" if ev.path else ""))
    if s.missing:
        st.warning("Not run yet: " + ", ".join(f"{md(m)} {n}" for m, n in s.missing.items()))
    if s.errors:
        st.warning("Errors: " + ", ".join(f"{md(m)} {n}" for m, n in s.errors.items())
                   + " (resume with `--resume --retry-errors` to run them again)")
    if (warning := format_warning(s)) is not None:
        st.warning(md(warning), icon=":material/warning:")
    if s.stopped:
        st.warning(md(s.stopped.capitalize()), icon=":material/payments:")
    frame = summary_frame(s)
    st.table(answers_table(frame), hide_index=True)
    st.caption(summary_caption(s))
    if (line := not_replayed_text(s)) is not None:
        st.caption(md(line))
    st.dataframe(frame[detail_columns(frame)], hide_index=True,
                 column_config={"method": st.column_config.TextColumn("method", pinned=True)})
    if s.cost_usd is not None:
        st.caption(f"Cost of these rows' calls: {usd(s.cost_usd)} (litellm's completion cost; cache hits cost $0).")
    st.caption(f"{md(LENIENT_ALL_GOLD).capitalize()}: every gold answer and no wrong one, by the lenient match. "
               "EM (SQuAD): the normalised answer equals a gold answer. P / R / F1: the predicted answers against "
               "the gold answers. Calls, tokens and wall time are means per question. Format failures: the "
               "percentage of a method's replies its reader could not read (it took its paper's default for them).")
    st.plotly_chart(answer_match_figure(s), key=f"{page}.accuracy")
    st.caption("Two bars per method: the project's lenient match, and the metric its own paper reports (named in the "
               "legend), both over the scored rows, with 95% Wilson intervals. RC-RAG's own metrics, risk and "
               "coverage, are in the table.")
    for family in slice_families(s):
        st.plotly_chart(slice_figure(s, family), key=f"{page}.slice.{family}")
        if "(" in SLICE_LABELS.get(family, ""):  # what the title leaves out, e.g. "a question can be in several"
            st.caption(SLICE_LABELS[family].split(" (", 1)[0].capitalize() + ": "
                       + SLICE_LABELS[family].split(" (", 1)[1].rstrip(")") + ".")
    st.plotly_chart(cost_figure(s), key=f"{page}.cost")
    if ev.dataset is not None:
        cols = st.columns([3, 2])
        cols[0].plotly_chart(agreement_figure(ev.results, ev.methods, [q.id for q in ev.questions]),
                             key=f"{page}.agreement")
        cols[1].caption("Each cell: the share of questions, among those where both methods ran without error, on "
                        "which they agree (the same answer set; abstaining counts as an answer), and how many "
                        "questions that is. A method that abstains often agrees with nothing that answers.")


def render_questions(st, ev: Evaluation, page: str, link_dataset: str | None) -> pd.DataFrame | None:
    """The question table with its filter; returns the whole table (for the CSV export), None without a dataset."""
    if ev.dataset is None:
        return None
    frame = question_frame(ev, link_dataset)
    counts = verdict_counts(frame)
    how = st.radio("show", list(FILTERS), horizontal=True, key=f"{page}.filter",
                   format_func=lambda h: f"{FILTERS[h]} ({counts[h]})")
    shown = filter_questions(frame, how)
    config = {"inspect": st.column_config.LinkColumn("inspect", display_text="open ↗", width="small",
                                                     help="This question on the Inspect page (new tab)"),
              "right": st.column_config.NumberColumn("right", help="methods whose verdict is correct (all gold, no "
                                                                   "wrong, by the lenient match)"),
              "differ": st.column_config.CheckboxColumn("differ", help="the methods give different answer sets "
                                                                       "(abstaining counts as an answer; failed "
                                                                       "runs aside)")}
    st.dataframe(verdict_styled(shown, ev.methods), hide_index=True, column_config=config,
                 height=min(600, 38 + 35 * max(len(shown), 1)))
    st.caption("Verdicts from backend.scoring, by the lenient match: correct (every gold answer, nothing else), "
               "correct + extras (every gold answer and no wrong one, with other answers too), partly correct, wrong, "
               "abstained, error. \"right\" counts the correct ones.")
    return frame


def render_exports(st, ev: Evaluation, frame: pd.DataFrame | None, page: str) -> None:
    stem = f"{ev.summary.dataset}-evaluation"
    cols = st.columns(3)
    if frame is not None:
        cols[0].download_button("Questions (CSV)", csv_bytes(frame), file_name=f"{stem}-questions.csv",
                                mime="text/csv", key=f"{page}.csv", icon=":material/download:")
    cols[1].download_button("Results (JSONL)", jsonl_bytes(ev), file_name=f"{stem}-results.jsonl",
                            mime="application/jsonl", key=f"{page}.jsonl", icon=":material/download:",
                            disabled=not ev.results)
    cols[2].download_button("Summary (JSON)",
                            json.dumps(ev.summary.as_dict(), ensure_ascii=False, indent=2).encode("utf-8"),
                            file_name=f"{stem}-summary.json", mime="application/json", key=f"{page}.summary",
                            icon=":material/download:")
