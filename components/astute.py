"""Astute RAG's views (the Consolidation page): pure shaping of an ``AstuteTrace`` (+ the question, for the truth
overlay, + the recorded calls, for the cost) into frames, a figure and small dicts, and the page's panels
(``render_*``, each given the Streamlit module or a container as ``st``).
docs/methods/astute.md §7 lists what is shown.

Everything comes from the trace (what ran, what the parsers read, what the method decided) or the recorded calls.
The "why" facts only restate the final round's groups. The truth overlay (document types, the answer a document
supports, answer kinds, retrieval precision, the lenient match) is joined in here only when asked for.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.answers import contains_match, normalize
from backend.methods.astute.method import SPEC
from backend.report.layout import (
    AXIS_TITLE_PX,
    count_axis,
    every_category,
    legend_above,
    no_data,
)
from backend.report.palette import BADGE_COLORS, KIND_COLORS, KIND_LABELS
from backend.report.text import plural, snippet
from backend.schema import (
    AstuteGroup,
    AstutePassage,
    AstuteRound,
    AstuteTrace,
    LLMCall,
    MethodResult,
    Question,
)
from backend.scoring import answer_kind, doc_kind, evaluation
from components.calls import cost_line, render_raw_calls, roles_frame
from components.safe import md
from components.views import View


NONE = "—"
SNIPPET_CHARS = 160
GENERATED_NOTHING = ("The model generated nothing: it said it does not know, so only external passages were "
                     "consolidated.")
GENERATED_NOTHING_NO_EXTERNAL = ("The model generated nothing: it said it does not know, and there is no external "
                                 "passage either.")
NO_CONTEXT = "No external and no internal passage: nothing to consolidate, so no answer call was made."
#: Candidate bars by answer kind (truth overlay), as on the Debate page; without it, one neutral colour.
ANSWER_COLORS = {"gold": KIND_COLORS["correct"], "wrong": KIND_COLORS["misinfo"], "unknown": KIND_COLORS["noise"],
                 "other": KIND_COLORS["unlabelled"]}
ANSWER_LABELS = {"gold": "gold answer", "wrong": "wrong answer", "other": "other answer", "unknown": "no answer"}
NEUTRAL = "#616161"
#: Derived group source -> Streamlit badge colour (internal purple, external blue as in the palette).
SOURCE_BADGES = {"internal": "violet", "external": "blue", "mixed": "green", "unknown": "gray"}
SOURCE_WORDS = {"internal": "internal (memory)", "external": "external (retrieved)",
                "mixed": "mixed: internal + external", "unknown": "unknown (no valid citation)"}
PARSE_WORDS = {"structured": "structured tags", "lenient": "lenient (paper-format text)", "failed": "failed"}
ANSWER_PARSE_WORDS = {"tag": "read from the <ANSWER> tag", "label": "no tag: read after an 'Answer:' label",
                      "top_candidate": "no tag: the candidate with the highest confidence",
                      "last_line": "no tag: the reply's last line", "failed": "no answer could be read",
                      "skipped": "no answer call (nothing to consolidate)"}


# --- calls and configuration -------------------------------------------------------------------------

def call_role(step: str, iterations: int | None = None) -> str:
    """What a call is in the paper's terms: p_gen, p_con round j, or p_ans (round t + answers + pick)."""
    if step == "consolidate_answer":
        return f"p_ans: round {iterations or 't'} + answers + final pick"
    return SPEC.role(step)


def _order(step: str) -> tuple[int, int]:
    if step == "generate_passages":
        return 0, 0
    if m := re.fullmatch(r"consolidate_round_(\d+)", step):
        return 1, int(m.group(1))
    return (2, 0) if step == "consolidate_answer" else (3, 0)


def ordered_calls(calls: Sequence[LLMCall]) -> list[LLMCall]:
    """The calls in the method's order: p_gen, p_con 1..t-1, p_ans (they may have been recorded in any order)."""
    return sorted(calls, key=lambda c: _order(c.step))


def calls_frame(trace: AstuteTrace, calls: Sequence[LLMCall]) -> pd.DataFrame:
    """One row per model call: its role, tokens in and out, latency, cache hit, error."""
    return roles_frame(ordered_calls(calls), lambda c: call_role(c.step, trace.iterations))


def expected_calls(trace: AstuteTrace) -> int:
    """t + 1 (p_gen, t-1 p_con, p_ans); one when there was nothing to consolidate (no answer call)."""
    return 1 if trace.no_context else trace.iterations + 1


