"""Dense retrieval over a dataset's documents: a chromadb index fed by the local embedding model.

The index lives in ``<cache_dir>/index/`` (a chromadb ``PersistentClient`` folder), or on a chroma server
(``chroma_host=`` or ``client=``). There is one collection per dataset and embedding model. It is built
incrementally: every document is stored under its id with a hash of its text, and a (re)build embeds
only new or changed documents (each distinct text once), re-tags documents whose question/source changed (no
re-embedding), and deletes documents that left the dataset. The index is kept on disk, so a dataset is embedded
once per cache folder; the bundled datasets' texts are not embedded at all: ``backend.embeddings.encode`` reads their
shipped vectors (``backend.vectors``).

Only vectors and routing metadata reach the index: ``question_id``, ``source`` (``Document.source_name``)
and ``content_hash``. The document text is not stored: a hit's text comes from the dataset, and chromadb's
full-text index over stored documents (which nothing here queries) was more than half of every build's cost
(1.4 of 2.5 CPU-s for multisource's 3,326 documents; benchmarks/index_build.py). Indexes built by earlier versions
still hold the texts; nothing reads them. Labels, gold/wrong answers and source reliabilities are never stored, and the
retriever never reads them. :meth:`Retriever.evidence` and :meth:`Retriever.document` hand back the
dataset's own ``Document`` objects, so a retriever built on a full dataset returns labelled documents
(for the dashboard's truth overlays) and one built on ``strip_truth(dataset)`` returns stripped ones
(what methods must get). Both share the same index, because nothing truth-related goes into it.

chromadb's default embedding function downloads a model at run time, so every collection is created
with :class:`LocalEmbeddingFunction`, which is registered with chromadb when this module is imported.
Importing this module is therefore required before opening one of our collections with a raw client.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import chromadb
from chromadb import Documents, EmbeddingFunction, Embeddings
from chromadb.config import Settings
from chromadb.utils.embedding_functions import register_embedding_function
from backend import embeddings
from backend.errors import mask_secrets, mask_url
from backend.hits import DocumentLookup, Hit  # Hit re-exported: ``backend.retrieval.Hit`` as before
from backend.llm.urls import BadURL, chroma_server
from backend.paths import default_cache_dir, private_dir
from backend.schema import Dataset, Document, EvidenceMode, Question

__all__ = [
    "BuildStats", "EMBED_BATCH", "EvidenceMode", "Hit", "LocalEmbeddingFunction", "RetrievalError",
    "Retriever", "collection_name", "evidence", "index_dir",
]

ProgressCallback = Callable[[int, int], None]

#: Texts embedded per step.
EMBED_BATCH = 64
#: Documents stored per upsert (at most the client's maximum batch); progress is reported per embedded step.
UPSERT_ROWS = 1024
#: Metadata keys stored per document. Nothing else goes into the index (no truth, ever).
METADATA_KEYS = ("question_id", "source", "content_hash")
_INDEX_FORMAT = 1
_GET_PAGE = 1000


class RetrievalError(RuntimeError):
    """The retrieval index cannot be opened, written or queried, or the dataset cannot be indexed."""


# --------------------------------------------------------------------------------------------------
# embedding function


def model_key() -> str:
    """Identifies the embedding model: the bundled model's name, or a custom model folder's full path."""
    path, bundled = embeddings.model_path()
    return embeddings.model_name() if bundled else str(Path(path).expanduser().resolve())


def _encode(texts: Sequence[str]) -> list[Any]:
    # Looked up on the module at call time, so one patch of ``backend.embeddings.encode`` sees every call.
    return list(embeddings.encode(list(texts), batch_size=EMBED_BATCH))


@register_embedding_function
class LocalEmbeddingFunction(EmbeddingFunction[Documents]):
    """chromadb embedding function backed by :func:`backend.embeddings.encode` (no download, ever).

    chromadb persists ``name()`` and ``get_config()`` with the collection and rebuilds the function from
    them when the collection is opened without one, so a collection of ours never falls back to
    chromadb's default (downloading) embedding function. The config records the model, and embedding
    with a different model than the collection was built with fails instead of mixing vector spaces.
    """

    def __init__(self, model: str | None = None) -> None:
        self.model = model or model_key()

    def __call__(self, input: Documents) -> Embeddings:  # noqa: A002 - chromadb's parameter name
        current = model_key()
        if current != self.model:
            raise RetrievalError(
                f"this collection was embedded with {self.model!r} but the current embedding model is "
                f"{current!r}; unset/set CONFLICTLENS_EMBEDDING_MODEL accordingly or rebuild the index"
            )
        return _encode(input)

    @staticmethod
    def name() -> str:
        return "conflictlens-local"

    def get_config(self) -> dict[str, Any]:
        return {"model": self.model}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> LocalEmbeddingFunction:
        return LocalEmbeddingFunction(config.get("model"))

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        if not isinstance(config.get("model"), str):
            raise ValueError("conflictlens-local embedding config needs a 'model' string")

    def default_space(self) -> Literal["cosine"]:
        return "cosine"

    def supported_spaces(self) -> list[Literal["cosine"]]:
        return ["cosine"]


# --------------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class BuildStats:
    """What one :meth:`Retriever.build` did. Only ``added`` and ``updated`` documents were embedded."""

    added: int = 0       # new ids: embedded
    updated: int = 0     # text changed: re-embedded
    removed: int = 0     # no longer in the dataset: deleted
    unchanged: int = 0   # same text and metadata: untouched
    retagged: int = 0    # same text, new question_id/source: metadata updated, not re-embedded
    seconds: float = 0.0

    @property
    def embedded(self) -> int:
        return self.added + self.updated

    @property
    def total(self) -> int:
        """Documents in the index after the build (= documents in the dataset)."""
        return self.added + self.updated + self.unchanged + self.retagged

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "embedded": self.embedded, "total": self.total}


# --------------------------------------------------------------------------------------------------
# naming and opening


def index_dir(cache_dir: str | Path | None = None) -> Path:
    """The folder of the persistent index: ``<cache_dir>/index``."""
    base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return base.expanduser() / "index"


def collection_name(dataset: Dataset, model: str | None = None) -> str:
    """``cl-<slug of the dataset name>-<hash of name, absolute path and model>``, a valid chroma name."""
    model = model or model_key()
    path = str(Path(dataset.path).expanduser().resolve()) if dataset.path else ""
    digest = hashlib.sha256("\0".join((dataset.name, path, model)).encode("utf-8")).hexdigest()[:16]
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", dataset.name).strip("-")[:40].strip("-") or "dataset"
    return f"cl-{slug}-{digest}"


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _settings() -> Settings:
    return Settings(anonymized_telemetry=False)


#: chromadb's shared-system registry is not thread-safe: two clients opened at once on one folder (two Streamlit
#: sessions, or a rerun overlapping a run) race in ``SharedSystemClient`` and both fail ('RustBindingsAPI' object
#: has no attribute 'bindings' / KeyError on the path). Opening is serialised; using the clients is not.
_OPEN_LOCK = threading.Lock()
#: One build at a time per index and collection in this process: a build started ahead of need (the app starts one
#: in the background while RA-RAG's stage 1 runs) and a method's own first search then embed the corpus once.
_BUILD_LOCKS: dict[tuple[str, str], threading.Lock] = {}


def _open_persistent(folder: Path):
    try:
        private_dir(folder)  # chromadb's files inside get the umask's mode: the folder keeps them owner-only
    except OSError as exc:
        raise RetrievalError(f"{folder}: cannot create the retrieval index folder: {exc.strerror or exc}") \
            from exc
    if not folder.is_dir():
        raise RetrievalError(f"{folder}: the retrieval index path exists but is not a folder")
    try:  # os.access is not enough (root, read-only mounts): actually try to write
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise RetrievalError(
            f"{folder}: the retrieval index folder is not writable ({exc.strerror or exc}); "
            "pass another cache folder (--cache-dir / CONFLICTLENS_CACHE_DIR)"
        ) from exc
    try:
        with _OPEN_LOCK:
            return chromadb.PersistentClient(path=str(folder), settings=_settings())
    except Exception as exc:  # noqa: BLE001 - chromadb raises many types; one clear error for all
        raise RetrievalError(f"{folder}: cannot open the retrieval index: {exc}") from exc


#: chromadb's HTTP client waits forever for a reply (httpx timeout None): a stalled server would hold the index's
#: locks and every run on it. A first heartbeat must answer within CONNECT_S, every later request within REQUEST_S
#: (index batches are large).
CHROMA_CONNECT_S = 10.0
CHROMA_REQUEST_S = 120.0


def _open_http(host: str):
    import httpx

    try:  # one parse, the allow-list's too (``backend.deployment.allows_chroma``): what is checked is what is reached
        ssl, hostname, port = chroma_server(host)
    except BadURL as exc:
        raise RetrievalError(f"{exc} (expected host, host:port or http(s)://host:port)") from None
    shown = f"[{hostname}]" if ":" in hostname else hostname
    try:
        httpx.get(f"{'https' if ssl else 'http'}://{shown}:{port}/api/v2/heartbeat",
                  timeout=CHROMA_CONNECT_S).raise_for_status()
        client = chromadb.HttpClient(host=hostname, port=port, ssl=ssl, settings=_settings())
    except Exception as exc:  # noqa: BLE001
        raise RetrievalError(f"chroma server {shown}:{port}: cannot connect: {mask_secrets(str(exc))}") from exc
    session = getattr(getattr(client, "_server", None), "_session", None)  # chromadb 1.5's httpx.Client
    if session is not None:
        session.timeout = httpx.Timeout(CHROMA_REQUEST_S, connect=CHROMA_CONNECT_S)
    return client


def _batches(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


# --------------------------------------------------------------------------------------------------
# the retriever


class Retriever(DocumentLookup):
    """Dense top-k retrieval over all documents of one dataset, optionally restricted to one source.

    ``cache_dir`` defaults to :func:`backend.paths.default_cache_dir`; the index goes in its ``index/``
    folder. Pass ``client=`` (any chromadb client; the caller keeps ownership) or ``chroma_host=``
    (``host[:port]`` or ``http(s)://host:port``) to use a chroma server instead. The index is synced
    with the dataset by :meth:`build`, which :meth:`search` runs on first use if nobody did.
    """

    def __init__(self, dataset: Dataset, cache_dir: str | Path | None = None, *,
                 client: Any | None = None, chroma_host: str | None = None) -> None:
        if client is not None and chroma_host:
            raise ValueError("pass either client or chroma_host, not both")
        self.dataset = dataset
        self._docs: dict[str, tuple[Question, Document]] = {}
        for question, doc in dataset.documents():
            if doc.id in self._docs:
                other = self._docs[doc.id][0].id
                raise RetrievalError(
                    f"{dataset.path}: document id {doc.id!r} appears twice (questions {other!r} and "
                    f"{question.id!r}); the index needs unique document ids"
                )
            self._docs[doc.id] = (question, doc)
        self.model = model_key()
        self.collection_name = collection_name(dataset, self.model)
        self.location: str
        self._owns_client = client is None
        if client is not None:
            self.index_dir: Path | None = None
            self._client = client
            self.location = f"chroma client {type(client).__name__}"
        elif chroma_host:
            self.index_dir = None
            self._client = _open_http(chroma_host)
            self.location = f"chroma server {mask_url(chroma_host)}"  # messages name it: no secret in them
        else:
            self.index_dir = index_dir(cache_dir)
            self._client = _open_persistent(self.index_dir)
            self.location = str(self.index_dir)
        self._ef = LocalEmbeddingFunction(self.model)
        try:
            self._collection = self._client.get_or_create_collection(
                self.collection_name,
                embedding_function=self._ef,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"dataset": dataset.name, "embedding_model": self.model,
                          "conflictlens_index": _INDEX_FORMAT},
            )
        except Exception as exc:  # noqa: BLE001
            self.close()
            raise RetrievalError(
                f"{self.location}: cannot open collection {self.collection_name}: {exc}") from exc
        self._lock = threading.RLock()
        with _OPEN_LOCK:
            self._build_lock = _BUILD_LOCKS.setdefault((self.location, self.collection_name), threading.Lock())
        self.last_build: BuildStats | None = None

    # -- lifecycle ----------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the chroma client if this retriever opened it (a persistent folder is then unlocked)."""
        if self._owns_client and self._client is not None:
            close = getattr(self._client, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # noqa: BLE001 - closing is best effort
                    pass
            self._client = None

    def __enter__(self) -> Retriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def count(self) -> int:
        """Documents currently in the index."""
        return self._call("count", self._collection.count)

    #: The name of :meth:`build`'s progress stage (``Runner.prepare_all``).
    stage = "Embedding documents"

    def embed(self, texts: Sequence[str]) -> Any:
        """Texts embedded as the index's documents and queries are (``whatif.overlay``)."""
        return self._ef(list(texts))

    # -- building ------------------------------------------------------------------------------------

    def build(self, on_progress: ProgressCallback | None = None) -> BuildStats:
        """Sync the index with the dataset, embedding only new or changed documents.

        ``on_progress(done, total)`` is called with ``(0, total)`` first and after every batch of
        embedded documents (``total`` = documents to embed; 0 when the index is already up to date).
        """
        with self._lock, self._build_lock:
            start = time.perf_counter()
            existing = self._existing_metadata()
            new_ids, changed_ids, retag_ids, unchanged = [], [], [], 0
            for doc_id, (question, doc) in self._docs.items():
                meta = self._metadata(question, doc)
                old = existing.get(doc_id)
                if old is None:
                    new_ids.append(doc_id)
                elif old.get("content_hash") != meta["content_hash"]:
                    changed_ids.append(doc_id)
                elif any(old.get(key) != meta[key] for key in METADATA_KEYS):
                    retag_ids.append(doc_id)
                else:
                    unchanged += 1
            removed_ids = [doc_id for doc_id in existing if doc_id not in self._docs]

            step = self._max_batch()
            for chunk in _batches(removed_ids, step):
                self._call("delete", self._collection.delete, ids=list(chunk))
            for chunk in _batches(retag_ids, step):
                self._call("update", self._collection.update, ids=list(chunk),
                           metadatas=[self._metadata(*self._docs[i]) for i in chunk])

            # Similar lengths per batch mean less padding: about 20% faster on RAMDocs-sized passages.
            to_embed = sorted(new_ids + changed_ids, key=lambda i: (len(self._docs[i][1].text), i))
            total = len(to_embed)
            if on_progress:
                on_progress(0, total)
            # A text is embedded once however many documents carry it (multi-source datasets repeat a passage
            # under several sources: 1,859 distinct texts in multisource's 3,326 documents); its documents are
            # stored when the chunk holding its first document is embedded.
            by_text: dict[str, list[str]] = {}
            for doc_id in to_embed:
                by_text.setdefault(self._docs[doc_id][1].text, []).append(doc_id)
            texts = list(by_text)
            done = 0
            ids: list[str] = []
            rows: list[Any] = []
            for n, chunk in enumerate(_batches(texts, EMBED_BATCH), start=1):
                vectors = self._ef(list(chunk))
                chunk_ids = [doc_id for text in chunk for doc_id in by_text[text]]
                ids += chunk_ids
                rows += [vector for text, vector in zip(chunk, vectors) for _ in by_text[text]]
                # Stored UPSERT_ROWS at a time: each upsert is a chromadb transaction, and with vectors that cost
                # nothing to get (backend.vectors) 64-row upserts took 2.4 CPU-s and 8 s for multisource's 3,326
                # documents, 1,000-row ones 1.8 CPU-s and 4 s.
                if len(ids) >= UPSERT_ROWS or n * EMBED_BATCH >= len(texts):
                    for at in range(0, len(ids), step):
                        part = ids[at:at + step]
                        self._call("upsert", self._collection.upsert, ids=part, embeddings=rows[at:at + step],
                                   metadatas=[self._metadata(*self._docs[i]) for i in part])
                    ids, rows = [], []
                done += len(chunk_ids)
                if on_progress:
                    on_progress(done, total)

            self.last_build = BuildStats(
                added=len(new_ids), updated=len(changed_ids), removed=len(removed_ids),
                unchanged=unchanged, retagged=len(retag_ids),
                seconds=round(time.perf_counter() - start, 3),
            )
            return self.last_build

    def ensure_built(self) -> None:
        """Run :meth:`build` once per retriever if it has not run yet."""
        if self.last_build is None:
            with self._lock:
                if self.last_build is None:
                    self.build()

    @staticmethod
    def _metadata(question: Question, doc: Document) -> dict[str, str]:
        # The only per-document metadata: never anything from doc.label or the question's truth fields.
        return {"question_id": question.id, "source": doc.source_name, "content_hash": content_hash(doc.text)}

    def _existing_metadata(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        offset = 0
        while True:
            page = self._call("get", self._collection.get, include=["metadatas"], limit=_GET_PAGE,
                              offset=offset)
            ids = page["ids"]
            for doc_id, meta in zip(ids, page["metadatas"] or [{}] * len(ids)):
                out[doc_id] = dict(meta or {})
            if len(ids) < _GET_PAGE:
                return out
            offset += len(ids)

    def _max_batch(self) -> int:
        try:
            return max(1, int(self._client.get_max_batch_size()))
        except Exception:  # noqa: BLE001 - older servers: fall back to a safe size
            return 1000

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if self._client is None:
            raise RetrievalError(f"{self.location}: the retriever is closed")
        try:
            return fn(*args, **kwargs)
        except RetrievalError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise RetrievalError(
                f"{self.location}: {what} on collection {self.collection_name} failed: {exc}") from exc

    # -- querying ------------------------------------------------------------------------------------

    def search(self, query: str, k: int = 3, source: str | None = None,
               exclude_question: str | None = None) -> list[Hit]:
        """The ``k`` documents most similar to ``query``, best first.

        ``source`` restricts the search to one source (``Document.source_name``); ``exclude_question``
        leaves out the documents of that question. Fewer than ``k`` hits come back when fewer match.
        """
        return self.search_many([query], k, source, exclude_question)[0]

    def search_many(self, queries: Sequence[str], k: int = 3, source: str | None = None,
                    exclude_question: str | None = None, query_vectors: Sequence[Any] | None = None
                    ) -> list[list[Hit]]:
        """:meth:`search` for several queries at once: one embedding pass and one index query for all.
        ``query_vectors``: the queries' embeddings when the caller has them already (``whatif.overlay``)."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if not queries:
            return []
        if any(not q.strip() for q in queries):
            raise ValueError("query is empty")
        self.ensure_built()
        clauses: list[dict[str, Any]] = []
        if source is not None:
            clauses.append({"source": source})
        if exclude_question is not None:
            clauses.append({"question_id": {"$ne": exclude_question}})
        where = clauses[0] if len(clauses) == 1 else ({"$and": clauses} if clauses else None)
        if self.count() == 0:
            return [[] for _ in queries]
        vectors = list(query_vectors) if query_vectors is not None else self._ef(list(queries))
        result = self._call("query", self._collection.query, query_embeddings=vectors, n_results=k,
                            where=where, include=["metadatas", "distances"])
        unknown = sorted({doc_id for ids in result["ids"] for doc_id in ids} - self._docs.keys())
        if unknown:  # the collection is keyed by the dataset's name and path, not its content
            raise RetrievalError(
                f"{self.location}: collection {self.collection_name} holds documents this version of "
                f"{self.dataset.path or self.dataset.name} does not ({', '.join(unknown[:3])}"
                f"{', …' if len(unknown) > 3 else ''}): another version of the dataset was indexed since it was "
                "loaded; load the dataset again (its next search rebuilds the index)")
        return [
            [Hit(rank=rank, doc_id=doc_id, question_id=str(meta["question_id"]), source=str(meta["source"]),
                 text=self._docs[doc_id][1].text, score=float(1.0 - dist))
             for rank, (doc_id, meta, dist) in enumerate(zip(ids, metas, distances), start=1)]
            for ids, metas, distances in zip(result["ids"], result["metadatas"], result["distances"])
        ]


def evidence(question: Question, mode: EvidenceMode, retriever: Retriever | None = None, k: int = 3,
             source: str | None = None) -> list[Document]:
    """The documents a method reads for ``question`` in evidence mode ``mode``.

    ``given`` needs no retriever (and ignores ``k``/``source``); ``retrieve`` searches the whole corpus
    with the question text.
    """
    if mode == "given":
        return Retriever.given(question)
    if mode == "retrieve":
        if retriever is None:
            raise ValueError("evidence mode 'retrieve' needs a Retriever")
        return retriever.retrieve(question.question, k=k, source=source)
    raise ValueError(f"unknown evidence mode {mode!r}; expected 'given' or 'retrieve'")
