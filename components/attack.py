"""The Evaluate page's "Attack a dataset" section: pure shaping of an attack folder written by
``backend.whatif.campaign.attack_dataset`` (page or CLI ``attack``) and read by ``backend.outputs.open_attack``
(an ``AttackResult``): tables and plotly figures from its typed summary, the attacked questions where a method
returned the target, the earlier attack folders under the cache (``backend.outputs.find_attacks``), plus small
``render_*`` panels that take Streamlit as an argument.

Every rate comes from the campaign's summary; nothing here decides whether an attack succeeded, except the
drill-down table, which uses the same ``backend.scoring.accuracy`` match against the target as the summary.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from backend.report.layout import AXIS_TITLE_PX, every_category, legend_above, no_data
from backend.report.palette import method_color
from backend.methods import title as method_title
from backend.outputs import AttackError, AttackResult, AttackRow, method_order
from backend.deployment import shown_path
from backend.report.text import plural
from backend.schema.summary import AttackSettings, AttackSummary
from backend.scoring import accuracy
from backend.whatif.attack import PLACEMENTS

INTRO = ("PoisonedRAG-style attack (Zou et al., 2024): each question gets k passages stating a target wrong answer, "
         "placed first among its documents, and every method answers every attacked question. **Attack success**: "
         "the method's answers include the target. Target: the dataset's own, else the question's wrong answer, "
         "else the gold answer with a number changed, else another question's answer; passages: the dataset's "
         "adversarial ones, else its correct passages with the answer swapped for the target, else \"question + "
         "The answer is target\".")
PLACEMENT_LABELS = {"spread": "spread (each passage its own new source)", "one_source": "one source"}
OTHER_FOLDER = "another folder…"
#: ``accuracy`` is the summary's key for ``backend.scoring.accuracy``, the project's lenient match: named so here
METRICS = {"attack_success_rate": "attack success", "accuracy": "answer match under attack (lenient)",
           "abstention": "abstention"}
COLUMNS = {"attack_success_rate": "attack success %", "accuracy": "answer match (lenient) %",
           "abstention": "abstention %"}
FORMAT_FAILURES = "format failures %"
#: The settings an earlier attack must share with the one asked for to be resumed (``attack.json``'s keys; the
#: methods are not among them: a resume with other methods runs the rows those lack).
RESUME_KEYS = ("dataset", "model", "ks", "placement", "source", "questions")


def wanted_settings(dataset: str, model: str, ks: list[int], placement: str, source: str | None,
                    questions: int) -> dict[str, Any]:
    """The ``RESUME_KEYS`` of ``attack.json`` that an attack with these choices writes."""
    return {"dataset": dataset, "model": model, "ks": sorted(set(ks)), "placement": placement,
            "source": source if placement == "one_source" else None, "questions": questions}


def differences(settings: AttackSettings, wanted: dict[str, Any]) -> list[str]:
    """The ``RESUME_KEYS`` whose value differs (empty: the folder can be resumed with these choices)."""
    return [k for k in RESUME_KEYS if getattr(settings, k) != wanted.get(k)]


def resumable(folders: list[tuple[Path, AttackSettings]], wanted: dict[str, Any]) -> Path | None:
    """The newest of ``folders`` (``backend.outputs.find_attacks``, newest first) with the settings ``wanted``."""
    return next((folder for folder, settings in folders
                 if settings.dataset == wanted["dataset"] and not differences(settings, wanted)), None)


def folder_label(folder: Path, settings: AttackSettings) -> str:
    """``"ramdocs_dev-20261125-130000 · k 1, 3, 5 · 20 questions · spread"`` for a picker."""
    ks = ", ".join(str(k) for k in settings.ks)
    place = settings.placement or "?"
    if place == "one_source":
        place += f" ({settings.source or 'attacker'})"
    return f"{folder.name} · k {ks} · {plural(settings.questions, 'question')} · {place}"


def run_count(questions: int, ks: int, methods: int) -> int:
    """Method runs an attack costs: every attacked question (question × k) with every method."""
    return questions * ks * methods


# --- tables --------------------------------------------------------------------------------------------------

def ks_of(summary: AttackSummary) -> list[int]:
    """Every k in the summary, numerically."""
    return summary.ks()


def _entries(summary: AttackSummary):
    """(method, k, cell): methods in the registry's order, k numerically."""
    return summary.cells(method_order(summary.method_names))


