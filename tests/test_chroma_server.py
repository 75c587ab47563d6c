"""The retrieval index on a real chroma server (``chroma run`` on loopback, started here): built through the server,
it returns exactly what the embedded index returns, per source; ``--chroma-url`` takes the command line there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings

import backend.embeddings as embeddings
from backend.data import load_dataset
from backend.paths import SAMPLE_DATA
from backend.retrieval import Retriever, collection_name
from backend.runner import Runner
from backend.schema import MethodResult, strip_truth, without_timings
from tests.conftest import ROOT
from tests.servers import chroma_server


@pytest.fixture(scope="module")
def chroma_url():
    with chroma_server() as url:
        yield url


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """The first 12 RAMDocs dev questions (59 documents, all texts distinct, so no two hits tie), their documents
    dealt round-robin to four named sources, as a dataset file of its own."""
    path = tmp_path_factory.mktemp("ramdocs12") / "questions.jsonl"
    rows = [json.loads(line) for line in
            (SAMPLE_DATA / "ramdocs_dev" / "questions.jsonl").read_text(encoding="utf-8").splitlines()[:12]]
    docs = [doc for row in rows for doc in row["documents"]]
    for n, doc in enumerate(docs):
        doc["source"] = f"src-{n % 4 + 1}"
    assert len({doc["text"] for doc in docs}) == len(docs)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def embed_once(monkeypatch):
    """Each text is embedded once per test: both indexes get the very same vectors (and the test half the work)."""
    memo: dict[str, list[float]] = {}
    real = embeddings.encode

    def memoised(texts, *args, **kwargs):
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing:
            memo.update(zip(missing, real(missing, *args, **kwargs)))
        return [memo[t] for t in texts]

    monkeypatch.setattr(embeddings, "encode", memoised)


def test_server_index_retrieves_exactly_what_the_embedded_index_does(chroma_url, small, tmp_path, embed_once):
    ds = load_dataset(small)
    n_docs = len(ds.documents())
    with Retriever(ds, tmp_path / "cache") as embedded, Retriever(ds, chroma_host=chroma_url) as served:
        assert served.location == f"chroma server {chroma_url}" and served.index_dir is None
        assert embedded.build().added == served.build().added == n_docs
        assert served.count() == n_docs
        queries = [q.question for q in ds.questions[:4]] + ["Which team did the coach lead in 1998?"]
        compared = 0
        for query in queries:
            for source in [None, *ds.source_names()]:
                local, remote = embedded.search(query, k=3, source=source), served.search(query, k=3, source=source)
                assert [h.doc_id for h in remote] == [h.doc_id for h in local], (query, source)
                assert [h.score for h in remote] == pytest.approx([h.score for h in local], abs=1e-5)
                assert all(h.source == source for h in remote if source is not None)
                compared += bool(local)
        assert compared == len(queries) * 5  # every query, over all sources and each of the four
    # the index lives on the server: a new client finds it built and embeds nothing
    with Retriever(ds, chroma_host=chroma_url) as again:
        stats = again.build()
        assert stats.embedded == 0 and stats.unchanged == n_docs


@pytest.mark.slow  # a chroma server and the command line: 6 s idle, about 20 s at the load above
def test_cli_with_chroma_url_builds_on_the_server_and_answers_as_embedded(chroma_url, small, tmp_path):
    ds = load_dataset(small)
    question = ds.questions[2]
    done = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", str(small), "--question", "@3",
                           "--methods", "vanilla_rag", "--evidence", "retrieve", "--json",
                           "--cache-dir", str(tmp_path / "cache"), "--chroma-url", chroma_url],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    served = MethodResult.model_validate(json.loads(done.stdout)["results"]["vanilla_rag"])
    assert served.error is None and served.answers
    # the command built its index on the server, under the same collection name as the embedded one
    client = chromadb.HttpClient(host="127.0.0.1", port=int(chroma_url.rsplit(":", 1)[1]),
                                 settings=Settings(anonymized_telemetry=False))
    assert collection_name(strip_truth(ds)) in [c.name for c in client.list_collections()]
    assert not (tmp_path / "cache" / "index").exists()
    embedded = Runner(ds, evidence_mode="retrieve").run(question, ["vanilla_rag"])["vanilla_rag"]
    assert without_timings(served) == without_timings(embedded)


def test_a_server_that_never_answers_is_a_clear_error_not_a_hang(monkeypatch):
    """chromadb's own client waits forever; ours gives up after its connect timeout and says which server."""
    import socket
    import time

    import backend.retrieval as retrieval
    from backend.retrieval import RetrievalError, _open_http

    monkeypatch.setattr(retrieval, "CHROMA_CONNECT_S", 0.5)
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        start = time.monotonic()
        with pytest.raises(RetrievalError, match=f"chroma server 127.0.0.1:{port}: cannot connect"):
            _open_http(f"http://127.0.0.1:{port}")
        assert time.monotonic() - start < 30


def test_requests_after_the_first_are_bounded_too(chroma_url):
    from backend.retrieval import CHROMA_REQUEST_S, _open_http

    assert _open_http(chroma_url)._server._session.timeout.read == CHROMA_REQUEST_S
