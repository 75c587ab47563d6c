"""BRIDGE's views (the Decision path page): pure shaping of a ``BridgeTrace`` (+ the question, for the options and
the truth overlay, + the recorded calls) into frames, plotly figures and strings, and the page's panels
(``render_*``, each given the Streamlit module or a container as ``st``).
docs/methods/bridge.md §7 lists what is shown.

Every number comes from the trace (what the allocator read, the scorer's components, the nodes the tree visited with
the values it compared) or from ``backend.methods.bridge.tree`` (the phase map's regions, computed with the same
``decide`` the method ran). The S1–S4 pair mapping is our inference
(docs/methods/bridge.md §3 Step 3, §8.1; the paper's Figure 2 is missing) and is labelled so. The truth overlay (the scenario label, the gold option) is joined in only when asked for.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from backend.answer_text import mentions
from backend.answers import normalize
from backend.llm.formats import is_idk
from backend.methods.bridge import LEAF_KNOWLEDGE, decide
from backend.methods.bridge.method import SPEC
from backend.report.layout import TITLE_PX, legend_above
from backend.report.palette import KIND_COLORS
from backend.report.text import plural, snippet
from backend.schema import BridgeCycle, BridgeKnowledge, BridgeTrace, LLMCall, MethodResult, PairScore, Question
from components.calls import cost_line, render_raw_calls, roles_frame
from components.safe import md
from components.views import View


NONE = "—"
IDK_ABSTAINED = "I don't know (abstained)"
SNIPPET_CHARS = 140
INFERRED = "our reading"  # docs/methods/bridge.md §8.1: the paper's Figure 2 is missing
YES, NO = "✓", "✗"
OUTCOMES = ("FA", "FI", "FE", "RA", "REFLECT")
STRATEGY = {"FA": "integrate all", "FI": "trust internal", "FE": "trust external", "RA": "refuse",
            "REFLECT": "reflect: collect again"}
#: Leaves and regions: internal purple and external blue as everywhere; FA green (both agree), RA grey, REFLECT amber.
OUTCOME_COLORS = {"FA": KIND_COLORS["correct"], "FI": KIND_COLORS["internal"], "FE": KIND_COLORS["external"],
                  "RA": "#616161", "REFLECT": KIND_COLORS["unlabelled"]}
OUTCOME_BADGES = {"FA": "green", "FI": "violet", "FE": "blue", "RA": "gray", "REFLECT": "orange"}
SCENARIO_WORDS = {"FA": "faithful to all knowledge", "FI": "faithful to internal knowledge",
                  "FE": "faithful to external knowledge", "RA": "refuse to answer"}
PAIRS = {"S1": ("K_int", "K_ext"), "S2": ("K_int", "K_gen"), "S3": ("K_ext", "K_ret"), "S4": ("K_gen", "K_ret")}
AGGREGATION = {"S1": "one pair", "S2": "mean over K_gen of score(g, K_int)", "S3": "mean over K_ret of score(r, K_ext)",
               "S4": "mean over all (g, r) pairs"}
NO_INTERNAL = "None: the model had no internal knowledge (closed-book reply \"I don't know\"), so S1 = S2 = 0."
TREE_TITLE = "Maximum Soft-bias Decision Tree"
PHASE_TITLE = "Phase map: which leaf the tree picks for r_p and D = S3 − S2 (S1 = S4 = 0)"
#: two lines: on one, the title is wider than the chart on a 1024 px laptop (issue 27)
SQUARE_TITLE = f"S1–S4 between the four knowledge sets<br>(pairs: {INFERRED})"
BIAS_TITLE = "Soft bias"


def _f(x: float | None, digits: int = 2) -> str:
    return NONE if x is None else f"{x:.{digits}f}"


# --- header ----------------------------------------------------------------------------------------------

def allocator_text(trace: BridgeTrace) -> str:
    if trace.allocator == "fixed":
        return "fixed r_p = g_p = 100% (the paper's w/o-Allocator ablation)"
    return f"ICL ({plural(len(trace.demos), 'demonstration')})"


def weights_text(trace: BridgeTrace) -> str:
    w = trace.weights
    return " + ".join(f"{w.get(k, 0):g} {name}" for k, name in (("sparse", "sparse"), ("dense", "dense"),
                                                                 ("colbert", "ColBERT")))


def reflections(trace: BridgeTrace) -> int:
    return sum(c.cycle > 0 for c in trace.cycles)


def config_line(trace: BridgeTrace, calls: Sequence[LLMCall] = ()) -> str:
    """Allocator mode, α, β, n, the reflection budget, the scorer weights, the model and the call count."""
    line = (f"allocator {allocator_text(trace)} · α = {trace.alpha:g} · β = {trace.beta:g} · n = {trace.n} · "
            f"max {plural(trace.max_reflections, 'reflection')} · scorer {weights_text(trace)}")
    models = sorted({c.model for c in calls})
    if models:
        line += f" · model {', '.join(models)}"
    if calls:
        line += f" · {plural(len(calls), 'call')}"
    return line


def leaf_text(leaf: str) -> str:
    return f"{leaf} ({STRATEGY[leaf]})"


def chosen_text(trace: BridgeTrace, question: Question) -> str:
    """``B. 2 July 1829``, the free-form answer, or "I don't know" (RA, or the "I don't know" option)."""
    if trace.option is not None:
        i = "ABCDEFGH".index(trace.option)
        return f"{trace.option}. {question.options[i]}" if i < len(question.options) else trace.option
    if trace.leaf == "RA":
        idk = idk_option(question)
        return f"{idk[0]}. {idk[1]} (no responder call)" if idk else "I don't know (no responder call)"
    return trace.answer or "no answer could be read"


def idk_option(question: Question) -> tuple[str, str] | None:
    for i, o in enumerate(question.options):
        if is_idk(o):
            return "ABCDEFGH"[i], o
    return None


def status_line(trace: BridgeTrace, question: Question) -> str:
    n = reflections(trace)
    cycles = "no reflection" if not n else f"{plural(n, 'reflection cycle')} of {trace.max_reflections}"
    line = f"leaf {leaf_text(trace.leaf)} · {cycles}"
    if trace.defaulted_to_ra:
        line += " · defaulted to RA"
    return f"{line} · answer: {chosen_text(trace, question)}"


# --- truth overlay -----------------------------------------------------------------------------------------

def gold_option(question: Question) -> tuple[str, str] | None:
    """(letter, text) of the option matching a gold answer (normalised), if any."""
    gold = {normalize(g) for g in question.gold_answers}
    for i, o in enumerate(question.options):
        if normalize(o) in gold:
            return "ABCDEFGH"[i], o
    return None


def truth_facts(trace: BridgeTrace, question: Question) -> dict:
    """The scenario label, the gold option, whether the leaf matches the scenario and whether the answer is right."""
    scenario = question.meta.get("scenario") if isinstance(question.meta, dict) else None
    gold = gold_option(question)
    chosen = trace.option or ((idk_option(question) or (None,))[0] if trace.leaf == "RA" else None)
    if gold is not None:
        correct = chosen == gold[0]
    elif question.gold_answers:
        answer = trace.answer or ""
        correct = bool(answer) and normalize(answer) in {normalize(g) for g in question.gold_answers}
    else:
        correct = None
    return {"scenario": scenario, "scenario_text": f"{scenario} ({SCENARIO_WORDS[scenario]})"
            if scenario in SCENARIO_WORDS else (scenario or "unknown"),
            "gold": f"{gold[0]}. {gold[1]}" if gold else ("; ".join(question.gold_answers) or NONE),
            "leaf_matches": None if scenario not in SCENARIO_WORDS else trace.leaf == scenario,
            "correct": correct}


def scorer_blind_spots(trace: BridgeTrace, question: Question) -> list[str]:
    """Ground truth (the truth overlay only): each K_ext document whose label states another answer than the memory
    (K_int) while the Knowledge Scorer rates K_int and K_ext as agreeing (S1 > α), said plainly. An answer swap barely
    moves the scorer's similarity (docs/methods/bridge.md §8.16): the method cannot know, the page can. The memory's
    answer is the first of the question's gold, wrong and document answers that K_int states; none, no note."""
    if trace.k_int_idk or not trace.k_int or not trace.cycles or trace.cycles[0].s1.total <= trace.alpha:
        return []
    s1 = trace.cycles[0].s1.total
    docs = {d.id: d for d in question.documents}
    stated = [d for i in trace.k_ext_ids if (d := docs.get(i)) is not None and d.label and d.label.answer]
    known = [*question.gold_answers, *question.wrong_answers, *(d.label.answer for d in stated)]
    memory = next((a for a in known if not is_idk(a) and mentions(trace.k_int, a)), None)
    if memory is None:
        return []
    gold = {normalize(g) for g in question.gold_answers}
    held = f", K_ext holding {', '.join(trace.k_ext_ids)}" if len(trace.k_ext_ids) > 1 else ""
    score = f"S1 = {s1:.{2 if round(s1, 2) > trace.alpha else 3}f} > α = {trace.alpha:g}"   # never "0.50 > 0.5"
    notes = []
    for d in stated:
        if mentions(trace.k_int, d.label.answer):
            continue
        if d.label.type == "misinfo":
            what = (f"the misinformation passage {d.id} (it says “{d.label.answer}”) from the memory it "
                    f"contradicts (it says “{memory}”)")
        elif normalize(memory) not in gold:
            what = (f"the memory (it says “{memory}”, a wrong answer) from the passage {d.id} it contradicts "
                    f"(it says “{d.label.answer}”)")
        else:
            continue
        notes.append(f"BRIDGE's similarity scorer cannot tell {what}: {score}{held}, so it rates them as agreeing.")
    return notes


