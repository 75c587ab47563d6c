"""What-if page shaping: the edits as a list a reader can follow, each method's change (answers, verdicts, key trace
facts), the document-influence matrix (heat map and table) and an attack's outcome per method. Pure functions, plus
``render_change``, one method's diff card. Dataset and model text is shown with ``st.text`` or escaped (plotly reads
a little HTML in labels and hovers)."""

from __future__ import annotations

import html
import textwrap

import pandas as pd
import plotly.graph_objects as go

from backend.report.layout import legend_above, no_data, size_heatmap
from backend.report.palette import VERDICT_COLORS
from backend.report.text import plural
from backend.answer_text import mentions
from backend.schema import MethodResult, Question
from backend.whatif.attack import AttackPlan, outcome
from backend.whatif.compare import MethodChange
from backend.whatif.edits import AddDocument, Edit, EditDocument, FlipSource, RemoveDocuments
from backend.whatif.influence import Influence, InfluenceCell

#: How much of a document a hover or an edit's line shows.
HOVER_CHARS = 200
EDIT_CHARS = 60
UNCHANGED = "—"
CELL_CHARS = 18  # a heat-map cell's text (the table and the hover have it whole)


def _cut(text: str, limit: int) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[:limit - 1] + "…"


def describe_edit(edit: Edit) -> str:
    """One line per edit, as the list of edits shows it (plain text: shown with ``st.text``)."""
    if isinstance(edit, RemoveDocuments):
        return f"remove {', '.join(edit.ids)}"
    if isinstance(edit, AddDocument):
        where = f" at position {edit.position + 1}" if edit.position is not None else ""
        return f"add a document (source {edit.source or 'its own'}){where}: “{_cut(edit.text, EDIT_CHARS)}”"
    if isinstance(edit, EditDocument):
        return f"rewrite {edit.id}: “{_cut(edit.text, EDIT_CHARS)}”"
    if isinstance(edit, FlipSource):
        return f"flip source {edit.source}: {edit.from_answer} → {edit.to_answer}"
    return str(edit)


def documents_frame(question: Question) -> pd.DataFrame:
    """The question's documents, in order: id, source, text (a dataframe shows cells as text)."""
    return pd.DataFrame({"id": [d.id for d in question.documents],
                         "source": [d.source_name for d in question.documents],
                         "text": [d.text for d in question.documents]})


def flip_from_guess(question: Question, source: str, results: dict[str, MethodResult] | None,
                    use_labels: bool = False) -> str:
    """The answer a source's documents state, when it is obvious: the one answer the methods gave that the
    source's documents mention, else (``use_labels``: the truth is on screen) the one answer their labels name;
    "" when none or several."""
    docs = [d for d in question.documents if d.source_name == source]
    given = dict.fromkeys(a for r in (results or {}).values() for a in r.answers if a.strip())
    stated = [a for a in given if any(mentions(d.text, a) for d in docs)]
    if len(stated) == 1:
        return stated[0]
    if use_labels:
        labelled = list(dict.fromkeys(d.label.answer for d in docs if d.label and d.label.answer))
        if len(labelled) == 1:
            return labelled[0]
    return ""


# --- one method's change ----------------------------------------------------------------------------------------

def outcome_text(answers: list[str], abstained: bool, error: str | None) -> str:
    """A method's outcome in one line: its answers, "abstained" or "error"."""
    if error:
        return "error"
    if abstained or not answers:
        return "abstained"
    return "; ".join(answers)


FACT_CHARS = 40  # a fact's value in a card (the table under the cards has it whole)


def fact_lines(change: MethodChange) -> list[str]:
    """The method's key trace facts for its card: a changed one marked ● with its value before → after, an
    unchanged one with its value (plain text, values cut)."""
    return [f"● {f.name}: {_cut(f.before, FACT_CHARS)} → {_cut(f.after, FACT_CHARS)}" if f.changed
            else f"   {f.name}: {_cut(f.before, FACT_CHARS)}" for f in change.facts]


def facts_frame(changes: list[MethodChange]) -> pd.DataFrame:
    """Every method's key trace facts before and after, whole, changed rows marked (● in the first column)."""
    return pd.DataFrame([{"changed": "●" if f.changed else "", "method": c.method, "fact": f.name,
                          "before": f.before, "after": f.after} for c in changes for f in c.facts],
                        columns=["changed", "method", "fact", "before", "after"])


