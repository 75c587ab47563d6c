"""What-if edits: a new question every time, the loaded dataset untouched, edits marked and exportable."""

import json

import pytest

from backend.data import load_dataset, to_jsonl
from backend.schema import DocLabel, Document, Question
from backend.whatif.edits import (AddDocument, EditDocument, EditError, FlipSource, RemoveDocuments, apply_edits,
                                  is_edited, original_id, parse_edits)


def _q() -> Question:
    return Question(id="q1", question="Who wrote the novel?", gold_answers=["Ann Smith"],
                    documents=[Document(id="d1", source="s1", text="The novel was written by Ann Smith in 1990.",
                                        label=DocLabel(type="correct", answer="Ann Smith")),
                               Document(id="d2", source="s2", text="Ann Smith wrote it; it sold 3,000 copies.",
                                        label=DocLabel(type="correct", answer="Ann Smith")),
                               Document(id="d3", source="s2", text="A review of the novel.",
                                        label=DocLabel(type="noise"))])


def test_every_edit_gives_a_new_marked_question_and_leaves_the_original_alone():
    q = _q()
    before = q.model_dump()
    edited = apply_edits(q, [RemoveDocuments(ids=["d3"]), AddDocument(text="Bob Jones wrote the novel.", source="s9"),
                             EditDocument(id="d1", text="The novel was written by Carl Lee."),
                             FlipSource(source="s2", from_answer="Ann Smith", to_answer="Bob Jones")])
    assert q.model_dump() == before                     # never mutated
    assert edited.id.startswith("q1~edit-") and is_edited(edited) and original_id(edited) == "q1"
    assert [d.id for d in edited.documents] == ["d1", "d2", "q1-added1"]
    assert edited.documents[0].text == "The novel was written by Carl Lee." and edited.documents[0].label is None
    assert edited.documents[1].text == "Bob Jones wrote it; it sold 3,000 copies."
    assert edited.documents[1].label == DocLabel(type="misinfo", answer="Bob Jones")
    assert edited.documents[2].source == "s9"
    assert [e["op"] for e in edited.meta["edits"]] == ["remove", "add", "edit", "flip"]
    # the same edits give the same id (a re-run finds its cached calls); other edits another id
    assert apply_edits(q, parse_edits(edited.meta["edits"])).id == edited.id
    assert apply_edits(q, [RemoveDocuments(ids=["d1"])]).id != edited.id


def test_editing_an_edited_question_keeps_the_original_id_and_adds_up_the_edits():
    once = apply_edits(_q(), [RemoveDocuments(ids=["d3"])])
    twice = apply_edits(once, [RemoveDocuments(ids=["d2"])])
    assert original_id(twice) == "q1" and twice.id.startswith("q1~edit-") and twice.id != once.id
    assert [d.id for d in twice.documents] == ["d1"] and len(twice.meta["edits"]) == 2
    assert twice.id == apply_edits(_q(), [RemoveDocuments(ids=["d3"]), RemoveDocuments(ids=["d2"])]).id


def test_flip_to_a_gold_answer_labels_the_document_correct_and_positions_are_kept():
    q = _q().model_copy(update={"gold_answers": ["Ann Smith", "Bob Jones"]})
    edited = apply_edits(q, [FlipSource(source="s1", from_answer="Ann Smith", to_answer="Bob Jones"),
                             AddDocument(text="Zed wrote it.", position=0)])
    assert edited.documents[0].id == "q1-added1" and edited.documents[1].label.type == "correct"


@pytest.mark.parametrize("edit, message", [
    (RemoveDocuments(ids=["nope"]), "no document 'nope'"),
    (EditDocument(id="nope", text="x"), "no document 'nope'"),
    (FlipSource(source="s1", from_answer="Zed", to_answer="Bob"), "states 'Zed'"),
    (AddDocument(text="x", id="d1"), "already has a document 'd1'"),
])
def test_edits_that_cannot_apply_say_why(edit, message):
    with pytest.raises(EditError, match=message):
        apply_edits(_q(), [edit])


def test_blank_text_is_refused():
    with pytest.raises(ValueError, match="text is empty"):
        AddDocument(text="  ")


def test_edited_questions_export_as_a_dataset_that_loads_back(tmp_path):
    edited = apply_edits(_q(), [RemoveDocuments(ids=["d3"])])
    path = tmp_path / "edited.jsonl"
    path.write_text(to_jsonl([edited]), encoding="utf-8")
    back = load_dataset(path)
    assert back.questions[0].id == edited.id and back.questions[0].meta["edited_from"] == "q1"
    assert json.loads(path.read_text())["meta"]["edits"] == [{"op": "remove", "ids": ["d3"]}]