# --- Step 1: the soft bias -----------------------------------------------------------------------------------

def allocation_text(trace: BridgeTrace) -> str:
    return (f"s_r = ⌈r_p · n⌉ = ⌈{trace.r_p:g} × {trace.n}⌉ = {trace.s_r} sub-queries to the retriever · "
            f"s_g = ⌈g_p · n⌉ = ⌈{trace.g_p:g} × {trace.n}⌉ = {trace.s_g} to the generator")


def bias_figure(trace: BridgeTrace) -> go.Figure:
    """Two horizontal bars, r_p (retrieval, blue) and g_p (generation, purple), in percent."""
    labels = ["r_p: retrieval dependency", "g_p: generation dependency"]
    values = [trace.r_p * 100, trace.g_p * 100]
    fig = go.Figure(go.Bar(x=values, y=labels, orientation="h", text=[f"{v:.0f}%" for v in values],
                           textposition="auto",
                           marker_color=[KIND_COLORS["external"], KIND_COLORS["internal"]],
                           hovertemplate="%{y}: %{x:.0f}%<extra></extra>"))
    fig.update_layout(title=BIAS_TITLE, height=200, margin=dict(t=TITLE_PX, b=40, l=190, r=20), showlegend=False)
    fig.update_xaxes(range=[0, 100], title_text="%", dtick=10)
    fig.update_yaxes(autorange="reversed")
    return fig


