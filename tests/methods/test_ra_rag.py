"""RA-RAG: the paper's Fig. 3 example, voting and ties, f_align, stage 1 on simulated matrices, κ-RRSS
through the scripted model, entailment clustering, per-document datasets and truth isolation.
The multisource end-to-end run and the CLI are in test_ra_rag_stage1.py."""

import json

import numpy as np
import pytest

from backend.answers import normalize
from backend.data import load_dataset
from backend.llm.client import LLMClient, LLMConfig
from backend.llm.providers import scripted
from backend.methods.base import RunContext
from backend.methods.ra_rag import (RARAG, estimate_reliability, f_align, rank_sources, weighted_vote,
                                    wmv_rows)
from backend.paths import SAMPLE_DATA
from backend.schema import (Document, Question, ReliabilityEstimate, SourceReliability, strip_truth)
from tests.methods.test_baselines import _comparable

# --- the paper's Fig. 3 (docs/methods/ra_rag.md §10.1) ---------------------------------------------------

FIG3_Q = "The gulf stream the world's fastest ocean current flows along the western side of this water body"
#: source -> (filtered answer, true reliability, estimated reliability ŵ), as printed in Fig. 3
FIG3 = {"S1": ("southern ocean", 0.39, 0.36), "S2": ("atlantic ocean", 0.97, 0.92), "S3": (None, 0.55, 0.56),
        "S4": ("indian ocean", 0.78, 0.82), "S5": ("southern ocean", 0.53, 0.54),
        "S6": ("gulf of mexico", 0.79, 0.76)}
V = {s: 6 * w - 1 for s, (_, _, w) in FIG3.items()}  # v = N·ŵ − 1 with N = 6


def _fig3_question(drop: tuple[str, ...] = ()) -> Question:
    docs = []
    for s, (answer, _, _) in FIG3.items():
        if s in drop:
            continue
        text = (f"The Gulf Stream flows along the western side of the {answer}." if answer
                else "The Kuroshio current flows north along the coast of Japan.")
        docs.append(Document(id=f"q-{s}", source=s, text=text))
    return Question(id="fig3", question=FIG3_Q, documents=docs, gold_answers=["atlantic ocean"])


def _fig3_reply(fields) -> str:
    return FIG3[fields["passages"][0]["source"]][0] or "I don't know"


def _fig3_estimate() -> ReliabilityEstimate:
    return ReliabilityEstimate(sources=[SourceReliability(name=s, estimated=w, weight=V[s])
                                        for s, (_, _, w) in FIG3.items()],
                               questions=200, iterations=3, converged=True, dataset="fig3")


def _scripted_ctx(reliability=None, sources=tuple(FIG3)) -> RunContext:
    client = LLMClient(LLMConfig(model="scripted/x", cache_mode="off")).for_method("ra_rag")
    return RunContext(client=client, sources=list(sources), prepared=reliability)


def test_fig3_votes_with_the_printed_weights():
    keys = [normalize(a) if a else None for a, _, _ in FIG3.values()]
    assert weighted_vote(keys, [1.0] * 6).winner == "southern ocean"
    wmv = weighted_vote(keys, list(V.values()))
    assert wmv.winner == "atlantic ocean"
    assert wmv.scores == pytest.approx({"southern ocean": 3.40, "atlantic ocean": 4.52, "indian ocean": 3.92,
                                        "gulf of mexico": 3.56})
    assert rank_sources(list(FIG3), V) == ["S2", "S4", "S6", "S3", "S5", "S1"]


def test_fig3_kappa_rrss_walk_through_the_scripted_model():
    with scripted({"keyword_answer": _fig3_reply}) as model:
        r = RARAG(kappa=4).run(_fig3_question(), _scripted_ctx(_fig3_estimate()))
        asked = [f["passages"][0]["source"] for f in model.received]
    assert r.error is None and r.answers == ["atlantic ocean"] and not r.abstained
    t = r.trace
    assert [(w.source, w.status) for w in t.walk] == [
        ("S2", "selected"), ("S4", "selected"), ("S6", "selected"), ("S3", "skipped"), ("S5", "selected"),
        ("S1", "not_queried")]
    assert sorted(asked) == ["S2", "S3", "S4", "S5", "S6"] and len(r.calls) == t.walk_calls == 5
    assert t.compare_calls == 0 and t.answers == {"rrss": "atlantic ocean"}
    scores = {v.cluster: v.rrss for v in t.votes}
    assert scores == pytest.approx({"atlantic ocean": 4.52, "indian ocean": 3.92, "gulf of mexico": 3.56,
                                    "southern ocean": 2.24})
    s1 = next(s for s in t.sources if s.source == "S1")
    assert not s1.queried and s1.raw_answer is None
    s3 = next(s for s in t.sources if s.source == "S3")
    assert s3.called and s3.filtered_answer is None and s3.filter_reason == "model said I don't know"