def changes_frame(changes: list[MethodChange], show_truth: bool,
                  outcomes: dict[str, str] | None = None) -> pd.DataFrame:
    """Every method's change in one table: headline, answers before and after (verdicts with the truth on), and an
    attack's outcome per method when given."""
    rows = []
    for c in changes:
        row = ({"attack": outcomes.get(c.method, "")} if outcomes is not None else {})
        row |= {"method": c.method, "what changed": c.headline,
               "before": outcome_text(c.answers_before, c.abstained_before, c.error_before),
               "after": outcome_text(c.answers_after, c.abstained_after, c.error_after)}
        if show_truth:
            row |= {"verdict before": c.verdict_before, "verdict after": c.verdict_after}
        rows.append(row)
    return pd.DataFrame(rows)


def summary_line(changes: list[MethodChange]) -> str:
    """The headline: answer changes (the answer set differs, ``backend.agreement``) counted apart from reasoning
    changes (the same answer set, some key trace fact differs) and from runs that failed on one side only."""
    n = len(changes)
    answer = [c.method for c in changes if c.answer_changed]
    reasoned = [c.method for c in changes if c.reasoning_changed]
    failed = [c.method for c in changes if c.failed]
    if answer:
        head = (f"{len(answer)} of {plural(n, 'method')} changed {'its' if len(answer) == 1 else 'their'} answer "
                f"({', '.join(answer)})")
    else:
        head = f"No method changed its answer ({n} compared)"
    parts = [head]
    if reasoned:
        more = " more" if answer else ""
        parts.append(f"{len(reasoned)}{more} reasoned differently to the same answer ({', '.join(reasoned)})")
    if failed:
        parts.append(f"{len(failed)} failed on one side ({', '.join(failed)})")
    if not reasoned and not failed and not answer:
        return f"No method changed its answer or its reasoning ({n} compared)."
    return "; ".join(parts) + "."


#: Badge colour per outcome (``backend.whatif.attack.Outcome.label``, or "error").
ATTACK_COLORS = {"attack succeeded": "red", "attack succeeded (correct answer too)": "red",
                 "resisted: correct": "green", "resisted: abstained": "gray", "resisted: other answer": "orange",
                 "error": "orange"}


def attack_outcome(result: MethodResult, plan: AttackPlan, question: Question) -> str:
    """A method's answer to the attacked question, in words: the dataset attack's own classification
    (``backend.whatif.attack.outcome``: the target among its answers, else the correct answer, an abstention, or
    another answer), or "error"."""
    return "error" if result.error else outcome(result, question, plan.target).label


def render_change(parent, change: MethodChange, show_truth: bool, outcome: str | None = None) -> None:
    """One method's diff card inside ``parent``: headline, answers before → after, verdicts (truth on), the attack
    outcome when given, and the key facts with the changed ones marked."""
    box = parent.container(border=True)
    box.markdown(f"**{change.method}**")  # our method name, not data
    box.badge(change.headline, color="blue" if change.changed else "gray")
    if outcome is not None:
        box.badge(outcome, color=ATTACK_COLORS[outcome])
    box.caption("before")
    box.text(outcome_text(change.answers_before, change.abstained_before, change.error_before))
    box.caption("after")
    box.text(outcome_text(change.answers_after, change.abstained_after, change.error_after))
    if change.error_after:
        box.text(change.error_after)
    if show_truth:
        row = box.container(horizontal=True)
        row.badge(change.verdict_before, color=VERDICT_COLORS.get(change.verdict_before, "gray"))
        row.text("→")
        row.badge(change.verdict_after, color=VERDICT_COLORS.get(change.verdict_after, "gray"))
    if change.facts:
        box.caption("key facts (● changed)")
        box.text("\n".join(fact_lines(change)))


# --- document influence -----------------------------------------------------------------------------------------

#: Flip kinds in the heat map's order (and colour): none, an answer flip, keep → abstain, abstain → keep, error.
FLIP_KINDS = ["no change", "answer", "keep→abstain", "abstain→keep", "error"]
FLIP_COLORS = ["#eceff1", "#1565c0", "#c62828", "#2e7d32", "#f9a825"]
INFLUENCE_TITLE = "Leaving each document out: what changes"


def flip_kind(cell: InfluenceCell) -> str:
    if cell.error:
        return "error"
    return cell.flip or "no change"


def cell_text(cell: InfluenceCell) -> str:
    """What the method answers without the document, when that changed anything ("—" when nothing changed)."""
    kind = flip_kind(cell)
    if kind == "no change":
        return UNCHANGED
    if kind == "error":
        return "error"
    return outcome_text(cell.answers, cell.abstained, None)


def document_labels(influence: Influence, question: Question) -> list[str]:
    """Each left-out document named by id and source (plain text; the id alone when the document is its own
    source, as in RAMDocs)."""
    sources = {d.id: d.source_name for d in question.documents}
    return [f"{d} · {sources[d]}" if sources.get(d, d) != d else d for d in influence.documents]


