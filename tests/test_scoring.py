"""Multi-answer metrics (docs/methods/madam.md §3.6, §8.7-8.8): strict exact match, plain accuracy, P/R/F1."""

import pytest

from backend.answers import contains_match
from backend.schema import Document, MethodResult, Question
from backend.scoring import accuracy, answer_kind, counted_wrong, evaluation, precision_recall_f1, strict_em, verdict

GOLD = ["1963", "1956"]
WRONG = ["1998"]


def test_strict_em_needs_every_gold_answer_and_no_wrong_one():
    assert strict_em(["1963", "1956"], GOLD, WRONG)
    assert strict_em(["1956", "February 17, 1963"], GOLD, WRONG)        # containment on word boundaries
    assert not strict_em(["1963"], GOLD, WRONG)                         # one gold answer missing
    assert not strict_em(["1963", "1956", "1998"], GOLD, WRONG)         # a wrong answer included
    assert strict_em(["1963", "1956", "1971"], GOLD, WRONG)             # extra, not-wrong answers are allowed
    assert not strict_em([], GOLD, WRONG) and not strict_em(["unknown"], GOLD, WRONG)
    assert not strict_em(["1963"], [], WRONG)                           # nothing to be right about


def test_strict_em_edge_cases():
    # the token-F1 rule would make "3,559 people" match the wrong answer "10,000 people"
    assert strict_em(["3,559 people"], ["3,559 people"], ["10,000 people"])
    assert strict_em(["3,559"], ["3,559 people"], ["10,000 people"])
    assert not strict_em(["10,000"], ["3,559 people"], ["10,000 people"])
    # a wrong answer equal to a gold answer is ignored (10 RAMDocs rows)
    assert strict_em(["Paris"], ["Paris"], ["Paris", "Lyon"])
    assert not strict_em(["Paris", "Lyon"], ["Paris"], ["Paris", "Lyon"])
    assert strict_em(["The Beatles."], ["beatles"], [])


def test_accuracy_is_any_gold_answer():
    assert accuracy(["1963"], GOLD)
    assert accuracy(["1998", "1956"], GOLD)       # wrong answers are not penalised
    assert not accuracy(["1998"], GOLD) and not accuracy([], GOLD) and not accuracy(["I don't know"], GOLD)


def test_precision_recall_f1():
    assert precision_recall_f1(["1963", "1998"], GOLD) == pytest.approx((0.5, 0.5, 0.5))
    assert precision_recall_f1(["1963", "1956"], GOLD) == pytest.approx((1.0, 1.0, 1.0))
    assert precision_recall_f1(["1963", "1963."], GOLD) == pytest.approx((1.0, 0.5, 2 / 3))  # duplicates once
    assert precision_recall_f1([], GOLD) == (0.0, 0.0, 0.0)


def test_contains_match():
    assert contains_match("3,559", "3,559 people") and contains_match("3,559 people", "3,559")
    assert not contains_match("3,559 people", "10,000 people") and not contains_match("", "x")


# --- verdicts and single answers (the one definition every view uses) -------------------------------------

Q = Question(id="q", question="Who?", gold_answers=["Ann Lee"], documents=[
    Document(id="d1", text="Ann Lee wrote it."), Document(id="d2", text="Bob wrote it.")])


def r(method, answers=(), error=None, support=None):
    return MethodResult(method=method, question_id="q", answers=list(answers), abstained=not answers and not error,
                        error=error, support=support or {})


def test_verdicts():
    assert verdict(r("a", ["ann lee"]), Q) == "correct"
    two = Q.model_copy(update={"gold_answers": ["Ann Lee", "Cy Young"], "wrong_answers": ["Bob"]})
    assert verdict(r("a", ["Ann Lee", "Cy Young"]), two) == "correct"
    assert verdict(r("a", ["Ann Lee"]), two) == "partly correct"        # a gold answer missing
    assert verdict(r("a", ["Ann Lee", "Cy Young", "Bob"]), two) == "partly correct"  # misinformation kept
    assert verdict(r("a", ["Bob"]), Q) == "wrong"
    assert verdict(r("a"), Q) == "abstained"
    assert verdict(r("a", error="boom"), Q) == "error"



def test_verdict_without_gold_answers():
    assert verdict(r("a", ["Ann Lee"]), Q.model_copy(update={"gold_answers": []})) == "no gold answers"


