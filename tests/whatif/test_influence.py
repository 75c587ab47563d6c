"""Leave-one-out on a scripted model flips exactly the documents it should; the cost is known before running."""

from backend.llm.providers import scripted
from backend.whatif.influence import estimate_calls, leave_one_out
from tests.whatif.conftest import city_question, first_reader, majority_reader, scripted_runner


def test_a_first_passage_reader_flips_only_on_its_first_document():
    q = city_question("fr", ["Paris", "Lyon", "Paris"])
    runner = scripted_runner([q])
    with scripted({"keyword_answer": first_reader, "closed_book": "I don't know"}):
        base = runner.run(q, ["vanilla_rag", "no_rag"])
        assert estimate_calls(base, len(q.documents)) == 3 * 2
        matrix = leave_one_out(runner, q, ["vanilla_rag", "no_rag"], base=base)
    assert matrix.documents == ["fr-d1", "fr-d2", "fr-d3"] and matrix.base == {"vanilla_rag": ["Paris"], "no_rag": []}
    assert [(c.document_id, c.method, c.flip) for c in matrix.flips()] == [("fr-d1", "vanilla_rag", "answer")]
    assert matrix.cell("fr-d1", "vanilla_rag").answers == ["Lyon"]
    assert matrix.cell("fr-d2", "no_rag").flip is None and matrix.calls == 6


def test_a_majority_reader_abstains_when_a_deciding_document_goes_and_answers_when_a_tie_breaks():
    q = city_question("mj", ["Paris", "Lyon", "Paris"])
    tied = city_question("tie", ["Paris", "Lyon"])
    runner = scripted_runner([q, tied])
    with scripted({"keyword_answer": majority_reader}):
        matrix = leave_one_out(runner, q, ["vanilla_rag"])
        tie = leave_one_out(runner, tied, ["vanilla_rag"])
    assert {c.document_id: c.flip for c in matrix.cells} == {"mj-d1": "keep→abstain", "mj-d2": None,
                                                             "mj-d3": "keep→abstain"}
    assert tie.base_abstained == {"vanilla_rag": True}
    assert {c.document_id: (c.flip, c.answers) for c in tie.cells} == {"tie-d1": ("abstain→keep", ["Lyon"]),
                                                                       "tie-d2": ("abstain→keep", ["Paris"])}


def test_progress_is_reported_per_left_out_document():
    q = city_question("pg", ["Paris", "Lyon"])
    seen = []
    with scripted({"keyword_answer": first_reader}):
        leave_one_out(scripted_runner([q]), q, ["vanilla_rag"], on_progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, 2) and seen[-1] == (2, 2)
