"""What-if shaping: edits in words, a method's change as frames, the influence matrix (figure and table) from a
hand-made ``Influence``, an attack's outcome per method, and dataset text escaped wherever plotly reads HTML."""

import html

from backend.schema import DocLabel, Document, MethodResult, Question
from backend.whatif.attack import AttackPlan
from backend.whatif.compare import FactChange, MethodChange
from backend.whatif.edits import AddDocument, EditDocument, FlipSource, RemoveDocuments
from backend.whatif.influence import Influence, InfluenceCell
from components import whatif as view

EVIL = '<a href="https://evil.example">x</a>'
Q = Question(id="q1", question="Who wrote it?", gold_answers=["Ann"], wrong_answers=["Bob"],
             documents=[Document(id="q1-d1", source="wiki", text="Ann wrote it. " * 30,
                                 label=DocLabel(type="correct", answer="Ann")),
                        Document(id="q1-d2", source="blog", text=f"Bob wrote it. {EVIL}",
                                 label=DocLabel(type="misinfo", answer="Bob"))])


def r(method, answers=(), abstained=False, error=None):
    return MethodResult(method=method, question_id="q1", answers=list(answers), abstained=abstained, error=error)


def test_edits_in_words():
    assert view.describe_edit(RemoveDocuments(ids=["q1-d1", "q1-d2"])) == "remove q1-d1, q1-d2"
    assert view.describe_edit(AddDocument(text="Cy wrote it.", source="news")) == \
        "add a document (source news): “Cy wrote it.”"
    assert view.describe_edit(AddDocument(text="x " * 100, position=0)).startswith(
        "add a document (source its own) at position 1: “x x")
    assert view.describe_edit(EditDocument(id="q1-d1", text="long " * 40)).endswith("…”")
    assert view.describe_edit(FlipSource(source="blog", from_answer="Bob", to_answer="Ann")) == \
        "flip source blog: Bob → Ann"


def test_the_flip_is_prefilled_only_when_obvious():
    results = {"vanilla_rag": r("vanilla_rag", ["Bob"]), "madam": r("madam", ["Ann", "Bob"])}
    assert view.flip_from_guess(Q, "blog", results) == "Bob"  # the one answer the blog's document states
    assert view.flip_from_guess(Q, "blog", {}) == ""  # no results, truth hidden: typed
    assert view.flip_from_guess(Q, "blog", {}, use_labels=True) == "Bob"  # the truth is on screen


def test_a_change_as_frames_marks_the_changed_facts():
    change = MethodChange(method="madam", answers_before=["Ann"], answers_after=[], abstained_after=True,
                          verdict_before="correct", verdict_after="abstained",
                          facts=[FactChange(name="final agents", before="2", after="1"),
                                 FactChange(name="rounds", before="3", after="3")])
    facts = view.facts_frame([change, MethodChange(method="no_rag")])
    assert list(facts["changed"]) == ["●", ""] and list(facts["fact"]) == ["final agents", "rounds"]
    assert set(facts["method"]) == {"madam"} and list(facts["after"]) == ["1", "3"]
    assert view.fact_lines(change) == ["● final agents: 2 → 1", "   rounds: 3"]
    hidden = view.changes_frame([change], show_truth=False)
    assert hidden.to_dict("records") == [{"method": "madam", "what changed": "now abstains", "before": "Ann",
                                          "after": "abstained"}]
    shown = view.changes_frame([change], show_truth=True).iloc[0]
    assert (shown["verdict before"], shown["verdict after"]) == ("correct", "abstained")
    attacked = view.changes_frame([change], show_truth=False, outcomes={"madam": "resisted: abstained"})
    assert list(attacked.columns)[:2] == ["attack", "method"] and attacked.iloc[0]["attack"] == "resisted: abstained"
    unchanged = MethodChange(method="no_rag")
    assert view.summary_line([change, unchanged]) == "1 of 2 methods changed its answer (madam)."
    assert view.summary_line([unchanged]) == "No method changed its answer or its reasoning (1 compared)."


def test_the_headline_counts_answer_changes_apart_from_reasoning_changes():
    """Issue 27: "6 of 7 methods changed" when one answer changed and five only reasoned differently."""
    def reasoned(m):  # same answer set ("The Ann" is "ann"), a key fact differs
        return MethodChange(method=m, answers_before=["Ann"], answers_after=["The Ann."],
                            facts=[FactChange(name="votes", before="2", after="3")])
    answer = MethodChange(method="madam", answers_before=["Ann"], answers_after=["Ann", "Bob"])
    changes = [answer, *(reasoned(f"m{i}") for i in range(5)), MethodChange(method="no_rag")]
    assert answer.answer_changed and answer.headline == "answer changed"
    assert not changes[1].answer_changed and changes[1].headline == "same answer, reasoning changed"
    assert view.summary_line(changes) == ("1 of 7 methods changed its answer (madam); 5 more reasoned differently "
                                          "to the same answer (m0, m1, m2, m3, m4).")
    assert view.summary_line(changes[1:]) == ("No method changed its answer (6 compared); 5 reasoned differently "
                                              "to the same answer (m0, m1, m2, m3, m4).")
    failed = MethodChange(method="bridge", answers_before=["Ann"], error_after="timeout")
    assert not failed.answer_changed and failed.headline == "failed on the edit"
    assert view.summary_line([answer, failed]) == ("1 of 2 methods changed its answer (madam); 1 failed on one "
                                                   "side (bridge).")
    # abstaining is an answer of its own: "I don't know" and an abstention are the same answer set
    idk = MethodChange(method="no_rag", answers_before=["I don't know"], answers_after=[], abstained_after=True)
    assert not idk.answer_changed