def influence_frame(influence: Influence, question: Question) -> pd.DataFrame:
    """The matrix as a table: one row per left-out document, one column per method: "—" when nothing changed,
    else the new answer and the kind of flip ("Lyon · answer", "abstained · keep→abstain")."""
    data: dict[str, list[str]] = {"document": document_labels(influence, question)}
    for m in influence.methods:
        cells = [influence.cell(d, m) for d in influence.documents]
        data[m] = [cell_text(c) if flip_kind(c) in ("no change", "error") else f"{cell_text(c)} · {flip_kind(c)}"
                   for c in cells]
    return pd.DataFrame(data)


def _hover_lines(text: str, width: int = 70) -> str:
    """Text for a plotly hover: escaped, in lines of ``width`` characters (one long line runs off the chart)."""
    return "<br>".join(html.escape(line) for line in textwrap.wrap(text, width))


def influence_figure(influence: Influence, question: Question) -> go.Figure:
    """Documents (rows) × methods (columns), coloured by flip kind, each cell the new answer or "—"; the hover
    shows the start of the document's text. Every dataset or model string is escaped (plotly reads some HTML)."""
    if not influence.documents or not influence.methods:
        return no_data(INFLUENCE_TITLE, "the question has no documents" if influence.methods else "no method chosen")
    texts = {d.id: d.text for d in question.documents}
    rows = [html.escape(r) for r in document_labels(influence, question)]
    cells = [[influence.cell(d, m) for m in influence.methods] for d in influence.documents]
    z = [[FLIP_KINDS.index(flip_kind(c)) for c in row] for row in cells]
    text = [[html.escape(_cut(cell_text(c), CELL_CHARS)) for c in row] for row in cells]
    hover = [[html.escape(f"{m}: {flip_kind(c)}; {_cut(cell_text(c), 80)}") + "<br>"
              + _hover_lines(_cut(texts.get(d, ""), HOVER_CHARS)) for m, c in zip(influence.methods, row)]
             for d, row in zip(influence.documents, cells)]
    n = len(FLIP_KINDS) - 1
    scale = [[i / n, c] for i, c in enumerate(FLIP_COLORS)]
    fig = go.Figure(go.Heatmap(z=z, x=influence.methods, y=rows, zmin=0, zmax=n, colorscale=scale, showscale=False,
                               text=text, texttemplate="%{text}", textfont=dict(size=12), customdata=hover,
                               xgap=2, ygap=2,
                               hovertemplate="%{y}<br>%{customdata}<extra></extra>"))
    # the legend: one invisible marker per flip kind, so the colours are named
    for kind, color in zip(FLIP_KINDS, FLIP_COLORS):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=kind, showlegend=True,
                                 marker=dict(size=12, symbol="square", color=color)))
    fig.update_layout(title=INFLUENCE_TITLE, xaxis_title="method", yaxis_title="document left out",
                      plot_bgcolor="rgba(0,0,0,0)")  # no grey behind the legend's empty scatter axes
    return legend_above(size_heatmap(fig, row_px=40))


def base_frame(influence: Influence) -> pd.DataFrame:
    """Each method's answer on the whole question (what the matrix compares against)."""
    return pd.DataFrame({"method": influence.methods,
                         "answer with every document": [
                             "abstained" if influence.base_abstained.get(m) else "; ".join(influence.base.get(m, []))
                             for m in influence.methods]})


# --- an attack's plan -------------------------------------------------------------------------------------------

TARGET_FROM = {"dataset": "the dataset's own attack target", "wrong_answer": "the question's listed wrong answer",
               "perturbed": "the correct answer with its last number changed",
               "borrowed": "another question's answer of the same kind", "given": "typed in"}
PASSAGES_FROM = {"dataset": "the dataset's own adversarial passages",
                 "substitution": "the question's correct passages with the correct answer replaced by the target",
                 "template": "a template: the question followed by “The answer is <target>.”",
                 "given": "typed in"}


def plan_lines(plan: AttackPlan) -> list[str]:
    """The plan in words (plain text): the target and where it came from, how the passages were made."""
    return [f"target answer: {plan.target}", f"target from: {TARGET_FROM[plan.target_from]}",
            f"passages ({len(plan.passages)}) from: {PASSAGES_FROM[plan.passages_from]}"]


def render_plan(st, plan: AttackPlan) -> None:
    st.text("\n".join(plan_lines(plan)))
    with st.expander(f"The attack passages ({len(plan.passages)}; k larger than that repeats them in order)"):
        for i, passage in enumerate(plan.passages, start=1):
            st.caption(f"passage {i}")
            st.text(passage)