def demos_frame(trace: BridgeTrace) -> pd.DataFrame:
    rows = [{"#": i, "demonstration question": d.question, "similarity": round(d.similarity, 3),
             "pseudo label": f"retrieve {d.retrieve}% / answer directly {100 - d.retrieve}%"}
            for i, d in enumerate(trace.demos, start=1)]
    return pd.DataFrame(rows, columns=["#", "demonstration question", "similarity", "pseudo label"])


# --- Step 2: sub-queries and knowledge -------------------------------------------------------------------------

def subqueries_frame(cycle: BridgeCycle) -> pd.DataFrame:
    rows = [{"rank": s.rank, "sub-query": s.text, "→ retriever": YES if s.to_retriever else NO,
             "→ generator": YES if s.to_generator else NO} for s in cycle.sub_queries]
    return pd.DataFrame(rows, columns=["rank", "sub-query", "→ retriever", "→ generator"])


def _score_cols(score: PairScore | None) -> dict:
    if score is None:
        return {"sparse": None, "dense": None, "colbert": None, "total": None}
    return {"sparse": round(score.sparse, 3), "dense": round(score.dense, 3), "colbert": round(score.colbert, 3),
            "total": round(score.total, 3)}


def gen_frame(cycle: BridgeCycle) -> pd.DataFrame:
    """K_gen: the sub-query, the generated answer, "I don't know" flagged, and its score against K_int."""
    rows = [{"#": i, "sub-query": k.sub_query, "answer": k.text, "I don't know": "⚑ yes" if k.idk else "",
             **_score_cols(k.score)} for i, k in enumerate(cycle.k_gen, start=1)]
    return pd.DataFrame(rows, columns=["#", "sub-query", "answer", "I don't know", "sparse", "dense", "colbert",
                                       "total"])


def ret_frame(cycle: BridgeCycle) -> pd.DataFrame:
    """K_ret: the sub-query, the document retrieved, its retrieval score, the passage, and its score against K_ext."""
    rows = [{"#": i, "sub-query": k.sub_query, "document": k.document_id or "none found",
             "retrieval score": k.retrieval_score, "passage": snippet(k.text, SNIPPET_CHARS), **_score_cols(k.score)}
            for i, k in enumerate(cycle.k_ret, start=1)]
    return pd.DataFrame(rows, columns=["#", "sub-query", "document", "retrieval score", "passage", "sparse", "dense",
                                       "colbert", "total"])


def distinct_documents(items: Sequence[BridgeKnowledge]) -> int:
    return len({k.document_id for k in items if k.document_id})


# --- Step 3: S1–S4 ----------------------------------------------------------------------------------------------

def scores(cycle: BridgeCycle) -> dict[str, PairScore]:
    return {"S1": cycle.s1, "S2": cycle.s2, "S3": cycle.s3, "S4": cycle.s4}


def scores_frame(cycle: BridgeCycle, trace: BridgeTrace) -> pd.DataFrame:
    """One row per score: the pair (inferred mapping), how it aggregates, the components and the total."""
    rows = []
    for name, s in scores(cycle).items():
        a, b = PAIRS[name]
        note = AGGREGATION[name]
        if trace.k_int_idk and name in ("S1", "S2"):
            note += " (K_int is None: 0)"
        rows.append({"score": name, "pair": f"{a} ↔ {b}", "aggregation": note, "pairs scored": s.pairs,
                     **_score_cols(s)})
    return pd.DataFrame(rows, columns=["score", "pair", "aggregation", "pairs scored", "sparse", "dense", "colbert",
                                       "total"])


SQUARE_POS = {"K_int": (0, 1), "K_ext": (1, 1), "K_gen": (0, 0), "K_ret": (1, 0)}
SQUARE_COLORS = {"K_int": KIND_COLORS["internal"], "K_gen": KIND_COLORS["internal"],
                 "K_ext": KIND_COLORS["external"], "K_ret": KIND_COLORS["external"]}