def test_which_wrong_answers_count():
    """A wrong answer equal to, containing or contained in a gold answer is dropped (the module docstring)."""
    assert counted_wrong(["Paris", "3,559 people"], ["Paris", "Lyon", "Greater Paris", "3559", ""]) == ["Lyon"]
    # SQuAD normalisation deletes the hyphen: "allgirls" does not hold "girls", so RAMDocs' wrong "Girls" counts
    assert counted_wrong(["All-girls"], ["Girls"]) == ["Girls"]
    from backend.answers import exact_match
    assert counted_wrong(["Paris"], ["Greater Paris", "Paris", "Lyon"], exact_match) == ["Greater Paris", "Lyon"]
    q = Q.model_copy(update={"gold_answers": ["Chicago Bulls"], "wrong_answers": ["Chicago", "Birmingham Barons"]})
    assert answer_kind("the Chicago Bulls", q) == "gold" and answer_kind("Barons", q) == "wrong"
    assert answer_kind("Chicago", q) == "gold"          # the overlapping wrong "Chicago" is dropped
    assert answer_kind("Boys", q) == "other" and answer_kind(None, q) == answer_kind("I don't know", q) == "unknown"
    assert answer_kind("Chicago", q, match=exact_match) == "wrong"  # EM taxonomy: only identical answers are dropped


def test_evaluation_lists_what_is_missing_and_wrong():
    q = Q.model_copy(update={"gold_answers": ["1963", "1956"], "wrong_answers": ["1998"]})
    ev = evaluation(["1963", "1998"], q)
    assert (ev["strict_em"], ev["accuracy"], ev["precision"], ev["recall"]) == (False, True, 0.5, 0.5)
    assert ev["missing gold"] == ["1956"] and ev["included wrong"] == ["1998"]


def test_a_correct_answer_with_extras_is_told_apart():
    football = Q.model_copy(update={"gold_answers": ["Football"], "wrong_answers": ["basketball"]})
    assert verdict(r("a", ["football"]), football) == "correct"
    assert verdict(r("a", ["hockey", "football"]), football) == "correct + extras"
    assert strict_em(["hockey", "football"], ["Football"], ["basketball"])   # the paper's strict EM still holds
    assert verdict(r("a", ["basketball", "football"]), football) == "partly correct"  # a listed wrong answer
    assert verdict(r("a", ["American football", "I don't know"]), football) == "correct"  # containment; IDK dropped


# --- which answer names which (answers.names): the tricky cases of the general rule --------------------------

def test_a_shared_word_is_not_the_answer():
    assert not accuracy(["Washington Irving"], ["George Washington"])      # token F1 0.5 took it before
    assert not accuracy(["10,000 people"], ["3,559 people"])               # a look-alike, F1 0.5 as well
    assert accuracy(["George Washington"], ["George Washington"]) and accuracy(["Washington"], ["George Washington"])


def test_normalisation_deletes_punctuation_and_articles():
    assert accuracy(["U.S."], ["US"]) and strict_em(["US"], ["U.S."], [])
    assert accuracy(["3559"], ["3,559"]) and strict_em(["3,559"], ["3559 people"], ["10,000 people"])
    assert accuracy(["the Chicago Bulls"], ["Chicago Bulls"])
    assert strict_em(["The Chicago Bulls."], ["Chicago Bulls"], [])
    assert not accuracy(["United States"], ["US"])


def test_a_longer_or_shorter_form_of_the_gold_answer():
    long = ["Michael Jordan played for the Chicago Bulls from 1984 to 1993."]
    assert accuracy(long, ["Chicago Bulls"]) and verdict(r("a", long), Q.model_copy(
        update={"gold_answers": ["Chicago Bulls"]})) == "correct"
    assert accuracy(["Bulls"], ["Chicago Bulls"]) and accuracy(["Mozart"], ["Wolfgang Amadeus Mozart"])
    assert not accuracy(["Chicago Bears"], ["Chicago Bulls"])
    assert strict_em(["December 21, 1906"], ["21 December 1906"], [])   # the same words in another order
    assert not accuracy(["Second Congo War"], ["First Boer War", "Second Boer War"])   # F1 0.5 took it before


