"""MADAM-RAG's views (the Debate page): pure shaping of a trace (+ the question, for the truth overlay) into
frames, and the page's panels (``render_*``, each given the Streamlit module or a container as ``st``).

Everything shown comes from the trace (what ran and what it decided) or the recorded calls; the truth
overlay only compares those answers with the question's gold/wrong answers and document labels.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from backend.report.palette import KIND_COLORS
from backend.report.text import plural
from backend.schema import LLMCall, MadamAnswerSupport, MadamTrace, MadamTurn, Question
from backend.scoring import answer_kind, doc_kind, evaluation
from components.documents import render_document
from components.views import View

#: this method's page (the app's view registry, ``components.views``)
VIEW = View("Debate (MADAM-RAG)", ":material/forum:", "debate", "pages/debate.py", method="madam",
            order=15)  # in the menu right after Sources: the two views of evidence from many documents

UNKNOWN = "unknown"
CHANGED = "↻"
#: Cell background per answer kind (truth overlay), and for a changed answer without the overlay.
ANSWER_COLORS = {"gold": KIND_COLORS["correct"], "wrong": KIND_COLORS["misinfo"], "unknown": KIND_COLORS["noise"],
                 "other": KIND_COLORS["unlabelled"], "changed": KIND_COLORS["external"]}


def status_line(trace: MadamTrace) -> str:
    if trace.stop_reason == "no_documents":
        return "no documents: nothing to debate"
    why = "converged" if trace.stop_reason == "converged" else "max rounds"
    final = f"final aggregation: round {trace.final_round}" if trace.final_round else "no aggregation"
    return f"stopped at round {trace.stopped_at} of {trace.max_rounds}: {why} · {final}"


def config_line(trace: MadamTrace, calls: list[LLMCall] = ()) -> str:
    shuffle = f"shuffled (seed {trace.seed})" if trace.shuffle else "in agent order"
    models = sorted({c.model for c in calls})
    return (f"{plural(len(trace.agents), 'agent')} (one per document) · up to "
            f"{plural(trace.max_rounds, 'round')} · history: "
            f"{trace.history_mode} · aggregator reads responses {shuffle} · early stop "
            f"{'on' if trace.early_stop else 'off'} · {trace.origin}"
            + (f" · model {', '.join(models)}" if models else ""))


def _doc_kinds(question: Question) -> dict[str, str]:
    return {d.id: doc_kind(d) for d in question.documents}


def _cell(turn: MadamTurn | None) -> str:
    if turn is None:
        return ""
    text = turn.answer or UNKNOWN
    if not turn.parse_ok:
        text += " ⚠"  # the reply did not follow the format; the parse note says how it was read
    if turn.changed:
        text = f"{CHANGED} {text} (was {turn.previous_answer or UNKNOWN})"
    return text


def _turns(trace: MadamTrace) -> dict[tuple[int, int], MadamTurn]:
    return {(turn.agent, r.round): turn for r in trace.rounds for turn in r.turns}


def trajectory(trace: MadamTrace, agent: int) -> str:
    """The agent's answers over the rounds, repeats collapsed: ``10,000 → 3,559``."""
    path: list[str] = []
    for r in trace.rounds:
        turn = next((t for t in r.turns if t.agent == agent), None)
        if turn is None:
            continue
        text = turn.answer or UNKNOWN
        if not path or turn.changed:
            path.append(text)
    return " → ".join(path)


def grid_frame(trace: MadamTrace, question: Question, show_truth: bool) -> pd.DataFrame:
    """Agents × rounds: each agent's answer per round (↻ marks a change, with the previous answer)."""
    turns, kinds = _turns(trace), _doc_kinds(question)
    labels = {d.id: d.label for d in question.documents}
    rows = []
    for agent in trace.agents:
        row = {"agent": f"Agent {agent.number}", "document": agent.document_id}
        if show_truth:
            label = labels.get(agent.document_id)
            row["document type"] = kinds.get(agent.document_id, "unlabelled")
            row["document supports"] = (label.answer or "—") if label else "—"
        for r in trace.rounds:
            row[f"round {r.round}"] = _cell(turns.get((agent.number, r.round)))
        row["trajectory"] = trajectory(trace, agent.number)
        rows.append(row)
    return pd.DataFrame(rows)


def grid_colors(trace: MadamTrace, question: Question, show_truth: bool) -> pd.DataFrame:
    """CSS per grid cell, same shape as ``grid_frame``: with the overlay, colour by answer kind; without
    it, colour only the changed cells."""
    frame = grid_frame(trace, question, show_truth)
    colors = pd.DataFrame("", index=frame.index, columns=frame.columns)
    turns = _turns(trace)
    for i, agent in enumerate(trace.agents):
        for r in trace.rounds:
            turn = turns.get((agent.number, r.round))
            if turn is None:
                continue
            kind = answer_kind(turn.answer, question) if show_truth else ("changed" if turn.changed else None)
            if kind:
                weight = "; font-weight: bold" if turn.changed else ""
                colors.loc[i, f"round {r.round}"] = f"background-color: {ANSWER_COLORS[kind]}40{weight}"
    return colors