def square_figure(cycle: BridgeCycle, trace: BridgeTrace) -> go.Figure:
    """K_int—S1—K_ext along the top, K_int—S2—K_gen left, K_ext—S3—K_ret right, K_gen—S4—K_ret bottom; an edge's
    width grows with its score."""
    fig = go.Figure()
    for name, s in scores(cycle).items():
        (x0, y0), (x1, y1) = (SQUARE_POS[p] for p in PAIRS[name])
        fig.add_trace(go.Scatter(x=[x0, x1], y=[y0, y1], mode="lines", name=name, showlegend=False,
                                 line=dict(width=1 + 9 * s.total, color="#90a4ae"), hoverinfo="skip"))
        fig.add_annotation(x=(x0 + x1) / 2, y=(y0 + y1) / 2, showarrow=False, bgcolor="white",
                           bordercolor="#90a4ae", borderwidth=1, font=dict(size=13),
                           text=f"<b>{name}</b> = {s.total:.2f}<br><span style='font-size:10px'>sparse "
                                f"{s.sparse:.2f} · dense {s.dense:.2f} · colbert {s.colbert:.2f}</span>")
    sizes = {"K_int": 1, "K_ext": 1, "K_gen": len(cycle.k_gen), "K_ret": len(cycle.k_ret)}
    names = list(SQUARE_POS)
    labels = [f"{n}<br>{'None' if n == 'K_int' and trace.k_int_idk else plural(sizes[n], 'item')}" for n in names]
    fig.add_trace(go.Scatter(x=[SQUARE_POS[n][0] for n in names], y=[SQUARE_POS[n][1] for n in names],
                             mode="markers+text", text=labels, textposition="middle center", showlegend=False,
                             marker=dict(size=70, color=[SQUARE_COLORS[n] for n in names], opacity=0.9),
                             textfont=dict(color="white", size=12), hoverinfo="skip"))
    fig.update_layout(title=SQUARE_TITLE, height=400, margin=dict(t=TITLE_PX + 20, b=20, l=20, r=20),
                      plot_bgcolor="rgba(0,0,0,0)")
    fig.update_xaxes(visible=False, range=[-0.3, 1.3])
    fig.update_yaxes(visible=False, range=[-0.3, 1.3])
    return fig


# --- Step 4: the tree ----------------------------------------------------------------------------------------------

def t_lines(cycle: BridgeCycle, trace: BridgeTrace) -> list[str]:
    """T_Ret and T_LLM with their factors (Eqs. 5-6), or why they were not needed."""
    if cycle.t_ret is None or cycle.t_llm is None:
        return ["T_Ret and T_LLM were not computed: N0 found no conflict (S1 + S4 > 1), so the tree stopped at FA."]
    s2, s3 = cycle.s2.total, cycle.s3.total
    return [f"T_Ret = r_p × [S3 + 1 − S2] = {trace.r_p:.2f} × [{s3:.2f} + 1 − {s2:.2f}] = {cycle.t_ret:.2f}",
            f"T_LLM = g_p × [S2 + 1 − S3] = {trace.g_p:.2f} × [{s2:.2f} + 1 − {s3:.2f}] = {cycle.t_llm:.2f}",
            f"D = S3 − S2 = {s3 - s2:+.2f}"]


#: Tree layout: node -> (x, y); the two RA leaves are drawn apart (RA@N3, RA@N5).
TREE_POS = {"N0": (2.0, 4), "FA": (0.0, 3), "N2": (4.0, 3), "N3": (2.0, 2), "N4": (6.0, 2), "FI": (1.0, 1),
            "RA@N3": (3.0, 1), "FE": (5.0, 1), "N5": (7.0, 1), "RA@N5": (6.0, 0), "REFLECT": (8.0, 0)}
#: (parent, child, branch)
TREE_EDGES = [("N0", "FA", True), ("N0", "N2", False), ("N2", "N3", True), ("N2", "N4", False),
              ("N3", "FI", True), ("N3", "RA@N3", False), ("N4", "FE", True), ("N4", "N5", False),
              ("N5", "RA@N5", True), ("N5", "REFLECT", False)]
TREE_CONDITIONS = {"N0": "S1 + S4 > 2 − (S1 + S4)?", "N2": "T_Ret < T_LLM?", "N3": "T_LLM > α?",
                   "N4": "T_Ret ≥ β?", "N5": "T_Ret < α?"}


def _leaf_of(node_id: str) -> str:
    return node_id.split("@")[0]


def tree_path(cycle: BridgeCycle) -> tuple[list[str], list[tuple[str, str]]]:
    """The visited tree nodes (the leaf included, as laid out in ``TREE_POS``) and the edges taken."""
    children = {(p, b): c for p, c, b in TREE_EDGES}
    nodes, edges = [], []
    for node in cycle.path:
        child = children.get((node.node, node.result))
        nodes.append(node.node)
        if child is not None:
            edges.append((node.node, child))
    if edges:
        nodes.append(edges[-1][1])
    return nodes, edges


def _edge_label(node) -> str:
    return f"{node.left:.2f} {node.op} {node.right:.2f} ? {'yes' if node.result else 'no'}"


