"""The diff of a method's result before and after an edit: answers, verdicts and the trace's key facts."""

from backend.llm.providers import scripted
from backend.whatif.compare import compare_all
from backend.whatif.edits import EditDocument, RemoveDocuments, apply_edits
from tests.whatif.conftest import city_question, first_reader, scripted_runner


def test_an_edit_that_changes_the_answer_and_one_that_changes_nothing():
    q = city_question("fr", ["Paris", "Lyon"])
    flipped = apply_edits(q, [RemoveDocuments(ids=["fr-d1"])])
    same = apply_edits(q, [EditDocument(id="fr-d2", text="The capital of fr is Nice.")])
    runner = scripted_runner([q])
    with scripted({"keyword_answer": first_reader, "closed_book": "I don't know"}):
        base = runner.run(q, ["vanilla_rag", "no_rag"])
        changes = {c.method: c for c in compare_all(base, runner.run(flipped, ["vanilla_rag", "no_rag"]), q, flipped)}
        untouched = compare_all(base, runner.run(same, ["vanilla_rag"]), q, same)[0]
    v = changes["vanilla_rag"]
    assert (v.answers_before, v.answers_after, v.verdict_before, v.verdict_after) == (["Paris"], ["Lyon"], "correct",
                                                                                      "wrong")
    assert v.headline == "answer changed" and v.changed
    facts = {f.name: (f.before, f.after) for f in v.facts}
    assert facts == {"documents read": ("2", "1"), "answer": ("Paris", "Lyon")}
    assert changes["no_rag"].headline == "unchanged" and not changes["no_rag"].changed
    assert untouched.headline == "unchanged" and untouched.verdict_after == "correct"
