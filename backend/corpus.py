"""BRIDGE's multi-query retriever over the whole dataset in ``given`` mode: BM25 candidates, dense re-rank [ours].

BRIDGE's K_ret is the top-1 passage per sub-query from a corpus-wide index (docs/methods/bridge.md §8.19; the paper
retrieves with BGE-m3 over a Wikipedia dump; the spec's offline stand-in allows "BM25 or TF-IDF top-1 over a local
corpus"). A dense index of every document (``backend.retrieval``) costs one MiniLM pass per document: ~60
documents/s on two cores, 37 s before a 2,200-document file's first BRIDGE result. This retriever keeps the dense
ranking where it decides (the top 1) and pays for it only on candidates:

1. **sparse stage**: a BM25 index (``bm25s``, Lucene variant, k1 = 1.5, b = 0.75, English stopwords, no stemming:
   the settings of BRIDGE's scorer) over every document of the dataset; each sub-query's ``CANDIDATES`` best
   documents with a positive score are its candidates. Building it takes well under a second for thousands of
   documents; it is saved in ``<cache dir>/corpus/`` under a hash of what it indexes (every document's id, question
   id, source and text, and the BM25 settings), so a dataset is indexed once per cache folder and a changed one is
   indexed again (the previous version's folder for the same path is removed).
2. **dense stage**: the candidates are re-ranked by the cosine similarity of their MiniLM vectors and the query's
   (``backend.embeddings.encode``: the shipped vectors of the bundled datasets are read, not computed); the
   candidates of the sub-queries sent in one call (one BRIDGE cycle) are pooled, each sub-query re-ranked over the
   pool; each distinct text is embedded once and its vector saved beside the index, so a second look embeds only
   the queries. The best ``k`` come back; ``Hit.score`` is that cosine similarity, the same number the dense index
   reports, so BRIDGE's ``retrieval_score`` keeps its meaning.

Why this is faithful: BGE-m3, the paper's retriever, is itself a dense + sparse model; retrieve-then-rerank is the
usual way to run such a pair, and the result equals the dense index's top 1 whenever the dense top 1 is among the
call's pooled BM25 candidates. Measured with BRIDGE's offline sub-queries (8 per question; benchmarks/own_data.py
--agreement), the dense top-1 passage over the whole corpus was found for 98.1% of sub-queries on RAMDocs dev (553
documents; BM25's own top 1: 36.7%) and 92.6% on the 400-question file, whose four near-identical copies of every
passage crowd the candidate lists; when it differs, its cosine similarity is a few hundredths below the best.
A sub-query that shares no content word with any document retrieves nothing (K_ret "None", which the scorer
counts as 0); the dense index would have returned its nearest, lexically unrelated, passage.

Ground truth never reaches the index: only document ids, question ids, sources and texts are read (the runner
builds it on the truth-stripped dataset, and :meth:`CorpusRetriever.document` returns that dataset's documents). In
``retrieve`` evidence mode every method searches the dense index (``backend.retrieval.Retriever``), BRIDGE's K_ret
included: that mode is the opt-in "retrieve everything" setting, and there one index serves all.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from backend import embeddings
from backend.hits import DocumentLookup, Hit
from backend.paths import default_cache_dir, private_dir
from backend.schema import Dataset, Document, Question
from backend.vectors import text_key

__all__ = ["CANDIDATES", "STAGE", "CorpusBuild", "CorpusRetriever", "corpus_key", "shared", "tokenize"]

#: BM25 candidates per query that the dense stage re-ranks.
CANDIDATES = 20
#: BM25 settings: those of BRIDGE's Knowledge Scorer (``bridge/scorer.py``).
BM25_PARAMS = {"k1": 1.5, "b": 0.75, "method": "lucene", "stopwords": "en"}
#: The name of the build's progress stage (``Runner.prepare_all``).
STAGE = "Indexing documents (BM25)"
#: Documents tokenised per progress step.
TOKENIZE_BATCH = 2000
#: Files of saved document vectors merged into one when a folder holds more.
MERGE_CHUNKS = 32
_FORMAT = 1
_IDS_FILE = "documents.json"
_VECTORS_DIR = "vectors"

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class CorpusBuild:
    """What one :meth:`CorpusRetriever.build` did: ``built`` (indexed now) or loaded from the cache folder."""

    documents: int
    built: bool
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def corpus_key(dataset: Dataset) -> str:
    """sha256 of what the index holds: each document's id, question id, source and text (in dataset order) and the
    BM25 settings. Labels and the questions' truth fields are not read."""
    digest = hashlib.sha256(json.dumps({"format": _FORMAT, **BM25_PARAMS}, sort_keys=True).encode("utf-8"))
    for question, doc in dataset.documents():
        for part in (doc.id, question.id, doc.source_name, doc.text):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
    return digest.hexdigest()


