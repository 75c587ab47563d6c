"""The embedding model: the bundled MiniLM on ONNX Runtime gives what sentence-transformers (torch) gives, it is
the default, and the torch runtime stays one setting away."""

import numpy as np
import pytest

from backend import embeddings
from backend.minilm_onnx import OnnxMiniLM

# what the app embeds: answer windows, questions, passages (one longer than 256 word pieces: truncated), and the
# odd cases: surrounding whitespace (sentence-transformers strips it), accents, CJK, an empty text
TEXTS = ["When was Horace Rumbold born?", "  born in 1869 in St. Petersburg, the son of a diplomat  ",
         "Café Müller, São Paulo — 東京 2020", "",
         " ".join(["The committee met in Geneva and the delegates argued about tariffs."] * 40),
         "Paris is the capital of France.", "x"]


@pytest.fixture(scope="module")
def both():
    sentence_transformers = pytest.importorskip("sentence_transformers")
    path = embeddings.bundled_model_path()
    return OnnxMiniLM(path), sentence_transformers.SentenceTransformer(str(path), device="cpu")


@pytest.mark.slow
def test_onnx_sentence_embeddings_match_sentence_transformers(both):
    onnx, torch_model = both
    ours = onnx.encode(TEXTS, batch_size=3)  # batches of mixed lengths: padding must not leak into the result
    theirs = torch_model.encode(TEXTS, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    assert ours.shape == theirs.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.min(np.sum(ours * theirs, axis=1)) >= 0.9999
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


@pytest.mark.slow
def test_onnx_token_embeddings_and_special_tokens_match(both):
    onnx, torch_model = both
    ours = onnx.token_embeddings(TEXTS)
    theirs = torch_model.encode(TEXTS, output_value="token_embeddings", convert_to_numpy=True)
    special = torch_model.tokenizer(TEXTS, truncation=True, max_length=torch_model.max_seq_length,
                                    return_special_tokens_mask=True)["special_tokens_mask"]
    for (vectors, mask), expected, expected_mask in zip(ours, theirs, special):
        expected = np.asarray(expected)
        assert vectors.shape == expected.shape and list(mask) == list(expected_mask)
        assert np.abs(vectors - expected).max() < 1e-3
    assert len(ours[4][1]) == onnx.max_seq_length == 256  # the long text is truncated like theirs


def test_bundled_model_runs_on_onnx_by_default_and_torch_on_request(monkeypatch):
    monkeypatch.delenv("CONFLICTLENS_EMBEDDING_MODEL", raising=False)
    monkeypatch.delenv("CONFLICTLENS_EMBEDDING_RUNTIME", raising=False)
    assert embeddings.runtime() == "onnx" and isinstance(embeddings.get_model(), OnnxMiniLM)
    monkeypatch.setenv("CONFLICTLENS_EMBEDDING_RUNTIME", "torch")
    assert embeddings.runtime() == "torch"
    monkeypatch.setenv("CONFLICTLENS_EMBEDDING_RUNTIME", "tensorflow")
    with pytest.raises(embeddings.EmbeddingModelError, match="expected onnx or torch"):
        embeddings.runtime()


def test_other_architectures_are_refused(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "roberta", "hidden_size": 768}')
    with pytest.raises(ValueError, match="not the BERT layout"):
        OnnxMiniLM(folder)


def test_sentence_and_token_embeddings_from_one_pass_equal_the_separate_ones():
    model = embeddings.get_model()
    dense, tokens = embeddings.encode_with_tokens(TEXTS)
    assert np.array_equal(dense, embeddings.encode(TEXTS))
    for (v, m), (v2, m2) in zip(tokens, model.token_embeddings(TEXTS)):
        assert np.array_equal(v, v2) and np.array_equal(m, m2)