def config_line(trace: AstuteTrace, calls: Sequence[LLMCall] = ()) -> str:
    """m̂, t, order, modes, model and the call count, as run."""
    models = sorted({c.model for c in calls})
    line = (f"m̂ = {trace.m_hat} · t = {trace.iterations} · order {trace.order} · prompt mode {trace.prompt_mode} · "
            f"answer mode {trace.answer_mode} · drop \"I don't know\" {'on' if trace.drop_idk else 'off'} · "
            f"max {trace.max_tokens:,} tokens per call")
    if models:
        line += f" · model {', '.join(models)}"
    expected = expected_calls(trace)
    if calls:
        line += f" · {plural(len(calls), 'call')}"
        line += f" (t + 1 = {expected})" if len(calls) == expected and not trace.no_context else (
            f" (expected {expected})" if len(calls) != expected else "")
    return line


def status_line(trace: AstuteTrace) -> str:
    if trace.no_context:
        return NO_CONTEXT
    ext = sum(p.origin == "external" for p in trace.passages)
    internal = len(trace.passages) - ext
    final = "abstained" if not trace.final_answers else "; ".join(trace.final_answers)
    return (f"D0: {plural(len(trace.passages), 'passage')} ({ext} external + {internal} internal) · "
            f"{plural(len(trace.rounds), 'consolidation round')} · final: {final}")


def truncation_warning(trace: AstuteTrace, calls: Sequence[LLMCall] = ()) -> str | None:
    if not trace.truncated:
        return None
    full = [c.step for c in calls if c.completion_tokens >= trace.max_tokens]
    where = f" ({', '.join(full)})" if full else ""
    return (f"A reply used its whole budget of {trace.max_tokens:,} tokens{where}: it may be cut off, so groups, "
            "candidates or the <ANSWER> tag can be missing.")


# --- internal knowledge (call 1) ----------------------------------------------------------------------

def internal_numbers(trace: AstuteTrace) -> list[int]:
    return [p.number for p in trace.passages if p.origin == "internal"]


def generation_frame(trace: AstuteTrace) -> pd.DataFrame:
    """Each generated passage: kept (with its D0 number, hedged or not) or dropped (with the reason)."""
    gen = trace.generation
    columns = ["status", "D0 number", "reason", "text"]
    if gen is None:
        return pd.DataFrame(columns=columns)
    numbers = internal_numbers(trace)
    rows = []
    for i, text in enumerate(gen.kept):
        rows.append({"status": "kept: internal" + (" (hedged)" if i in gen.hedged else ""),
                     "D0 number": str(numbers[i]) if i < len(numbers) else NONE,
                     "reason": "still says it is unsure" if i in gen.hedged else "", "text": text})
    rows += [{"status": "dropped", "D0 number": NONE, "reason": d.reason, "text": d.text} for d in gen.dropped]
    return pd.DataFrame(rows, columns=columns)


def generation_state(trace: AstuteTrace) -> str:
    """A sentence on what call 1 added to D0."""
    gen = trace.generation
    if gen is None:
        return "No generation call recorded."
    if not gen.kept:
        external = any(p.origin == "external" for p in trace.passages)
        return GENERATED_NOTHING if external else GENERATED_NOTHING_NO_EXTERNAL
    kept = f"{len(gen.kept)} of at most m̂ = {trace.m_hat}"
    dropped = f"; {plural(len(gen.dropped), 'passage')} dropped" if gen.dropped else ""
    return f"Kept {kept} generated passage{'s' if len(gen.kept) != 1 else ''}, marked internal{dropped}."


# --- D0 --------------------------------------------------------------------------------------------------

def contains_gold(text: str, gold: Sequence[str]) -> bool:
    """The paper's retrieval-precision test (§5): the passage contains a gold answer, by string matching (SQuAD
    normalisation, word-sequence containment)."""
    words = f" {normalize(text)} "
    return any(n and f" {n} " in words for n in (normalize(g) for g in gold))


def retrieval_precision(trace: AstuteTrace, question: Question) -> tuple[int, int] | None:
    """(external passages containing a gold answer, external passages); None without gold answers or passages."""
    external = [p for p in trace.passages if p.origin == "external"]
    if not question.gold_answers or not external:
        return None
    return sum(contains_gold(p.text, question.gold_answers) for p in external), len(external)


def _cited_by(trace: AstuteTrace) -> dict[int, list[str]]:
    """D0 number -> the final round's groups that cite it."""
    final = final_round(trace)
    out: dict[int, list[str]] = {}
    for g in final.groups if final else []:
        for n in g.documents:
            out.setdefault(n, []).append(g.id)
    return out


