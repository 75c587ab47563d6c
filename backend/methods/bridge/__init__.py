"""BRIDGE: soft bias + Maximum Soft-bias Decision Tree, for trustworthy answers after retrieval.

Paper: Dai et al., *After Retrieval, Before Generation: Enhancing the Trustworthiness of Large Language Models in
RAG* (arXiv 2505.17118v1). Spec: docs/methods/bridge.md, which resolves the paper's gaps and records every [ours]
choice (also listed below). Files: ``prompts.py``, ``demos.py`` (the allocator's
demonstration pool), ``scorer.py`` (the Knowledge Scorer), ``tree.py`` (the decision tree), ``method.py``.

The pipeline in the paper's order (§3):

1. Soft Bias Allocator, ICL form (``allocate``): k = 5 nearest demonstrations (MiniLM cosine) with pseudo soft
   labels (10% / 90% retrieve), the model's analysis and two percentages, read as r_p = X / (X + Y) clamped to
   [0.1, 0.9], g_p = 1 − r_p. ``allocator="fixed"`` is the paper's "w/o Allocator" ablation (r_p = g_p = 1).
2. Knowledge: K_int, the model's closed-book passage (``internal_knowledge``; "None" when it knows nothing),
   K_ext, the question's top evidence (``given``: its own documents; ``retrieve``: the index's top 1); n = 10
   ranked sub-queries (``sub_queries``); the first s_r = ⌈r_p·n⌉ go to the multi-query retriever (top-1 passage
   each from the dataset's index) and the first s_g = ⌈g_p·n⌉ to the multi-query generator (one call,
   ``generate_cycle_{k}``), the two concurrently. When the generator's reply gives another number of answers than
   it was asked questions, each sub-query is asked on its own with the same prompt (spec §8.9, ``generate_each_{k}``,
   s_g calls, concurrently).
3. Knowledge Scorer (``scorer.py``): 0.2 sparse + 0.4 dense + 0.4 ColBERT-style, each in [0, 1]; S1 = K_int ↔
   K_ext, S2 = mean K_gen ↔ K_int, S3 = mean K_ret ↔ K_ext, S4 = mean over K_gen × K_ret (bridge.md §3 Step 3).
4. Maximum Soft-bias Decision Tree (``tree.py``, α = 0.5, β = 1.1): FA, FI, FE, RA or REFLECT; reflection
   (``reflect_{k}``) writes new sub-queries from a contradiction analysis and steps 2-4 run again with the same
   soft bias, at most 3 times, then RA.
5. Responder (``respond``): FA reads all four sets, FI K_int + K_gen, FE K_ext + K_ret; RA answers "I don't know"
   without a call. With ``options`` it picks one (``Correct Option: X``; the "I don't know" option abstains),
   otherwise a free-form short answer ([ours]: datasets without options).

Calls: allocator, K_int, sub-queries (these three concurrently), the generator, the responder: 5 without
reflection (4 without K_int, the paper's count), + 2 per reflection cycle, + s_g in a cycle whose generator reply has
the wrong answer count (spec §8.9).

Two readings of every reply (``backend.methods.reading``, ``parse.py``): each decision (the soft bias, the
sub-queries, the generated answers, a reflection's questions, the option) is read ``tolerant`` (the project's
readers) and ``paper`` (the paper's printed formats, with the spec's rules: §3 Step 1 / §8.6 for the soft bias, §4
for the sub-query and reflection lists, §8.9 for the generator's numbered answers, §8.17's regex ``Correct
Option:\\s*\\(?([A-D])`` for the option); ``ctx.readings.decide`` takes the run's and records where they differ.
The K_int passage and the free-form responder are our prompts: one reader for both (``Readings.same``).

Choices the paper leaves open ([ours]):

* The allocator's demonstrations come from ``demos.py`` (TRD's train set is not available); the offline model
  reads only the question and its memory, a hosted model reads the demonstrations too.
* The allocator, K_int and the sub-query call run concurrently: none reads another's output.
* On a local model (``local/<name>``, a small model on a CPU) each task's ``max_tokens`` is capped at what its format
  needs (``TaskSpec.reply_tokens``: allocator 160, sub-queries 256, generator 320, reflection 384, option 48): a model
  that loops stops early. Hosted models keep ``max_tokens``.
* A sub-query list shorter than n is padded with the original question (both readings).
* Spec §8.9's fallback: the per-sub-query call uses the generator's prompt with one question, its step is
  ``generate_each_{k}``, its parents are the generator call's (the calls are built from the same sub-queries); a
  one-question reply with no readable answer is "I don't know", with several the first. The fallback follows the
  run's reading's count; the other reading's count is only recorded as a difference (no calls are made for it).
* The tolerant responder reader: an option only from a reply that chooses one (a label, a verb of choosing, a
  letter ending a line after a colon, an option's text after such a label or verb, a letter and its option's text
  together), the *last* choice winning, a negated choice ("I did not pick A") none; failing that, the one option the
  reply names by text (or as "Option X") in a sentence that negates nothing. The "I don't know" option only when
  chosen that way: a reply that just says "I don't know" is an invalid answer (spec §8.17), not a refusal.
* The paper responder reader widens the regex's ``[A-D]`` to the question's letters when it has more than four
  options (TRD always has four); a letter past the options is invalid. Its "Correct Option: Bianca Ryan" reads B (the
  regex's first letter), kept as the regex reads it.
* The tolerant soft-bias reader ignores a range of percentages ("10%-90%", the prompt's bounds echoed): "10%-90% → I
  estimate 30%" is 30%, a bare range is unreadable (r_p = 0.5). The paper reader reads the first number after the
  label with its "%" (10% there), as printed.
* The paper reflection reader finds the "New questions:" line in any case (a heading's case carries no meaning).
* K_ext in ``given`` mode is the question's documents joined (the dataset's context for the question, as TRD's
  K_ext); K_ret comes from the whole dataset in every mode (``needs_index``), top 1 per sub-query.
* The multi-query retriever (the paper: BGE-m3, dense + sparse, over a Wikipedia dump): in ``given`` mode BM25's
  20 best documents per sub-query re-ranked by MiniLM cosine similarity (``backend.corpus``: built once per dataset
  and cache folder in under a second; the dense top 1 whenever BM25's candidates hold it); in ``retrieve`` mode the
  dense index all methods search (``backend.retrieval``). ``retrieval_score`` is the cosine similarity either way.
* Support (the document × method map): the external documents the responder read (K_ext for FA/FE, K_ret for
  FA/FE) that state the answer.
* A failed model call fails the run (``MethodResult.error``), as for every method; malformed replies degrade
  (50/50 bias, padded sub-query lists, one generator call per sub-query, no option -> an invalid answer, counted
  wrong, spec §8.17) and are noted.
"""

from backend.methods.bridge.method import BRIDGE, LEAF_KNOWLEDGE
from backend.methods.bridge.tree import ALPHA, BETA, confidences, decide

__all__ = ["ALPHA", "BETA", "BRIDGE", "LEAF_KNOWLEDGE", "confidences", "decide"]
