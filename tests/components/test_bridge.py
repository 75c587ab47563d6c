"""Decision path page shaping on hand-built BRIDGE traces (no Streamlit): one trace per leaf (FA, FI, FE, RA via N3,
RA via N5, REFLECT x4 -> RA), built with the method's own ``decide`` on docs/methods/bridge.md §3's worked
examples; the phase map's regions; the tree figure highlighting exactly the visited path; K_int "None"; the truth overlay,
with the scorer's blind spot (an answer swap rated as agreement) said when it happens."""

import json

import pytest

from backend.methods.bridge import decide
from backend.schema import (BridgeCycle, BridgeDemo, BridgeKnowledge, BridgeSubQuery, BridgeTrace, DocLabel,
                            Document, LLMCall, PairScore, Question)
from components import bridge as view

OPTIONS = ["Alice", "I don't know", "Bob", "Carol"]


def _q(scenario: str, gold: str) -> Question:
    return Question(id="q1", question="Who wrote The Book?", gold_answers=[gold], options=OPTIONS, documents=[],
                    meta={"scenario": scenario})


def _s(total: float, pairs: int = 1) -> PairScore:
    return PairScore(sparse=total, dense=total, colbert=total, total=total, pairs=pairs)


def _cycle(k: int, rp: float, s1: float, s2: float, s3: float, s4: float, **kw) -> BridgeCycle:
    outcome, path, t_ret, t_llm = decide(rp, 1 - rp, s1, s2, s3, s4)
    s_r, s_g = round(rp * 10), round((1 - rp) * 10)
    subs = [BridgeSubQuery(rank=i, text=f"q{i}?", to_retriever=i <= s_r, to_generator=i <= s_g) for i in range(1, 11)]
    gen = [BridgeKnowledge(sub_query=f"q{i}?", text="Alice" if i % 3 else "I don't know", idk=not i % 3,
                           score=_s(s2)) for i in range(1, s_g + 1)]
    ret = [BridgeKnowledge(sub_query=f"q{i}?", text=f"Passage {i % 2}.", document_id=f"d{i % 2}",
                           retrieval_score=0.5, score=_s(s3)) for i in range(1, s_r + 1)]
    return BridgeCycle(cycle=k, sub_queries=subs, k_gen=gen, k_ret=ret, s1=_s(s1), s2=_s(s2, len(gen)),
                       s3=_s(s3, len(ret)), s4=_s(s4, len(gen) * len(ret)), t_ret=t_ret, t_llm=t_llm, path=path,
                       outcome=outcome, **kw)


# docs/methods/bridge.md §3 (Step 4)'s worked examples: (r_p, S1, S2, S3, S4) -> leaf
EXAMPLES = {"FA": (0.2, .72, .80, .70, .65), "FI": (0.2, .45, .80, .35, .40), "FE": (0.8, .30, .20, .85, .35),
            "RA_N5": (0.8, .25, .60, .15, .30), "RA_N3": (0.2, .30, .30, .75, .40),
            "REFLECT": (0.8, .35, .40, .55, .45)}


def _trace(case: str, k_int_idk: bool = False) -> BridgeTrace:
    rp, *s = EXAMPLES[case]
    if case == "REFLECT":
        cycles = [_cycle(k, rp, *s, analysis=f"analysis {k}" if k else "") for k in range(4)]
    else:
        cycles = [_cycle(0, rp, *s)]
    leaf = "RA" if case.startswith("RA") or case == "REFLECT" else case
    used = {"FA": ["K_int", "K_gen", "K_ext", "K_ret"], "FI": ["K_int", "K_gen"], "FE": ["K_ext", "K_ret"]}
    option = {"FA": "A", "FI": "A", "FE": "C"}.get(leaf)
    return BridgeTrace(n=10, alpha=0.5, beta=1.1, max_reflections=3,
                       weights={"sparse": 0.2, "dense": 0.4, "colbert": 0.4}, allocator="icl", r_p=rp,
                       g_p=round(1 - rp, 4), bias_raw="Analysis: it depends.\nProbability of retrieving external "
                       f"knowledge: {rp * 100:.0f}%", bias_analysis="it depends.",
                       demos=[BridgeDemo(question="What is the capital of Australia?", similarity=0.41, retrieve=10)],
                       s_r=round(rp * 10), s_g=round((1 - rp) * 10),
                       k_int="None" if k_int_idk else "Alice wrote The Book.", k_int_idk=k_int_idk,
                       k_ext="Bob wrote The Book.", k_ext_ids=["d9"], cycles=cycles, leaf=leaf,
                       defaulted_to_ra=case == "REFLECT", knowledge_used=used.get(leaf, []),
                       response_raw=f"Correct Option: {option}" if option else "", option=option,
                       answer={"A": "Alice", "C": "Bob"}.get(option))