def passages_frame(trace: AstuteTrace, question: Question, show_truth: bool) -> pd.DataFrame:
    """D0 in prompt order: number, origin, source, retrieval rank, document id, the final round's groups citing it,
    a snippet; with the overlay, the document's type and the answer it supports (internal passages have no label)
    and whether it contains a gold answer."""
    docs = {d.id: d for d in question.documents}
    cited = _cited_by(trace)
    rows = []
    for p in trace.passages:
        row = {"#": p.number, "origin": p.origin,
               "source": p.source or (NONE if p.origin == "external" else "model memory")}
        if show_truth:
            doc = docs.get(p.document_id) if p.document_id else None
            row["document type"] = KIND_LABELS[doc_kind(doc)] if doc else ("internal: no label" if p.origin ==
                                                                           "internal" else "unlabelled")
            row["supports"] = (doc.label.answer or NONE) if doc and doc.label else NONE
            row["contains gold"] = contains_gold(p.text, question.gold_answers) if question.gold_answers else None
        row |= {"rank": p.rank, "document": p.document_id or NONE,
                "final groups": ", ".join(cited.get(p.number, [])) or "excluded", "snippet": snippet(p.text, SNIPPET_CHARS)}
        rows.append(row)
    columns = ["#", "origin", "source"] + (["document type", "supports", "contains gold"] if show_truth else [])
    columns += ["rank", "document", "final groups", "snippet"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["rank"] = frame["rank"].astype("Int64")  # internal passages have no rank: <NA>, not 1.0 / 2.0 floats
    return frame


# --- consolidation rounds ------------------------------------------------------------------------------

def final_round(trace: AstuteTrace) -> AstuteRound | None:
    return next((r for r in reversed(trace.rounds) if r.final), None)


def round_label(rnd: AstuteRound) -> str:
    return f"Round {rnd.round} (final answer call)" if rnd.final else f"Round {rnd.round} (p_con)"


def stated_source(text: str | None) -> str | None:
    """The model's own source label in the derived vocabulary (internal / external / mixed), None if unreadable."""
    if not text:
        return None
    low = text.lower()
    internal = bool(re.search(r"memor|internal|generated", low))
    external = bool(re.search(r"extern|retriev|web", low))
    if re.search(r"\bboth\b|mixed", low) or (internal and external):
        return "mixed"
    return "internal" if internal else "external" if external else None


def _origin(trace: AstuteTrace) -> dict[int, str]:
    return {p.number: p.origin for p in trace.passages}


def cited_text(group: AstuteGroup, trace: AstuteTrace) -> str:
    """``1 (external), 4 (internal)``; invalid citations appended as ``9 (no such passage)``."""
    origin = _origin(trace)
    parts = [f"{n} ({origin.get(n, '?')})" for n in group.documents]
    parts += [f"{n} (no such passage)" for n in group.invalid_citations]
    return ", ".join(parts) or NONE


def confidence_text(group: AstuteGroup) -> str:
    """``0.85 (raw "85%")``, ``0.90 (raw "high": a word, mapped by heuristic)``, or ``—``."""
    if group.confidence is None:
        return NONE if group.confidence_raw is None else f"{NONE} (raw {group.confidence_raw!r}: unreadable)"
    raw = f"raw {group.confidence_raw!r}" if group.confidence_raw is not None else "no raw text"
    heuristic = ": a word, mapped by heuristic" if group.confidence_heuristic else ""
    return f"{group.confidence:.2f} ({raw}{heuristic})"


def _split_excluded(rnd: AstuteRound, trace: AstuteTrace) -> tuple[str, str]:
    origin = _origin(trace)
    return (", ".join(f"{n} ({origin.get(n, '?')})" for n in rnd.split) or NONE,
            ", ".join(f"{n} ({origin.get(n, '?')})" for n in rnd.excluded) or NONE)


def group_cards(rnd: AstuteRound, trace: AstuteTrace) -> list[dict]:
    """Per group of one round: what a card shows, plus its badges."""
    finals = {g for g in trace.final_groups if g} if rnd.final else set()
    cards = []
    for g in rnd.groups:
        stated = stated_source(g.stated_source)
        badges = []
        if g.source == "mixed":
            badges.append(("cross-source confirmed", "green"))
        if g.id in finals:
            badges.append(("★ final pick", "gray"))
        if set(g.documents) & set(rnd.split):
            badges.append(("cites a split passage", "orange"))
        if g.invalid_citations:
            badges.append(("invalid citations", "red"))
        if g.confidence_heuristic:
            badges.append(("heuristic confidence", "orange"))
        cards.append({"id": g.id, "summary": g.summary, "cited": cited_text(g, trace),
                      "n_internal": sum(_origin(trace).get(n) == "internal" for n in g.documents),
                      "n_external": sum(_origin(trace).get(n) == "external" for n in g.documents),
                      "stated": g.stated_source or NONE, "derived": g.source,
                      "disagrees": stated is not None and g.source != "unknown" and stated != g.source,
                      "answer": g.answer, "confidence": confidence_text(g), "badges": badges})
    return cards


def groups_frame(rnd: AstuteRound, trace: AstuteTrace) -> pd.DataFrame:
    """One row per group of a round (the cards as a table)."""
    rows = [{"group": c["id"], "cited passages": c["cited"], "stated source": c["stated"],
             "derived source": c["derived"], "candidate answer": c["answer"] if c["answer"] is not None else NONE,
             "confidence": c["confidence"], "summary": c["summary"]} for c in group_cards(rnd, trace)]
    return pd.DataFrame(rows, columns=["group", "cited passages", "stated source", "derived source",
                                       "candidate answer", "confidence", "summary"])


def round_facts(rnd: AstuteRound, trace: AstuteTrace) -> dict:
    """A round's badges and lines: conflict, parse mode, split and excluded passages, notes."""
    split, excluded = _split_excluded(rnd, trace)
    answers = [g.answer for g in rnd.groups if g.answer]
    distinct = len({normalize(a) for a in answers if normalize(a)})
    # a p_con round proposes no answers: there, groups kept apart are the conflict
    what = plural(distinct, "distinct answer") if distinct >= 2 else plural(len(rnd.groups), "separate group")
    return {"label": round_label(rnd), "conflict": rnd.conflict, "distinct_answers": distinct,
            "conflict_text": f"conflict: {what}",
            "parse": PARSE_WORDS[rnd.parse], "parse_failed": rnd.parse == "failed", "split": split,
            "excluded": excluded, "notes": list(rnd.notes), "groups": len(rnd.groups)}


# --- candidates and confidence (final round) -----------------------------------------------------------

CHART_TITLE = "Candidate answers of the final round: confidence and supporting passages"


def candidates_frame(trace: AstuteTrace, question: Question, show_truth: bool) -> pd.DataFrame:
    """The final round's groups that propose an answer: confidence and supporting passages by origin."""
    final = final_round(trace)
    picked = {g for g in trace.final_groups if g}
    origin = _origin(trace)
    rows = []
    for g in final.groups if final else []:
        if not g.answer:
            continue
        row = {"group": g.id, "candidate answer": g.answer}
        if show_truth:
            row["verdict"] = answer_kind(g.answer, question)
        row |= {"confidence": g.confidence, "confidence raw": g.confidence_raw or NONE,
                "heuristic": g.confidence_heuristic,
                "internal passages": sum(origin.get(n) == "internal" for n in g.documents),
                "external passages": sum(origin.get(n) == "external" for n in g.documents),
                "final pick": g.id in picked}
        rows.append(row)
    columns = ["group", "candidate answer"] + (["verdict"] if show_truth else [])
    columns += ["confidence", "confidence raw", "heuristic", "internal passages", "external passages", "final pick"]
    return pd.DataFrame(rows, columns=columns)


def candidates_figure(trace: AstuteTrace, question: Question, show_truth: bool) -> go.Figure:
    """Two panels over the final round's candidates: the confidence (coloured by answer kind with the overlay,
    ★ on the final pick, "—" when none was given) and the supporting passages stacked internal / external."""
    frame = candidates_frame(trace, question, show_truth)
    if frame.empty:
        return no_data(CHART_TITLE, "the final round has no group with a candidate answer")
    labels = [html.escape(f"{'★ ' if pick else ''}group {g}: {a}")
              for g, a, pick in zip(frame["group"], frame["candidate answer"], frame["final pick"])]
    conf = [None if pd.isna(c) else float(c) for c in frame["confidence"]]
    fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.12)
    text = [NONE if c is None else f"{c:.2f}" + ("*" if h else "") for c, h in zip(conf, frame["heuristic"])]
    y = [c or 0.0 for c in conf]
    if show_truth:
        kinds = list(frame["verdict"])
        for kind in ("gold", "wrong", "other", "unknown"):
            idx = [i for i, k in enumerate(kinds) if k == kind]
            if idx:
                fig.add_bar(x=[labels[i] for i in idx], y=[y[i] for i in idx], text=[text[i] for i in idx],
                            textposition="outside", marker_color=ANSWER_COLORS[kind], name=ANSWER_LABELS[kind],
                            row=1, col=1)
    else:
        fig.add_bar(x=labels, y=y, text=text, textposition="outside", marker_color=NEUTRAL, name="confidence",
                    row=1, col=1)
    for origin in ("internal", "external"):
        fig.add_bar(x=labels, y=list(frame[f"{origin} passages"]), marker_color=KIND_COLORS[origin],
                    name=f"{origin} passages", row=1, col=2)
    largest = int((frame["internal passages"] + frame["external passages"]).max() or 1)
    fig.update_layout(barmode="stack", title=CHART_TITLE, height=420, showlegend=True, legend_traceorder="normal",
                      margin={"b": AXIS_TITLE_PX + 30, "l": AXIS_TITLE_PX + 30, "r": 10})
    cats = every_category(labels)
    fig.update_xaxes(title="candidate (★ final pick)", categoryorder="array", categoryarray=labels, **cats)
    fig.update_yaxes(title="confidence (normalised 0–1)", range=[0, 1.15], automargin=True, row=1, col=1)
    fig.update_yaxes(title="passages cited (count)", automargin=True, row=1, col=2,
                     **(count_axis(largest) | {"range": [0, 1.15 * largest]}))  # headroom, as on the left
    if any(frame["heuristic"]):
        fig.add_annotation(text="* a word (high / medium / low) mapped to a number", xref="paper", yref="paper",
                           x=0, y=-0.32, showarrow=False, xanchor="left", font={"size": 11})
    return legend_above(fig)