def styled_grid(trace: MadamTrace, question: Question, show_truth: bool):
    """``grid_frame`` with ``grid_colors`` applied (a pandas Styler for st.dataframe)."""
    colors = grid_colors(trace, question, show_truth)
    return grid_frame(trace, question, show_truth).style.apply(lambda _: colors, axis=None)


def rounds_frame(trace: MadamTrace, calls: list[LLMCall]) -> pd.DataFrame:
    """One row per round: changes, the stop test, the aggregation's fate, and the round's model calls
    (the cost columns only when there are call records)."""
    rows = []
    for r in trace.rounds:
        if r.round == 1:
            test = "— (not tested after round 1)"
        elif r.converged:
            test = "passed: no agent changed" + ("" if trace.early_stop else " (early stop off)")
        else:
            test = f"failed: {r.n_changed} changed"
        if r.aggregation is None:
            aggregation = "none"
        else:
            aggregation = "final" if r.round == trace.final_round else "yes"
        row = {"round": r.round, "agents changed": "—" if r.n_changed is None else str(r.n_changed),
               "stop test": test, "aggregation": aggregation, "stop": "■ stop" if r.round == trace.stopped_at else ""}
        if calls:  # a loaded trace may have no call records: then no cost columns rather than zeros
            agent_calls = [c for c in calls if c.step == f"debate_round_{r.round}"]
            agg_calls = [c for c in calls if c.step == f"aggregate_round_{r.round}"]
            both = agent_calls + agg_calls
            row.update({"agent calls": len(agent_calls), "aggregator calls": len(agg_calls),
                        "prompt tokens": sum(c.prompt_tokens for c in both),
                        "completion tokens": sum(c.completion_tokens for c in both),
                        "cached": sum(c.cache_hit for c in both),
                        "model s": round(sum(c.latency_s for c in both if not c.cache_hit), 3)})
        rows.append(row)
    return pd.DataFrame(rows)


def aggregation_rows(trace: MadamTrace) -> list[dict]:
    """Per round: what the aggregator kept, its explanation, the order it read the agents in, whether it
    is the final one; or why the round was not aggregated."""
    docs = {a.number: a.document_id for a in trace.agents}
    out = []
    for r in trace.rounds:
        agg = r.aggregation
        row = {"round": r.round, "final": agg is not None and r.round == trace.final_round}
        if agg is None:
            row.update(answers=None, explanation="", order="", note=r.no_aggregation_reason or "not aggregated",
                       parse_note=None)
        else:
            row.update(answers="; ".join(agg.answers) or "[] (unknown)", explanation=agg.explanation,
                       order=", ".join(f"Agent {a} ({docs.get(a, '?')})" for a in agg.order), note=None,
                       parse_note=agg.parse_note)
        out.append(row)
    return out


def _answers_frame(items: list[MadamAnswerSupport], question: Question, show_truth: bool,
                   tag: Callable[[MadamAnswerSupport], str] | None, with_rounds: bool) -> pd.DataFrame:
    kinds = _doc_kinds(question)
    rows = []
    for s in items:
        row = {"answer": s.answer}
        if show_truth:  # the truth columns right after the answer, where the eye is
            row["verdict" if tag is None else "tag"] = answer_kind(s.answer, question) if tag is None else tag(s)
            row["document types"] = ", ".join(kinds.get(d, "unlabelled") for d in s.documents) or "—"
        row |= {"agents": ", ".join(f"Agent {a}" for a in s.agents) or "—",
                "documents": ", ".join(s.documents) or "—"}
        if with_rounds:
            row["rounds"] = ", ".join(str(t) for t in s.rounds)
        rows.append(row)
    columns = ["answer"] + (["verdict" if tag is None else "tag", "document types"] if show_truth else [])
    columns += ["agents", "documents"] + (["rounds"] if with_rounds else [])
    return pd.DataFrame(rows, columns=columns)


def final_frame(trace: MadamTrace, question: Question, show_truth: bool) -> pd.DataFrame:
    """Each final answer with the last round's agents (and their documents) that gave it."""
    return _answers_frame(trace.support, question, show_truth, None, with_rounds=False)


