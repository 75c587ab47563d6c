"""An edited question searches the index as edited: its removed documents are gone, its added ones are found, the
rest of the dataset's index is unchanged; the runner gives methods that search (BRIDGE, ``retrieve``) this view."""

from backend.llm.client import LLMConfig
from backend.llm.providers import scripted
from backend.retrieval import Retriever
from backend.runner import Runner
from backend.schema import Dataset, Document, Question
from backend.whatif.edits import AddDocument, RemoveDocuments, apply_edits
from backend.whatif.overlay import EditedQuestionRetriever

ADDED = "Volcanic eruptions on Iceland disrupted flights across Europe in 2010."


def _dataset() -> Dataset:
    qs = [Question(id="q1", question="Who painted the Mona Lisa?", documents=[
              Document(id="q1-d1", text="Leonardo da Vinci painted the Mona Lisa in Florence."),
              Document(id="q1-d2", text="The Mona Lisa hangs in the Louvre in Paris.")]),
          Question(id="q2", question="What is the boiling point of water?", documents=[
              Document(id="q2-d1", text="Water boils at 100 degrees Celsius at sea level.")])]
    return Dataset(name="overlay-test", path="overlay-test", questions=qs)


def test_the_edited_view_of_the_index(tmp_path):
    ds = _dataset()
    edited = apply_edits(ds.questions[0], [RemoveDocuments(ids=["q1-d1"]), AddDocument(text=ADDED)])
    with Retriever(ds, cache_dir=tmp_path) as base:
        view = EditedQuestionRetriever(base, edited, "q1")
        leonardo = [h.doc_id for h in view.search("Leonardo da Vinci painted the Mona Lisa", k=4)]
        assert "q1-d1" not in leonardo and {"q1-d2", "q2-d1", edited.documents[-1].id} == set(leonardo)
        hits = view.search("volcano eruption Iceland flights", k=2)
        assert hits[0].doc_id == edited.documents[-1].id and hits[0].rank == 1 and hits[0].text == ADDED
        assert view.document(edited.documents[-1].id).text == ADDED
        assert [h.doc_id for h in view.search("boiling point of water", k=1)] == ["q2-d1"]
        # the dataset's own index is as it was
        assert "q1-d1" in [h.doc_id for h in base.search("Leonardo da Vinci painted the Mona Lisa", k=4)]
        assert ADDED not in [h.text for h in base.search("volcano eruption Iceland flights", k=3)]


def test_the_runner_searches_the_edited_documents_in_retrieve_mode(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))
    ds = _dataset()
    edited = apply_edits(ds.questions[0], [RemoveDocuments(ids=["q1-d1"]), AddDocument(text=ADDED)])
    runner = Runner(ds, llm=LLMConfig(model="scripted/reader", cache_mode="off"), evidence_mode="retrieve", top_k=3)
    with scripted({"keyword_answer": "Leonardo"}):
        before = runner.run(ds.questions[0], ["vanilla_rag"])["vanilla_rag"]
        after = runner.run(edited, ["vanilla_rag"])["vanilla_rag"]
    assert "q1-d1" in before.trace.documents and edited.documents[-1].id not in before.trace.documents
    assert "q1-d1" not in after.trace.documents and edited.documents[-1].id in after.trace.documents


def test_an_edit_saved_into_a_dataset_is_searched_like_any_of_its_questions(tmp_path, monkeypatch):
    """An exported what-if set holds the edited question itself: its documents are in that dataset's index already,
    so no overlay (which would find them twice)."""
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))
    ds = _dataset()
    edited = apply_edits(ds.questions[0], [AddDocument(text=ADDED)])
    saved = Dataset(name="saved-edits", path="saved-edits", questions=[edited, ds.questions[1]])
    runner = Runner(saved, llm=LLMConfig(model="scripted/reader", cache_mode="off"), evidence_mode="retrieve", top_k=4)
    with scripted({"keyword_answer": "Leonardo"}):
        read = runner.run(edited, ["vanilla_rag"])["vanilla_rag"].trace.documents
    assert sorted(read) == sorted([*[d.id for d in edited.documents], "q2-d1"])   # each document once


def test_on_the_corpus_retriever_an_own_document_passes_bm25s_stage_like_every_other(tmp_path):
    """BRIDGE's BM25-then-dense retriever: an edited question's own passage with no word in common with the query
    is not a hit (BM25 would never make it a candidate), one with a word in common competes on the dense score."""
    from backend.corpus import CorpusRetriever

    ds = _dataset()
    edited = apply_edits(ds.questions[0], [AddDocument(text=ADDED)])
    with CorpusRetriever(ds, cache_dir=tmp_path) as base:
        view = EditedQuestionRetriever(base, edited, "q1")
        unrelated = [h.doc_id for h in view.search("boiling point of water", k=5)]
        assert unrelated == ["q2-d1"]  # the Mona Lisa passages and the Iceland one share no word with it
        assert edited.documents[-1].id in [h.doc_id for h in view.search("eruptions in Iceland", k=5)]
