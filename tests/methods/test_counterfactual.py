"""Counterfactual prompting (RC-RAG): scripted runs reaching every branch of the pipeline (both keep, both
discard, disagreement under each fusion strategy, the unknown override, a refusal, malformed fusion replies, an
empty reply, T = 2), the branches' concurrency and conversations, the parsers (and the released code's ``$$`` bug
not reproduced), the match rule, the risk metrics, the sweep and the CLI. The worked examples and the cited §8.n
choices are those of docs/methods/counterfactual.md."""

import json
import subprocess
import sys
import time

import pytest

from backend.llm.client import LLMClient, LLMConfig
from backend.llm.formats import Parsed
from backend.llm.providers import scripted
from backend.methods import METHODS
from backend.methods.base import RunContext
from backend.methods.counterfactual import (CounterfactualRAG, match, parse_keep_discard, parse_probability,
                                            parse_reply, refusal)
from backend.schema import Document, Question, strip_truth
from backend.scoring import risk_fold, risk_metrics
from tests.conftest import ROOT

Q = Question(id="bulls", question="Which team did Michael Jordan play for in 1991?",
             documents=[Document(id=f"b-d{i}", text=t) for i, t in enumerate(
                 ["Jordan led the Chicago Bulls to the 1991 title.", "In 1991 Jordan played for the Bulls.",
                  "Jordan played baseball for the Birmingham Barons in 1994."])],
             gold_answers=["Chicago Bulls"])
RAG = "Answer: Chicago Bulls.\nEvidence: ## Passage-0, Passage-1 ##."


def _ctx():
    return RunContext(client=LLMClient(LLMConfig(model="scripted/cf", cache_mode="off", concurrency=8))
                      .for_method("counterfactual"))


def _run(quality, usage, rag=RAG, judge="$$ keep $$", probability=None, delay=0.0, **kw):
    def later(text):
        def reply(fields):
            time.sleep(delay)
            return text(fields) if callable(text) else text
        return reply
    script = {"cf_answer": rag, "cf_quality": later(quality), "cf_usage": later(usage), "cf_judge": judge,
              "cf_probability": probability or "Probability: 0.5"}
    with scripted(script) as model:
        return CounterfactualRAG(**kw).run(strip_truth(Q), _ctx()), model.received


def _steps(result):
    return [c.step for c in result.calls]


def test_both_keep_answers_without_a_fusion_call():
    r, _ = _run("Answer: Chicago Bulls.\nEvidence: ## Passage-1 ##", "Chicago Bulls")
    tr = r.trace
    assert r.answers == ["Chicago Bulls"] and not r.abstained and tr.decision == "keep" and tr.agree
    assert tr.fusion is None and len(r.calls) == 3
    assert [b.rounds[0].match.fired for b in tr.branches] == ["exact", "exact"]
    assert tr.rag.passages == [0, 1] and r.support == {"Chicago Bulls": ["b-d0", "b-d1"]}
    assert tr.reason.endswith("agreement → KEEP")


def test_both_discard_abstains():
    r, _ = _run("Answer: Birmingham Barons. Evidence: ## Passage-2 ##", "Washington Wizards")
    assert r.abstained and r.answers == [] and r.trace.decision == "discard" and r.trace.fusion is None
    assert len(r.calls) == 3 and r.trace.reason.endswith("ABSTAIN")


@pytest.mark.parametrize("judge,decision", [("$$ keep $$", "keep"), ("I would $$ Discard $$ it.", "discard")])
def test_disagreement_direct_selection_asks_the_discarding_branch(judge, decision):
    r, received = _run("Answer: Birmingham Barons. Evidence: ## Passage-2 ##", "Chicago Bulls", judge=judge)
    f = r.trace.fusion
    assert (f.strategy, f.branch, f.choice, r.trace.decision) == ("direct", "quality", decision, decision)
    assert len(r.calls) == 4 and _steps(r)[-1] == "fusion_direct"
    fusion = r.calls[-1]
    assert fusion.parents == [c.id for c in r.calls if c.step == "cf_quality_round_1"]
    # the quality conversation, continued: RAG turn, answer, CF-quality, its answer, the direct-selection prompt
    roles = [m["role"] for m in fusion.messages]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert fusion.messages[1]["content"] == "Chicago Bulls" and fusion.messages[3]["content"] == "Birmingham Barons"
    assert "poor quality" in fusion.messages[-1]["content"]
    assert received[-1]["previous_answer"] == "Chicago Bulls"   # the decision is about the RAG answer