# --- final decision ------------------------------------------------------------------------------------

def _group(rnd: AstuteRound | None, group_id: str | None) -> AstuteGroup | None:
    if rnd is None or group_id is None:
        return None
    return next((g for g in rnd.groups if g.id == group_id), None)


def _answers_of(numbers: set[int], rnd: AstuteRound) -> list[tuple[str, str | None]]:
    """(group id, answer) of each group citing any of ``numbers``."""
    return [(g.id, g.answer) for g in rnd.groups if numbers & set(g.documents)]


def _agrees(answer: str, other: str | None) -> bool:
    return bool(other) and contains_match(answer, other)


def why_facts(trace: AstuteTrace, answer: str, group_id: str | None) -> list[str]:
    """Automatic facts about one final answer, read off the final round (docs/methods/astute.md §7.6)."""
    rnd = final_round(trace)
    group = _group(rnd, group_id)
    if rnd is None:
        return ["No consolidation round was recorded."]
    if group is None:
        return [("No group proposes this answer (flagged): it matches no candidate, so its confidence and "
                 "support are unknown.") if group_id is None else f"Group {group_id} is not in the final round."]
    facts = []
    others = [g for g in rnd.groups if g.answer and g.id != group.id and g.confidence is not None]
    if group.confidence is None:
        facts.append(f"Group {group.id} has no readable confidence, so its rank among the candidates is unknown.")
    else:
        higher = [g for g in others if g.confidence > group.confidence]
        tied = [g for g in others if g.confidence == group.confidence]
        n = len(others) + 1
        if not others:
            facts.append(f"Its confidence {group.confidence:.2f} is the only one given.")
        elif higher:
            top = max(higher, key=lambda g: g.confidence)
            tie = f", tied with {', '.join(g.id for g in tied)}" if tied else ""
            facts.append(f"Its confidence {group.confidence:.2f} is not the highest: rank {len(higher) + 1} of {n}"
                         f"{tie}; group {top.id} ({top.answer}) has {top.confidence:.2f}.")
        elif tied:
            facts.append(f"Its confidence {group.confidence:.2f} is the highest of {n}, tied with group"
                         f"{'s' if len(tied) > 1 else ''} {', '.join(g.id for g in tied)}.")
        else:
            facts.append(f"Its confidence {group.confidence:.2f} is the highest of {n} candidates.")
        if group.confidence_heuristic:
            facts.append(f"That confidence is a word ({group.confidence_raw!r}) mapped to a number by heuristic.")
    origin = _origin(trace)
    n_int = sum(origin.get(n) == "internal" for n in group.documents)
    n_ext = sum(origin.get(n) == "external" for n in group.documents)
    mix = {"mixed": "mixed: cross-source confirmed", "internal": "internal only", "external": "external only",
           "unknown": "unknown: no valid citation"}[group.source]
    facts.append(f"Source mix: {mix} ({n_ext} external + {n_int} internal "
                 f"passage{'s' if n_ext + n_int != 1 else ''} cited, of {len(trace.passages)} in D0).")
    # agreement with the internal passage(s)
    internal = set(internal_numbers(trace))
    if not internal:
        facts.append("No internal passage to agree with (the model generated nothing).")
    else:
        citing = _answers_of(internal, rnd)
        numbers = ", ".join(map(str, sorted(internal)))
        if not citing:
            facts.append(f"The internal passage ({numbers}) is cited by no group: consolidation left it out.")
        elif any(gid == group.id or _agrees(answer, a) for gid, a in citing):
            facts.append(f"Agrees with the internal passage ({numbers}).")
        else:
            said = "; ".join(f"group {gid}: {a or NONE}" for gid, a in citing)
            facts.append(f"Disagrees with the internal passage ({numbers}), which backs {said}.")
    # agreement with the external passages
    external = [p.number for p in trace.passages if p.origin == "external"]
    if not external:
        facts.append("No external passage.")
    else:
        backing = {n: [a for _, a in _answers_of({n}, rnd) if a] for n in external}
        mine = sum(any(_agrees(answer, a) for a in answers) or n in group.documents for n, answers in backing.items())
        tallies: dict[str, int] = {}
        for answers in backing.values():
            for a in {normalize(a): a for a in answers}.values():
                key = next((k for k in tallies if contains_match(k, a)), a)
                tallies[key] = tallies.get(key, 0) + 1
        best = max(tallies.values(), default=0)
        leaders = [a for a, c in tallies.items() if c == best]
        if mine * 2 > len(external):
            facts.append(f"Agrees with the majority of external passages: {mine} of {len(external)} back it.")
        elif mine and mine == best:
            facts.append(f"Backed by {mine} of {len(external)} external passages: no majority, but no other answer "
                         "has more.")
        elif best:
            facts.append(f"Not the external majority: {mine} of {len(external)} external passages back it; "
                         f"{best} back {' / '.join(a for a in leaders if not _agrees(answer, a))}.")
        else:
            facts.append(f"No external passage backs any candidate ({len(external)} left out as irrelevant).")
    return facts