def tokenize(texts: list[str]) -> list[list[str]]:
    """BM25's words of each text (the index's tokeniser and stopwords: what the first stage matches on)."""
    import bm25s  # 0.2 s to import: only when an index is built or searched

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s logs every index build at DEBUG on stderr
    return bm25s.tokenize(texts, stopwords=BM25_PARAMS["stopwords"], return_ids=False, show_progress=False)


def _index(tokens: list[list[str]]):
    """The BM25 index of tokenised documents (a function of its own: tests count the builds)."""
    import bm25s

    index = bm25s.BM25(k1=BM25_PARAMS["k1"], b=BM25_PARAMS["b"], method=BM25_PARAMS["method"])
    index.index(tokens, show_progress=False)
    return index


#: One build at a time per index folder in this process (the app builds ahead while a method may search).
_BUILD_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


class CorpusRetriever(DocumentLookup):
    """Top-k documents of the whole dataset for a query: BM25 candidates re-ranked by MiniLM cosine similarity.

    Duck-types what BRIDGE and the what-if overlay use of ``backend.retrieval.Retriever``: ``search``,
    ``search_many`` (with ``source``, ``exclude_question`` and ``query_vectors``), ``document``, ``retrieve``,
    ``evidence``, ``embed``, ``build``, ``ensure_built``, ``count``, ``close``, ``dataset``, ``location``."""

    stage = STAGE

    def __init__(self, dataset: Dataset, cache_dir: str | Path | None = None, *,
                 candidates: int = CANDIDATES) -> None:
        if candidates < 1:
            raise ValueError(f"candidates must be at least 1, got {candidates}")
        self.dataset, self.candidates = dataset, candidates
        pairs = dataset.documents()
        self._ids = [doc.id for _, doc in pairs]
        self._docs: dict[str, tuple[Question, Document]] = {}
        for question, doc in pairs:
            if doc.id in self._docs:
                raise ValueError(f"{dataset.path or dataset.name}: document id {doc.id!r} appears twice (questions "
                                 f"{self._docs[doc.id][0].id!r} and {question.id!r}); the index needs unique ids")
            self._docs[doc.id] = (question, doc)
        self._question_ids = np.array([q.id for q, _ in pairs], dtype=object)
        self._sources = np.array([d.source_name for _, d in pairs], dtype=object)
        self.key = corpus_key(dataset)
        base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        slug = re.sub(r"[^a-zA-Z0-9]+", "-", dataset.name).strip("-")[:40].strip("-") or "dataset"
        path = str(Path(dataset.path).expanduser().resolve()) if dataset.path else ""
        self._family = f"{slug}-{hashlib.sha256(path.encode('utf-8')).hexdigest()[:8]}"
        self.folder = base.expanduser() / "corpus" / f"{self._family}-{self.key[:16]}"
        self.location = str(self.folder)
        self._bm25: Any = None
        self._lock = threading.RLock()
        with _LOCKS_LOCK:
            self._build_lock = _BUILD_LOCKS.setdefault(str(self.folder), threading.Lock())
        self._vectors: dict[str, np.ndarray] = {}   # text key -> unit MiniLM vector (saved ones, then computed)
        self._vectors_lock = threading.Lock()
        self._vectors_loaded = False
        self.last_build: CorpusBuild | None = None
        self.texts_embedded = 0   # documents' texts the dense stage embedded (or read from the shipped store)

    # -- lifecycle ------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Nothing to release (the index is in memory); here so callers can treat both retrievers alike."""

    def __enter__(self) -> CorpusRetriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def count(self) -> int:
        """Documents in the index (= documents in the dataset)."""
        return len(self._ids)

    def ready(self) -> bool:
        """Whether a search would start at once: the index is in memory, or saved for this very content."""
        return self._bm25 is not None or (self.folder / _IDS_FILE).is_file()

    # -- building -------------------------------------------------------------------------------------------

    def build(self, on_progress: ProgressCallback | None = None) -> CorpusBuild:
        """Load the saved index for this content, or index every document and save it. ``on_progress(done, total)``
        follows the documents tokenised (``(0, 0)`` when the index was loaded)."""
        with self._lock, self._build_lock:
            start = time.perf_counter()
            index = self._load()
            built = index is None
            if built:
                index = self._build(on_progress)
                self._save(index)
            elif on_progress:
                on_progress(0, 0)
            self._bm25 = index
            self.last_build = CorpusBuild(documents=len(self._ids), built=built,
                                          seconds=round(time.perf_counter() - start, 3))
            return self.last_build

    def ensure_built(self) -> None:
        """Run :meth:`build` once per retriever if it has not run yet."""
        if self._bm25 is None:
            with self._lock:
                if self._bm25 is None:
                    self.build()

    def _build(self, on_progress: ProgressCallback | None):
        texts = [self._docs[i][1].text for i in self._ids]
        total = len(texts)
        if on_progress:
            on_progress(0, total)
        tokens: list[list[str]] = []
        for start in range(0, total, TOKENIZE_BATCH):
            tokens += tokenize(texts[start:start + TOKENIZE_BATCH])
            if on_progress:
                on_progress(min(total, start + TOKENIZE_BATCH), total)
        if not any(tokens):  # only stopwords everywhere: bm25s cannot index that, and nothing would match
            return _Empty(total)
        return _index(tokens)

    def _load(self):
        meta = self.folder / _IDS_FILE
        try:
            saved = json.loads(meta.read_text(encoding="utf-8"))
            if saved.get("format") != _FORMAT or saved.get("key") != self.key or saved.get("ids") != self._ids:
                return None
            if saved.get("empty"):
                return _Empty(len(self._ids))
            import bm25s

            logging.getLogger("bm25s").setLevel(logging.WARNING)
            return bm25s.BM25.load(str(self.folder))
        except (OSError, ValueError, KeyError, TypeError):  # missing, damaged or another version: index again
            return None

    def _save(self, index) -> None:
        """Written to a temporary folder and renamed into place: a killed build never leaves half an index. A
        folder that cannot be written leaves the index in memory only (it is built again next time)."""
        try:
            private_dir(self.folder.parent)  # mkdtemp's folder is 0700 too
            tmp = Path(tempfile.mkdtemp(dir=self.folder.parent, prefix=".tmp-"))
        except OSError:
            return
        try:
            if not isinstance(index, _Empty):
                index.save(str(tmp))
            (tmp / _IDS_FILE).write_text(json.dumps({"format": _FORMAT, "key": self.key, "ids": self._ids,
                                                     "empty": isinstance(index, _Empty)}), encoding="utf-8")
            try:
                os.replace(tmp, self.folder)
            except OSError:  # saved by another process meanwhile: keep theirs
                shutil.rmtree(tmp, ignore_errors=True)
                return
            for other in self.folder.parent.glob(f"{self._family}-*"):  # earlier versions of this dataset's file
                if other != self.folder and other.is_dir():
                    shutil.rmtree(other, ignore_errors=True)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)

    # -- querying -------------------------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Texts embedded as the documents and queries are (``whatif.overlay``)."""
        return embeddings.encode(list(texts))

    def _doc_vectors(self, texts: list[str]) -> np.ndarray:
        """The texts' vectors: from memory, from the cache folder, else computed (and saved there)."""
        keys = [text_key(t) for t in texts]
        with self._vectors_lock:
            if not self._vectors_loaded:
                self._vectors.update(self._read_vectors())
                self._vectors_loaded = True
            missing = {k: t for k, t in zip(keys, texts) if k not in self._vectors}
        if missing:
            computed = np.asarray(embeddings.encode(list(missing.values())), dtype=np.float32)
            with self._vectors_lock:
                for k, vector in zip(missing, computed):
                    self._vectors[k] = vector
                self.texts_embedded += len(missing)
            self._write_vectors(list(missing), computed)
        with self._vectors_lock:
            return np.stack([self._vectors[k] for k in keys]) if keys else np.zeros((0, 1), dtype=np.float32)

    def _read_vectors(self) -> dict[str, np.ndarray]:
        """The document vectors saved by earlier searches for this model (one file per search that computed any;
        more than ``MERGE_CHUNKS`` files are merged into one). A damaged file is skipped."""
        folder = self.folder / _VECTORS_DIR
        files = sorted(folder.glob("*.npz")) if folder.is_dir() else []
        identity = json.dumps(embeddings.identity(), sort_keys=True)
        out: dict[str, np.ndarray] = {}
        for file in files:
            try:
                with np.load(file, allow_pickle=False) as data:
                    if str(data["identity"]) != identity:
                        continue
                    out.update(zip((str(k) for k in data["keys"]), np.asarray(data["vectors"], dtype=np.float32)))
            except (OSError, ValueError, KeyError):
                continue
        if len(files) > MERGE_CHUNKS and out and self._write_vectors(list(out), np.stack(list(out.values()))):
            for file in files:
                file.unlink(missing_ok=True)
        return out

    def _write_vectors(self, keys: list[str], vectors: np.ndarray) -> bool:
        """Saved beside the index (atomically, a file of its own: concurrent processes never write one file)."""
        if not self.folder.is_dir():  # the index could not be saved: nothing to put vectors beside
            return False
        folder = self.folder / _VECTORS_DIR
        try:
            folder.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".npz")
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, keys=np.array(keys), vectors=vectors.astype(np.float32),
                         identity=np.array(json.dumps(embeddings.identity(), sort_keys=True)))
            os.replace(tmp, folder / f"{time.time_ns()}-{os.getpid()}-{threading.get_ident()}.npz")
            return True
        except OSError:
            return False

    def candidates_of(self, queries: Sequence[str], source: str | None = None,
                      exclude_question: str | None = None, pool: int | None = None) -> list[list[int]]:
        """Per query, the positions (in dataset order) of its BM25 candidates, best first: at most ``pool``
        (default ``candidates``) documents with a positive score, ties in dataset order."""
        self.ensure_built()
        pool = pool or self.candidates
        allowed = np.ones(len(self._ids), dtype=bool)
        if source is not None:
            allowed &= self._sources == source
        if exclude_question is not None:
            allowed &= self._question_ids != exclude_question
        out = []
        for tokens in tokenize(list(queries)):
            scores = (np.asarray(self._bm25.get_scores(sorted(set(tokens))), dtype=np.float64) if tokens
                      else np.zeros(len(self._ids)))
            scores = np.where(allowed, scores, 0.0)
            positive = np.flatnonzero(scores > 0)
            order = positive[np.lexsort((positive, -scores[positive]))][:pool]
            out.append([int(i) for i in order])
        return out

    def search(self, query: str, k: int = 3, source: str | None = None,
               exclude_question: str | None = None) -> list[Hit]:
        """The ``k`` documents most similar to ``query`` among its BM25 candidates, best first."""
        return self.search_many([query], k, source, exclude_question)[0]

    def search_many(self, queries: Sequence[str], k: int = 3, source: str | None = None,
                    exclude_question: str | None = None, query_vectors: Sequence[Any] | None = None
                    ) -> list[list[Hit]]:
        """:meth:`search` for several queries: one BM25 pass each, one embedding pass for the queries and one for
        the candidates' texts not embedded yet. The queries' candidates are pooled: each query is re-ranked over
        the union of the call's candidates (BRIDGE sends one cycle's paraphrased sub-queries in one call; pooling
        finds the dense top 1 more often at no extra embedding). ``query_vectors``: the queries' embeddings when
        the caller has them already (``whatif.overlay``)."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if not queries:
            return []
        if any(not q.strip() for q in queries):
            raise ValueError("query is empty")
        found = self.candidates_of(queries, source, exclude_question, pool=max(self.candidates, k))
        if not any(found):
            return [[] for _ in queries]
        qv = np.asarray(query_vectors if query_vectors is not None else embeddings.encode(list(queries)),
                        dtype=np.float32)
        # the call's queries share one pool: rank 1 of each, then rank 2, ... (the order breaks ties of equal texts)
        pool = list(dict.fromkeys(cands[r] for r in range(max(map(len, found))) for cands in found if r < len(cands)))
        vectors = self._doc_vectors([self._docs[self._ids[i]][1].text for i in pool])
        out = []
        for q, cands in zip(qv, found):
            if not cands:  # no content word in common with any document: nothing, not a lexically unrelated passage
                out.append([])
                continue
            sims = vectors @ q
            best = np.argsort(-sims, kind="stable")[:k]
            hits = []
            for rank, j in enumerate(best, start=1):
                question, doc = self._docs[self._ids[pool[j]]]
                hits.append(Hit(rank=rank, doc_id=doc.id, question_id=question.id, source=doc.source_name,
                                text=doc.text, score=float(sims[j])))
            out.append(hits)
        return out


class _Empty:
    """The index of a corpus without a content word: every score is 0."""

    def __init__(self, n: int) -> None:
        self.n = n

    def get_scores(self, _tokens: list[str]) -> np.ndarray:
        return np.zeros(self.n)


#: One retriever per dataset object and cache folder in the process: the app's sessions share the stripped dataset
#: (``components.session.runs``), so they share the index in memory and the document vectors computed so far.
_SHARED: OrderedDict[tuple[int, str, int], tuple[Dataset, CorpusRetriever]] = OrderedDict()
_SHARED_LOCK = threading.Lock()
_SHARED_MAX = 8


def shared(dataset: Dataset, cache_dir: str | Path | None = None, candidates: int = CANDIDATES) -> CorpusRetriever:
    """The process's retriever over ``dataset`` (the object, held so its id stays its own)."""
    folder = str(Path(cache_dir) if cache_dir is not None else default_cache_dir())
    key = (id(dataset), folder, candidates)
    with _SHARED_LOCK:
        if (found := _SHARED.get(key)) is not None and found[0] is dataset:
            _SHARED.move_to_end(key)
            return found[1]
    retriever = CorpusRetriever(dataset, cache_dir, candidates=candidates)
    with _SHARED_LOCK:
        if (found := _SHARED.get(key)) is not None and found[0] is dataset:
            return found[1]
        _SHARED[key] = (dataset, retriever)
        while len(_SHARED) > _SHARED_MAX:
            _SHARED.popitem(last=False)
    return retriever