def test_multi_answer_golds_need_each_answer_named():
    """RAMDocs dev golds: a span shared by several gold answers names none of them."""
    abingdon = ["Abingdon, Illinois", "Abingdon, Virginia", "Abingdon, Oxfordshire, England"]
    assert not accuracy(["Abingdon"], abingdon) and not strict_em(["Abingdon"], abingdon, [])
    assert strict_em(["Abingdon, Illinois", "Abingdon, Virginia", "Abingdon, Oxfordshire, England"], abingdon, [])
    assert precision_recall_f1(["Abingdon, Virginia", "Abingdon"], abingdon) == pytest.approx((0.5, 1 / 3, 0.4))
    assert not accuracy(["2010"], ["September 2010", "Fall of 2010"])
    people, wrong = ["3,171 people", "887 people"], ["12,456 people"]
    assert strict_em(["3,171", "887"], people, wrong) and not strict_em(["3,171", "887", "12,456"], people, wrong)
    assert not strict_em(["3,171"], people, wrong) and accuracy(["3,171"], people)
    ev = evaluation(["887", "12,456"], Q.model_copy(update={"gold_answers": people, "wrong_answers": wrong}))
    assert ev["missing gold"] == ["3,171 people"] and ev["included wrong"] == ["12,456"]


# --- RC-RAG's fold labels (answers.rc_rag_correct, the released code's rule) -------------------------------

def test_rc_rag_labels_by_the_released_rule():
    from backend.answers import or_alternatives, rc_rag_match
    from backend.scoring import answerable
    assert not answerable(["Bulls"], ["Chicago Bulls"])                  # F1 0.67, ROUGE-L recall 0.5: both ≤ 0.7
    assert rc_rag_match("Bulls", "Chicago Bulls").f1 == pytest.approx(2 / 3)
    assert not answerable(["Washington Irving"], ["George Washington"])
    assert answerable(["U.S."], ["US"]) and answerable(["3559"], ["3,559"]) and answerable(["the Chicago Bulls"],
                                                                                              ["Chicago Bulls"])
    assert rc_rag_match("He played for the Chicago Bulls", "Chicago Bulls").fired() == "substring"
    assert rc_rag_match("chicago bulls team", "Chicago Bulls").fired() == "f1"          # F1 0.8; raw case differs
    assert rc_rag_match("playing for the Chicago Bulls team", "played for Chicago Bulls").fired() == "rouge_l"
    assert answerable(["1990"], ["1"])                  # the raw substring test as released (counterfactual.md §8.2)
    assert or_alternatives(["Ford or Chevrolet"]) == ["Ford or Chevrolet", "Ford", "Chevrolet"]
    assert answerable(["Chevrolet"], ["Ford or Chevrolet"]) and not answerable(["Chevrolet"], ["Ford"])
    assert not answerable(["I don't know"], ["Chicago Bulls"]) and not answerable([], ["Chicago Bulls"])


# --- an answer the method could not read (BRIDGE's responder, spec P17) --------------------------------------

def _bridge(invalid: bool, answers=()):
    from backend.schema.traces.bridge import BridgeTrace
    trace = BridgeTrace(n=10, alpha=0.5, beta=0.6, max_reflections=3, weights={}, allocator="icl", leaf="FE",
                        invalid=invalid)
    return MethodResult(method="bridge", question_id="q", answers=list(answers), abstained=not answers and not invalid,
                        trace=trace)


def test_an_unreadable_answer_is_wrong_not_an_abstention():
    from backend.scoring import refused, risk_fold, unreadable
    ra = Q.model_copy(update={"gold_answers": ["I don't know"]})
    bad, idk = _bridge(invalid=True), _bridge(invalid=False)
    assert unreadable(bad) and not refused(bad) and verdict(bad, Q) == verdict(bad, ra) == "unreadable"
    assert not unreadable(idk) and refused(idk) and verdict(idk, ra) == "abstained"
    assert risk_fold(bad, Q) == "UK" and risk_fold(idk, Q, r("ref", ["Ann Lee"])) == "AD"
    # the flag alone decides, even if the method also marked the result abstained
    assert not refused(bad.model_copy(update={"abstained": True})) and not unreadable(r("a"))


# --- the papers' own metrics (backend.scoring.PAPER_METRICS), each against values worked out by hand ------------------

