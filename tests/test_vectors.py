"""The shipped sentence vectors (sample_data/vectors/, backend.vectors): what the model computes for each text, used
only for the very model they were computed with and only for the texts they were computed from, and complete for
the bundled datasets (a stale store is a failing test, not a slow first look)."""

from __future__ import annotations

import numpy as np
import pytest

from backend import embeddings, vectors
from backend.data import load_dataset
from backend.paths import SAMPLE_DATA
from backend.sample.vectors import first_look_texts
from backend.vectors import STORE_DIR, VectorStore, text_key

DATASETS = ("ramdocs_dev", "multisource", "multisource_beta", "scenarios")
REBUILD = "stale: run `python -m backend build-sample` and commit sample_data/vectors/"


@pytest.fixture(scope="module")
def store() -> VectorStore:
    return VectorStore.read(STORE_DIR, embeddings.DEFAULT_MODEL_NAME)


@pytest.fixture
def compute_calls(monkeypatch):
    """The texts the model itself embeds (``backend.embeddings.compute``)."""
    calls: list[list[str]] = []
    real = embeddings.compute

    def counting(texts, *args, **kwargs):
        calls.append(list(texts))
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(embeddings, "compute", counting)
    return calls


def test_the_store_is_for_the_bundled_model_on_onnx(store):
    assert store.identity == {"model": "all-MiniLM-L6-v2", "weights_sha256": embeddings.MINILM_SHA256,
                              "runtime": "onnx"}
    assert store.identity == embeddings.identity()
    assert store.vectors.dtype == np.float32 and store.vectors.shape == (len(store), 384)


@pytest.mark.parametrize("name", DATASETS)
def test_the_store_holds_every_text_a_first_look_embeds(store, name):
    """Every document and question, and the reader's answer windows (of the first 15 questions: the windows are
    the reader's lexical work, ~1 s per 200 questions)."""
    ds = load_dataset(SAMPLE_DATA / name)
    texts = {d.text for _, d in ds.documents()} | {q.question for q in ds.questions}
    texts |= first_look_texts(ds.questions[:15])
    missing = [t for t in texts if text_key(t) not in store.rows]
    assert not missing, f"{len(missing)} texts of {name} have no shipped vector ({missing[0][:60]!r}…): {REBUILD}"


def test_the_store_holds_bridges_demonstrations(store):
    from backend.methods.bridge.demos import DEMOS

    assert all(text_key(q) in store.rows for q, _ in DEMOS), REBUILD


def test_shipped_vectors_are_what_the_model_computes(store):
    """A sample from the whole range of lengths (shortest window … longest passage), computed afresh."""
    ds = load_dataset(SAMPLE_DATA / "ramdocs_dev")
    texts = sorted({d.text for _, d in ds.documents()} | first_look_texts(ds.questions[:3]), key=len)
    sample = [texts[i] for i in np.linspace(0, len(texts) - 1, 8).round().astype(int)]
    shipped = np.stack([store.vectors[store.rows[text_key(t)]] for t in sample])
    computed = embeddings.compute(sample)
    assert np.abs(shipped - computed).max() < 1e-5
    assert (shipped * computed).sum(axis=1).min() > 0.99999


def test_encode_reads_known_texts_and_embeds_the_rest(store, compute_calls):
    known = load_dataset(SAMPLE_DATA / "scenarios").questions[0].documents[0].text
    changed = known + " (edited)"
    out = embeddings.encode([known, changed, known])
    assert compute_calls == [[changed]]
    assert np.array_equal(out[0], store.vectors[store.rows[text_key(known)]]) and np.array_equal(out[0], out[2])
    assert np.allclose(out[1], embeddings.compute([changed])[0], atol=1e-6)
    assert float(out[0] @ out[1]) < 0.9999  # the edit is a different text with its own vector


def _toy(identity: dict) -> VectorStore:
    return VectorStore(identity, [text_key("hello"), text_key("world")],
                       np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float32))


def test_a_store_of_another_model_or_runtime_is_never_used(tmp_path, monkeypatch):
    mine = embeddings.identity()
    _toy({**mine, "weights_sha256": "0" * 64}).write(tmp_path, mine["model"])
    vectors.forget()
    assert vectors.shipped(mine, folder=tmp_path) is None
    _toy(mine).write(tmp_path, mine["model"])
    vectors.forget()
    assert vectors.shipped(mine, folder=tmp_path).lookup(["world", "other", "hello"]).keys() == {0, 2}
    monkeypatch.setenv("CONFLICTLENS_SHIPPED_VECTORS", "0")
    assert vectors.shipped(mine, folder=tmp_path) is None
    monkeypatch.delenv("CONFLICTLENS_SHIPPED_VECTORS")
    monkeypatch.setenv("CONFLICTLENS_EMBEDDING_RUNTIME", "torch")
    assert vectors.shipped(embeddings.identity(), folder=tmp_path) is None
    monkeypatch.setenv("CONFLICTLENS_EMBEDDING_MODEL", str(tmp_path))  # a custom model: its own identity
    assert embeddings.identity()["model"] != mine["model"]
    vectors.forget()


def test_store_files_are_byte_identical_and_read_back(tmp_path):
    identity = embeddings.identity()
    a, b = _toy(identity).write(tmp_path / "a", "m"), _toy(identity).write(tmp_path / "b", "m")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]
    back = VectorStore.read(tmp_path / "a", "m")
    assert back.identity == identity and np.array_equal(back.lookup(["hello"])[0], np.float32([0.6, 0.8]))