def test_fig3_variants_and_the_dashboard_comparison():
    truth = {s: p for s, (_, p, _) in FIG3.items()}
    with scripted({"keyword_answer": _fig3_reply}):
        ctx = _scripted_ctx(_fig3_estimate())
        mv = RARAG(variant="mv").run(_fig3_question(), ctx)
        wmv = RARAG(variant="wmv").run(_fig3_question(), _scripted_ctx(_fig3_estimate()))
        oracle = RARAG(variant="oracle_wmv", true_reliability=truth).run(_fig3_question(),
                                                                        _scripted_ctx(_fig3_estimate()))
        both = RARAG(compare_all=True).run(_fig3_question(), _scripted_ctx(_fig3_estimate()))
    assert mv.answers == ["southern ocean"] and wmv.answers == ["atlantic ocean"]
    assert oracle.answers == ["atlantic ocean"] and len(mv.calls) == 6
    assert {v.cluster: v.wmv for v in wmv.trace.votes} == pytest.approx(
        {"southern ocean": 3.40, "atlantic ocean": 4.52, "indian ocean": 3.92, "gulf of mexico": 3.56})
    # the dashboard run: the lazy walk's record is unchanged, S1 is asked only for MV/WMV and counted apart
    t = both.trace
    assert t.answers == {"mv": "southern ocean", "wmv": "atlantic ocean", "rrss": "atlantic ocean"}
    assert t.walk_calls == 5 and t.compare_calls == 1 and len(both.calls) == 6
    assert next(w for w in t.walk if w.source == "S1").status == "not_queried"
    assert next(s for s in t.sources if s.source == "S1").step == "compare_answer"
    with pytest.raises(ValueError, match="true_reliability"):
        RARAG(variant="oracle_wmv")


def test_a_source_without_documents_is_idk_without_a_model_call():
    with scripted({"keyword_answer": _fig3_reply}) as model:
        r = RARAG().run(_fig3_question(drop=("S3",)), _scripted_ctx(_fig3_estimate()))
        asked = sorted(f["passages"][0]["source"] for f in model.received)
    assert asked == ["S2", "S4", "S5", "S6"] and r.trace.walk_calls == 4
    s3 = next(s for s in r.trace.sources if s.source == "S3")
    assert s3.queried and not s3.called and "no documents" in s3.filter_reason
    assert [w.status for w in r.trace.walk][3] == "skipped"


def test_without_stage1_weights_every_source_weighs_one_and_the_trace_says_so():
    with scripted({"keyword_answer": _fig3_reply}):
        r = RARAG(variant="wmv").run(_fig3_question(), _scripted_ctx(None))
    assert r.answers == ["southern ocean"]  # v = 1: WMV is MV
    assert any("no stage-1 weights" in n for n in r.trace.notes)


# --- voting and ties ---------------------------------------------------------------------------------

def test_tie_rules_and_idk():
    assert weighted_vote(["a", "b"], [1, 1]).winner == "a"                   # lower source index
    assert weighted_vote(["b", "a", "a"], [2, 1, 1]).winner == "b"           # higher best supporter
    assert weighted_vote(["a", "b", "b"], [1, 0.5, 0.5]).winner == "a"
    assert weighted_vote([None, None], [1, 1]).winner is None                # all IDK
    assert weighted_vote([None, "x"], [5, -1]).winner == "x"                 # IDK casts no vote
    assert weighted_vote(["a", "b"], [-1, -2]).winner == "a"                 # negative weights count
    assert weighted_vote(["a", "b", "b"], [3, 2, -0.5]).winner == "a"        # ... and penalise


def test_vectorised_vote_equals_the_single_question_vote():
    rng = np.random.default_rng(7)
    for _ in range(30):
        m, n = 40, int(rng.integers(2, 9))
        answers = [[None if rng.random() < 0.3 else f"a{rng.integers(3)}" for _ in range(n)] for _ in range(m)]
        weights = rng.integers(-2, 3, size=n).astype(float)  # small integers: many exact ties
        if rng.random() < 0.5:
            weights = rng.normal(size=n)
        assert wmv_rows(answers, weights) == [weighted_vote(row, weights).winner for row in answers]


