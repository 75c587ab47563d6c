"""Risk page shaping (RC-RAG) on traces from scripted runs, and on hand-built sweep points (no Streamlit): the
passages and the re-selection, the RAG card, the match evidence, every fusion kind, the override, the truth
overlay's fold, and the dataset view (fold matrix, metrics with n/a, the risk–coverage chart, paths, change rates)."""

import json

import pytest

from backend.llm.client import LLMClient, LLMConfig
from backend.llm.providers import scripted
from backend.methods.base import RunContext
from backend.methods.counterfactual import CounterfactualRAG, parse_reply
from backend.methods.counterfactual.risk import RiskPoint, risk_sweep
from backend.runner import Runner
from backend.schema import CFMatch, Dataset, DocLabel, Document, MethodResult, Question, strip_truth
from backend.scoring import risk_metrics
from components import counterfactual as view

Q = Question(id="bulls", question="Which team did Michael Jordan play for in 1991?", gold_answers=["Chicago Bulls"],
             documents=[Document(id="b-d0", text="Jordan led the Chicago Bulls to the 1991 title.",
                                 label=DocLabel(type="correct", answer="Chicago Bulls")),
                        Document(id="b-d1", text="In 1991 Jordan played for the Bulls.",
                                 label=DocLabel(type="correct", answer="Chicago Bulls")),
                        Document(id="b-d2", text="Jordan played baseball for the Birmingham Barons in 1994.",
                                 label=DocLabel(type="misinfo", answer="Birmingham Barons"))])
RAG = "Answer: Chicago Bulls.\nEvidence: ## Passage-0, Passage-1 ##."
CHANGED = "Answer: Birmingham Barons. Evidence: ## Passage-2 ##"


def _run(quality, usage, rag=RAG, judge="$$ keep $$", probability="Probability: 0.5", **kw) -> MethodResult:
    script = {"cf_answer": rag, "cf_quality": quality, "cf_usage": usage, "cf_judge": judge,
              "cf_probability": probability}
    ctx = RunContext(client=LLMClient(LLMConfig(model="scripted/cf", cache_mode="off")).for_method("counterfactual"))
    with scripted(script):
        return CounterfactualRAG(**kw).run(strip_truth(Q), ctx)


# --- one question ---------------------------------------------------------------------------------------------

def test_agreement_keeps_with_no_fusion_call_and_shows_the_reselection():
    r = _run("Answer: Chicago Bulls.\nEvidence: ## Passage-1 ##", "Chicago Bulls")
    t = r.trace
    final = view.final_view(r)
    assert (final["word"], final["answer"]) == ("KEEP", "Chicago Bulls") and final["reason"].endswith("→ KEEP")
    assert final["calls"] == "3 model calls (RAG answer 1, CF-quality 1, CF-usage 1; 0 from the cache)"
    f = view.fusion_view(t, r.calls)
    assert f["kind"] == "agree" and f["calls"] == 0 and "no fusion call" in f["headline"]
    rows = view.passage_rows(t, Q, show_truth=False)
    assert [(x["passage"], x["rag"], x["quality"]) for x in rows] == [
        ("Passage-0", True, False), ("Passage-1", True, True), ("Passage-2", False, False)]
    frame = view.passages_frame(t, Q, show_truth=False)
    assert list(frame[view.RAG_COLUMN]) == ["✓", "✓", ""] and list(frame[view.QUALITY_COLUMN]) == ["", "✓", ""]
    assert "document type" not in frame.columns  # truth only on request
    assert view.reselection_text(t) == ("The RAG answer cited Passage-0, Passage-1; CF-quality re-selected "
                                        "Passage-1 (dropped Passage-0).")
    truth = view.passages_frame(t, Q, show_truth=True)
    assert list(truth["document type"]) == ["correct", "correct", "misinformation"]
    assert view.passages_colors(truth)["document type"].tolist() == [
        "background-color: #2e7d3240", "background-color: #2e7d3240", "background-color: #c6282840"]
    colors = view.passages_colors(frame)
    assert list(colors[view.RAG_COLUMN].str.startswith("background-color: #1565c0")) == [True, True, False]
    assert list(colors[view.QUALITY_COLUMN].str.startswith("background-color: #7b1fa2")) == [False, True, False]
    assert "#7b1fa2" in view.passages_styled(t, Q, False).to_html()
    assert view.override_text(t) == "Did not fire: the RAG answer is not a refusal."