def tree_figure(cycle: BridgeCycle, trace: BridgeTrace, title: str | None = None) -> go.Figure:
    """The §3 tree: the visited nodes and edges highlighted (thick, dark), the comparison's numbers on each edge
    taken, the leaf reached in its colour. One trace per edge, named ``parent→child``; a taken edge's ``meta`` is
    "taken"."""
    nodes, taken = tree_path(cycle)
    by_node = {n.node: n for n in cycle.path}
    fig = go.Figure()
    for parent, child, branch in TREE_EDGES:
        (x0, y0), (x1, y1) = TREE_POS[parent], TREE_POS[child]
        on = (parent, child) in taken
        trim = 0.16  # the edge stops short of both nodes so it never crosses a label or a marker
        xs = [x0 + trim * (x1 - x0), x1 - trim * (x1 - x0)]
        ys = [y0 + trim * (y1 - y0), y1 - trim * (y1 - y0)]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"{parent}→{child}", showlegend=False,
                                 meta="taken" if on else "not taken", hoverinfo="skip",
                                 line=dict(width=4 if on else 1.5, color="#212121" if on else "#cfd8dc",
                                           dash=None if on else "dot")))
        label = "yes" if branch else "no"
        if on:
            label = f"<b>{html.escape(_edge_label(by_node[parent]))}</b>"
        fig.add_annotation(x=x0 + 0.45 * (x1 - x0), y=y0 + 0.45 * (y1 - y0), text=label, showarrow=False,
                           bgcolor="white" if on else "rgba(255,255,255,0.6)",
                           font=dict(size=12 if on else 10, color="#212121" if on else "#90a4ae"))
    ids = list(TREE_POS)
    reached = nodes[-1] if nodes else None
    colors, sizes, texts, lines, hovers = [], [], [], [], []
    for n in ids:
        leaf = n not in TREE_CONDITIONS
        visited = n in nodes
        if leaf:
            colors.append(OUTCOME_COLORS[_leaf_of(n)] if visited else "#eceff1")
            texts.append(f"<b>{_leaf_of(n)}</b>" + (" ◀ reached" if n == reached else ""))
        else:
            colors.append("#fff3e0" if visited else "#fafafa")
            texts.append(f"<b>{n}</b>  {html.escape(TREE_CONDITIONS[n])}")
        sizes.append(26 if leaf else 22)
        lines.append(4 if visited else 1)
        if n in by_node:
            hovers.append(html.escape(f"{n}: {by_node[n].filled}"))
        elif leaf:
            hovers.append(f"{_leaf_of(n)}: {STRATEGY[_leaf_of(n)]}" + (" (reached)" if n == reached else ""))
        else:
            hovers.append(html.escape(f"{n}: {TREE_CONDITIONS[n]} (not visited)"))
    text_colors = ["#212121" if n in nodes else "#90a4ae" for n in ids]
    fig.add_trace(go.Scatter(x=[TREE_POS[n][0] for n in ids], y=[TREE_POS[n][1] for n in ids], mode="markers+text",
                             name="nodes", showlegend=False, customdata=[n in nodes for n in ids], ids=ids,
                             text=texts, textposition=["bottom center" if n not in TREE_CONDITIONS else "top center"
                                                       for n in ids],
                             textfont=dict(color=text_colors, size=11), hovertext=hovers,
                             hovertemplate="%{hovertext}<extra></extra>",
                             marker=dict(size=sizes, color=colors, symbol=["square" if n in TREE_CONDITIONS else
                                                                           "circle" for n in ids],
                                         line=dict(width=lines, color="#212121"))))
    fig.update_layout(title=title or TREE_TITLE, height=520, margin=dict(t=TITLE_PX, b=10, l=10, r=10),
                      plot_bgcolor="rgba(0,0,0,0)")
    fig.update_xaxes(visible=False, range=[-0.7, 8.9])
    fig.update_yaxes(visible=False, range=[-0.6, 4.5])
    return fig


NEXT_WORDS = {"FA": "leaf FA", "FI": "leaf FI", "RA@N3": "leaf RA", "FE": "leaf FE", "RA@N5": "leaf RA",
              "REFLECT": "REFLECT", "N2": "N1 → N2", "N3": "N3", "N4": "N4", "N5": "N5"}


def path_frame(cycle: BridgeCycle) -> pd.DataFrame:
    """One row per node visited: the condition, the condition with its numbers, the branch taken."""
    children = {(p, b): c for p, c, b in TREE_EDGES}
    rows = [{"node": n.node, "condition": n.condition, "with the numbers": n.filled,
             "branch": f"{'yes' if n.result else 'no'} → {NEXT_WORDS.get(children.get((n.node, n.result)), '?')}"}
            for n in cycle.path]
    return pd.DataFrame(rows, columns=["node", "condition", "with the numbers", "branch"])


def path_text(cycle: BridgeCycle) -> str:
    """``N0 no → N2 no → N4 yes → FE``."""
    steps = [f"{n.node} {'yes' if n.result else 'no'}" for n in cycle.path]
    return " → ".join(steps + [cycle.outcome])


def cycle_label(cycle: BridgeCycle, trace: BridgeTrace) -> str:
    if cycle.cycle == 0:
        return "Cycle 0: initial"
    return f"Cycle {cycle.cycle}/{trace.max_reflections}: reflection"


def cycle_outcome_text(cycle: BridgeCycle, trace: BridgeTrace) -> str:
    if cycle.outcome != "REFLECT":
        return f"outcome {leaf_text(cycle.outcome)}"
    if cycle is trace.cycles[-1] and trace.defaulted_to_ra:
        return (f"outcome REFLECT, but {plural(trace.max_reflections, 'reflection cycle')} are used up: "
                "defaulted to RA")
    return "outcome REFLECT: the Reflection prompt writes new sub-queries (same r_p, g_p)"


# --- phase map ---------------------------------------------------------------------------------------------------

PHASE_ORDER = ("FI", "FE", "RA", "REFLECT")