# --- f_align (paper §3.2, Fig. 11; docs/methods/ra_rag.md §10.2) ------------------------------------------

TOM_HARDY = ["Tom Hardy played the lead role in the film Venom, released in 2018.",
             "Venom stars Tom Hardy as Eddie Brock.", "The Venom film was directed by Ruben Fleischer."]


def test_f_align_filters_ungrounded_answers():
    a = f_align("Andrew Garfield", TOM_HARDY)
    assert a.answer is None and a.precision == 0 and "0.00 < 0.9" in a.reason
    snow = ["Light snow fell over the city overnight.", "Indium is a soft metal used in touch screens."]
    assert f_align("optical smoke detector", snow).answer is None
    kept = f_align("Tom Hardy", TOM_HARDY)
    assert kept.answer == "Tom Hardy" and kept.precision == 1.0 and kept.matched == ["tom", "hardy"]
    clipped = f_align("Venom Venom Venom Venom", ["Venom is a film."])  # counts are clipped
    assert clipped.precision == 0.25 and clipped.unmatched == ["venom"] * 3
    assert f_align("I don't know", TOM_HARDY).reason == "model said I don't know"
    assert f_align("the", TOM_HARDY).reason == "empty answer"
    assert f_align("Hardy, Tom!", TOM_HARDY, threshold=1.0).answer == "Hardy, Tom!"


# --- stage 1 on simulated answer matrices (Algorithm 1) --------------------------------------------------

