"""Astute RAG: overcoming imperfect retrieval augmentation and knowledge conflicts.

Paper: Wang, Wan, Sun, Chen, Arık, *Astute RAG* (arXiv 2410.07176, ACL 2025); its prompts are
reprinted in MADAM-RAG's App. E (arXiv 2504.13079). Spec: docs/methods/astute.md, whose §3.3-§3.5 follow the
paper's sections of the same numbers; P1-P16 below are its choices §8.1-§8.16. Files:
``prompts.py`` (the three templates, context rendering), ``parse.py`` (tolerant readers, their fallback
order in its docstring), ``method.py`` (Algorithm 1).

Algorithm 1 in the paper's order, one call each:

1. ``generate_passages`` (§3.3): the model writes at most m̂ passages from its memory, or says it does not
   know; "I don't know" statements are dropped, so it may contribute none (the trace says so).
2. D0 = E ⊕ I (§3.4): the external passages, then the internal ones, numbered 1..n+m as the prompt shows them,
   each with its source (S0: memory / external retrieval).
3. ``consolidate_round_{j}``, j = 1..t-1 (§3.4): each reads the initial context and the last one and groups
   consistent passages, separates conflicting ones, drops irrelevant ones, citing passage numbers.
4. ``consolidate_answer`` (§3.5, the merged call): Step 1 consolidates once more, Step 2 proposes an answer
   with a confidence per group, Step 3 picks the final ``<ANSWER>``. So t = 1 costs 2 calls, t + 1 in general.

Defaults are the paper's: ``m_hat=1``, ``iterations`` (t) = 1, ``max_tokens=1024``, ``order="reversed"``,
zero-shot, temperature 0 (a model setting: ``LLMConfig.temperature``, default 0, applies to every call).

Choices the paper leaves open ([ours]):

* Indices of Algorithm 1 (P1, P2): each p_con call reads (D0, the previous round's raw reply; D0 again in
  round 1); p_ans reads D0 plus the last p_con reply, under ``Consolidated Context`` only when t > 1. The raw
  text goes forward (P11); parsed groups are for display.
* "Reversed" order (P5): ``order="reversed"`` puts the evidence in rank n … 1 (the top document last, next to
  the internal passages); ``as_is`` keeps rank order; ``random`` shuffles with ``sha256(seed|question)``.
  Table 7's ascending/descending need relevance scores, which given evidence has none: not offered.
* m̂ > 1 (P3): the generation prompt asks for ``<DOC>`` blocks (``prompts.GEN_MANY``).
* "I don't know" (P4): a generated passage is dropped when it starts with "I don't know" or is shorter than
  25 words and contains it; a longer one is kept and flagged ``hedged``. ``drop_idk=False`` keeps them.
* Numbering (P6): global 1..n+m in prompt order; each passage keeps its document id, source and evidence rank.
* Source granularity (P15): binary in the prompt; ``source_detail=True`` adds the source name of external
  passages. A group's source is derived from the passages it cites (internal / external / mixed = cross-source
  confirmation / unknown); the model's own label is kept beside it.
* Derived categories (§3.4, P10): D0 passages no final group cites are excluded (irrelevant), with
  ``<EXCLUDED>`` in structured mode; a passage cited by two groups is ``split``; a round is a ``conflict``
  when its groups propose answers that do not cluster together (``answers.cluster``); a p_con round proposes
  no answers, so there two or more groups are a conflict (the prompt puts consistent passages in one group).
* Output format (§3.6): ``prompt_mode="paper"`` (default) keeps the paper's prompts and reads the reply
  leniently; ``"structured"`` appends a ``<GROUP>/<CANDIDATE>/<EXCLUDED>`` format block. Both parse with the
  same reader, tags first.
* Answers (P9, P16): ``answer_mode="single"`` (the paper) takes the last ``<ANSWER>``; ``"multi"`` (MADAM-RAG
  App. E's Step 3, "select all correct answers") takes every tag. "I don't know" is an abstention. Each
  final answer maps to the group whose candidate contains it (ties: higher confidence), else to none, noted.
* Two readings of the final answer (``backend.methods.reading``; ``AstuteRAG.pick``, one decision per question):
  ``tolerant`` (default, ``parse.parse_answer``) reads the answer the model states in any form (the tag, a JSON
  key, a "Final Answer:" label or heading, "the final answer is X", the last line of a reply with no structure);
  ``paper`` (``parse.parse_answer_paper``) reads the ``<ANSWER>`` tag only, the paper's output format, and without
  it the method has no answer and abstains (the paper extracts the answer from the tag; it names no other output).
  In both, only the model picks: a reply that names no final answer abstains, and the reader never takes the most
  confident candidate instead ([ours]: the spec's §3.6 fallback ``top_candidate`` is dropped, since it made the
  reader, not the model, the one choosing). The groups of each round and the generated passages have no literal
  format in the paper, so they are read by one rule for both readings (``Readings.same``).
* Truncation (P9): a reply that used the whole ``max_tokens`` budget is flagged; no "continue" retry, which
  would change the paper's call count. On a local model (``local/<name>``, a small model on a CPU) the consolidation
  and answer replies are capped at 512 tokens (``TaskSpec.reply_tokens``): a model that loops stops early.
* No context (P13): no document and no generated passage -> no answer call, abstain, noted.
* Support (the document × method map): an answer rests on the external documents its group cites; without a
  group, on the documents that state it.
* A failed model call fails the run (``MethodResult.error``), as for every method; a malformed reply never
  does: it degrades and the parse problem is in ``trace.notes`` and the round's ``parse``.
"""

from backend.methods.astute.method import ANSWER_MODES, ORDERS, PROMPT_MODES, AstuteRAG, build_d0, order_documents
from backend.methods.astute.parse import (answer_group, confidence, parse_answer, parse_consolidation,
                                          split_generation)

__all__ = ["ANSWER_MODES", "ORDERS", "PROMPT_MODES", "AstuteRAG", "answer_group", "build_d0", "confidence",
           "order_documents", "parse_answer", "parse_consolidation", "split_generation"]