def summary_frame(summary: AttackSummary) -> pd.DataFrame:
    """One row per method and k (methods in the registry's order, k numerically): the three rates (percent, None
    where nothing could be scored), n (rows without error), errors, rows not run yet, and the percentage of replies
    the method could not read (``format failures %``; it took its paper's default for them)."""
    rows = [{"method": m, "k": k, **{COLUMNS[r]: getattr(e, r) for r in METRICS}, "n": e.n, "errors": e.errors,
             "missing": e.missing, FORMAT_FAILURES: e.format_failures} for m, k, e in _entries(summary)]
    return pd.DataFrame(rows, columns=["method", "k", *COLUMNS.values(), "n", "errors", "missing", FORMAT_FAILURES])


def clean_documents_frame(summary: AttackSummary, k: int) -> pd.DataFrame:
    """For one k: one row per method and number of clean documents the question had (numerically), its rates."""
    rows = []
    for m, kk, e in _entries(summary):
        if kk != k:
            continue
        for count in sorted(e.by_clean_documents, key=int):
            s = e.by_clean_documents[count]
            rows.append({"method": m, "clean documents": int(count), **{COLUMNS[r]: getattr(s, r) for r in METRICS},
                         "n": s.n, "errors": s.errors})
    return pd.DataFrame(rows, columns=["method", "clean documents", *COLUMNS.values(), "n", "errors"])


def fooled_frame(rows: list[AttackRow]) -> pd.DataFrame:
    """The attacked rows (k ≥ 1) where the method's answers include the target: question, k, method, target and
    the method's answers, all as text."""
    out = []
    for r in rows:
        answers = r.result.answers
        if not r.k or r.result.error or not accuracy(answers, [r.target]):
            continue
        out.append({"question": r.attack_of, "k": r.k, "method": r.method, "target": r.target,
                    "answers": "; ".join(answers)})
    frame = pd.DataFrame(out, columns=["question", "k", "method", "target", "answers"])
    return frame.sort_values(["question", "k", "method"], kind="stable", ignore_index=True)


# --- figures -------------------------------------------------------------------------------------------------

def _percent_axis(fig: go.Figure, title: str) -> None:
    fig.update_yaxes(title=title, range=[0, 105], tickvals=[0, 20, 40, 60, 80, 100], automargin=True)


DODGE = 0.04  # k units between two methods' markers at the same k


def rate_title(metric: str) -> str:
    return f"{METRICS[metric].capitalize()} per number of injected passages k"


def rate_figure(summary: AttackSummary, metric: str = "attack_success_rate") -> go.Figure:
    """``metric`` (a key of ``METRICS``) against k, one line per method; k = 0 is the clean question."""
    title = rate_title(metric)
    frame = summary_frame(summary)
    column = COLUMNS[metric]
    if frame.empty or frame[column].isna().all():
        return no_data(title, "no attacked question was scored")
    fig = go.Figure()
    groups = list(frame.groupby("method", sort=False))
    for i, (method, part) in enumerate(groups):
        # methods with equal rates would draw one line over the other: each is nudged sideways a little (the
        # ticks and the hover keep the true k)
        nudge = DODGE * (i - (len(groups) - 1) / 2)
        fig.add_scatter(x=part["k"] + nudge, y=part[column], name=html.escape(method), mode="lines+markers",
                        line=dict(color=method_color(method), width=2), marker=dict(size=8),
                        customdata=part[["k", "n"]].values,
                        hovertemplate="k = %{customdata[0]}: %{y:.1f}% of %{customdata[1]}<extra>"
                                      + html.escape(method) + "</extra>")
    ks = ks_of(summary)
    fig.update_layout(title=title, height=400, legend_title="method",
                      margin=dict(b=AXIS_TITLE_PX + 20, l=AXIS_TITLE_PX + 30, r=10))
    fig.update_xaxes(title="k (injected passages; 0: the clean question)", tickmode="array", tickvals=ks,
                     range=[min(ks) - 0.4, max(ks) + 0.4])
    _percent_axis(fig, f"{METRICS[metric]} (%)")
    return legend_above(fig)


