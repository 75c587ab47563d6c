"""BRIDGE's Knowledge Scorer (docs/methods/bridge.md §3 "Step 3: Knowledge Scorer"; the S1–S4 table is built on it).

The paper scores a pair of texts with BGE-m3's three modes, score(x, y) = 0.2·sparse + 0.4·dense + 0.4·colbert.
BGE-m3 is not available offline, so each mode is rebuilt from what we have **[ours]**; every component lies in
[0, 1] and the weighted total is clamped to [0, 1] (docs/methods/bridge.md §8.3).

- **sparse [ours]**: BM25 (``bm25s``, Lucene variant, k1 = 1.5, b = 0.75, English stopwords, no stemming). The
  IDF corpus is every distinct text given to :meth:`KnowledgeScorer.prepare` (one question's knowledge:
  K_int, K_ext, K_gen, K_ret). BM25(x→y) scores y as a document for x's *distinct* terms; it is divided by
  BM25(y→y), y's score against itself, which bounds it by 1 (x's shared terms are a subset of y's, each adding
  a non-negative Lucene IDF term): "the share of y's lexical mass that x recovers". sparse = mean of both
  directions. A text with no content word (all stopwords) has self-score 0 and gets sparse 0.
- **dense [ours]**: cosine of L2-normalised MiniLM sentence embeddings (``backend.embeddings.encode``), with
  negatives clamped to 0. Not (1 + cos)/2: that maps unrelated MiniLM texts (cos ≈ 0) to 0.5 and would make
  BRIDGE's N0 check (S1 + S4 > 1) pass on unrelated knowledge.
- **colbert [ours]**: ColBERT-style late interaction over MiniLM *token* embeddings (the transformer output
  before mean pooling, ``backend.embeddings.token_embeddings``; padding trimmed,
  the tokenizer's special tokens [CLS]/[SEP] are dropped here), each L2-normalised. score(x→y) = mean over
  x's tokens of the max cosine with y's tokens; colbert = mean of both directions, clamped to [0, 1].
- **embeddings once per distinct text [ours]**: :meth:`prepare` embeds only texts it has not seen, in ONE
  sentence pass and ONE token pass (counted in ``sentence_passes``, ``token_passes``, ``texts_embedded``; on ONNX
  Runtime both come from one forward pass of the model).
  :meth:`score` prepares its two texts if needed, so call ``prepare`` with the whole question first. New texts
  (e.g. a Reflection round) extend the BM25 corpus, so later sparse scores use the larger IDF corpus.
- **"I don't know" [ours]**: empty text, "None", "I don't know" and the other ``backend.llm.formats.is_idk``
  forms carry no knowledge: any pair with one scores 0 on every component, and they are never embedded.
  In the means below such a pair counts as a 0 (a generator that does not know does not agree with K_int).
- **long texts [ours]**: MiniLM reads at most ``max_seq_length`` = 256 word pieces; dense and colbert see only
  that prefix (counted in ``texts_truncated``); BM25 reads the whole text.
- **means [ours]**: :meth:`mean_pairs` averages each field (total included) over all (x, y) pairs; with
  no pair it returns all zeros and ``pairs = 0`` so a caller (and the trace) can tell "no evidence" from 0.
"""

from __future__ import annotations

import logging
import math
from typing import NamedTuple

import numpy as np
from backend import embeddings
from backend.llm.formats import is_idk
from backend.schema import PairScore



class ScorerWeights(NamedTuple):
    """The paper's mode weights (docs/methods/bridge.md §2: grid-searched on the TRD val set)."""

    sparse: float = 0.2
    dense: float = 0.4
    colbert: float = 0.4


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


def _maxsim(a: np.ndarray, b: np.ndarray) -> float:
    """Symmetric ColBERT max-sim of two sets of unit token vectors."""
    if not len(a) or not len(b):
        return 0.0
    sim = a @ b.T
    return _clamp((sim.max(axis=1).mean() + sim.max(axis=0).mean()) / 2)