@pytest.mark.parametrize("case, path, leaf", [
    ("FA", "N0 yes → FA", "FA"),
    ("FI", "N0 no → N2 yes → N3 yes → FI", "FI"),
    ("FE", "N0 no → N2 no → N4 yes → FE", "FE"),
    ("RA_N3", "N0 no → N2 yes → N3 no → RA", "RA"),
    ("RA_N5", "N0 no → N2 no → N4 no → N5 yes → RA", "RA"),
    ("REFLECT", "N0 no → N2 no → N4 no → N5 no → REFLECT", "RA"),
])
def test_each_leaf_path_and_status(case, path, leaf):
    trace = _trace(case)
    assert view.path_text(trace.cycles[-1]) == path
    assert trace.leaf == leaf
    status = view.status_line(trace, _q("FA", "Alice"))
    assert status.startswith(f"leaf {leaf} ({view.STRATEGY[leaf]})")
    frame = view.path_frame(trace.cycles[-1])
    assert list(frame["node"]) == [n.node for n in trace.cycles[-1].path]
    assert frame["branch"].iloc[-1].endswith({"FA": "leaf FA", "FI": "leaf FI", "FE": "leaf FE", "RA_N3": "leaf RA",
                                             "RA_N5": "leaf RA", "REFLECT": "REFLECT"}[case])


def test_t_lines_show_the_factors():
    fe = _trace("FE").cycles[0]
    assert view.t_lines(fe, _trace("FE"))[:2] == ["T_Ret = r_p × [S3 + 1 − S2] = 0.80 × [0.85 + 1 − 0.20] = 1.32",
                                                   "T_LLM = g_p × [S2 + 1 − S3] = 0.20 × [0.20 + 1 − 0.85] = 0.07"]
    reflect = _trace("REFLECT")
    assert view.t_lines(reflect.cycles[0], reflect)[0].endswith("= 0.80 × [0.55 + 1 − 0.40] = 0.92")
    fa = _trace("FA")
    assert view.t_lines(fa.cycles[0], fa)[0].startswith("T_Ret and T_LLM were not computed")


@pytest.mark.parametrize("case", list(EXAMPLES))
def test_tree_figure_highlights_exactly_the_visited_path(case):
    trace = _trace(case)
    cycle = trace.cycles[-1]
    fig = view.tree_figure(cycle, trace)
    taken = {t.name for t in fig.data if t.meta == "taken"}
    nodes, edges = view.tree_path(cycle)
    assert taken == {f"{a}→{b}" for a, b in edges}
    assert len(taken) == len(cycle.path)  # one edge out of every node visited
    for t in fig.data:
        if t.name and "→" in t.name:
            assert (t.line.width == 4) == (t.name in taken)
    marks = next(t for t in fig.data if t.name == "nodes")
    visited = {i for i, on in zip(marks.ids, marks.customdata) if on}
    assert visited == set(nodes)
    expected_leaf = {"RA_N3": "RA@N3", "RA_N5": "RA@N5"}.get(case, case)
    assert nodes[-1] == expected_leaf
    # the numbers of every comparison are on the edge it took
    labels = [a.text for a in fig.layout.annotations]
    for node in cycle.path:
        assert any(f"{node.left:.2f} {node.op.replace('>', '&gt;').replace('<', '&lt;')} {node.right:.2f}" in lab
                   for lab in labels), (node, labels)
    json.dumps(fig.to_plotly_json(), default=str)  # serialisable


