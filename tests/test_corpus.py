"""BRIDGE's corpus retriever (``backend.corpus``): BM25 candidates re-ranked densely, built once per dataset content
and cache folder, no truth in it; the runner hands it out in ``given`` mode and runs ready methods first."""

from __future__ import annotations

import asyncio
import json
import threading

import numpy as np
import pytest

from backend import corpus, embeddings
from backend.corpus import CorpusRetriever, corpus_key
from backend.llm.client import LLMConfig
from backend.retrieval import Retriever
from backend.runner import Runner
from backend.schema import strip_truth
from backend.whatif.edits import AddDocument, RemoveDocuments, apply_edits
from backend.whatif.overlay import EditedQuestionRetriever
from tests.test_retrieval import tiny_dataset


@pytest.fixture
def index_builds(monkeypatch):
    """Counts BM25 index builds (``corpus._index``: the only place an index is computed)."""
    calls: list[int] = []
    real = corpus._index

    def counting(tokens):
        calls.append(len(tokens))
        return real(tokens)

    monkeypatch.setattr(corpus, "_index", counting)
    return calls


def test_top1_is_the_dense_top1_when_bm25s_candidates_hold_it(tmp_path):
    ds = tiny_dataset()
    queries = ["Who wrote Moby-Dick, the whaling novel?", "capital city of France", "water boiling temperature"]
    sparse = CorpusRetriever(ds, tmp_path / "c")
    with Retriever(ds, tmp_path / "d") as dense:
        for query, want, cands in zip(queries, dense.search_many(queries, k=1), sparse.candidates_of(queries)):
            assert want[0].doc_id in [ds.documents()[i][1].id for i in cands]  # the case this test is about
            got = sparse.search(query, k=1)[0]
            assert got.doc_id == want[0].doc_id
            assert got.score == pytest.approx(want[0].score, abs=1e-4)  # the same cosine similarity as the index
            assert (got.question_id, got.source, got.text) == (want[0].question_id, want[0].source, want[0].text)


def test_the_dense_stage_reranks_bm25s_order(tmp_path):
    """The candidates' order is BM25's; the answer is the candidate nearest in MiniLM space, which BM25 ranks lower."""
    ds = tiny_dataset()
    r = CorpusRetriever(ds, tmp_path, candidates=3)
    query = "Which author wrote the white whale novel Moby-Dick?"
    cands = [ds.documents()[i][1] for i in r.candidates_of([query])[0]]
    vectors = embeddings.encode([query] + [d.text for d in cands])
    nearest = cands[int(np.argmax(vectors[1:] @ vectors[0]))].id
    assert r.search(query, k=1)[0].doc_id == nearest
    assert [h.doc_id for h in r.search(query, k=3)] == [cands[i].id for i in np.argsort(-(vectors[1:] @ vectors[0]))]


def test_the_queries_of_one_call_share_their_candidates(tmp_path):
    """One BM25 candidate each ("Paris": q1-self; "capital of France": q1-wiki); in one call both queries are
    re-ranked over both, and "Paris" gets q1-wiki, the nearer in MiniLM space (a BRIDGE cycle pools its sub-queries')."""
    ds = tiny_dataset()
    r = CorpusRetriever(ds, tmp_path, candidates=1)
    queries = ["Paris", "capital of France"]
    assert [ds.documents()[c[0]][1].id for c in r.candidates_of(queries)] == ["q1-self", "q1-wiki"]
    assert r.search("Paris", k=1)[0].doc_id == "q1-self"  # alone: its own candidate only
    vectors = embeddings.encode(["Paris", "France's seat of government is in Paris.",
                                 "Paris is the capital and largest city of France."])
    assert vectors[2] @ vectors[0] > vectors[1] @ vectors[0]
    assert [hits[0].doc_id for hits in r.search_many(queries, k=1)] == ["q1-wiki", "q1-wiki"]


def test_built_once_then_loaded(tmp_path, index_builds):
    ds = tiny_dataset()
    first = CorpusRetriever(ds, tmp_path)
    stages: list[tuple[int, int]] = []
    assert first.build(on_progress=lambda *a: stages.append(a)).built and index_builds == [12]
    assert stages[0] == (0, 12) and stages[-1] == (12, 12)
    hits = first.search("Moby-Dick novel", k=2)
    again = CorpusRetriever(strip_truth(ds), tmp_path)  # another process: the same content, truth or not
    assert again.ready() and not again.build(on_progress=lambda *a: stages.append(a)).built
    assert index_builds == [12] and stages[-1] == (0, 0)  # loaded: nothing indexed, nothing to report
    assert again.search("Moby-Dick novel", k=2) == hits


