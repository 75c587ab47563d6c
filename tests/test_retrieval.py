"""backend.retrieval: per-source search, incremental (re)builds, no truth in the index, RAMDocs top-1."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings

import backend.embeddings as embeddings
from backend.retrieval import (
    METADATA_KEYS, BuildStats, LocalEmbeddingFunction, RetrievalError, Retriever, evidence,
)
from backend.schema import Dataset, DocLabel, Document, Question, strip_truth

ROOT = Path(__file__).resolve().parents[1]
RAMDOCS_SAMPLE = ROOT / "sample_data" / "ramdocs_dev"
RAMDOCS_RAW = ROOT / "sample_data" / "raw" / "ramdocs" / "RAMDocs_dev100.jsonl"  # the released dev file, as shipped

#: Measured: 100/100 questions' best hit over all 553 RAMDocs dev100 documents is one of their own
#: (all-MiniLM-L6-v2, cosine). The 100 questions are about 100 different entities and every question's
#: documents were retrieved for its entity, so anything less means broken embeddings or a broken index:
#: assert all of them.
RAMDOCS_TOP1_MIN = 1.0


def _doc(doc_id: str, source: str | None, text: str, kind: str = "correct", answer: str | None = None):
    return Document(id=doc_id, source=source, text=text, label=DocLabel(type=kind, answer=answer))


def tiny_dataset(name: str = "tiny", path: str = "tiny.jsonl") -> Dataset:
    """Three questions, four documents each, from three shared sources plus one source-less document."""
    return Dataset(name=name, path=path, questions=[
        Question(id="q1", question="What is the capital of France?", gold_answers=["Paris"],
                 wrong_answers=["Lyon"], documents=[
                     _doc("q1-wiki", "wiki", "Paris is the capital and largest city of France.", answer="Paris"),
                     _doc("q1-news", "news", "Officials in Lyon, France's capital, announced a new plan.",
                          "misinfo", "Lyon"),
                     _doc("q1-blog", "blog", "My trip to Paris, the French capital, was lovely.", answer="Paris"),
                     _doc("q1-self", None, "France's seat of government is in Paris.", answer="Paris"),
                 ]),
        Question(id="q2", question="Who wrote the novel Moby-Dick?", gold_answers=["Herman Melville"],
                 documents=[
                     _doc("q2-wiki", "wiki", "Moby-Dick is an 1851 novel by Herman Melville.",
                          answer="Herman Melville"),
                     _doc("q2-news", "news", "A new film adapts Moby-Dick, Nathaniel Hawthorne's whaling novel.",
                          "misinfo", "Nathaniel Hawthorne"),
                     _doc("q2-blog", "blog", "I finally read Melville's Moby-Dick about the white whale.",
                          answer="Herman Melville"),
                     _doc("q2-noise", "news", "The stock market closed higher on Tuesday.", "noise"),
                 ]),
        Question(id="q3", question="What is the boiling point of water at sea level?",
                 gold_answers=["100 degrees Celsius"], documents=[
                     _doc("q3-wiki", "wiki", "At sea level, water boils at 100 degrees Celsius.",
                          answer="100 degrees Celsius"),
                     _doc("q3-news", "news", "Water boils at 90 degrees Celsius at sea level, a study claims.",
                          "misinfo", "90 degrees Celsius"),
                     _doc("q3-blog", "blog", "Boiling water for pasta: wait until it reaches 100 C.",
                          answer="100 degrees Celsius"),
                     _doc("q3-noise", "blog", "Our cat enjoys sleeping on the windowsill.", "noise"),
                 ]),
    ])


@pytest.fixture
def encode_calls(monkeypatch):
    """Counts the texts passed to backend.embeddings.encode (the only way the index embeds anything)."""
    calls: list[list[str]] = []
    real = embeddings.encode

    def counting(texts, *args, **kwargs):
        calls.append(list(texts))
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(embeddings, "encode", counting)
    return calls


# --------------------------------------------------------------------------------------------------
# per-source search, evidence modes, no truth in the index


def test_per_source_filter_returns_only_that_source(tmp_path):
    ds = tiny_dataset()
    with Retriever(ds, tmp_path) as r:
        began = time.perf_counter()
        stats = r.build()
        assert stats == BuildStats(added=12, seconds=stats.seconds)
        assert 0 <= stats.seconds <= time.perf_counter() - began + 0.001  # its own time (rounded), not a loop index
        for source in ("wiki", "news", "blog"):
            expected = {d.id for _, d in ds.documents() if d.source == source}
            hits = r.search("capital of France", k=10, source=source)
            assert {h.doc_id for h in hits} == expected  # k > source size: exactly that source's docs
            assert all(h.source == source for h in hits)
            top = r.search("Who wrote Moby-Dick?", k=1, source=source)
            assert len(top) == 1 and top[0].source == source
        # a source-less document is its own source
        assert [h.doc_id for h in r.search("Paris", k=5, source="q1-self")] == ["q1-self"]
        assert r.search("Paris", k=3, source="no-such-source") == []

        hits = r.search("Who wrote the novel Moby-Dick?", k=3)
        assert [h.rank for h in hits] == [1, 2, 3]
        assert hits[0].question_id == "q2" and hits[0].source in {"wiki", "blog", "news"}
        assert hits[0].score >= hits[1].score >= hits[2].score and 0 < hits[0].score <= 1.0001
        assert hits[0].text == r.document(hits[0].doc_id).text

        hits = r.search("Who wrote the novel Moby-Dick?", k=12, exclude_question="q2")
        assert len(hits) == 8 and all(h.question_id != "q2" for h in hits)
        hits = r.search("capital of France", k=12, source="wiki", exclude_question="q1")
        assert {h.doc_id for h in hits} == {"q2-wiki", "q3-wiki"}


def test_evidence_modes(tmp_path):
    ds = tiny_dataset()
    q1 = ds.question("q1")
    assert evidence(q1, "given") == q1.documents  # no retriever needed
    with Retriever(ds, tmp_path) as r:
        assert r.given(q1) == q1.documents
        got = r.evidence(q1, "retrieve", k=2, source="wiki")
        assert [d.id for d in got] == ["q1-wiki", got[1].id] and all(d.source == "wiki" for d in got)
        assert got[0] is r.document("q1-wiki") and got[0].label is not None  # dataset objects, labels kept
        assert len(r.evidence(q1, "retrieve", k=3)) == 3
        with pytest.raises(ValueError):
            evidence(q1, "retrieve")
        with pytest.raises(ValueError):
            r.evidence(q1, "bogus")  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            r.search("x", k=0)


def test_index_holds_no_truth_and_stripped_dataset_shares_it(tmp_path, encode_calls):
    ds = tiny_dataset()
    with Retriever(ds, tmp_path) as r:
        r.build()
        stored = r._collection.get(include=["metadatas", "documents"])
        assert all(set(m) == set(METADATA_KEYS) for m in stored["metadatas"])
        assert stored["documents"] == [None] * len(stored["ids"])  # texts stay in the dataset (no full-text index)
        dumped = json.dumps(stored["metadatas"]) + json.dumps(r._collection.metadata)
        for truth in ("Melville", "Lyon", "misinfo", "noise", "correct", "100 degrees"):
            assert truth not in dumped
        by_id = dict(zip(stored["ids"], stored["metadatas"]))
        assert by_id["q1-self"]["source"] == "q1-self" and by_id["q2-wiki"] == {
            "question_id": "q2", "source": "wiki", "content_hash": by_id["q2-wiki"]["content_hash"]}
    encode_calls.clear()
    # The same dataset without its truth maps to the same index: nothing is re-embedded and the
    # documents handed back are the stripped ones (what methods receive).
    with Retriever(strip_truth(ds), tmp_path) as r:
        assert r.build().embedded == 0 and encode_calls == []
        docs = r.evidence(ds.question("q2"), "retrieve", k=4)
        assert docs and all(d.label is None for d in docs)


# --------------------------------------------------------------------------------------------------
# incremental builds


def test_reopen_does_not_reembed_and_changes_are_incremental(tmp_path, encode_calls):
    ds = tiny_dataset()
    progress: list[tuple[int, int]] = []
    first = Retriever(ds, tmp_path)
    assert first.build(on_progress=lambda done, total: progress.append((done, total))).embedded == 12
    assert progress[0] == (0, 12) and progress[-1] == (12, 12)
    assert sum(len(c) for c in encode_calls) == 12
    first.close()  # the last client on the folder: chroma's in-process system is released

    encode_calls.clear()
    second = Retriever(ds, tmp_path)  # new client, reopened from disk
    assert second.count() == 12
    stats = second.build()
    assert (stats.added, stats.updated, stats.removed, stats.unchanged) == (0, 0, 0, 12)
    assert encode_calls == []  # nothing re-embedded
    assert second.search("Who wrote Moby-Dick?", k=1)[0].question_id == "q2"
    assert encode_calls == [["Who wrote Moby-Dick?"]]  # only the query
    second.close()

    # change one document's text, drop one, add one, move one to another source
    q1, q2, q3 = ds.questions
    changed = ds.model_copy(update={"questions": [
        q1.model_copy(update={"documents": [
            *q1.documents[:3], q1.documents[3].model_copy(update={"text": "Paris hosts the French government."}),
        ]}),
        q2.model_copy(update={"documents": [
            *q2.documents[:3], q2.documents[3].model_copy(update={"source": "blog"}),
        ]}),
        q3.model_copy(update={"documents": [
            *q3.documents[:3], _doc("q3-extra", "wiki", "Water boils at a lower temperature on mountains."),
        ]}),
    ]})
    encode_calls.clear()
    with Retriever(changed, tmp_path) as r:
        stats = r.build()
        assert (stats.added, stats.updated, stats.removed, stats.retagged, stats.unchanged) == (1, 1, 1, 1, 9)
        assert sorted(t for call in encode_calls for t in call) == [
            "Paris hosts the French government.", "Water boils at a lower temperature on mountains."]
        assert r.count() == 12
        assert "q2-noise" in {h.doc_id for h in r.search("stock market", k=10, source="blog")}
        assert "q3-noise" not in {h.doc_id for h in r.search("cat on the windowsill", k=12)}
        assert r.search("Paris government", k=1, source="q1-self")[0].text == "Paris hosts the French government."


def test_search_builds_on_first_use_and_raw_client_uses_our_embedding(tmp_path, encode_calls):
    ds = tiny_dataset()
    with Retriever(ds, tmp_path) as r:
        assert r.search("boiling point of water", k=1)[0].question_id == "q3"  # built implicitly
        assert r.last_build is not None and r.last_build.added == 12
        name = r.collection_name
    # A plain client opening the collection without an embedding function gets ours back from the
    # persisted config (registered on import), never chromadb's downloading default.
    client = chromadb.PersistentClient(path=str(tmp_path / "index"), settings=Settings(anonymized_telemetry=False))
    try:
        col = client.get_collection(name)
        assert col.configuration_json["embedding_function"]["name"] == LocalEmbeddingFunction.name()
        encode_calls.clear()
        res = col.query(query_texts=["Who wrote Moby-Dick?"], n_results=1)
        assert encode_calls == [["Who wrote Moby-Dick?"]]
        assert res["metadatas"][0][0]["question_id"] == "q2"
        # a caller-owned client is used as is and not closed by the retriever
        with Retriever(ds, client=client) as r:
            assert r.index_dir is None and r.build().embedded == 0
        assert client.count_collections() == 1
    finally:
        client.close()


def test_collections_are_per_dataset_and_model(tmp_path, monkeypatch):
    a, b = tiny_dataset("tiny"), tiny_dataset("tiny", path="elsewhere/tiny.jsonl")
    with Retriever(a, tmp_path) as ra:
        name = ra.collection_name
        assert name.startswith("cl-tiny-") and 3 <= len(name) <= 512
        assert Retriever(a, client=ra._client).collection_name == name
        assert Retriever(b, client=ra._client).collection_name != name
        monkeypatch.setenv("CONFLICTLENS_EMBEDDING_MODEL", str(tmp_path / "other-model"))
        assert Retriever(a, client=ra._client).collection_name != name
        # embedding with a different model than the collection's fails instead of mixing spaces
        col = ra._client.get_collection(name)
        with pytest.raises(RetrievalError, match="embedded with"):
            col.query(query_texts=["x"], n_results=1)


# --------------------------------------------------------------------------------------------------
# errors


def test_unusable_index_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    with pytest.raises(RetrievalError, match="cannot create the retrieval index folder"):
        Retriever(tiny_dataset(), blocker)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_read_only_index_folder_is_a_clear_error(tmp_path):
    (tmp_path / "index").mkdir()
    (tmp_path / "index").chmod(0o500)
    try:
        with pytest.raises(RetrievalError, match="not writable"):
            Retriever(tiny_dataset(), tmp_path)
    finally:
        (tmp_path / "index").chmod(0o700)


def test_duplicate_document_ids_and_bad_host(tmp_path):
    ds = tiny_dataset()
    q1, q2, _ = ds.questions
    dup = ds.model_copy(update={"questions": [q1, q2.model_copy(update={"documents": [q1.documents[0]]})]})
    with pytest.raises(RetrievalError, match="'q1-wiki' appears twice"):
        Retriever(dup, tmp_path)
    with pytest.raises(RetrievalError, match="cannot connect"):
        Retriever(ds, chroma_host="127.0.0.1:9")  # discard port: nothing listens
    with pytest.raises(ValueError):
        Retriever(ds, client=object(), chroma_host="localhost")


def test_closed_retriever_raises(tmp_path):
    r = Retriever(tiny_dataset(), tmp_path)
    r.close()
    with pytest.raises(RetrievalError, match="closed"):
        r.build()


# --------------------------------------------------------------------------------------------------
# RAMDocs dev100: every question's best hit over the whole corpus is one of its own documents


def _ramdocs_dataset() -> Dataset:
    try:
        from backend.data import load_dataset
    except ImportError:
        load_dataset = None
    if load_dataset is not None:
        if (RAMDOCS_SAMPLE / "questions.jsonl").is_file():
            return load_dataset(RAMDOCS_SAMPLE)
        return load_dataset(RAMDOCS_RAW)
    # fallback while backend.data is not available: a minimal RAMDocs converter (text only matters)
    questions = []
    for n, line in enumerate(RAMDOCS_RAW.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(line)
        qid = f"q{n:04d}"
        questions.append(Question(id=qid, question=row["question"], documents=[
            Document(id=f"{qid}-d{i}", text=d["text"]) for i, d in enumerate(row["documents"], start=1)]))
    return Dataset(name="RAMDocs_dev100", path=str(RAMDOCS_RAW), questions=questions, format="ramdocs")


@pytest.fixture(scope="session")
def ramdocs_retriever(tmp_path_factory):
    if not RAMDOCS_RAW.is_file() and not RAMDOCS_SAMPLE.is_dir():
        pytest.skip("RAMDocs dev set not available")
    ds = _ramdocs_dataset()
    r = Retriever(ds, tmp_path_factory.mktemp("ramdocs-cache"))
    stats = r.build()
    assert stats.added == len(ds.documents())
    yield r
    r.close()


def test_ramdocs_top1_is_own_document(ramdocs_retriever):
    r = ramdocs_retriever
    questions = r.dataset.questions
    assert len(questions) == 100
    misses = []
    for q in questions:
        top = r.search(q.question, k=1)
        own = {d.id for d in q.documents}
        if top[0].doc_id not in own:
            misses.append((q.id, q.question, top[0].doc_id))
    rate = 1 - len(misses) / len(questions)
    print(f"RAMDocs dev100 top-1 own-document rate: {rate:.2%}; misses: {misses}")
    assert rate >= RAMDOCS_TOP1_MIN, misses


def test_ramdocs_rebuild_is_a_no_op(ramdocs_retriever, encode_calls):
    stats = ramdocs_retriever.build()
    assert stats.embedded == 0 and stats.unchanged == len(ramdocs_retriever.dataset.documents())
    assert encode_calls == []


def test_a_retriever_of_an_older_version_of_the_dataset_says_so(tmp_path, encode_calls):
    """Two versions of one dataset file share its collection (named by name and path): once the newer one is
    indexed, the older retriever's search names the cause instead of failing on an unknown document id."""
    old = tiny_dataset()
    with Retriever(old, tmp_path) as r_old:
        r_old.build()
        q1 = old.question("q1")
        new = old.model_copy(update={"questions": [q1.model_copy(update={"documents": [
            d.model_copy(update={"id": "q1-new"}) if d.id == "q1-wiki" else d for d in q1.documents]}),
            *old.questions[1:]]}, deep=True)
        with Retriever(new, tmp_path) as r_new:
            r_new.build()
            assert r_new.search("capital of France", k=1)[0].doc_id == "q1-new"
        with pytest.raises(RetrievalError, match="another version of the dataset was indexed"):
            r_old.search("capital of France", k=1)