def phase_regions(alpha: float, beta: float, rp_step: float = 0.01, d_step: float = 0.01
                  ) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
    """(r_p values, D values, outcome[D][r_p]) from ``tree.decide`` with g_p = 1 − r_p and S1 = S4 = 0, so N0 always
    says "conflict" and only D = S3 − S2 matters (T_Ret = r_p(1 + D), T_LLM = g_p(1 − D))."""
    rps = np.round(np.arange(0.1, 0.9 + rp_step / 2, rp_step), 6)
    ds = np.round(np.arange(-1.0, 1.0 + d_step / 2, d_step), 6)
    grid = []
    for d in ds:
        s2, s3 = max(0.0, -d), max(0.0, d)
        grid.append([decide(float(rp), float(1 - rp), 0.0, s2, s3, 0.0, alpha, beta)[0] for rp in rps])
    return rps, ds, grid


def phase_points(trace: BridgeTrace) -> list[dict]:
    """One point per cycle: r_p, D, the outcome, and whether N0 flagged FA (S1 + S4 > 1: off the map's logic)."""
    return [{"cycle": c.cycle, "r_p": trace.r_p, "D": round(c.s3.total - c.s2.total, 4), "outcome": c.outcome,
             "fa": c.s1.total + c.s4.total > 1, "s1_s4": c.s1.total + c.s4.total} for c in trace.cycles]


def phase_figure(trace: BridgeTrace) -> go.Figure:
    rps, ds, grid = phase_regions(trace.alpha, trace.beta)
    index = {o: i for i, o in enumerate(PHASE_ORDER)}
    z = [[index[o] for o in row] for row in grid]
    n = len(PHASE_ORDER)
    scale = []
    for i, o in enumerate(PHASE_ORDER):
        scale += [[i / n, OUTCOME_COLORS[o]], [(i + 1) / n, OUTCOME_COLORS[o]]]
    fig = go.Figure(go.Heatmap(x=rps, y=ds, z=z, zmin=-0.5, zmax=n - 0.5, colorscale=scale, showscale=False,
                               opacity=0.35, customdata=grid, name="regions", showlegend=False,
                               hovertemplate="r_p %{x:.2f} · D %{y:.2f} → %{customdata}<extra></extra>"))
    for o in PHASE_ORDER:  # legend entries for the regions
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=f"{o}: {STRATEGY[o]}",
                                 marker=dict(size=12, symbol="square", color=OUTCOME_COLORS[o], opacity=0.5)))
    points = phase_points(trace)
    same: dict[tuple[float, float], list[int]] = {}
    for p in points:
        same.setdefault((p["r_p"], p["D"]), []).append(p["cycle"])
    labels = []
    for p in points:  # cycles on the same spot share one label, on the first of them
        group = same[(p["r_p"], p["D"])]
        labels.append("" if p["cycle"] != group[0] else ", ".join(f"c{c}" for c in group)
                      + (" FA" if p["fa"] else ""))
    if trace.allocator != "fixed" and points:
        fig.add_trace(go.Scatter(
            x=[p["r_p"] for p in points], y=[p["D"] for p in points], mode="markers+text+lines",
            name="this question (one point per cycle)", text=labels,
            textposition="middle right", line=dict(color="#212121", width=1, dash="dot"),
            marker=dict(size=13, color="#212121", symbol=["star" if p["fa"] else "circle" for p in points],
                        line=dict(width=2, color="white")),
            customdata=[[p["cycle"], p["outcome"], "yes" if p["fa"] else "no", p["s1_s4"]] for p in points],
            hovertemplate=("cycle %{customdata[0]}: r_p %{x:.2f}, D %{y:.2f} → %{customdata[1]}<br>"
                           "FA flag (S1 + S4 = %{customdata[3]:.2f} > 1): %{customdata[2]}<extra></extra>")))
    fig.update_layout(title=PHASE_TITLE, height=460, margin=dict(t=TITLE_PX, b=50, l=60, r=20))
    fig.update_xaxes(title_text="r_p (g_p = 1 − r_p)", range=[0.08, 0.92], dtick=0.1)
    fig.update_yaxes(title_text="D = S3 − S2", range=[-1.02, 1.02], dtick=0.25)
    return legend_above(fig)


def phase_note(trace: BridgeTrace) -> str:
    parts = [f"Regions for α = {trace.alpha:g}, β = {trace.beta:g}, computed with the method's own tree on a grid. "
             "FA is not a region: N0 sends a question to FA whenever S1 + S4 > 1, wherever its point lies."]
    for p in phase_points(trace):
        parts.append(f"cycle {p['cycle']}: r_p = {p['r_p']:.2f}, D = {p['D']:+.2f}, S1 + S4 = {p['s1_s4']:.2f}"
                     + (" > 1: FA flag" if p["fa"] else " ≤ 1") + f" → {p['outcome']}")
    if trace.allocator == "fixed":
        parts.append("The fixed allocator (r_p = g_p = 1) is off this map, which assumes g_p = 1 − r_p: "
                     "no point drawn.")
    return "\n".join(parts)


# --- Step 5: the response ---------------------------------------------------------------------------------------

def responder_knowledge(trace: BridgeTrace) -> list[tuple[str, str]]:
    """(set, text) as the responder read it at the leaf: K_int and K_ext whole, K_gen without "I don't know",
    K_ret without duplicates, in the leaf's order (``LEAF_KNOWLEDGE``)."""
    if not trace.cycles:
        return []
    last = trace.cycles[-1]
    sets = {"K_int": [] if trace.k_int_idk else [trace.k_int], "K_gen": [g.text for g in last.k_gen if not g.idk],
            "K_ext": [trace.k_ext], "K_ret": list(dict.fromkeys(r.text for r in last.k_ret if not r.idk))}
    names = trace.knowledge_used or list(LEAF_KNOWLEDGE.get(trace.leaf, ()))
    return [(name, t) for name in names for t in sets.get(name, []) if t and t != "None"]