def _simulate(p, m=800, coverage=0.7, n_wrong=5, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for j in range(m):
        row = []
        for pi in p:
            if rng.random() > coverage:
                row.append(None)
            else:
                row.append(f"gold{j}" if rng.random() < pi else f"wrong{j}-{rng.integers(n_wrong)}")
        rows.append(row)
    return rows


def test_stage1_recovers_planted_reliabilities():
    p = [0.95, 0.85, 0.7, 0.6, 0.3, 0.15]
    est = estimate_reliability(_simulate(p))
    assert est.converged and 1 < est.iterations < 100 and est.history[-1][2] == 0
    assert np.max(np.abs(est.estimated - p)) < 0.07
    assert list(np.argsort(-est.estimated)) == list(range(len(p)))
    assert np.allclose(est.weights, len(p) * est.estimated - 1)
    assert est.weights[-1] < 0  # ŵ < 1/N: a negative weight, kept
    assert est.history[0][2] == 800  # iteration 1 sets every pseudo-label


def test_stage1_guards_the_all_idk_source():
    rows = [row + [None] for row in _simulate([0.9, 0.8, 0.7], m=200)]
    est = estimate_reliability(rows)
    assert np.isnan(est.estimated[3]) and est.weights[3] == 0.0 and est.answered[3] == 0
    assert not np.isnan(est.weights).any() and not np.isnan(est.estimated[:3]).any()
    alone = estimate_reliability([[None, None], [None, None]])  # nothing answered at all
    assert alone.pseudo_labels == [None, None] and list(alone.weights) == [0.0, 0.0]


def test_stage1_ties_iteration_limit_and_first_iteration_is_mv():
    rows = [["a", "b"], ["c", "d"], ["e", "e"]]
    # the first release (and the paper read literally): v = 1 ties go to the lower source index
    est = estimate_reliability(rows, max_iter=1, stable_init=False, ties="source_order")
    assert est.iterations == 1 and not est.converged
    assert est.pseudo_labels == ["a", "c", "e"]
    assert list(est.estimated) == [1.0, pytest.approx(1 / 3)]
    assert estimate_reliability(rows, stable_init=False, ties="source_order").converged
    # stable initialisation (default): the first iteration uses only the questions with a clear majority
    est = estimate_reliability(rows, max_iter=1)
    assert est.pseudo_labels == [None, None, "e"] and est.unlabelled == 2
    assert list(est.estimated) == [1.0, 1.0] and list(est.answered) == [1, 1]
    assert estimate_reliability(rows).converged


def _permuted_estimates(rows, perm, **kw):
    """ŵ of the matrix with its sources reordered by ``perm``, mapped back to the original source order."""
    est = estimate_reliability([[row[k] for k in perm] for row in rows], **kw).estimated
    back = np.empty_like(est)
    back[perm] = est
    return back


def test_stage1_is_blind_to_source_order():
    """Random answer matrices (3–6 sources, 15–80 questions, two wrong answers to pick from, so ties are common):
    permuting the sources never changes any source's ŵ. The same matrices do move under the first release's
    rule and under the released code's (stable initialisation, ties to the first source), so the check bites."""
    rng = np.random.default_rng(2026)
    moved = {"first release": 0, "released code": 0}
    trials = 60
    for _ in range(trials):
        n, m = int(rng.integers(3, 7)), int(rng.integers(15, 81))
        rows = _simulate(rng.beta(3, 2, size=n), m=m, coverage=0.6, n_wrong=2, seed=int(rng.integers(1 << 30)))
        base = estimate_reliability(rows).estimated
        legacy = {"first release": dict(stable_init=False, ties="source_order"),
                  "released code": dict(stable_init=True, ties="source_order")}
        shifted = dict.fromkeys(legacy, False)
        for _ in range(4):
            perm = rng.permutation(n)
            np.testing.assert_array_equal(_permuted_estimates(rows, perm), base)
            for name, kw in legacy.items():
                ref = estimate_reliability(rows, **kw).estimated
                shifted[name] |= not np.array_equal(_permuted_estimates(rows, perm, **kw), ref, equal_nan=True)
        for name in moved:
            moved[name] += shifted[name]
    assert moved["first release"] > trials / 2 and moved["released code"] >= 3, moved


# --- entailment clustering (App. I) and per-document datasets --------------------------------------------

def test_entailment_clustering_merges_equivalent_answers():
    replies = {"S1": "Atlantic", "S2": "the Atlantic Ocean", "S3": "Pacific", "S4": "I don't know"}
    q = Question(id="e", question="Which ocean does the Gulf Stream cross?", documents=[
        Document(id=f"d{s}", source=s, text="The Gulf Stream crosses the Atlantic Ocean, not the Pacific.")
        for s in replies])

    def entails(fields):
        a, b = normalize(fields["premise"]), normalize(fields["hypothesis"])
        return "Yes" if a in b or b in a else "No"

    with scripted({"keyword_answer": lambda f: replies[f["passages"][0]["source"]], "entailment": entails}):
        r = RARAG(variant="mv", clustering="entailment").run(q, _scripted_ctx(None, sources=replies))
    votes = {v.cluster: v for v in r.trace.votes}
    assert set(votes) == {"atlantic", "pacific"} and votes["atlantic"].sources == ["S1", "S2"]
    assert votes["atlantic"].mv == 2 and r.answers == ["Atlantic"]
    # greedy: "atlantic" vs "atlantic ocean" (merged) and vs "pacific", each judged both ways
    assert len(r.trace.entailments) == 4 and all(e.call_id for e in r.trace.entailments)


def test_ramdocs_each_document_is_its_own_source_and_ra_rag_is_majority_voting():
    q = load_dataset(SAMPLE_DATA / "ramdocs_dev").question("@1")
    ctx = RunContext(client=LLMClient(LLMConfig(cache_mode="off")).for_method("ra_rag"))
    r = RARAG().run(strip_truth(q), ctx)
    t = r.trace
    assert r.error is None and t.per_document and t.variant == "mv" and not t.walk
    assert sorted(s.source for s in t.sources) == [d.id for d in q.documents] and len(r.calls) == len(q.documents)
    assert all(v.wmv is None and v.rrss is None for v in t.votes)
    assert r.answers == ["3,559"] and any("own source" in n for n in t.notes)


# --- truth isolation ---------------------------------------------------------------------------------------

def _comparable_unordered(result) -> str:
    """``_comparable`` with calls sorted by id: concurrent calls are recorded in completion order (a timing)."""
    data = json.loads(_comparable(result))
    data["calls"].sort(key=lambda c: c["id"])
    return json.dumps(data, sort_keys=True)



def test_per_document_ties_do_not_follow_dataset_order():
    """RAMDocs lists a correct document first in 97 of 100 dev questions: a tie must not go to position 1."""
    from backend.data import load_dataset
    from backend.llm.client import LLMClient, LLMConfig
    from backend.methods.base import RunContext
    from backend.paths import SAMPLE_DATA
    from backend.schema import strip_truth

    q = strip_truth(load_dataset(SAMPLE_DATA / "ramdocs_dev").question("@7"))  # a 1-1-1 tie after f_align
    backwards = q.model_copy(update={"documents": q.documents[::-1]})
    ctx = lambda: RunContext(client=LLMClient(LLMConfig(cache_mode="off")).for_method("ra_rag"))  # noqa: E731
    forward, reverse = RARAG().run(q, ctx()), RARAG().run(backwards, ctx())
    assert forward.answers == reverse.answers
    assert [v.mv for v in forward.trace.votes].count(1.0) >= 2  # it really was a tie