def final_rows(trace: AstuteTrace) -> list[dict]:
    """Per final answer: the group it maps to, that group's confidence, and the why facts."""
    rnd = final_round(trace)
    rows = []
    for i, answer in enumerate(trace.final_answers):
        gid = trace.final_groups[i] if i < len(trace.final_groups) else None
        group = _group(rnd, gid)
        rows.append({"answer": answer, "group": gid, "confidence": confidence_text(group) if group else NONE,
                     "facts": why_facts(trace, answer, gid)})
    return rows


def final_frame(trace: AstuteTrace, question: Question, show_truth: bool,
                support: dict[str, list[str]] | None = None) -> pd.DataFrame:
    """One row per final answer: group, confidence, the documents it rests on; with the overlay, its kind."""
    rows = []
    for row in final_rows(trace):
        out = {"answer": row["answer"]}
        if show_truth:
            out["verdict"] = answer_kind(row["answer"], question)
        out |= {"group": row["group"] or "none (flagged)", "confidence": row["confidence"],
                "rests on documents": ", ".join((support or {}).get(row["answer"], [])) or f"{NONE} (no external "
                                                                                         "document)"}
        rows.append(out)
    columns = ["answer"] + (["verdict"] if show_truth else []) + ["group", "confidence", "rests on documents"]
    return pd.DataFrame(rows, columns=columns)


