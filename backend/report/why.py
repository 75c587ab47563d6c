"""Each method's "why" in the HTML report (issue 27): the facts its page shows, read from its trace — RA-RAG's votes
and source weights, Astute RAG's consolidated groups, MADAM-RAG's debate rounds, RC-RAG's keep / discard, BRIDGE's
scores and tree path — as compact tables and lines of text.

The method pages draw these with Streamlit and plotly (``components/<method>.py``); the backend cannot import them,
so the same facts are laid out again here, as HTML only (no chart: a report of seven methods stays small and opens
with no script). [ours] One function per trace type, chosen by the trace's class; a trace of a method this module
does not know shows its ``key_facts()``. Every piece of dataset or model text is escaped (``_e``); long text is cut
to ``SNIPPET`` characters and long tables to ``MAX_ROWS`` rows, so one odd reply cannot swell the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from backend.report.palette import VARIANT_LABELS
from backend.report.text import html_text as _e
from backend.report.text import snippet
from backend.schema import MethodResult
from backend.schema.traces.astute import AstuteRound, AstuteTrace
from backend.schema.traces.baselines import BaselineTrace
from backend.schema.traces.bridge import BridgeCycle, BridgeTrace, PairScore
from backend.schema.traces.counterfactual import CFMatch, CounterfactualTrace
from backend.schema.traces.madam import MadamTrace
from backend.schema.traces.ra_rag import RARAGTrace
from backend.story import StoryContext

SNIPPET = 240
MAX_ROWS = 40
IDK = "I don't know"
NONE = "—"
WALK_WORDS = {"selected": "selected", "skipped": "skipped (IDK)", "not_queried": "never queried"}
LEAF_WORDS = {"FA": "integrate all knowledge", "FI": "trust internal knowledge", "FE": "trust external knowledge",
              "RA": "refuse to answer", "REFLECT": "reflect: new sub-queries"}
KIND_MARKS = {"gold": "✓ gold", "wrong": "✗ planted wrong answer", "other": "other", "unknown": ""}


def _num(x: float | None, digits: int = 2) -> str:
    return NONE if x is None else f"{x:.{digits}f}"


def p(text: str, cls: str = "") -> str:
    """One paragraph of plain text (escaped)."""
    return f"<p{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}>{_e(text)}</p>"


def table(head: Sequence[str], rows: Iterable[Sequence[object]], caption: str = "") -> str:
    """A table of plain-text cells (every cell escaped); rows past ``MAX_ROWS`` are counted, not shown."""
    rows = list(rows)
    shown = rows[:MAX_ROWS]
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in shown)
    more = (f"<tr><td colspan='{len(head)}' class='muted'>+{len(rows) - MAX_ROWS} more rows</td></tr>"
            if len(rows) > MAX_ROWS else "")
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    return (f"<table class='why'>{cap}<tr>{''.join(f'<th>{_e(h)}</th>' for h in head)}</tr>{body}{more}</table>")


def _kind(answer: str | None, ctx: StoryContext) -> str:
    kind = ctx.kind(answer) if answer else None
    return KIND_MARKS.get(kind, "") if kind else ""


# --- RA-RAG ---------------------------------------------------------------------------------------------------

def ra_rag(result: MethodResult, t: RARAGTrace, ctx: StoryContext) -> list[str]:
    label = (lambda s: ctx.doc(s)) if t.per_document else (lambda s: s)
    out = [p("Answer per aggregation: " + " · ".join(f"{VARIANT_LABELS.get(v, v)}: {a or IDK}"
                                                      for v, a in t.answers.items() if v != "oracle_wmv" or ctx.truth)
             + f" (this run reports {VARIANT_LABELS.get(t.variant, t.variant)})."),
           p(f"Weights: {t.weights_note}", "muted")]
    variants = ["mv", "wmv", "rrss"] + (["oracle_wmv"] if ctx.truth is not None else [])
    out.append(table(["answer", "voting sources"] + [VARIANT_LABELS.get(v, v) for v in variants],
                     [[v.answer, ", ".join(label(s) for s in v.sources) or NONE]
                      + [_num(getattr(v, k), 3) for k in variants] for v in t.votes],
                     "Votes per answer (MV counts sources; WMV and κ-RRSS sum their weights v)"))
    if t.walk:
        counts = {k: sum(w.status == k for w in t.walk) for k in WALK_WORDS}
        out.append(p(f"κ-RRSS walk, κ = {t.kappa}: sources in descending weight; {counts['selected']} selected, "
                     f"{counts['skipped']} skipped as IDK, {counts['not_queried']} never queried "
                     f"({t.walk_calls} model calls)."))
    status = {w.source: WALK_WORDS[w.status] for w in t.walk}
    out.append(table(["rank", "source", "weight v", "estimated ŵ", "κ-RRSS", "documents", "its answer", "why IDK"],
                     [[s.rank, label(s.source), _num(s.weight, 3), _num(s.estimated, 3), status.get(s.source, NONE),
                       ", ".join(ctx.doc(d) for d in s.documents) or NONE,
                       s.filtered_answer if s.filtered_answer is not None else (IDK if s.queried else NONE),
                       s.filter_reason or ("" if s.queried else "never queried")] for s in t.sources],
                     "Per-source answers"))
    return out


# --- Astute RAG -----------------------------------------------------------------------------------------------

def _astute_round(rnd: AstuteRound, t: AstuteTrace, finals: set[str]) -> str:
    origin = {ps.number: ps.origin for ps in t.passages}
    label = f"round {rnd.round}" + (" (final: consolidation, answers and the pick)" if rnd.final else
                                    " (consolidation)")
    rows = [[g.id + (" ★ picked" if rnd.final and g.id in finals else ""),
             ", ".join(f"{n} ({origin.get(n, '?')})" for n in g.documents) or NONE, g.source,
             g.answer or NONE, _num(g.confidence), snippet(g.summary, 160)] for g in rnd.groups]
    extra = []
    if rnd.conflict:
        extra.append("conflict: the groups propose different answers")
    if rnd.excluded:
        extra.append("left out as irrelevant: passages " + ", ".join(map(str, rnd.excluded)))
    return table(["group", "cited passages", "source", "candidate answer", "confidence", "summary"], rows,
                 f"Consolidation {label}" + (f" — {'; '.join(extra)}" if extra else ""))


def astute(result: MethodResult, t: AstuteTrace, ctx: StoryContext) -> list[str]:
    gen = t.generation
    n_int = sum(ps.origin == "internal" for ps in t.passages)
    out = [p(f"Passages D0: {len(t.passages) - n_int} retrieved (external) + {n_int} written from the model's own "
             f"memory (internal)" + (f"; {len(gen.dropped)} generated passage(s) dropped" if gen and gen.dropped
                                     else "") + ".")]
    if t.no_context:
        out.append(p("No passage at all: nothing to consolidate, no answer call."))
    finals = {g for g in t.final_groups if g}
    out += [_astute_round(r, t, finals) for r in t.rounds]
    picks = [f"{a} (group {g or 'none'})" for a, g in zip(t.final_answers, t.final_groups + [None] * len(t.final_answers))]
    out.append(p("Final pick: " + ("; ".join(picks) if picks else "none (abstained)") + "."))
    if t.rationale:
        out.append(p(f"Its reason, as the model wrote it: {snippet(t.rationale, SNIPPET)}", "muted"))
    return out


# --- MADAM-RAG ------------------------------------------------------------------------------------------------

def madam(result: MethodResult, t: MadamTrace, ctx: StoryContext) -> list[str]:
    if t.stop_reason == "no_documents":
        return [p("No documents: nothing to debate.")]
    why = "it converged (no agent changed its answer)" if t.stop_reason == "converged" else "of the round limit"
    out = [p(f"{len(t.agents)} agents, one per document, debated for {t.stopped_at} of at most {t.max_rounds} rounds; "
             f"they stopped because {why}. Final answers from the aggregator of round {t.final_round or NONE}.")]
    turns = {(turn.agent, r.round): turn for r in t.rounds for turn in r.turns}
    rounds = [r.round for r in t.rounds]

    def cell(agent: int, rnd: int) -> str:
        turn = turns.get((agent, rnd))
        if turn is None:
            return ""
        text = turn.answer or "unknown"
        if turn.changed:
            text = f"↻ {text} (was {turn.previous_answer or 'unknown'})"
        mark = _kind(turn.answer, ctx)
        return f"{text} · {mark}" if mark else text
    out.append(table(["agent", "document"] + [f"round {r}" for r in rounds],
                     [[f"Agent {a.number}", ctx.doc(a.document_id)] + [cell(a.number, r) for r in rounds]
                      for a in t.agents], "Each agent's answer per debate round (↻: changed its answer)"))
    rows = []
    for r in t.rounds:
        agg = r.aggregation
        rows.append([r.round, NONE if r.n_changed is None else r.n_changed,
                     "; ".join(agg.answers) or NONE if agg else (r.no_aggregation_reason or "none"),
                     snippet(agg.explanation, 200) if agg else "",
                     "✓" if r.round == t.final_round else ""])
    out.append(table(["round", "agents changed", "aggregator's answers", "aggregator's explanation", "final"], rows,
                     "Rounds"))
    if t.rejected:
        out.append(p("Rejected (proposed by an agent, left out of the final answers): "
                     + "; ".join(f"{r.answer} (agents {', '.join(map(str, r.agents))})" for r in t.rejected) + "."))
    return out


# --- RC-RAG (counterfactual prompting) ---------------------------------------------------------------------------

def _match(m: CFMatch) -> str:
    if m.compared == "nothing":
        return "nothing to compare → changed"
    tests = f"exact {'✓' if m.exact else '✗'} · substring {'✓' if m.substring else '✗'} · F1 {m.f1:.2f} · " \
            f"ROUGE-L {m.rouge_l:.2f} (θ {m.threshold:g})"
    return f"{tests} → " + (f"same ({m.fired})" if m.same else "changed")


def counterfactual(result: MethodResult, t: CounterfactualTrace, ctx: StoryContext) -> list[str]:
    rag = t.rag
    out = [p(f"Decision: {t.decision.upper()} — {t.reason or NONE}")]
    if rag is not None:
        cited = ", ".join(f"Passage-{n}" for n in rag.passages) or "no passage"
        out.append(p(f"RAG answer: {rag.answer or '(empty)'} · cites {cited}"
                     + (f" · a refusal (“{rag.reject_phrase}”)" if rag.reject else "") + "."))
    rows = [[b.scenario, r.round, r.reply.answer or "(empty)", _match(r.match), r.decision]
            for b in t.branches for r in b.rounds]
    out.append(table(["counterfactual branch", "round", "regenerated answer", "same as the RAG answer?",
                      "judgment"], rows, "Counterfactual branches (same answer → keep, changed → discard)"))
    branches = ", ".join(f"{b.scenario}: {b.decision}" for b in t.branches) or NONE
    f = t.fusion
    if t.agree or f is None:
        out.append(p(f"Branches agree ({branches}): no fusion needed."))
    elif f.strategy == "direct":
        out.append(p(f"Branches disagree ({branches}): direct selection asked the {f.branch} branch; it chose "
                     f"{f.choice or NONE} → {f.decision}."))
    elif f.strategy == "probability":
        probs = ", ".join(f"{k} p = {v:.2f}" for k, v in f.probabilities.items()) or NONE
        out.append(p(f"Branches disagree ({branches}): probability comparison ({probs}); "
                     + (f"the {f.winner} branch wins → {f.decision}." if f.winner else f"a tie → {f.decision}.")))
    else:
        out.append(p(f"Branches disagree ({branches}): safety discards → {f.decision}."))
    if t.override:
        out.append(p("A kept refusal counts as a discard: keep → discard."))
    return out


# --- BRIDGE ------------------------------------------------------------------------------------------------------

def _score_row(name: str, s: PairScore, pair: str) -> list[str]:
    return [name, pair, f"{s.total:.2f}", f"{s.sparse:.2f}", f"{s.dense:.2f}", f"{s.colbert:.2f}", str(s.pairs)]


PAIRS = {"S1": "K_int ↔ K_ext", "S2": "K_int ↔ K_gen", "S3": "K_ext ↔ K_ret", "S4": "K_gen ↔ K_ret"}


def _cycle(c: BridgeCycle, t: BridgeTrace) -> list[str]:
    head = f"Cycle {c.cycle}" + (" (initial)" if c.cycle == 0 else " (reflection)")
    out = [table(["score", "pair", "total", "sparse", "dense", "ColBERT", "pairs"],
                 [_score_row(n, s, PAIRS[n]) for n, s in (("S1", c.s1), ("S2", c.s2), ("S3", c.s3), ("S4", c.s4))],
                 f"{head}: knowledge consistency scores")]
    if c.t_ret is not None and c.t_llm is not None:
        out.append(p(f"T_Ret = r_p × [S3 + 1 − S2] = {c.t_ret:.2f} · T_LLM = g_p × [S2 + 1 − S3] = {c.t_llm:.2f}"))
    steps = " → ".join([f"{n.node} {'yes' if n.result else 'no'}" for n in c.path] + [c.outcome])
    out.append(table(["node", "condition", "with the numbers", "branch"],
                     [[n.node, n.condition, n.filled, "yes" if n.result else "no"] for n in c.path],
                     f"{head}: decision-tree path {steps}"))
    return out


def bridge(result: MethodResult, t: BridgeTrace, ctx: StoryContext) -> list[str]:
    last = t.cycles[-1] if t.cycles else None
    path = " → ".join([f"{n.node} {'yes' if n.result else 'no'}" for n in last.path] + [last.outcome]) if last else NONE
    out = [p(f"Leaf {t.leaf} ({LEAF_WORDS.get(t.leaf, t.leaf)}) by the tree path {path}"
             + (" — reflection ran out, so RA" if t.defaulted_to_ra else "") + "."),
           p(f"Soft bias: r_p = {t.r_p:.2f} (retrieval), g_p = {t.g_p:.2f} (generation); α = {t.alpha:g}, "
             f"β = {t.beta:g}; the responder read {', '.join(t.knowledge_used) or 'nothing'}.")]
    for c in t.cycles:
        out += _cycle(c, t)
    return out


# --- the baselines and any other method -------------------------------------------------------------------------

def baseline(result: MethodResult, t: BaselineTrace, ctx: StoryContext) -> list[str]:
    read = ("no document (closed book)" if t.evidence_mode == "none"
            else f"{len(t.documents)} document(s): " + (", ".join(ctx.doc(d) for d in t.documents) or NONE))
    out = [p(f"Read {read}; parsed answer: {t.parsed_answer or IDK}.")]
    if t.parse_note:
        out.append(p(f"How the reply was read: {t.parse_note}", "muted"))
    return out


def generic(result: MethodResult, t, ctx: StoryContext) -> list[str]:
    facts = t.key_facts() if hasattr(t, "key_facts") else {}
    return [table(["fact", "value"], list(facts.items()))] if facts else []


VIEWS: dict[type, Callable[..., list[str]]] = {RARAGTrace: ra_rag, AstuteTrace: astute, MadamTrace: madam,
                                               CounterfactualTrace: counterfactual, BridgeTrace: bridge,
                                               BaselineTrace: baseline}


def why_html(result: MethodResult, ctx: StoryContext) -> str:
    """A method's "why" as HTML (empty when it has no trace: a failed run)."""
    t = result.trace
    if t is None:
        return ""
    view = next((v for cls, v in VIEWS.items() if isinstance(t, cls)), generic)
    try:
        return "".join(view(result, t, ctx))
    except Exception:  # noqa: BLE001 - a report is a view: an odd trace gets its key facts, not a crash
        return "".join(generic(result, t, ctx))


__all__ = ["why_html", "table"]