def test_squad_em_is_normalised_equality_with_the_best_gold_answer():
    from backend.scoring import squad_em

    assert squad_em(["The U.S."], ["US"])                      # lower case, punctuation and articles dropped
    assert squad_em(["3,559"], ["3559"]) and squad_em(["  Chicago   Bulls. "], ["chicago bulls"])
    assert squad_em(["Di"], ["Cy", "Di"])                      # the max over gold answers
    assert not squad_em(["the Chicago Bulls team"], ["Chicago Bulls"])   # containment is not equality
    assert not squad_em(["Bulls"], ["Chicago Bulls"])
    assert not squad_em(["I don't know"], ["know"]) and not squad_em([], ["x"])   # an abstention is wrong
    assert not squad_em(["unknown"], ["unknown"])             # "unknown" is an abstention, never an answer
    # several answers are one text, ", "-joined: "1963, 1956" equals neither gold answer
    assert not squad_em(["1963", "1956"], ["1963"]) and squad_em(["1963", "1963."], ["1963"])  # duplicates once
    assert not squad_em(["x"], [])                             # nothing to be right about


def test_squad_f1_is_token_f1_with_the_best_gold_answer():
    from backend.scoring import squad_f1

    assert squad_f1(["Chicago Bulls"], ["Chicago Bulls"]) == 1.0
    # "bulls" against "chicago bulls": precision 1/1, recall 1/2, F1 2/3; against "bulls team" the same
    assert squad_f1(["Bulls"], ["Chicago Bulls", "Bulls team"]) == pytest.approx(2 / 3)
    # "the chicago bulls" (normalised "chicago bulls") against "chicago bulls basketball team": P 2/2, R 2/4
    assert squad_f1(["the Chicago Bulls"], ["Chicago Bulls basketball team"]) == pytest.approx(2 / 3)
    assert squad_f1(["Bob"], ["Ann", "Ann Lee"]) == 0.0
    assert squad_f1(["I don't know"], ["know"]) == 0.0 and squad_f1([], ["x"]) == 0.0
    assert squad_f1(["x"], []) == 0.0


def test_gold_in_response_is_a_substring_test_as_the_paper_writes_it():
    from backend.scoring import gold_in_response

    assert gold_in_response(["He was born in Paris, France."], ["paris"])
    assert gold_in_response(["The U.S. Army"], ["US"])          # SQuAD normalisation on both sides first
    assert gold_in_response(["1990"], ["1"])                     # characters, not words: the spec keeps it literal
    assert gold_in_response(["Zed"], ["Ed"])
    assert not gold_in_response(["Bulls"], ["Chicago Bulls"])  # the answer inside the gold is not the gold inside it
    assert not gold_in_response(["1630"], ["24 June 1630"])
    assert not gold_in_response(["I don't know"], ["know"]) and not gold_in_response([], ["x"])
    assert not gold_in_response(["anything"], [])


def test_ramdocs_em_wants_every_gold_answer_and_no_wrong_one():
    from backend.scoring import ramdocs_em

    assert ramdocs_em(["1963", "1956"], GOLD, WRONG)
    assert not ramdocs_em(["1963"], GOLD, WRONG)                      # a gold answer missing
    assert not ramdocs_em(["1963", "1956", "1998"], GOLD, WRONG)      # a wrong answer given
    assert ramdocs_em(["1963", "1956", "1971"], GOLD, WRONG)          # an answer neither gold nor wrong: allowed
    # containment either way on whole words (answers.contains_match): "3,559" is inside "3,559 people"
    assert ramdocs_em(["3,559"], ["3,559 people"], ["10,000 people"])
    assert ramdocs_em(["3,559 people"], ["3,559"], [])
    assert not ramdocs_em(["10,000"], ["3,559 people"], ["10,000 people"])
    assert not ramdocs_em(["35"], ["3,559 people"], [])                 # characters are not words
    # a wrong answer equal to a gold answer is ignored (RAMDocs lists "Hindi" as both); one that only overlaps is not
    assert ramdocs_em(["Paris"], ["Paris"], ["Paris", "Lyon"])
    assert not ramdocs_em(["Paris", "Lyon"], ["Paris"], ["Paris", "Lyon"])
    assert not ramdocs_em(["Chicago Bulls"], ["Chicago Bulls"], ["Bulls"])  # the lenient all-gold drops "Bulls"
    assert strict_em(["Chicago Bulls"], ["Chicago Bulls"], ["Bulls"])
    assert not ramdocs_em([], GOLD, WRONG) and not ramdocs_em(["I don't know"], GOLD, WRONG)
    assert not ramdocs_em(["1963"], [], WRONG)                          # no gold answers: never correct