def test_a_changed_dataset_is_indexed_again_and_its_old_index_removed(tmp_path, index_builds):
    ds = tiny_dataset()
    old = CorpusRetriever(ds, tmp_path)
    old.build()
    q1 = ds.questions[0]
    changed_doc = q1.documents[0].model_copy(update={"text": "Marseille is a port city in the south of France."})
    changed = ds.model_copy(update={"questions": [q1.model_copy(update={"documents": [changed_doc,
                                                                                        *q1.documents[1:]]}),
                                                  *ds.questions[1:]]})
    new = CorpusRetriever(changed, tmp_path)
    assert new.key != old.key and not new.ready()
    assert new.build().built and len(index_builds) == 2
    assert new.search("Marseille port", k=1)[0].doc_id == "q1-wiki"
    assert [p.name for p in (tmp_path / "corpus").iterdir()] == [new.folder.name]  # the old version is gone
    assert CorpusRetriever(ds, tmp_path).build().built  # and going back indexes again


def test_no_truth_reaches_the_index(tmp_path, monkeypatch):
    """Truth marked with words no text holds: gold and wrong answers, the documents' labelled answers; through the
    runner (which indexes the stripped dataset) and directly on the labelled dataset (the key reads no truth)."""
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))
    ds = tiny_dataset()
    marked = ds.model_copy(update={"questions": [
        q.model_copy(update={"gold_answers": [f"goldmark{n}"], "wrong_answers": [f"wrongmark{n}"],
                             "meta": {"note": f"metamark{n}"},
                             "documents": [d.model_copy(update={"label": d.label.model_copy(
                                 update={"answer": f"labelmark{n}"})}) for d in q.documents]})
        for n, q in enumerate(ds.questions)]})
    assert corpus_key(marked) == corpus_key(strip_truth(marked)) == corpus_key(ds)
    r = Runner(marked, llm=LLMConfig(cache_mode="off")).retriever()
    r.build()
    r.search("Moby-Dick novel", k=2)  # the document vectors it saves too
    assert (r.folder / "vectors").is_dir()
    stored = b"".join(p.read_bytes() for p in r.folder.rglob("*") if p.is_file()).lower()
    vocab = json.loads((r.folder / "vocab.index.json").read_text(encoding="utf-8"))
    for mark in (b"goldmark", b"wrongmark", b"metamark", b"labelmark", b"misinfo"):
        assert mark not in stored
    assert "hawthorne" in vocab  # the documents' words are (the test reads the right files)
    assert all(d.label is None for d in r.retrieve("Moby-Dick", k=4))  # methods get stripped documents


def test_filters_and_queries_without_a_match(tmp_path):
    r = CorpusRetriever(tiny_dataset(), tmp_path)
    assert {h.source for h in r.search("capital of France", k=4, source="wiki")} == {"wiki"}
    assert all(h.question_id != "q1" for h in r.search("capital of France Paris", k=4, exclude_question="q1"))
    assert r.search("zyxwvut qwerty", k=1) == []  # no content word in common: nothing, not an arbitrary passage
    with pytest.raises(ValueError):
        r.search("  ", k=1)


def test_the_document_vectors_are_computed_once_per_text(tmp_path, monkeypatch):
    r = CorpusRetriever(tiny_dataset(), tmp_path)
    r.search("Paris France capital", k=1)
    first = r.texts_embedded
    seen: list[list[str]] = []
    real = embeddings.encode
    monkeypatch.setattr(embeddings, "encode", lambda texts, *a, **k: seen.append(list(texts)) or real(texts, *a, **k))
    r.search("Paris France capital", k=1)
    assert first > 0 and r.texts_embedded == first and seen == [["Paris France capital"]]  # only the query
    seen.clear()
    again = CorpusRetriever(tiny_dataset(), tmp_path)  # a second look, another process: the vectors were saved
    assert again.search("Paris France capital", k=1) == r.search("Paris France capital", k=1)
    assert again.texts_embedded == 0 and all(texts == ["Paris France capital"] for texts in seen)