def test_phase_map_regions_match_the_derived_properties():
    rps, ds, grid = view.phase_regions(0.5, 1.1)

    def at(rp, d):
        return grid[list(ds).index(d)][list(rps).index(rp)]

    # r_p = 0.2: D < 0.375 -> FI; 0.375 <= D < 0.6 -> RA (N3); D >= 0.6 -> RA (N5); no FE, no REFLECT
    assert at(0.2, 0.3) == "FI" and at(0.2, 0.5) == "RA" and at(0.2, 0.8) == "RA"
    assert {row[list(rps).index(0.2)] for row in grid} == {"FI", "RA"}
    # r_p = 0.8: D >= 0.375 -> FE; -0.375 <= D < 0.375 -> REFLECT; D < -0.375 -> RA; no FI
    assert at(0.8, 0.5) == "FE" and at(0.8, 0.0) == "REFLECT" and at(0.8, -0.5) == "RA"
    assert {row[list(rps).index(0.8)] for row in grid} == {"FE", "REFLECT", "RA"}
    # FE only when r_p >= 0.55
    assert all(o != "FE" for row in grid for rp, o in zip(rps, row) if rp < 0.55)
    # other thresholds move the regions
    _, _, strict = view.phase_regions(0.5, 2.0)
    assert all(o != "FE" for row in strict for o in row)


def test_phase_figure_marks_one_point_per_cycle_and_flags_fa():
    reflect = _trace("REFLECT")
    fig = view.phase_figure(reflect)
    points = next(t for t in fig.data if t.name and t.name.startswith("this question"))
    assert len(points.x) == 4 and set(points.x) == {0.8}
    assert list(points.text) == ["c0, c1, c2, c3", "", "", ""]  # the same spot: one label
    assert [t.name for t in fig.data if t.type == "scatter"][:4] == [f"{o}: {view.STRATEGY[o]}"
                                                                     for o in view.PHASE_ORDER]
    fa = view.phase_figure(_trace("FA"))
    point = next(t for t in fa.data if t.name and t.name.startswith("this question"))
    assert list(point.text) == ["c0 FA"] and list(point.marker.symbol) == ["star"]
    assert "S1 + S4 = 1.37 > 1: FA flag → FA" in view.phase_note(_trace("FA"))


def test_frames_and_bias():
    trace = _trace("FI")
    cycle = trace.cycles[0]
    subs = view.subqueries_frame(cycle)
    assert list(subs["→ retriever"][:3]) == ["✓", "✓", "✗"] and list(subs["→ generator"][7:]) == ["✓", "✗", "✗"]
    gen = view.gen_frame(cycle)
    assert list(gen["I don't know"][:3]) == ["", "", "⚑ yes"] and gen["total"].iloc[0] == 0.8
    ret = view.ret_frame(cycle)
    assert list(ret.columns) == ["#", "sub-query", "document", "retrieval score", "passage", "sparse", "dense",
                                 "colbert", "total"]
    scores = view.scores_frame(cycle, trace)
    assert list(scores["pair"]) == ["K_int ↔ K_ext", "K_int ↔ K_gen", "K_ext ↔ K_ret", "K_gen ↔ K_ret"]
    assert view.allocation_text(trace).startswith("s_r = ⌈r_p · n⌉ = ⌈0.2 × 10⌉ = 2")
    bars = view.bias_figure(trace).data[0]
    assert list(bars.x) == [20.0, 80.0]
    assert list(view.demos_frame(trace)["pseudo label"]) == ["retrieve 10% / answer directly 90%"]
    square = view.square_figure(cycle, trace)
    texts = [a.text for a in square.layout.annotations]
    assert [t.split("</b>")[0] for t in texts] == ["<b>S1", "<b>S2", "<b>S3", "<b>S4"]
    assert view.INFERRED in square.layout.title.text


def test_k_int_none():
    trace = _trace("FE", k_int_idk=True)
    scores = view.scores_frame(trace.cycles[0], trace)
    assert scores["aggregation"].iloc[0].endswith("(K_int is None: 0)")
    labels = next(t for t in view.square_figure(trace.cycles[0], trace).data if t.mode == "markers+text").text
    assert labels[0] == "K_int<br>None"
    assert all(name != "K_int" for name, _ in view.responder_knowledge(trace))


def test_reflection_labels_and_default():
    trace = _trace("REFLECT")
    assert [view.cycle_label(c, trace) for c in trace.cycles] == [
        "Cycle 0: initial", "Cycle 1/3: reflection", "Cycle 2/3: reflection", "Cycle 3/3: reflection"]
    assert "defaulted to RA" in view.cycle_outcome_text(trace.cycles[-1], trace)
    assert "defaulted to RA" not in view.cycle_outcome_text(trace.cycles[0], trace)
    assert "3 reflection cycles of 3 · defaulted to RA" in view.status_line(trace, _q("RA", "I don't know"))


