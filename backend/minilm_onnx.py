"""The bundled all-MiniLM-L6-v2 on ONNX Runtime: the same BERT encoder, without importing torch.

Why: importing torch + sentence-transformers takes ~5 s and ~500 MB of the app's memory, and ONNX Runtime (already
installed: chromadb depends on it) runs this small encoder ~2× faster on CPU. Nothing is downloaded or exported:
the ONNX graph is written here, node by node, from the BERT definition (Hugging Face ``BertModel``: embeddings +
LayerNorm, 6 × [self-attention, LayerNorm, GELU feed-forward, LayerNorm]) and filled with the weights of the
bundled, sha256-checked ``model.safetensors``. Tokenisation uses the model's own ``tokenizer.json`` through the
``tokenizers`` library, which sentence-transformers uses too (fast tokenizer), with its truncation (256 word pieces,
``max_seq_length``) and its stripping of surrounding whitespace. Mean pooling over the attention mask and L2
normalisation follow sentence-transformers' Pooling and Normalize modules. tests/test_embeddings.py checks every
output against the sentence-transformers model (cosine ≥ 0.9999, same tokens).

Only this architecture is built: a custom model folder (``CONFLICTLENS_EMBEDDING_MODEL``) goes through
sentence-transformers as before.
"""

from __future__ import annotations

import json
import math
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

#: BertModel's hyper-parameters this graph is written for (checked against the folder's config.json).
_EXPECTED = {"model_type": "bert", "hidden_act": "gelu", "num_hidden_layers": 6, "hidden_size": 384,
             "num_attention_heads": 12, "intermediate_size": 1536, "position_embedding_type": "absolute"}
_OPSET = 17  # LayerNormalization is a standard op from 17 on
#: Padded tokens per forward pass: 64 texts of up to 16 tokens, 4 of 256. Small passes keep ONNX Runtime's memory
#: arena small (it keeps its largest working set) and are no slower per token (measured: 1,024 vs 8,192 tokens per
#: pass, 447 vs 863 MB peak, 5.8 vs 8.3 CPU s for 150 RAMDocs passages).
BATCH_TOKENS = 1024


#: Initializers of at least this many bytes (the weights) are handed to ONNX Runtime as arrays
#: (``add_external_initializers``) instead of being copied into the graph's protobuf and serialised: that copying was
#: 0.3 of the 0.75 CPU-s of every process's model load, holding the GIL (the 90 MB of weights copied three times).
#: Small ones (shapes, scalars) stay in the graph, where ONNX shape inference can read them.
_EXTERNAL_BYTES = 4096