def test_saved_vectors_are_merged_and_damaged_ones_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus, "MERGE_CHUNKS", 2)
    queries = ["Paris France capital", "Moby-Dick whale novel", "water boils sea level"]
    for q in queries:  # one process per search: a file each
        CorpusRetriever(tiny_dataset(), tmp_path).search(q, k=1)
    r = CorpusRetriever(tiny_dataset(), tmp_path)
    folder = r.folder / "vectors"
    (folder / "0-damaged.npz").write_bytes(b"not a zip")
    assert len(list(folder.glob("*.npz"))) == 4
    hits = [r.search(q, k=1) for q in queries]
    assert r.texts_embedded == 0 and len(list(folder.glob("*.npz"))) == 1  # merged, the damaged one dropped
    assert [CorpusRetriever(tiny_dataset(), tmp_path).search(q, k=1) for q in queries] == hits


def test_the_edited_view_over_the_corpus_retriever(tmp_path):
    ds = tiny_dataset()
    added = "Volcanic eruptions on Iceland disrupted flights across Europe in 2010."
    edited = apply_edits(strip_truth(ds.questions[1]), [RemoveDocuments(ids=["q2-wiki"]), AddDocument(text=added)])
    view = EditedQuestionRetriever(CorpusRetriever(strip_truth(ds), tmp_path), edited, "q2")
    hits = view.search("volcano eruption Iceland flights", k=1)
    assert hits[0].doc_id == edited.documents[-1].id and hits[0].text == added
    assert "q2-wiki" not in [h.doc_id for h in view.search("Moby-Dick novel by Herman Melville", k=4)]


def test_the_runner_gives_bridge_the_corpus_retriever_in_given_mode_only(tmp_path, monkeypatch, index_builds):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))
    ds = tiny_dataset()
    given = Runner(ds, llm=LLMConfig(cache_mode="off"))
    assert isinstance(given.retriever(), CorpusRetriever) and given.retriever().dataset is given.stripped
    assert given.pending(["no_rag", "bridge"]) == ["bridge"]
    seen: list[tuple] = []
    assert given.prepare_all(["bridge", "no_rag"], on_progress=lambda *a: seen.append(a)) == {}
    assert seen[0] == (corpus.STAGE, 0, 12, "document") and seen[-1] == (corpus.STAGE, 12, 12, "document")
    assert given.pending(["no_rag", "bridge"]) == [] and index_builds == [12]
    result = given.run(ds.question("q2"), ["bridge"])["bridge"]
    assert result.error is None
    k_ret = [k for c in result.trace.cycles for k in c.k_ret if k.document_id]
    assert k_ret and all(0 < k.retrieval_score <= 1 for k in k_ret)
    retrieve = Runner(ds, llm=LLMConfig(cache_mode="off"), evidence_mode="retrieve")
    assert isinstance(retrieve.retriever(), Retriever)


def test_run_staged_shows_ready_methods_while_another_prepares(tmp_path, monkeypatch):
    """The index build of BRIDGE is held until a ready method's result has arrived: the run must not wait for the
    build before running what needs none (a deadlock here means it did)."""
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))
    ds = tiny_dataset()
    runner = Runner(ds, llm=LLMConfig(cache_mode="off"))
    arrived, order = threading.Event(), []
    real = CorpusRetriever.build

    def held(self, on_progress=None):
        assert arrived.wait(60), "the ready method did not answer while the index was being built"
        return real(self, on_progress)

    monkeypatch.setattr(CorpusRetriever, "build", held)

    def on_result(result):
        order.append(result.method)
        arrived.set()

    results = runner.run_staged(ds.question("q1"), ["bridge", "no_rag"], on_result=on_result)
    assert order == ["no_rag", "bridge"] and list(results) == ["bridge", "no_rag"]
    assert results["bridge"].error is None and results["no_rag"].error is None


def test_run_staged_uses_one_event_loop(tmp_path, monkeypatch):
    """litellm's logging worker follows one event loop at a time: every method of a staged run answers on the same
    loop."""
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))
    ds = tiny_dataset()
    loops = set()
    real = Runner._run_one

    async def spy(self, *args, **kwargs):
        loops.add(id(asyncio.get_running_loop()))
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(Runner, "_run_one", spy)
    Runner(ds, llm=LLMConfig(cache_mode="off")).run_staged(ds.question("q1"), ["bridge", "no_rag", "vanilla_rag"])
    assert len(loops) == 1