def test_ramdocs_em_reads_the_answer_list_never_the_explanation():
    """The explanation names the misinformation it rejected ("Agent 3 … 1998"): only the parsed answers count."""
    from backend.evaluate import summarize
    from backend.schema import Dataset
    from backend.schema.traces.madam import MadamTrace

    q = Question(id="q", question="When?", gold_answers=GOLD, wrong_answers=WRONG, documents=[])
    trace = MadamTrace(max_rounds=3, history_mode="both", shuffle=False, seed=0, early_stop=True,
                       final_answers=["1963", "1956"],
                       final_explanation="Agent 3 said 1998, which its document alone claims; 1963 and 1956 stand.")
    result = MethodResult(method="madam", question_id="q", answers=["1963", "1956"], trace=trace)
    dataset = Dataset(name="d", path="d.jsonl", questions=[q])
    summary = summarize(dataset, {("q", "madam"): result}, methods=["madam"])
    madam = summary["methods"]["madam"]
    assert (madam["ramdocs_em"], madam["own_metric"]) == (100.0, "ramdocs_em")


def test_1630_for_24_june_1630_by_each_rule():
    """The README's example: the lenient match credits a year for a full date; SQuAD's EM and Astute's
    gold-in-response do not; RAMDocs' exact match does too, as its containment goes either way on whole words (the
    year is whole words of the gold answer: ``answers.contains_match``)."""
    from backend.answers import names
    from backend.scoring import gold_in_response, ramdocs_em, squad_em, squad_f1

    gold = ["24 June 1630"]
    assert names("1630", gold) == gold and accuracy(["1630"], gold)      # the lenient match
    assert not squad_em(["1630"], gold) and squad_f1(["1630"], gold) == pytest.approx(0.5)   # P 1, R 1/3
    assert not gold_in_response(["1630"], gold)
    assert contains_match("1630", "24 June 1630") and ramdocs_em(["1630"], gold, [])
    assert not ramdocs_em(["163"], gold, [])


def test_the_summary_schema_knows_every_paper_metric():
    from backend.methods import SPECS
    from backend.schema.summary import PAPER_KEYS, MethodSummary
    from backend.scoring import PAPER_METRICS

    assert PAPER_KEYS == tuple(PAPER_METRICS)
    assert set(PAPER_KEYS) <= set(MethodSummary.model_fields)
    assert {m: s.paper_metric for m, s in SPECS.items()} == {
        "ra_rag": "squad_em", "astute": "gold_in_response", "madam": "ramdocs_em", "counterfactual": "risk",
        "bridge": "squad_em", "no_rag": "squad_em", "vanilla_rag": "squad_em"}
    assert all(m.key == k and m.name and m.papers and m.rule and m.tables for k, m in PAPER_METRICS.items())


def test_paper_score_on_an_unanswerable_question_rewards_abstaining():
    from backend.scoring import PAPER_METRICS, paper_score

    unanswerable = Question(id="u", question="?", documents=[], meta={"unanswerable": True})
    for key in PAPER_METRICS:
        assert paper_score(key, [], unanswerable, abstained=True) == 1.0
        assert paper_score(key, ["Paris"], unanswerable, abstained=False) == 0.0
        assert paper_score(key, ["Paris"], Question(id="n", question="?", documents=[]), abstained=False) is None
    answerable = Question(id="a", question="?", documents=[], gold_answers=["Paris"], wrong_answers=["Lyon"])
    assert {k: paper_score(k, ["paris."], answerable, abstained=False) for k in PAPER_METRICS} == {
        "squad_em": 1.0, "squad_f1": 1.0, "gold_in_response": 1.0, "ramdocs_em": 1.0}
    assert {k: paper_score(k, [], answerable, abstained=True) for k in PAPER_METRICS} == dict.fromkeys(PAPER_METRICS,
                                                                                                        0.0)


def test_a_refusal_is_right_on_a_refuse_to_answer_item_by_every_papers_metric():
    """BRIDGE's RA items have the gold option "I don't know": refusing is counted right there (bridge.md §6)."""
    from backend.scoring import PAPER_METRICS, paper_score

    q = Question(id="ra", question="Who won?", documents=[], gold_answers=["I don't know"], meta={"scenario": "RA"})
    for key in PAPER_METRICS:
        assert paper_score(key, [], q, abstained=True) == 1.0
        assert paper_score(key, ["I don't know"], q, abstained=True) == 1.0
        assert paper_score(key, ["571"], q, abstained=False) == 0.0