def test_attack_outcomes():
    plan = AttackPlan(question_id="q1", target="Bob", target_from="wrong_answer", passages=["Bob wrote it."],
                      passages_from="substitution")
    outcome = {m: view.attack_outcome(res, plan, Q) for m, res in {
        "target": r("a", ["Bob"]), "target and gold": r("b", ["Ann", "Bob"]), "gold": r("c", ["Ann"]),
        "abstained": r("d", abstained=True), "nothing": r("e"), "other": r("f", ["Cy"]),
        "error": r("g", ["Bob"], error="boom")}.items()}
    assert outcome == {"target": "attack succeeded", "target and gold": "attack succeeded (correct answer too)",
                       "gold": "resisted: correct", "abstained": "resisted: abstained", "nothing": "resisted: abstained",
                       "other": "resisted: other answer", "error": "error"}
    assert set(outcome.values()) <= set(view.ATTACK_COLORS)
    lines = view.plan_lines(plan)
    assert lines[0] == "target answer: Bob" and "listed wrong answer" in lines[1] and "replaced" in lines[2]


def _influence() -> Influence:
    cells = [InfluenceCell(document_id="q1-d1", method="vanilla_rag", answers=["Bob"], flip="answer"),
             InfluenceCell(document_id="q1-d1", method="madam", answers=[], abstained=True, flip="keep→abstain"),
             InfluenceCell(document_id="q1-d2", method="vanilla_rag", answers=["Ann"]),
             InfluenceCell(document_id="q1-d2", method="madam", error="boom")]
    return Influence(question_id="q1", methods=["vanilla_rag", "madam"], documents=["q1-d1", "q1-d2"],
                     base={"vanilla_rag": ["Ann"], "madam": ["Ann"]},
                     base_abstained={"vanilla_rag": False, "madam": False}, cells=cells)


def test_the_influence_table():
    frame = view.influence_frame(_influence(), Q)
    assert frame.to_dict("records") == [
        {"document": "q1-d1 · wiki", "vanilla_rag": "Bob · answer", "madam": "abstained · keep→abstain"},
        {"document": "q1-d2 · blog", "vanilla_rag": "—", "madam": "error"}]
    own = Q.model_copy(update={"documents": [Q.documents[0].model_copy(update={"source": None})]})
    assert view.document_labels(_influence(), own) == ["q1-d1", "q1-d2"]  # its own source: the id says it all
    assert view.base_frame(_influence()).to_dict("records") == [
        {"method": "vanilla_rag", "answer with every document": "Ann"},
        {"method": "madam", "answer with every document": "Ann"}]


def test_the_influence_heat_map():
    fig = view.influence_figure(_influence(), Q)
    heat = fig.data[0]
    assert list(heat.x) == ["vanilla_rag", "madam"] and list(heat.y) == ["q1-d1 · wiki", "q1-d2 · blog"]
    kinds = view.FLIP_KINDS
    assert [list(row) for row in heat.z] == [[kinds.index("answer"), kinds.index("keep→abstain")],
                                             [kinds.index("no change"), kinds.index("error")]]
    assert [list(row) for row in heat.text] == [["Bob", "abstained"], ["—", "error"]]
    assert heat.textfont.size == 12  # not shrunk to fit the cell (plotly's default made it unreadable)
    assert (heat.zmin, heat.zmax) == (0, len(kinds) - 1)  # a colour per kind, whichever kinds occur
    assert [t.name for t in fig.data[1:]] == kinds  # the legend names every colour
    hover = heat.customdata[1][0]
    assert html.escape(EVIL) in hover and EVIL not in hover  # the document's text, escaped
    text_lines = heat.customdata[0][0].split("<br>")[1:]  # a long document's start, in lines that fit the chart
    assert len(text_lines) > 1 and all(len(html.unescape(line)) <= 70 for line in text_lines)
    assert len(html.unescape(" ".join(text_lines))) <= view.HOVER_CHARS
    assert fig.layout.height >= 260


def test_dataset_strings_are_escaped_in_the_heat_map():
    evil = Q.model_copy(update={"documents": [Q.documents[0].model_copy(update={"source": EVIL})]})
    inf = Influence(question_id="q1", methods=["vanilla_rag"], documents=["q1-d1"],
                    cells=[InfluenceCell(document_id="q1-d1", method="vanilla_rag", answers=[EVIL], flip="answer")])
    heat = view.influence_figure(inf, evil).data[0]
    assert EVIL not in heat.y[0] and html.escape(EVIL) in heat.y[0]
    assert "<a" not in heat.text[0][0]