def strategy_text(trace: BridgeTrace) -> str:
    reads = " + ".join(LEAF_KNOWLEDGE.get(trace.leaf, ())) or "nothing: answers \"I don't know\" without a call"
    return f"Leaf {trace.leaf}: {STRATEGY[trace.leaf]}; the responder reads {reads}."


# --- calls --------------------------------------------------------------------------------------------------------

def call_role(step: str) -> str:
    return SPEC.role(step)


def _order(step: str) -> tuple[int, int]:
    fixed = {"allocate": 0, "internal_knowledge": 1, "sub_queries": 2}
    if step in fixed:
        return fixed[step], 0
    if m := re.fullmatch(r"(reflect|generate_cycle|generate_each)_(\d+)", step):  # a cycle's reflection, then its
        # generator, then §8.9's one call per sub-query when the generator's answer count was off
        return 3, 3 * int(m.group(2)) + ("reflect", "generate_cycle", "generate_each").index(m.group(1))
    return (4, 0) if step == "respond" else (5, 0)


def ordered_calls(calls: Sequence[LLMCall]) -> list[LLMCall]:
    return sorted(calls, key=lambda c: _order(c.step))


def calls_frame(calls: Sequence[LLMCall]) -> pd.DataFrame:
    return roles_frame(ordered_calls(calls))


# --- panels (each given the Streamlit module or a container as ``st``) -----------------------------------------

def render_question(st, question: Question) -> None:
    st.text(question.question)
    if question.options:
        st.text("\n".join(f"{'ABCDEFGH'[i]}. {o}" for i, o in enumerate(question.options)))


def render_header(st, trace: BridgeTrace, question: Question, calls: Sequence[LLMCall], show_truth: bool) -> None:
    with st.container(horizontal=True):
        st.badge(f"leaf {leaf_text(trace.leaf)}", color=OUTCOME_BADGES[trace.leaf])
        if trace.defaulted_to_ra:
            st.badge("defaulted to RA", color="orange")
        if trace.k_int_idk:
            st.badge("K_int: None", color="gray")
    st.text(status_line(trace, question))
    st.text(config_line(trace, calls))
    st.text(cost_line(calls))
    if calls:
        with st.expander(f"Calls ({plural(len(calls), 'call')})"):
            st.dataframe(calls_frame(calls), hide_index=True)
    if show_truth:
        render_truth(st, trace, question)
        render_blind_spots(st, trace, question)


def render_blind_spots(st, trace: BridgeTrace, question: Question) -> None:
    """Beside the truth overlay's "leaf differs from the scenario": why S1 could not see the conflict."""
    for note in scorer_blind_spots(trace, question):
        st.warning(md(note), icon=":material/visibility_off:")


def render_truth(st, trace: BridgeTrace, question: Question) -> None:
    facts = truth_facts(trace, question)
    st.text(f"Scenario: {facts['scenario_text']}  ·  gold option: {facts['gold']}")
    with st.container(horizontal=True):
        if facts["leaf_matches"] is not None:
            ok = facts["leaf_matches"]
            st.badge(f"leaf {'matches' if ok else 'differs from'} the scenario ({trace.leaf} vs {facts['scenario']})",
                     color="green" if ok else "red")
        if facts["correct"] is not None:
            st.badge(f"answer {'correct ✓' if facts['correct'] else 'wrong ✗'}",
                     color="green" if facts["correct"] else "red")


def render_bias(st, trace: BridgeTrace, page: str) -> None:
    st.subheader("Step 1: soft bias")
    st.plotly_chart(bias_figure(trace), key=f"{page}.bias")
    st.text(allocation_text(trace))
    if trace.bias_note:
        st.text(f"Parse note: {trace.bias_note}")
    if trace.allocator == "fixed":
        return
    st.caption("The allocator's analysis")
    st.text(trace.bias_analysis or "(none given)")
    with st.expander("The allocator's raw reply"):
        st.code(trace.bias_raw or "(empty)", language=None, wrap_lines=True)
    st.caption("In-context demonstrations (nearest by MiniLM cosine; pseudo labels 90% / 10%)")
    if trace.demos:
        st.dataframe(demos_frame(trace), hide_index=True)
    else:
        st.text("No demonstrations.")


def render_knowledge(st, trace: BridgeTrace, question: Question) -> None:
    """The two given knowledge cards: K_int (the model's closed-book passage, or None) and K_ext."""
    st.subheader("Given knowledge: K_int and K_ext")
    left, right = st.columns(2)
    with left.container(border=True):
        with st.container(horizontal=True):
            st.badge("K_int: internal", color="violet")
            st.caption("the model's closed-book passage (our prompt: the paper's own needs the gold answer)")
        if trace.k_int_idk:
            st.info(NO_INTERNAL)
        else:
            st.text(trace.k_int)
    with right.container(border=True):
        with st.container(horizontal=True):
            st.badge("K_ext: external", color="blue")
            st.caption(md(", ".join(trace.k_ext_ids)) or "no document")
        st.text(trace.k_ext or "None")