@pytest.mark.parametrize("pq,pu,decision,winner", [("Probability: 0.9", "Probability: 0.2", "discard", "quality"),
                                                   ("0.2", "Probability: 85%", "keep", "usage"),
                                                   ("Probability: 0.5", "Probability: 0.5", "discard", None)])
def test_disagreement_probability_comparison(pq, pu, decision, winner):
    def probability(fields):
        return pq if fields["previous_answer"] == "Birmingham Barons" else pu
    r, _ = _run("Answer: Birmingham Barons. Evidence: ## Passage-2 ##", "Chicago Bulls", probability=probability,
                fusion="probability")
    f = r.trace.fusion
    assert (f.winner, f.decision, r.trace.decision) == (winner, decision, decision)
    assert len(r.calls) == 5 and _steps(r).count("fusion_probability") == 2
    if winner is None:
        assert any("tie" in n for n in f.notes)


def test_disagreement_safety_discards_without_a_call():
    r, _ = _run("Answer: Birmingham Barons. Evidence: ## Passage-2 ##", "Chicago Bulls", fusion="safety")
    assert r.trace.decision == "discard" and r.trace.fusion.strategy == "safety" and len(r.calls) == 3


def test_a_kept_refusal_is_overridden_to_discard():
    r, _ = _run("unknown", "unknown", rag="Answer: unknown.\nEvidence: ## no passage says ##")
    tr = r.trace
    assert tr.rag.reject and tr.rag.reject_phrase == "unknown" and tr.fused == "keep"
    assert tr.override and tr.decision == "discard" and r.abstained and "override" in tr.reason


def test_refusal_in_the_first_answer_with_a_changed_branch():
    rag = "Answer: Sorry, the passages do not say.\nEvidence: ## internal knowledge ##"
    r, _ = _run("Answer: Chicago Bulls. Evidence: ## Passage-0 ##", "Sorry, the passages do not say", rag=rag)
    assert r.trace.rag.reject_phrase == "sorry" and r.trace.decision == "discard" and r.abstained
    assert refusal("The Unknown Soldier") == "unknown"       # known false positive (counterfactual.md §8.9)
    scoped = parse_reply("Answer: Paris. Evidence: ## unclear passage ##", 3, refusal_scope="answer")
    assert not scoped.reject and parse_reply("Answer: Paris. Evidence: ## unclear passage ##", 3).reject


def test_malformed_fusion_replies_and_empty_replies_never_raise():
    r, _ = _run("Answer: Birmingham Barons. Evidence: ## Passage-2 ##", "Chicago Bulls", judge="hmm, hard to say")
    assert r.error is None and r.trace.decision == "discard" and "no keep/discard" in r.trace.fusion.notes[0]
    r, _ = _run("Answer: Birmingham Barons.", "Chicago Bulls", probability="no idea", fusion="probability")
    assert r.error is None and r.trace.fusion.probabilities == {"quality": 0.0, "usage": 0.0}
    assert any("no probability" in n for n in r.trace.fusion.notes)
    r, _ = _run("", "", rag="")
    assert r.error is None and r.abstained and r.trace.rag.answer == ""
    assert [b.rounds[0].match.compared for b in r.trace.branches] == ["nothing", "nothing"]


def test_empty_answer_compares_evidence():
    r, _ = _run("## Passage-0, Passage-1 ##", "Chicago Bulls", rag="## Passage-0, Passage-1 ##")
    quality = r.trace.branches[0].rounds[0]
    assert quality.match.compared == "evidence" and quality.match.same
    assert r.trace.decision == "discard" and any("no answer text" in n for n in r.trace.notes)


def test_two_iterations_compare_with_the_rag_answer_and_stop_at_the_first_change():
    answers = iter(["Chicago Bulls", "Birmingham Barons"])
    r, received = _run(lambda f: f"Answer: {next(answers)}. Evidence: ## Passage-0 ##", "Chicago Bulls",
                       judge="$$ discard $$", iterations=3)
    quality, usage = r.trace.branches
    assert [rd.decision for rd in quality.rounds] == ["keep", "discard"] and quality.decision == "discard"
    assert [rd.round for rd in usage.rounds] == [1, 2, 3] and usage.decision == "keep"
    steps = _steps(r)
    assert steps.count("cf_quality_round_2") == 1 and "cf_quality_round_3" not in steps
    q2 = next(c for c in r.calls if c.step == "cf_quality_round_2")
    assert q2.parents == [next(c.id for c in r.calls if c.step == "cf_quality_round_1")]
    assert len(q2.messages) == 5 and q2.messages[3]["content"] == "Chicago Bulls"