def decision_notes(trace: AstuteTrace) -> list[str]:
    """The trace's notes minus the rounds' own notes (the method repeats them as ``round j: …``; each round's
    tab already shows them)."""
    shown = {f"round {r.round}: {n}" for r in trace.rounds for n in r.notes}
    return [n for n in trace.notes if n not in shown]


def answer_parse_text(trace: AstuteTrace) -> str:
    return f"answer parse: {trace.answer_parse} ({ANSWER_PARSE_WORDS[trace.answer_parse]})"


# --- panels (each given the Streamlit module or a container as ``st``) ----------------------------------

def render_header(st, trace: AstuteTrace, question: Question, calls: Sequence[LLMCall], show_truth: bool) -> None:
    """Status, configuration, cost per call, the truncation warning, and (overlay) retrieval precision."""
    st.text(status_line(trace))
    st.text(config_line(trace, calls))
    st.text(cost_line(calls))
    if (warning := truncation_warning(trace, calls)) is not None:
        st.warning(warning)
    if calls:
        st.dataframe(calls_frame(trace, calls), hide_index=True)
    if show_truth:
        st.text(f"Gold answers: {'; '.join(question.gold_answers) or NONE}  /  "
                f"wrong answers: {'; '.join(question.wrong_answers) or NONE}")
        if (precision := retrieval_precision(trace, question)) is not None:
            hit, n = precision
            st.text(f"Retrieval precision: {hit} of {n} external passages contain a gold answer ({hit / n:.0%}).")