def test_rag_card_and_branch_rounds_show_the_parse_and_the_match():
    r = _run(CHANGED, "Chicago Bulls")
    rag = view.rag_view(r.trace)
    assert rag["raw"] == RAG and rag["answer"] == "Chicago Bulls" and rag["refusal"] == "no"
    assert rag["evidence"] == "Passage-0, Passage-1 → cites Passage-0, Passage-1"
    quality, usage = r.trace.branches
    assert view.changed(quality) and not view.changed(usage)
    (q,) = view.round_rows(quality)
    assert (q["answer"], q["evidence"], q["changed"], q["decision"]) == (
        "Birmingham Barons", "Passage-2 → cites Passage-2", True, "discard")
    assert q["match"] == ("exact ✗ · substring ✗ · F1 0.00 ≤ 0.7 · ROUGE-L recall 0.00 ≤ 0.7 → changed "
                          "(no test fired)")
    (u,) = view.round_rows(usage)
    assert u["evidence"] == "none given (the reply has no evidence part)"
    assert u["match"].endswith("→ same (exact fired)") and "F1 1.00 > 0.7" in u["match"]
    assert q["call_id"] in {c.id for c in r.calls}  # the messages sent are one click away
    assert view.reselection_text(r.trace).endswith("re-selected Passage-2 (dropped Passage-0, Passage-1; added "
                                                   "Passage-2).")


def test_match_text_for_evidence_and_nothing_to_compare():
    evidence = CFMatch(compared="evidence", exact=True, substring=True, f1=1.0, rouge_l=1.0, fired="exact",
                       same=True)
    assert view.match_text(evidence).startswith("compared evidence (an answer was empty): exact ✓")
    assert view.match_text(CFMatch(compared="nothing")).startswith("nothing to compare")
    r = _run("## Passage-0, Passage-1 ##", "Chicago Bulls", rag="## Passage-0, Passage-1 ##")
    assert view.round_rows(r.trace.branches[0])[0]["compared"] == "evidence"
    assert view.rag_view(r.trace)["answer"] == "(empty: the reply gave only evidence)"
    assert any("no answer text" in n for n in view.final_view(r)["notes"])
    internal = parse_reply("Paris ## internal knowledge ##", 3)
    assert view.evidence_text(internal) == "internal knowledge → names no passage (internal knowledge)"


@pytest.mark.parametrize("judge,word,fold", [("$$ keep $$", "KEEP", "AK"), ("$$ discard $$", "ABSTAIN", "AD")])
def test_direct_selection_shows_the_branch_asked_its_prompt_reply_and_choice(judge, word, fold):
    r = _run(CHANGED, "Chicago Bulls", judge=judge)
    f = view.fusion_view(r.trace, r.calls)
    assert (f["kind"], f["branch"], f["raw"], f["choice"], f["calls"]) == ("direct", "quality", judge,
                                                                          judge[3:-3], 1)
    assert "poor quality" in f["prompt"] and f["call"].step == "fusion_direct"
    assert f["headline"].startswith("The branches disagree (CF-quality discard, CF-usage keep): direct selection")
    final = view.final_view(r)
    assert final["word"] == word and final["answer"] == ("Chicago Bulls" if word == "KEEP" else view.IDK)
    truth = view.truth_view(r, Q)
    assert truth["fold"] == fold and truth["label"] == "A" and truth["gold"] == "Chicago Bulls"
    assert truth["color"] == ("green" if fold == "AK" else "orange")