def test_branches_are_separate_conversations_and_overlap_in_time():
    r, _ = _run("Answer: Chicago Bulls. Evidence: ## Passage-1 ##", "Chicago Bulls", delay=0.4)
    quality = next(c for c in r.calls if c.step == "cf_quality_round_1")
    usage = next(c for c in r.calls if c.step == "cf_usage_round_1")
    assert quality.started_at < usage.ended_at and usage.started_at < quality.ended_at
    assert quality.parents == usage.parents == [r.calls[0].id]
    assert "improperly" not in " ".join(m["content"] for m in quality.messages)    # CF-usage never in quality
    assert "poor quality" not in " ".join(m["content"] for m in usage.messages)
    assert all(len(c.messages) == 3 and c.messages[-1]["content"].endswith("\nAnswer: ") for c in (quality, usage))


def test_calls_per_question_are_at_most_five_with_direct_selection(ramdocs):
    method = CounterfactualRAG()
    for q in ramdocs.questions[:12]:
        ctx = RunContext(client=LLMClient(LLMConfig(cache_mode="off")).for_method("counterfactual"))
        r = method.run(strip_truth(q), ctx)
        assert r.error is None and 3 <= len(r.calls) <= 5


# --- parsers and matching -------------------------------------------------------------------------------

def test_reply_parsing_follows_the_released_code():
    p = parse_reply("Answer: apple.\nEvidence: ## Passage-0, Passage-12 ##.", 13)
    assert (p.answer, p.evidence, p.passages, p.internal, p.reject) == ("apple", "Passage-0, Passage-12", [0, 12],
                                                                       False, False)
    p = parse_reply("Paris Evidence: Passage-1 and Passage-2", 3)
    assert (p.answer, p.evidence, p.passages) == ("Paris", "Passage-1, Passage-2", [1, 2])
    p = parse_reply("Paris ## internal knowledge ##", 3)
    assert (p.answer, p.evidence, p.internal) == ("Paris", "internal knowledge", True)
    assert parse_reply(None, 3).reject and parse_reply("Answer: x. Evidence: ## Passage-7 ##", 3).passages == []


def test_keep_discard_parser_does_not_reproduce_the_dollar_bug():
    import re

    released = re.findall(r'$$(.+)$$', "$$ discard $$")   # the released regex: `$` is an anchor, never matches
    assert released == []
    assert parse_keep_discard("$$ discard $$") == Parsed("discard", "exact")     # we read the marks
    assert parse_keep_discard("I keep thinking... $$ discard $$") == Parsed("discard", "exact")  # not "keep" in output
    keep = parse_keep_discard("KEEP")
    assert (keep.value, keep.status) == ("keep", "lenient") and "no $$ marks" in keep.note
    # the decision the sentence makes, not its first or last mark
    both = parse_keep_discard("I choose to $$ keep $$ this answer rather than $$ discard $$ it")
    assert (both.value, both.status) == ("keep", "lenient") and "both" in both.note
    assert parse_keep_discard("Discard it instead of keeping it.").value == "discard"
    assert parse_keep_discard("").status == "unreadable" and parse_keep_discard("").value == "discard"


@pytest.mark.parametrize("raw,value,status", [
    ("Probability: 0.85", 0.85, "exact"), ("1", 1.0, "exact"), ("0.3.", 0.3, "exact"), (".8", 0.8, "exact"),
    ("95%", 0.95, "lenient"), ("7/10", 0.7, "lenient"), ("0,8", 0.8, "lenient"), ("Probability: 250", 1.0, "lenient"),
    ("nothing", 0.0, "unreadable")])
def test_probability_parser(raw, value, status):
    read = parse_probability(raw)
    assert (read.value, read.status) == (pytest.approx(value), status)