def render_internal(st, trace: AstuteTrace) -> None:
    """Call 1: the raw output, the passages kept (internal) and dropped (greyed, with the reason)."""
    st.subheader("Internal knowledge (call 1, p_gen)")
    gen = trace.generation
    state = generation_state(trace)
    if gen is not None and not gen.kept:
        st.info(state)
    else:
        st.text(state)
    if gen is None:
        return
    st.caption("raw output")
    st.code(gen.raw or "(empty)", language=None, wrap_lines=True)
    numbers = internal_numbers(trace)
    for i, text in enumerate(gen.kept):
        with st.container(border=True):
            with st.container(horizontal=True):
                st.badge("internal", color="violet")
                if i < len(numbers):
                    st.badge(f"D0 #{numbers[i]}", color="gray")
                if i in gen.hedged:
                    st.badge("hedged: still says it is unsure", color="orange")
            st.text(text)
    for d in gen.dropped:
        with st.container(border=True):
            with st.container(horizontal=True):
                st.badge("dropped", color="gray")
                st.caption(f"reason: {md(d.reason)}")
            st.caption(md(d.text))  # greyed: caption text, escaped (it is model output)


def render_passages(st, trace: AstuteTrace, question: Question, show_truth: bool) -> None:
    """D0 = E ⊕ I in prompt order, with the overlay columns when asked for, and the passages in full."""
    st.subheader("Passages D0 = E ⊕ I (as numbered in the prompt)")
    ext = sum(p.origin == "external" for p in trace.passages)
    st.caption(f"External passages first (order: {md(trace.order)}), then the internal ones. rank = position in the "
               "evidence list before reordering; final groups = the final round's groups citing the passage.")
    if not trace.passages:
        st.text("D0 is empty.")
        return
    st.dataframe(passages_frame(trace, question, show_truth), hide_index=True)
    with st.expander(f"Passages in full ({ext} external, {len(trace.passages) - ext} internal)"):
        docs = {d.id: d for d in question.documents}
        for p in trace.passages:
            _render_passage(st, p, docs, show_truth)


def _render_passage(st, p: AstutePassage, docs: dict, show_truth: bool) -> None:
    with st.container(horizontal=True):
        st.markdown(f"**#{p.number}**")
        st.badge(p.origin, color=SOURCE_BADGES[p.origin])
        if show_truth and p.document_id in docs:
            kind = doc_kind(docs[p.document_id])
            st.badge(KIND_LABELS[kind], color=BADGE_COLORS[kind])
    if p.document_id:
        st.caption(f"{md(p.document_id)} · source {md(p.source or NONE)} · rank {p.rank or NONE}")
    st.text(p.text)


def render_rounds(st, trace: AstuteTrace) -> None:
    """One tab per consolidation round, with its badges, group cards, split / excluded passages and notes."""
    st.subheader("Consolidation")
    if not trace.rounds:
        st.text("No consolidation round ran.")
        return
    tabs = st.tabs([round_label(r) for r in trace.rounds])
    for tab, rnd in zip(tabs, trace.rounds):
        with tab:
            _render_round(st, rnd, trace)


def _render_round(st, rnd: AstuteRound, trace: AstuteTrace) -> None:
    facts = round_facts(rnd, trace)
    with st.container(horizontal=True):
        if facts["conflict"]:
            st.badge(facts["conflict_text"], color="red")
        else:
            st.badge("no conflict", color="gray")
        st.badge(f"parse: {facts['parse']}", color="red" if facts["parse_failed"] else "blue")
        st.badge(plural(facts["groups"], "group"), color="gray")
    st.text(f"split passages (cited by more than one group): {facts['split']}\n"
            f"excluded / irrelevant passages (cited by no group): {facts['excluded']}")
    for note in facts["notes"]:
        st.text(f"Note: {note}")
    for card in group_cards(rnd, trace):
        with st.container(border=True):
            with st.container(horizontal=True):
                st.markdown(f"**Group {md(card['id'])}**")
                st.badge(SOURCE_WORDS[card["derived"]], color=SOURCE_BADGES[card["derived"]])
                for label, color in card["badges"]:
                    st.badge(label, color=color)
            st.text(card["summary"] or "(no summary)")
            st.text(f"cited passages: {card['cited']}\n"
                    f"source: stated {card['stated']} · derived {card['derived']}"
                    + ("  (the model's label disagrees with its citations)" if card["disagrees"] else "")
                    + f"\ncandidate answer: {card['answer'] if card['answer'] is not None else NONE}\n"
                    f"confidence: {card['confidence']}")
    with st.expander(f"{round_label(rnd)}: the model's raw output"):
        st.code(rnd.raw or "(empty)", language=None, wrap_lines=True)