@pytest.mark.parametrize("pq,pu,winner,decision", [("Probability: 0.9", "0.2", "quality", "discard"),
                                                   ("0.2", "Probability: 85%", "usage", "keep"),
                                                   ("Probability: 0.5", "Probability: 0.5", None, "discard")])
def test_probability_comparison_shows_both_probabilities_and_the_winner_or_tie(pq, pu, winner, decision):
    def probability(fields):
        return pq if fields["previous_answer"] == "Birmingham Barons" else pu
    r = _run(CHANGED, "Chicago Bulls", probability=probability, fusion="probability")
    f = view.fusion_view(r.trace, r.calls)
    assert f["kind"] == "probability" and f["winner"] == winner and f["decision"] == decision and f["calls"] == 2
    rows = {row["branch"]: row for row in f["rows"]}
    assert rows["CF-quality"]["reply"] == pq and rows["CF-usage"]["reply"] == pu
    assert rows["CF-quality"]["its judgment"] == "discard" and rows["CF-usage"]["its judgment"] == "keep"
    assert [row["winner"] for row in f["rows"]] == [("✓" if winner == s else "") for s in ("quality", "usage")]
    if winner is None:
        assert f["result"] == "tie at p = 0.50: discard (the released code's rule)"
    else:
        assert f["result"].startswith(f"{view.SCENARIO_SHORT[winner]} is more confident")
    assert [(s, c.step) for s, c in f["calls_list"]] == [("quality", "fusion_probability"),
                                                        ("usage", "fusion_probability")]


def test_safety_is_marked_not_in_the_paper_and_makes_no_call():
    r = _run(CHANGED, "Chicago Bulls", fusion="safety")
    f = view.fusion_view(r.trace, r.calls)
    assert f["kind"] == "safety" and f["calls"] == 0 and f["decision"] == "discard"
    assert "not in the paper" in f["headline"] and "not in the paper" in view.config_line(r.trace)


def test_the_override_and_the_truth_overlay_of_a_refusal():
    r = _run("unknown", "unknown", rag="Answer: unknown.\nEvidence: ## no passage says ##")
    assert view.override_text(r.trace).startswith("Fired: the RAG answer is a refusal (“unknown”)")
    rag = view.rag_view(r.trace)
    assert rag["reject"] and rag["refusal"] == "yes: “unknown”"
    final = view.final_view(r)
    assert (final["word"], final["answer"]) == ("ABSTAIN", "I don't know") and "override" in final["reason"]
    truth = view.truth_view(r, Q)
    assert truth["fold"] == "UD" and truth["text"].startswith("unanswerable (U): the RAG answer is wrong · UD")
    none = view.truth_view(r, Q.model_copy(update={"gold_answers": []}))
    assert none["fold"] is None and none["text"] == "No label or fold: this question has no gold answers."


def test_a_kept_wrong_answer_is_uk_in_red():
    r = _run("Answer: Birmingham Barons.", "Birmingham Barons", rag="Answer: Birmingham Barons.\nEvidence: "
             "## Passage-2 ##")
    truth = view.truth_view(r, Q)
    assert truth["fold"] == "UK" and truth["color"] == "red" and "the only risky fold" in truth["text"]


def test_two_rounds_give_one_row_per_round():
    answers = iter(["Chicago Bulls", "Birmingham Barons"])
    r = _run(lambda f: f"Answer: {next(answers)}. Evidence: ## Passage-0 ##", "Chicago Bulls", judge="$$ discard $$",
             iterations=3)
    quality, usage = r.trace.branches
    frame = view.rounds_frame(quality)
    assert list(frame["round"]) == [1, 2] and list(frame["changed"]) == ["no", "yes"]
    assert list(frame["judgment"]) == ["keep", "discard"] and list(frame["fired"]) == ["exact", "—"]
    assert len(view.rounds_frame(usage)) == 3
    assert list(view.passages_frame(r.trace, Q, False)[view.QUALITY_COLUMN]) == ["✓ (round 1, 2)", "", ""]
    assert "T = 3 rounds per branch" in view.config_line(r.trace, r.calls)