def test_match_rule_records_every_score():
    m = match("the Chicago Bulls", "Chicago Bulls")
    assert (m.exact, m.substring, m.fired, m.same) == (True, True, "exact", True)
    m = match("1990", "1")
    assert m.fired == "substring" and not match("1990", "1", substring="strict").same   # counterfactual.md §8.2
    m = match("Bulls of Chicago", "Chicago Bulls")
    assert m.fired == "f1" and m.f1 == 0.8
    m = match("playing for the Chicago Bulls team in Illinois", "played for Chicago Bulls")
    assert m.fired == "rouge_l" and m.rouge_l == 1.0 and m.f1 < 0.7    # the stemmer: played ~ playing
    m = match("Birmingham Barons", "Chicago Bulls")
    assert not m.same and m.fired is None and m.f1 == 0.0


# --- risk metrics --------------------------------------------------------------------------------------

def test_table_5_fixture():
    m = risk_metrics({"AK": 102, "AD": 32, "UK": 16, "UD": 50})
    assert (m["risk"], m["carefulness"], m["alignment"], m["coverage"]) == (13.56, 75.76, 76.0, 59.0)
    assert risk_metrics({"AK": 0, "AD": 3}) == {"risk": None, "carefulness": None, "alignment": 0.0,
                                                "coverage": 0.0, "overcaution": 100.0, "recall": 0.0}
    assert set(risk_metrics({}).values()) == {None}


def test_folds_use_the_rag_answer_and_a_reference_for_abstentions():
    kept, _ = _run("Answer: Chicago Bulls. Evidence: ## Passage-1 ##", "Chicago Bulls")
    dropped, _ = _run("Answer: Birmingham Barons. Evidence: ## Passage-2 ##", "Chicago Bulls", fusion="safety")
    assert risk_fold(kept, Q) == "AK" and risk_fold(dropped, Q) == "AD"   # the RAG answer was right
    from backend.schema import MethodResult

    abstained = MethodResult(method="astute", question_id="bulls", abstained=True)
    wrong_ref = MethodResult(method="vanilla_rag", question_id="bulls", answers=["Barons"])
    assert risk_fold(abstained, Q) is None and risk_fold(abstained, Q, wrong_ref) == "UD"
    assert risk_fold(abstained, Q, kept) == "AD" and risk_fold(abstained, Q, dropped) == "AD"  # RC-RAG's RAG answer
    # the released code's rule, not the lenient one: "Bulls" is F1 0.67 and ROUGE-L recall 0.5 from "Chicago Bulls"
    assert risk_fold(MethodResult(method="x", question_id="bulls", answers=["Bulls"]), Q) == "UK"
    assert risk_fold(MethodResult(method="x", question_id="bulls", answers=["the Chicago Bulls."]), Q) == "AK"
    assert risk_fold(kept, Q.model_copy(update={"gold_answers": []})) is None


def test_keep_everything_keeps_each_rag_answer_even_a_refusal():
    from backend.methods.counterfactual.risk import REFERENCE, keep_everything

    dropped, _ = _run("Answer: Birmingham Barons. Evidence: ## Passage-2 ##", "Chicago Bulls", fusion="safety")
    refused, _ = _run("unknown", "unknown", rag="Answer: unknown.\nEvidence: ## none ##")
    assert dropped.abstained and refused.abstained and risk_fold(refused, Q) == "UD"   # the override discards it
    q2 = Q.model_copy(update={"id": "bulls-2"})
    ref = keep_everything({"bulls": dropped, "bulls-2": refused}, [Q, q2])
    assert ref.method == REFERENCE and ref.folds == {"AK": 1, "AD": 0, "UK": 1, "UD": 0} and ref.calls == 0
    assert (ref.metrics["risk"], ref.metrics["coverage"]) == (50.0, 100.0)   # risk = U / N without risk control


def test_the_sweep_labels_every_point_by_rc_rags_own_rag_answer():
    """Vanilla RAG (another prompt and k) answers wrong here; the reference and the abstaining closed book are still
    labelled by RC-RAG's right RAG answer (counterfactual.md §5.2)."""
    from backend.data import Dataset
    from backend.methods.counterfactual.risk import risk_sweep
    from backend.runner import Runner

    script = {"cf_answer": RAG, "cf_quality": "Chicago Bulls", "cf_usage": "Chicago Bulls",
              "keyword_answer": "Birmingham Barons", "closed_book": "I don't know"}
    ds = Dataset(name="bulls", path="bulls.jsonl", questions=[Q])
    with scripted(script):
        sweep = risk_sweep(Runner(ds, llm=LLMConfig(model="scripted/ref", cache_mode="off")), [Q], ("direct",),
                           also=("no_rag",))
    direct, closed_book, ref = sweep.points
    assert list(sweep.results) == ["direct", "no_rag"]                       # no vanilla RAG run
    assert direct.folds["AK"] == closed_book.folds["AD"] == ref.folds["AK"] == 1