def test_truth_and_response():
    fi = _trace("FI")
    facts = view.truth_facts(fi, _q("FI", "Alice"))
    assert facts == {"scenario": "FI", "scenario_text": "FI (faithful to internal knowledge)", "gold": "A. Alice",
                     "leaf_matches": True, "correct": True}
    wrong = view.truth_facts(fi, _q("FE", "Bob"))
    assert wrong["leaf_matches"] is False and wrong["correct"] is False
    ra = _trace("RA_N5")
    q = _q("RA", "I don't know")
    assert view.chosen_text(ra, q) == "B. I don't know (no responder call)"
    assert view.truth_facts(ra, q)["correct"] is True
    assert view.strategy_text(ra).startswith("Leaf RA: refuse")
    assert [n for n, _ in view.responder_knowledge(_trace("FE"))] == ["K_ext", "K_ret", "K_ret"]


def _labelled(label: DocLabel, gold: str, wrong: str) -> Question:
    """The question of ``_trace``'s K_ext (d9, "Bob wrote The Book."), its document labelled by ``label``."""
    return Question(id="q1", question="Who wrote The Book?", gold_answers=[gold], wrong_answers=[wrong],
                    documents=[Document(id="d9", text="Bob wrote The Book.", label=label)])


def test_the_page_says_when_the_scorer_cannot_tell_a_swapped_answer_from_memory():
    """Issue 25 §9: memory "Alice wrote The Book." and K_ext "Bob wrote The Book." differ in the answer only; when S1
    rates them as agreeing (S1 > α) and the truth says they conflict, the page says so, naming which side is wrong."""
    misinfo = _labelled(DocLabel(type="misinfo", answer="Bob"), gold="Alice", wrong="Bob")
    fa = _trace("FA")                                   # S1 = 0.72 > α = 0.5
    assert view.scorer_blind_spots(fa, misinfo) == [
        "BRIDGE's similarity scorer cannot tell the misinformation passage d9 (it says “Bob”) from the memory it "
        "contradicts (it says “Alice”): S1 = 0.72 > α = 0.5, so it rates them as agreeing."]
    outdated = _labelled(DocLabel(type="correct", answer="Bob"), gold="Bob", wrong="Alice")
    assert view.scorer_blind_spots(fa, outdated) == [
        "BRIDGE's similarity scorer cannot tell the memory (it says “Alice”, a wrong answer) from the passage d9 it "
        "contradicts (it says “Bob”): S1 = 0.72 > α = 0.5, so it rates them as agreeing."]
    # Nothing to say: S1 at or below α, no memory, memory and passage agree, the document unlabelled or not in K_ext.
    assert view.scorer_blind_spots(_trace("FI"), misinfo) == []             # S1 = 0.45
    assert view.scorer_blind_spots(fa.model_copy(update={"k_int": "None", "k_int_idk": True}), misinfo) == []
    assert view.scorer_blind_spots(fa.model_copy(update={"k_int": "Bob wrote The Book."}), misinfo) == []
    assert view.scorer_blind_spots(fa, _labelled(DocLabel(type="noise"), gold="Alice", wrong="Bob")) == []
    assert view.scorer_blind_spots(fa.model_copy(update={"k_ext_ids": ["d1"]}), misinfo) == []
    at_alpha = fa.model_copy(update={"cycles": [fa.cycles[0].model_copy(update={"s1": _s(0.504)})]})
    assert "S1 = 0.504 > α = 0.5" in view.scorer_blind_spots(at_alpha, misinfo)[0]


def test_calls_in_pipeline_order():
    steps = ["respond", "generate_each_1", "generate_cycle_1", "reflect_1", "generate_each_0", "generate_cycle_0",
             "sub_queries", "allocate", "internal_knowledge"]
    calls = [LLMCall(id=str(i), step=s, task="t", model="offline/reader", messages=[], response="")
             for i, s in enumerate(steps)]
    assert list(view.calls_frame(calls)["step"]) == ["allocate", "internal_knowledge", "sub_queries",
                                                     "generate_cycle_0", "generate_each_0", "reflect_1",
                                                     "generate_cycle_1", "generate_each_1", "respond"]
    assert view.call_role("reflect_2") == "reflection 2"