# --- many questions --------------------------------------------------------------------------------------------

def _point(label, folds, method="counterfactual", **kw) -> RiskPoint:
    return RiskPoint(label=label, method=method, folds=folds, metrics=risk_metrics(folds), **kw)


RATES = {"quality": {"A": 20.0, "U": 60.0}, "usage": {"A": 0.0, "U": None}}
POINTS = [_point("direct", {"AK": 102, "AD": 32, "UK": 16, "UD": 50}, paths={"both keep": 100, "disagree → keep": 18},
                 change_rates=RATES),
          _point("safety", {"AK": 0, "AD": 134, "UK": 0, "UD": 66}, paths={"both discard": 200}, change_rates=RATES),
          _point("keep everything (vanilla_rag)", {"AK": 134, "AD": 0, "UK": 66, "UD": 0}, method="vanilla_rag")]


def test_fold_matrix_and_its_colours():
    frame = view.fold_matrix(POINTS[0])
    assert frame.to_dict() == {"K (kept)": {"A (right)": 102, "U (wrong)": 16},
                               "D (discarded)": {"A (right)": 32, "U (wrong)": 50}}
    colors = view.fold_matrix_colors(POINTS[0])
    assert colors.loc["U (wrong)", "K (kept)"] == "background-color: #c6282840; font-weight: bold"  # UK in red
    assert colors.loc["A (right)", "K (kept)"] == colors.loc["U (wrong)", "D (discarded)"] == (
        "background-color: #2e7d3240")  # AK and UD: the right decisions, green
    assert "#c62828" in view.fold_matrix_styled(POINTS[0]).to_html()


def test_metrics_table_marks_the_code_only_metrics_and_shows_n_a():
    frame = view.metrics_frame(POINTS)
    assert list(frame["point"]) == ["RC-RAG, direct selection", "RC-RAG, safety (code only, not in the paper)",
                                    "keep everything (vanilla_rag)"]
    direct, safety, keep = frame.to_dict("records")
    assert (direct["risk ↓"], direct["carefulness ↑"], direct["alignment ↑"], direct["coverage ↑"]) == (
        "13.56", "75.76", "76.00", "59.00")  # the paper's Table 5 fixture
    assert safety["risk ↓"] == "n/a" and safety["coverage ↑"] == "0.00"
    assert keep["overcaution ↓ (code only)"] == "n/a" and keep["recall ↑ (code only)"] == "100.00"


def test_risk_coverage_chart_has_one_labelled_point_per_configuration():
    fig = view.risk_coverage_figure(POINTS)
    names = [t.name for t in fig.data]
    assert names == ["RC-RAG, direct selection", "keep everything (vanilla_rag)"]  # safety kept nothing: no risk
    assert "not placed, risk n/a: RC-RAG, safety (code only, not in the paper)" in fig.layout.title.text
    direct, keep = fig.data
    assert (direct.x[0], direct.y[0]) == (59.0, 13.56) and (keep.x[0], keep.y[0]) == (100.0, 33.0)
    assert keep.marker.symbol == "diamond" and direct.marker.symbol == "circle"
    assert list(direct.text) == ["RC-RAG, direct selection"]
    assert fig.layout.xaxis.title.text.startswith("coverage ↑") and fig.layout.yaxis.title.text.startswith("risk ↓")
    empty = view.risk_coverage_figure(POINTS[1:2])
    assert "No data" in empty.layout.annotations[0].text