def clean_documents_figure(summary: AttackSummary, k: int, metric: str = "attack_success_rate") -> go.Figure:
    """For one k: ``metric`` per number of clean documents, grouped bars, one per method."""
    title = f"{METRICS[metric].capitalize()} at k = {k}, by the question's number of clean documents"
    frame = clean_documents_frame(summary, k)
    column = COLUMNS[metric]
    if frame.empty:
        return no_data(title, f"no scored question at k = {k}")
    counts = sorted(frame["clean documents"].unique())
    sizes = frame.groupby("clean documents")["n"].max()
    labels = [f"{c} (n={sizes[c]})" for c in counts]  # a 0 % bar is invisible: the n says it is there
    fig = go.Figure()
    for method, part in frame.groupby("method", sort=False):
        part = part.set_index("clean documents").reindex(counts)
        fig.add_bar(name=html.escape(method), x=labels, y=part[column], marker_color=method_color(method),
                    customdata=part[["n"]].fillna(0).values,
                    hovertemplate="%{x}: %{y:.1f}% of %{customdata[0]}<extra>" + html.escape(method) + "</extra>")
    fig.update_layout(barmode="group", title=title, height=380, legend_title="method",
                      margin=dict(b=AXIS_TITLE_PX + 20, l=AXIS_TITLE_PX + 30, r=10))
    fig.update_xaxes(title="clean documents in the question", **every_category(labels))
    _percent_axis(fig, f"{METRICS[metric]} (%)")
    return legend_above(fig)


# --- panels --------------------------------------------------------------------------------------------------

@dataclass
class Choices:
    """What the controls ask an attack to be."""
    methods: list[str]
    ks: list[int]
    limit: int
    placement: str
    source: str | None

    @property
    def ready(self) -> bool:
        return bool(self.methods and self.ks)

    def settings(self) -> dict[str, Any]:
        """``components.session.attacks.start``'s keyword arguments."""
        return dict(methods=self.methods, ks=self.ks, limit=self.limit, placement=self.placement, source=self.source)


def render_controls(st, page: str, available: list[str], questions: int, model: str) -> Choices:
    """Methods, k, number of questions, placement (and source), and what that costs. Keys ``<page>.attack_*``."""
    from components.safe import md

    if st.session_state.get(f"{page}.attack_limit", 1) > questions:
        st.session_state[f"{page}.attack_limit"] = questions
    cols = st.columns([6, 3, 2])
    methods = cols[0].multiselect("methods", available, key=f"{page}.attack_methods",
                                  format_func=method_title)
    ks = sorted(cols[1].multiselect("k: passages injected", list(range(11)), key=f"{page}.attack_ks",
                                    help="One attacked copy of each question per k; 0 is the clean question "
                                         "(a baseline)"))
    limit = int(cols[2].number_input(f"questions (first N of {questions})", 1, questions, step=1,
                                     key=f"{page}.attack_limit"))
    cols = st.columns([3, 2])
    placement = cols[0].radio("placement", PLACEMENTS, format_func=PLACEMENT_LABELS.get, horizontal=True,
                              key=f"{page}.attack_placement")
    source = cols[1].text_input("source name", key=f"{page}.attack_source_name", placeholder="attacker",
                                disabled=placement != "one_source",
                                help="One source: all the passages in this source (a new one named 'attacker' "
                                     "when empty; an existing source's name poisons that source)").strip() or None
    runs = run_count(limit, len(ks), len(methods))
    free = model.startswith("offline/")
    st.caption(f"Cost: {limit} questions × {len(ks)} k × {len(methods)} methods = **{runs:,} method runs**"
               + (" (the offline model is free; repeated runs come from the cache)." if free else
                  f", each making model calls to {md(model)} (cached calls are free)."))
    return Choices(methods, ks, limit, placement, source if placement == "one_source" else None)