def rejected_tag(item: MadamAnswerSupport, question: Question) -> str:
    """Truth overlay for a rejected answer: valid-but-missed / misinfo-suppressed / noise / other."""
    kinds = {_doc_kinds(question).get(d, "unlabelled") for d in item.documents}
    kind = answer_kind(item.answer, question)
    if kind == "gold":
        return "valid-but-missed"
    if kind == "wrong" or "misinfo" in kinds:
        return "misinfo-suppressed"
    if kinds == {"noise"}:
        return "noise"
    return "other"


def rejected_frame(trace: MadamTrace, question: Question, show_truth: bool) -> pd.DataFrame:
    """Answers some agent proposed that the final aggregation left out, with who proposed them and when."""
    return _answers_frame(trace.rejected, question, show_truth, lambda s: rejected_tag(s, question),
                          with_rounds=True)


def round_details(trace: MadamTrace, round_: int) -> list[dict]:
    """Per agent in one round: answer, explanation, parse note, the history it read, the raw reply."""
    rnd = next(r for r in trace.rounds if r.round == round_)
    return [{"agent": t.agent, "answer": t.answer or UNKNOWN, "explanation": t.explanation, "changed": t.changed,
             "parse_note": t.parse_note, "history": t.history, "raw": t.raw} for t in rnd.turns]


# --- panels (each given the Streamlit module or a container as ``st``) ----------------------------------

def render_documents(st, question: Question, show_truth: bool, page: str) -> None:
    """The question's documents: agent k reads document k."""
    with st.expander(f"Documents ({len(question.documents)}): agent k reads document k"):
        if show_truth:
            st.caption("Gold answers / wrong answers")
            st.text(f"{'; '.join(question.gold_answers) or '—'}  /  {'; '.join(question.wrong_answers) or '—'}")
        for number, doc in enumerate(question.documents, start=1):
            st.markdown(f"**Agent {number}**")
            render_document(st, doc, show_truth, key_prefix=page)


def render_rounds(st, trace: MadamTrace) -> None:
    """Per round: each agent's answer, explanation, parse note and the history it read."""
    for r in trace.rounds:
        with st.expander(f"Round {r.round}: each agent's explanation, the history it read, its raw reply"):
            for d in round_details(trace, r.round):
                st.markdown(f"**Agent {d['agent']}**" + (" ↻ changed" if d["changed"] else ""))
                st.text(f"Answer: {d['answer']}\nExplanation: {d['explanation']}")
                if d["parse_note"]:
                    st.caption("parse note")
                    st.text(d["parse_note"])
                if d["history"] is not None:
                    st.caption("history it read")
                    st.code(d["history"] or "(empty)", language=None, wrap_lines=True)


def render_aggregations(st, trace: MadamTrace) -> None:
    """The aggregator's answers per round, which one is final, and the order it read the agents in."""
    st.subheader("Aggregator, per round")
    for row in aggregation_rows(trace):
        with st.container(border=True):
            with st.container(horizontal=True):
                st.markdown(f"**Round {row['round']}**")
                if row["final"]:
                    st.badge("final", color="green")
                if row["answers"] is None:
                    st.badge("not aggregated", color="gray")
            if row["answers"] is None:
                st.text(row["note"])
                continue
            st.text(f"All Correct Answers: {row['answers']}")
            st.caption("read in this order")
            st.text(row["order"])
            if row["parse_note"]:
                st.text(f"parse note: {row['parse_note']}")
            with st.expander("explanation"):
                st.text(row["explanation"] or "—")


def render_final(st, trace: MadamTrace, question: Question, show_truth: bool) -> None:
    """The final answers with the agents and documents behind them, the rejected answers, and the scores."""
    st.subheader("Final answers")
    st.text(trace.final_note)
    if not trace.final_answers:
        st.badge("unknown", color="gray")
    st.dataframe(final_frame(trace, question, show_truth), hide_index=True)
    with st.expander("final explanation"):
        st.text(trace.final_explanation or "—")
    st.markdown("**Rejected answers** (proposed by an agent, left out of the final answers)")
    st.dataframe(rejected_frame(trace, question, show_truth), hide_index=True)
    if show_truth and question.gold_answers:
        ev = evaluation(trace.final_answers, question)
        with st.container(horizontal=True):
            # backend.scoring's lenient match (none of the papers' rules): named so, never "accuracy" or "EM"
            st.badge(f"all gold, no wrong (lenient) {'✓' if ev['strict_em'] else '✗'}",
                     color="green" if ev["strict_em"] else "red")
            st.badge(f"answer match (lenient) {'✓' if ev['accuracy'] else '✗'}",
                     color="green" if ev["accuracy"] else "red")
            st.badge(f"P {ev['precision']} · R {ev['recall']} · F1 {ev['f1']}", color="blue")
        st.text(f"missing gold: {'; '.join(ev['missing gold']) or '—'}\n"
                f"included wrong: {'; '.join(ev['included wrong']) or '—'}")