def _graph(weights: dict[str, np.ndarray], config: dict):
    """The ONNX model: inputs ``input_ids``, ``attention_mask`` (int64, [batch, tokens]); output
    ``token_embeddings`` (float32, [batch, tokens, hidden]), BertModel's last hidden state. Returns the model and
    its large initializers ``{name: array}``, which the graph declares as external data (see _EXTERNAL_BYTES)."""
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_dim, eps = hidden // heads, float(config["layer_norm_eps"])
    nodes, inits, external = [], [], {}

    def const(name: str, value) -> str:
        value = np.ascontiguousarray(value)
        if value.nbytes < _EXTERNAL_BYTES:
            inits.append(numpy_helper.from_array(value, name))
            return name
        proto = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(value.dtype), dims=value.shape,
                            data_location=TensorProto.EXTERNAL)
        for key, val in (("location", name), ("offset", "0"), ("length", str(value.nbytes))):
            entry = proto.external_data.add()
            entry.key, entry.value = key, val
        inits.append(proto)
        external[name] = value
        return name

    def weight(key: str, transpose: bool = False) -> str:
        w = weights[key]
        return const(key, w.T if transpose else w)

    def node(op: str, inputs: list[str], out: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def linear(x: str, prefix: str, out: str) -> str:  # x @ W.T + b, as torch.nn.Linear
        y = node("MatMul", [x, weight(f"{prefix}.weight", transpose=True)], f"{out}.mm")
        return node("Add", [y, weight(f"{prefix}.bias")], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node("LayerNormalization", [x, weight(f"{prefix}.weight"), weight(f"{prefix}.bias")], out,
                    axis=-1, epsilon=eps)

    # embeddings: word + absolute position (0..T-1) + token type 0 (one sentence per input), then LayerNorm
    e = "embeddings"
    word = node("Gather", [weight(f"{e}.word_embeddings.weight"), "input_ids"], "emb.word")
    seq = node("Shape", ["input_ids"], "emb.shape")
    length = node("Gather", [seq, const("one_idx", np.array(1, dtype=np.int64))], "emb.len")
    positions = node("Range", [const("zero", np.array(0, dtype=np.int64)), length,
                               const("one", np.array(1, dtype=np.int64))], "emb.positions")
    pos = node("Gather", [weight(f"{e}.position_embeddings.weight"), positions], "emb.pos")
    token_type = const("emb.type0", weights[f"{e}.token_type_embeddings.weight"][0])
    x = node("Add", [node("Add", [word, pos], "emb.word_pos"), token_type], "emb.sum")
    x = layer_norm(x, f"{e}.LayerNorm", "emb.out")

    # attention bias: 0 on real tokens, float32 min on padding (as BertModel's extended attention mask)
    mask = node("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT)
    inverted = node("Sub", [const("onef", np.array(1.0, dtype=np.float32)), mask], "mask.inv")
    bias = node("Mul", [inverted, const("minf", np.array(np.finfo(np.float32).min, dtype=np.float32))], "mask.min")
    bias = node("Unsqueeze", [bias, const("axes12", np.array([1, 2], dtype=np.int64))], "mask.bias")

    split_shape = const("split_shape", np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge_shape = const("merge_shape", np.array([0, 0, hidden], dtype=np.int64))
    scale = const("scale", np.array(1.0 / math.sqrt(head_dim), dtype=np.float32))
    sqrt_half = const("sqrt_half", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))
    half = const("half", np.array(0.5, dtype=np.float32))
    for i in range(config["num_hidden_layers"]):
        p, t = f"encoder.layer.{i}", f"l{i}"

        def heads_of(name: str, perm: list[int]) -> str:
            y = linear(x, f"{p}.attention.self.{name}", f"{t}.{name}")
            y = node("Reshape", [y, split_shape], f"{t}.{name}.split")
            return node("Transpose", [y], f"{t}.{name}.heads", perm=perm)

        q = heads_of("query", [0, 2, 1, 3])          # [B, H, T, d]
        k = heads_of("key", [0, 2, 3, 1])            # [B, H, d, T]
        v = heads_of("value", [0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k], f"{t}.qk"), scale], f"{t}.scaled")
        probs = node("Softmax", [node("Add", [scores, bias], f"{t}.masked")], f"{t}.probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"{t}.ctx")], f"{t}.ctx.t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge_shape], f"{t}.ctx.merged")
        attn = linear(ctx, f"{p}.attention.output.dense", f"{t}.attn")
        x = layer_norm(node("Add", [attn, x], f"{t}.attn.res"), f"{p}.attention.output.LayerNorm", f"{t}.attn.out")
        # feed-forward with exact (erf) GELU: 0.5 · h · (1 + erf(h / √2))
        h = linear(x, f"{p}.intermediate.dense", f"{t}.ff1")
        erf = node("Erf", [node("Mul", [h, sqrt_half], f"{t}.ff1.scaled")], f"{t}.erf")
        gelu = node("Mul", [node("Mul", [h, half], f"{t}.ff1.half"),
                            node("Add", [erf, const(f"{t}.onef", np.array(1.0, dtype=np.float32))], f"{t}.erf1")],
                    f"{t}.gelu")
        ff = linear(gelu, f"{p}.output.dense", f"{t}.ff2")
        x = layer_norm(node("Add", [ff, x], f"{t}.ff.res"), f"{p}.output.LayerNorm", f"{t}.out")
    nodes.append(helper.make_node("Identity", [x], ["token_embeddings"], name="token_embeddings"))

    graph = helper.make_graph(
        nodes, "minilm",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("token_embeddings", TensorProto.FLOAT, ["batch", "tokens", hidden])],
        initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)], ir_version=8), external