def render_candidates(st, trace: AstuteTrace, question: Question, show_truth: bool, page: str) -> None:
    st.subheader("Candidates and confidence")
    st.plotly_chart(candidates_figure(trace, question, show_truth), key=f"{page}.candidates")
    frame = candidates_frame(trace, question, show_truth)
    if not frame.empty:
        st.dataframe(frame, hide_index=True)


def render_final(st, trace: AstuteTrace, question: Question, show_truth: bool,
                 support: dict[str, list[str]] | None = None) -> None:
    """The final answer(s) and the group each maps to, the model's Step-3 rationale, the why facts, the parse
    status and notes; with the overlay, the lenient match (all gold and no wrong; a gold answer matched)."""
    st.subheader("Final decision")
    if not trace.final_answers:
        st.badge("abstained", color="gray")
        st.text(NO_CONTEXT if trace.no_context else "No final answer.")
    else:
        st.dataframe(final_frame(trace, question, show_truth, support), hide_index=True)
        for row in final_rows(trace):
            with st.container(border=True):
                st.text(f"{row['answer']}  ←  group {row['group'] or 'none'}")
                st.text("\n".join(f"• {fact}" for fact in row["facts"]))
    st.caption("Step 3: the model's rationale")
    st.text(trace.rationale or "(none given)")
    with st.container(horizontal=True):
        failed = trace.answer_parse in ("failed", "last_line")
        st.badge(f"answer parse: {trace.answer_parse}", color="red" if failed else "blue")
    st.text(answer_parse_text(trace))
    if notes := decision_notes(trace):
        st.text("\n".join(f"Note: {n}" for n in notes))
    if show_truth and question.gold_answers:
        ev = evaluation(trace.final_answers, question)
        with st.container(horizontal=True):
            # backend.scoring's lenient match (none of the papers' rules): named so, never "accuracy" or "EM"
            st.badge(f"all gold, no wrong (lenient) {'✓' if ev['strict_em'] else '✗'}",
                     color="green" if ev["strict_em"] else "red")
            st.badge(f"answer match (lenient) {'✓' if ev['accuracy'] else '✗'}",
                     color="green" if ev["accuracy"] else "red")
        st.text(f"missing gold: {'; '.join(ev['missing gold']) or NONE}\n"
                f"included wrong: {'; '.join(ev['included wrong']) or NONE}")


def render_calls(st, calls: Sequence[LLMCall], iterations: int | None = None) -> None:
    """Every call's prompt and raw response, verbatim, collapsed."""
    render_raw_calls(st, ordered_calls(calls), lambda c: call_role(c.step, iterations))


# --- the page (``components.session.views.render_method_page`` draws it) -------------------------------------------

def render_intro(st, question: Question) -> None:
    st.text(question.question)
    internal = "a simulated memory" if question.internal_knowledge else "no simulated memory"
    st.caption(f"{md(question.id)} · {plural(len(question.documents), 'external passage')} · {internal}")


def render_page(st, result: MethodResult, question: Question, show_truth: bool, page: str) -> None:
    trace = result.trace
    render_header(st, trace, question, result.calls, show_truth)
    render_internal(st, trace)
    render_passages(st, trace, question, show_truth)
    render_rounds(st, trace)
    render_candidates(st, trace, question, show_truth, page)
    render_final(st, trace, question, show_truth, result.support)
    render_calls(st, result.calls, trace.iterations)


#: this method's page in the app's view registry (``components.views``)
VIEW = View("Consolidation (Astute RAG)", ":material/merge:", "astute", "pages/astute.py", method="astute",
            intro=render_intro, run_label="Generating internal passages and consolidating", panels=render_page,
            calls=render_calls, missing="no consolidation trace",
            truth_help="Colour answers by gold / wrong and show document labels. Methods never see these.")