def test_paths_and_change_rates():
    paths = view.paths_frame(POINTS)
    assert list(paths.columns) == ["decision path", "RC-RAG, direct selection",
                                   "RC-RAG, safety (code only, not in the paper)"]
    assert list(paths["decision path"]) == list(view.PATHS)
    assert list(paths["RC-RAG, direct selection"]) == [100, 0, 18, 0, 0]
    fig = view.paths_figure(POINTS)
    assert [t.name for t in fig.data] == ["direct selection", "safety (code only)"]
    rates = view.change_rates_frame(POINTS)  # identical across strategies: shown once
    assert rates.to_dict("records") == [
        {"branch": "CF-quality", "changed: A (%)": "20.00", "changed: U (%)": "60.00"},
        {"branch": "CF-usage", "changed: A (%)": "0.00", "changed: U (%)": "n/a"}]
    fig = view.change_rates_figure(POINTS)
    assert [t.name for t in fig.data] == ["answerable (A)", "unanswerable (U)"]
    assert list(fig.data[1].text) == ["60.0%", "n/a"]
    other = [POINTS[0], _point("probability", POINTS[0].folds, change_rates={"quality": {"A": 1.0, "U": 2.0}})]
    assert list(view.change_rates_frame(other)["branch"]) == [
        "CF-quality (RC-RAG, direct selection)", "CF-usage (RC-RAG, direct selection)",
        "CF-quality (RC-RAG, probability comparison)"]


def test_a_scripted_sweep_shapes_into_the_per_question_table():
    questions = [Q, Q.model_copy(update={"id": "bulls-2", "gold_answers": ["Washington Wizards"]}),
                 Q.model_copy(update={"id": "bulls-3", "gold_answers": []})]
    ds = Dataset(name="tiny", path="tiny.jsonl", questions=questions)
    script = {"cf_answer": RAG, "cf_quality": CHANGED, "cf_usage": "Chicago Bulls", "cf_judge": "$$ keep $$",
              "cf_probability": lambda f: "0.9" if f["previous_answer"] == "Birmingham Barons" else "0.1",
              "*": "Chicago Bulls"}
    with scripted(script):
        sweep = risk_sweep(Runner(ds, llm=LLMConfig(model="scripted/sweep", cache_mode="off")), questions)
    frame = view.questions_frame(sweep, questions)
    assert frame.to_dict("records") == [
        {"question": "bulls", "RAG answer": "Chicago Bulls", "label": "A", "direct selection": "KEEP · AK",
         "probability comparison": "ABSTAIN · AD", "safety (code only, not in the paper)": "ABSTAIN · AD"},
        {"question": "bulls-2", "RAG answer": "Chicago Bulls", "label": "U", "direct selection": "KEEP · UK",
         "probability comparison": "ABSTAIN · UD", "safety (code only, not in the paper)": "ABSTAIN · UD"},
        {"question": "bulls-3", "RAG answer": "Chicago Bulls", "label": "—", "direct selection": "KEEP · —",
         "probability comparison": "ABSTAIN · —", "safety (code only, not in the paper)": "ABSTAIN · —"}]
    caption = view.sweep_caption(sweep)
    assert caption.startswith("3 questions of tiny · 3 configurations per question (direct, probability, safety) ")
    metrics = view.metrics_frame(sweep.points)
    assert list(metrics["unlabelled"]) == [1, 1, 1, 1]
    json.dumps(view.risk_coverage_figure(sweep.points).to_plotly_json(), default=str)  # serialisable


def test_the_charts_keep_their_legends_clear_of_the_axis_titles():
    from tests.test_report_layout import assert_legend_clear_of_axis_titles

    for fig in (view.risk_coverage_figure(POINTS), view.paths_figure(POINTS), view.change_rates_figure(POINTS)):
        assert fig.layout.title.text and fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
        assert_legend_clear_of_axis_titles(fig)
    assert view.paths_figure(POINTS).layout.yaxis.tickformat == "d"  # questions are counted in whole numbers