class KnowledgeScorer:
    """Scores pairs of knowledge texts of one question; build one per question (the model itself is shared)."""

    def __init__(self, weights: tuple[float, float, float] = ScorerWeights()) -> None:
        self.weights = ScorerWeights(*weights)
        if not all(math.isfinite(w) and w >= 0 for w in self.weights):
            raise ValueError(f"scorer weights must be finite and non-negative, got {tuple(self.weights)}")
        self._row: dict[str, int] = {}  # distinct knowledge text -> row in the arrays below
        self._dense: np.ndarray | None = None  # (n, dim) unit sentence embeddings
        self._tokens: list[np.ndarray] = []
        self._sparse: np.ndarray | None = None  # (n, n) normalised BM25(x→y), rebuilt when the corpus grows
        self.sentence_passes = 0
        self.token_passes = 0
        self.texts_embedded = 0
        self.texts_truncated = 0

    @property
    def texts(self) -> list[str]:
        """The distinct knowledge texts prepared so far (the BM25 corpus), in order of first appearance."""
        return list(self._row)

    def prepare(self, texts: list[str]) -> None:
        """Embed the texts not seen before: one sentence pass and one token pass over them, none if all known."""
        new = list(dict.fromkeys(t for t in texts if not is_idk(t) and t not in self._row))
        if not new:
            return
        dense, tokens = embeddings.encode_with_tokens(new)  # one forward pass gives both (on ONNX Runtime)
        dense = np.asarray(dense, dtype="float32")
        self.sentence_passes += 1
        self.token_passes += 1
        max_len = embeddings.max_seq_length()
        for text, (vectors, mask) in zip(new, tokens):
            vectors = np.asarray(vectors, dtype="float32")
            if len(vectors) != len(mask):
                raise RuntimeError(f"token embeddings ({len(vectors)}) and tokens ({len(mask)}) disagree "
                                   f"for {text[:60]!r}")
            vectors = vectors[np.asarray(mask) == 0]
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            self._tokens.append(vectors / np.where(norms > 0, norms, 1.0))
            self.texts_truncated += int(len(mask) >= max_len)
            self._row[text] = len(self._row)
        self._dense = dense if self._dense is None else np.vstack([self._dense, dense])
        self.texts_embedded += len(new)
        self._sparse = None

    def _sparse_matrix(self) -> np.ndarray:
        """M[i, j] = BM25(text_i → text_j) / BM25(text_j → text_j), over the prepared corpus."""
        if self._sparse is None:
            import bm25s  # 0.4 s to import: only when a score is asked for

            # bm25s sets its logger to DEBUG on import and logs every index build: noise on the CLI's stderr
            logging.getLogger("bm25s").setLevel(logging.WARNING)

            corpus = bm25s.tokenize(self.texts, stopwords="en", return_ids=False, show_progress=False)
            if not any(corpus):  # only stopwords everywhere: bm25s cannot index that, and there is nothing to match
                self._sparse = np.zeros((len(corpus), len(corpus)))
                return self._sparse
            index = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
            index.index(corpus, show_progress=False)
            raw = np.array([index.get_scores(sorted(set(q))) if q else np.zeros(len(corpus)) for q in corpus],
                           dtype="float64").reshape(len(corpus), len(corpus))
            self_scores = np.diag(raw).copy()
            self._sparse = np.where(self_scores > 0, raw / np.where(self_scores > 0, self_scores, 1.0), 0.0)
        return self._sparse

    def _combine(self, sparse: float, dense: float, colbert: float) -> PairScore:
        w = self.weights
        s, d, c = _clamp(sparse), _clamp(dense), _clamp(colbert)
        return PairScore(sparse=s, dense=d, colbert=c, total=_clamp(w.sparse * s + w.dense * d + w.colbert * c))

    def score(self, x: str, y: str) -> PairScore:
        """score(x, y) = 0.2·sparse + 0.4·dense + 0.4·colbert (symmetric); 0 if either text is "I don't know"."""
        if is_idk(x) or is_idk(y):
            return PairScore(sparse=0.0, dense=0.0, colbert=0.0, total=0.0)
        self.prepare([x, y])
        i, j = self._row[x], self._row[y]
        m = self._sparse_matrix()
        return self._combine((m[i, j] + m[j, i]) / 2, float(self._dense[i] @ self._dense[j]),
                             _maxsim(self._tokens[i], self._tokens[j]))

    def mean_pairs(self, xs: list[str], ys: list[str]) -> PairScore:
        """The field-wise mean of score(x, y) over all pairs; zeros with ``pairs = 0`` when there is none."""
        self.prepare(list(xs) + list(ys))
        scores = [self.score(x, y) for x in xs for y in ys]
        if not scores:
            return PairScore(sparse=0.0, dense=0.0, colbert=0.0, total=0.0, pairs=0)
        mean = {f: _clamp(sum(getattr(s, f) for s in scores) / len(scores))
                for f in ("sparse", "dense", "colbert", "total")}
        return PairScore(**mean, pairs=len(scores))

    def mean_score(self, xs: list[str], y: str) -> PairScore:
        """The mean of score(x, y) over x ∈ xs (S2: xs = K_gen, y = K_int; S3: xs = K_ret, y = K_ext)."""
        return self.mean_pairs(xs, [y])