class OnnxMiniLM:
    """Sentence and token embeddings of the bundled MiniLM on ONNX Runtime (thread-safe: ``run`` is).
    ``threads``: forward passes run at once by one long ``encode`` (default: the cores, at most 4)."""

    def __init__(self, model_dir: str | Path, threads: int | None = None) -> None:
        import onnxruntime as ort
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        wrong = {k: config.get(k) for k, v in _EXPECTED.items() if config.get(k) != v}
        if wrong:
            raise ValueError(f"{model_dir}: not the BERT layout this ONNX graph is written for: {wrong}")
        st_config = json.loads((model_dir / "sentence_bert_config.json").read_text())
        self.max_seq_length = int(st_config["max_seq_length"])
        self.dim = int(config["hidden_size"])
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_seq_length)

        model, external = _graph(load_file(str(model_dir / "model.safetensors")), config)
        options = ort.SessionOptions()
        options.add_external_initializers(list(external), [ort.OrtValue.ortvalue_from_numpy(a)
                                                           for a in external.values()])
        # Basic optimisations only: the extended ones (attention/GELU fusions) fail on external initializers
        # ('Starts must be a 1-D array' in a fused Slice), and on this graph they changed neither the vectors (max
        # difference 0.0) nor the speed (300 RAMDocs passages 5.2 vs 5.3 s; 900 short texts 1.8 vs 1.8 s).
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        # One thread per forward pass; a long job runs its batches on one thread per core instead. Splitting small
        # passes (the reader's: a few 25-token windows, 4 calls at once) across threads cost more in waiting for
        # each other than it saved, most of all on a busy machine.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.workers = threads or min(4, os.cpu_count() or 1)
        options.log_severity_level = 3
        # idle worker threads sleep instead of spinning: the app shares its cores (as OMP_WAIT_POLICY=PASSIVE)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])

    def tokenize(self, texts: list[str]):
        """Encodings of the stripped texts (sentence-transformers strips each text before tokenising)."""
        return self.tokenizer.encode_batch([str(t).strip() for t in texts], add_special_tokens=True)

    def _forward(self, encodings) -> tuple[np.ndarray, np.ndarray]:
        """Token embeddings [B, T, dim] and the attention mask [B, T] of one batch, padded to its longest text."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        (tokens,) = self.session.run(None, {"input_ids": ids, "attention_mask": mask})
        return tokens, mask

    def _batches(self, texts: list[str], batch_size: int):
        """(positions, encodings, token embeddings, mask) per batch; texts are taken longest first, as
        sentence-transformers does, so each batch pads little. Batches run on up to ``self.workers`` threads."""
        encodings = self.tokenize(texts)
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        batches, start = [], 0
        while start < len(order):
            # at most batch_size texts and BATCH_TOKENS padded tokens: attention holds batch × 12 × T² floats
            width = len(encodings[order[start]].ids)
            size = max(1, min(batch_size, BATCH_TOKENS // max(width, 1)))
            batches.append(order[start:start + size])
            start += size

        def run(idx: list[int]):
            batch = [encodings[i] for i in idx]
            return (idx, batch, *self._forward(batch))

        if len(batches) == 1 or self.workers == 1:
            yield from map(run, batches)
            return
        with ThreadPoolExecutor(max_workers=min(self.workers, len(batches)), thread_name_prefix="minilm") as pool:
            yield from pool.map(run, batches)

    @staticmethod
    def _pool(tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean over real tokens, then L2 normalisation (sentence-transformers' Pooling + Normalize)."""
        m = mask[:, :, None].astype(np.float32)
        pooled = (tokens * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """L2-normalised mean-pooled sentence embeddings, float32 [len(texts), dim]."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for idx, _, tokens, mask in self._batches(texts, batch_size):
            out[idx] = self._pool(tokens, mask)
        return out

    def encode_with_tokens(self, texts: list[str], batch_size: int = 64):
        """``encode`` and ``token_embeddings`` of the same texts from one forward pass."""
        dense = np.zeros((len(texts), self.dim), dtype=np.float32)
        per_text: list = [None] * len(texts)
        for idx, batch, tokens, mask in self._batches(texts, batch_size):
            dense[idx] = self._pool(tokens, mask)
            for row, (i, e) in enumerate(zip(idx, batch)):
                per_text[i] = (tokens[row, :len(e.ids)].copy(), np.asarray(e.special_tokens_mask, dtype=np.int64))
        return dense, per_text

    def token_embeddings(self, texts: list[str], batch_size: int = 64) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text: its token embeddings without padding [n_tokens, dim] and its special-tokens mask
        ([CLS]/[SEP] = 1), as sentence-transformers' ``output_value="token_embeddings"`` plus the tokenizer's
        ``return_special_tokens_mask``."""
        return self.encode_with_tokens(texts, batch_size)[1]