def render_open(st, page: str, folders: list[tuple[Path, AttackSettings]], shown: dict,
                opener: Callable[[str], AttackResult]) -> None:
    """Pick one of ``folders`` (``backend.outputs.find_attacks``, newest first) or type any folder's path; Open puts
    ``opener(path)`` (``backend.outputs.open_attack``) in ``shown["open"]`` or says what is wrong."""
    from components.safe import md

    labels = {str(f): folder_label(f, s) for f, s in folders}
    cols = st.columns([6, 1], vertical_alignment="bottom")
    path = cols[0].selectbox("attack folder", [*labels, OTHER_FOLDER], format_func=lambda o: labels.get(o, o),
                             key=f"{page}.attack_folder", help="The page's attacks (under the cache folder's "
                                                               "attacks/), newest first")
    if path == OTHER_FOLDER:
        path = st.text_input("folder", key=f"{page}.attack_path", placeholder="/path/to/attack",
                             help="Written by `python -m backend attack --out DIR`; only read, never changed.")
    if cols[1].button("Open", type="primary", key=f"{page}.attack_open"):
        try:
            shown["open"] = opener(path)
            st.session_state[f"{page}.attack_open_error"] = None
        except AttackError as err:
            shown.pop("open", None)
            st.session_state[f"{page}.attack_open_error"] = str(err)
    if error := st.session_state.get(f"{page}.attack_open_error"):
        st.error(md(error), icon=":material/error:")


def render_attack(st, attack: AttackResult, page: str) -> None:
    """The results of one attack: what it was, the table, the rate charts, the clean-documents slice, the
    questions where a method was fooled, and the summary's download."""
    from components.safe import md

    s = attack.settings
    place = (s.placement or "?") + (f" into source {md(s.source or 'attacker')}"
                                    if s.placement == "one_source" else "")
    st.caption(f"{md(s.dataset or '?')} · model {md(s.model or '?')} · "
               f"{plural(s.questions, 'question')} · k {md(', '.join(map(str, s.ks)))} · "
               f"{md(place)} · {md(shown_path(attack.path))}")
    if skipped := s.not_attacked:
        st.caption(f"Not attacked (no target answer could be found): {plural(len(skipped), 'question')}.")
    if attack.summary.empty:
        st.info("No method has run yet.")
        return
    frame = summary_frame(attack.summary)
    if frame["missing"].sum():
        st.warning(f"{plural(int(frame['missing'].sum()), 'row')} not run yet: resume this attack to run them.")
    if frame["errors"].sum():
        st.warning(f"{plural(int(frame['errors'].sum()), 'row')} ended in an error (left out of the rates; "
                   "`python -m backend attack --resume --retry-errors` runs them again).")
    if unread := sum(e.unreadable_calls for _, _, e in _entries(attack.summary)):
        st.warning(f"{plural(unread, 'reply', 'replies')} {'was' if unread == 1 else 'were'} not in the expected "
                   f"format (format failures % per method and k): for those the method used its paper's default.")
    percent = {c: st.column_config.NumberColumn(c, format="%.1f") for c in [*COLUMNS.values(), FORMAT_FAILURES]}
    st.dataframe(frame, hide_index=True, column_config=percent, height=min(800, 38 + 35 * len(frame)))
    st.caption("Rates in percent over the rows without error (n). Attack success: the method's answers include "
               "the target wrong answer; answer match (lenient): they include a gold answer (the project's lenient "
               "match, none of the papers' rules); abstention: the method abstained or "
               "answered nothing. k = 0 is the question without attack.")
    metric = st.segmented_control("chart", list(METRICS), format_func=METRICS.get, required=True,
                                  default="attack_success_rate", key=f"{page}.attack_metric")
    st.plotly_chart(rate_figure(attack.summary, metric), key=f"{page}.attack_rates")
    ks = ks_of(attack.summary)
    cols = st.columns([1, 5])
    k = cols[0].selectbox("k", ks, index=len(ks) - 1, key=f"{page}.attack_slice_k",
                          help="The number of injected passages to slice by clean documents")
    cols[1].plotly_chart(clean_documents_figure(attack.summary, k, metric), key=f"{page}.attack_clean")
    with st.expander("By clean documents (table)"):
        st.dataframe(clean_documents_frame(attack.summary, k), hide_index=True, column_config=percent)
    fooled = fooled_frame(attack.rows)
    with st.expander(f"Fooled: the attacked questions where a method's answers include the target ({len(fooled)})"):
        st.dataframe(fooled, hide_index=True)
    st.download_button("Summary (JSON)", json.dumps(attack.summary.as_dict(), ensure_ascii=False,
                                                    indent=2).encode("utf-8"),
                       file_name=f"{s.dataset or 'attack'}-attack-summary.json", mime="application/json",
                       key=f"{page}.attack_summary", icon=":material/download:")