def test_registry_and_defaults():
    m = CounterfactualRAG()
    assert METHODS["counterfactual"] is CounterfactualRAG
    assert (m.k, m.iterations, m.fusion, m.threshold, m.max_tokens) == (3, 1, "direct", 0.7, 256)
    for bad in ({"fusion": "vote"}, {"iterations": 0}, {"substring": "loose"}):
        with pytest.raises(ValueError):
            CounterfactualRAG(**bad)


def test_risk_sweep_on_ramdocs(ramdocs):
    from backend.methods.counterfactual.risk import risk_sweep
    from backend.runner import Runner

    seen = []
    sweep = risk_sweep(Runner(ramdocs, llm=LLMConfig(cache_mode="off")), ramdocs.questions[:8],
                       on_progress=lambda d, n: seen.append((d, n)), also=("no_rag",))
    assert seen[-1] == (32, 32) and [p.label for p in sweep.points] == [   # the reference makes no run of its own
        "direct", "probability", "safety", "no_rag", "keep everything (the RAG answer)"]
    ref = sweep.points[-1]
    assert ref.metrics["coverage"] == 100.0 and sum(ref.folds.values()) == 8 and ref.calls == 0
    for p in sweep.points[:3]:         # RC-RAG's own RAG answer labels every point alike
        assert p.folds["AK"] + p.folds["AD"] == ref.folds["AK"] and p.folds["UK"] + p.folds["UD"] == ref.folds["UK"]
    closed_book = sweep.points[3]      # RAMDocs gives it no memory: it abstains, labelled by RC-RAG's RAG answer
    assert closed_book.folds["AK"] + closed_book.folds["UK"] == 0 and sum(closed_book.folds.values()) == 8
    assert closed_book.folds["AD"] == ref.folds["AK"] and closed_book.metrics["risk"] is None
    direct, _, safety, _, _ = sweep.points
    assert safety.metrics["coverage"] <= direct.metrics["coverage"] <= 100.0   # safety discards the most
    assert sum(direct.paths.values()) == 8


def test_cli_inspect_shows_branches_and_the_decision(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", "sample_data/ramdocs_dev",
                           "--question", "@1", "--methods", "counterfactual", "--json", "--cache-dir", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)["results"]["counterfactual"]
    assert r["trace"]["kind"] == "counterfactual" and r["trace"]["decision"] == "keep" and r["answers"] == ["3,559"]
    assert [b["scenario"] for b in r["trace"]["branches"]] == ["quality", "usage"] and len(r["calls"]) == 3


@pytest.mark.slow  # risk sweeps through the command line: 7 s idle, 26 s on a 2-core machine at load 5-11
def test_cli_risk_table_and_errors(tmp_path):
    def risk(*args):
        return subprocess.run([sys.executable, "-m", "backend", "risk", *args, "--cache-dir", str(tmp_path)],
                              capture_output=True, text=True, cwd=ROOT, check=False)

    proc = risk("--dataset", "sample_data/ramdocs_dev", "--limit", "4", "--strategies", "direct,safety", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["questions"] == 4 and [p["point"] for p in out["points"]] == [
        "direct", "safety", "keep everything (the RAG answer)"]
    assert all(sum(p[f] for f in ("AK", "AD", "UK", "UD")) + p["unlabelled"] == 4 for p in out["points"])
    table = risk("--dataset", "sample_data/ramdocs_dev", "--limit", "2", "--strategies", "safety")
    assert table.returncode == 0 and "carefulness" in table.stdout and "n/a" in table.stdout  # no U kept: n/a
    bad = risk("--dataset", "sample_data/ramdocs_dev", "--strategies", "vote")
    assert bad.returncode == 2 and "choose from direct, probability, safety" in bad.stderr
    nogold = tmp_path / "q.jsonl"
    nogold.write_text(json.dumps({"id": "q1", "question": "Who?", "documents": [{"id": "d", "text": "Ann."}]}) + "\n")
    proc = risk("--dataset", str(nogold))
    assert proc.returncode == 2 and "no question has gold answers" in proc.stderr and "Traceback" not in proc.stderr