def render_cycles(st, trace: BridgeTrace, page: str) -> None:
    """One tab per cycle: (reflection analysis), sub-queries, K_gen, K_ret, the square, T, the tree and its path."""
    st.subheader("Knowledge collection, scores and the decision tree")
    st.caption("Cycle 0 runs once; each REFLECT outcome starts a reflection cycle (at most "
               f"{trace.max_reflections}) with new sub-queries and the same soft bias.")
    if not trace.cycles:
        st.text("No cycle ran.")
        return
    tabs = st.tabs([cycle_label(c, trace) + (" → " + c.outcome) for c in trace.cycles])
    for tab, cycle in zip(tabs, trace.cycles):
        with tab:
            render_cycle(st, cycle, trace, page)


def render_cycle(st, cycle: BridgeCycle, trace: BridgeTrace, page: str) -> None:
    with st.container(horizontal=True):
        st.badge(cycle_label(cycle, trace), color="gray")
        st.badge(cycle.outcome, color=OUTCOME_BADGES[cycle.outcome])
        if cycle is trace.cycles[-1] and trace.defaulted_to_ra:
            st.badge("defaulted to RA", color="orange")
    if cycle.cycle:
        st.caption("The reflection's contradiction analysis")
        st.text(cycle.analysis or "(none given)")
    st.caption(f"Sub-queries (ranked): the first s_r = {trace.s_r} go to the retriever, the first s_g = {trace.s_g} "
               "to the generator")
    st.dataframe(subqueries_frame(cycle), hide_index=True)
    st.caption(f"K_gen: the generator's answers, each scored against K_int ({sum(k.idk for k in cycle.k_gen)} of "
               f"{len(cycle.k_gen)} \"I don't know\", flagged ⚑)")
    st.dataframe(gen_frame(cycle), hide_index=True)
    st.caption(f"K_ret: top-1 passage per sub-query ({distinct_documents(cycle.k_ret)} distinct documents), each "
               "scored against K_ext")
    st.dataframe(ret_frame(cycle), hide_index=True)
    left, right = st.columns([3, 2])
    left.plotly_chart(square_figure(cycle, trace), key=f"{page}.square.{cycle.cycle}")
    right.dataframe(scores_frame(cycle, trace), hide_index=True)
    right.caption(f"Which pair each score compares is {INFERRED}: the paper's figure of it is missing.")
    st.text("\n".join(t_lines(cycle, trace)))
    st.plotly_chart(tree_figure(cycle, trace, f"{TREE_TITLE}: {cycle_label(cycle, trace).lower()}"),
                    key=f"{page}.tree.{cycle.cycle}")
    st.dataframe(path_frame(cycle), hide_index=True)
    st.text(f"Path: {path_text(cycle)}\n{cycle_outcome_text(cycle, trace)}")


def render_phase(st, trace: BridgeTrace, page: str) -> None:
    st.subheader("Phase map")
    st.caption("A view derived from the method (not in the paper): once N0 finds a conflict, only r_p and "
               "D = S3 − S2 decide.")
    st.plotly_chart(phase_figure(trace), key=f"{page}.phase")
    st.text(phase_note(trace))


def render_response(st, trace: BridgeTrace, question: Question, show_truth: bool) -> None:
    st.subheader("Step 5: response")
    with st.container(horizontal=True):
        st.badge(f"leaf {leaf_text(trace.leaf)}", color=OUTCOME_BADGES[trace.leaf])
        if trace.defaulted_to_ra:
            st.badge("defaulted to RA", color="orange")
    st.text(strategy_text(trace))
    read = responder_knowledge(trace)
    if trace.leaf != "RA":
        with st.expander(f"Knowledge the responder read ({plural(len(read), 'passage')})"):
            for name, text in read:
                st.caption(name)
                st.text(text)
        st.caption("The responder's raw reply")
        st.code(trace.response_raw or "(empty)", language=None, wrap_lines=True)
    st.text(f"Chosen option: {chosen_text(trace, question)}\n"
            f"Final answer: {trace.answer or IDK_ABSTAINED}")
    if trace.notes:
        st.text("\n".join(f"Note: {n}" for n in trace.notes))
    if show_truth:
        render_truth(st, trace, question)


def render_calls(st, calls: Sequence[LLMCall]) -> None:
    render_raw_calls(st, ordered_calls(calls))


# --- the page (``components.session.views.render_method_page`` draws it) -------------------------------------------

def render_intro(st, question: Question) -> None:
    render_question(st, question)
    options = f"{len(question.options)} options" if question.options else "no options: free-form answer"
    st.caption(f"{md(question.id)} · {options}")


def render_page(st, result: MethodResult, question: Question, show_truth: bool, page: str) -> None:
    trace = result.trace
    render_header(st, trace, question, result.calls, show_truth)
    render_bias(st, trace, page)
    render_knowledge(st, trace, question)
    render_cycles(st, trace, page)
    render_phase(st, trace, page)
    render_response(st, trace, question, show_truth)
    render_calls(st, result.calls)


#: this method's page in the app's view registry (``components.views``)
VIEW = View("Decision path (BRIDGE)", ":material/account_tree:", "bridge", "pages/bridge.py", method="bridge",
            intro=render_intro, run_label="Allocating, collecting knowledge and walking the tree", panels=render_page,
            calls=render_calls, missing="no decision trace",
            truth_help="The scenario label and the gold option. Methods never see these.")
