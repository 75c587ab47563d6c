"""Counterfactual prompting for RAG risk control (RC-RAG): keep the RAG answer or abstain.

Paper: Chen, Zhang, Guo, Fan, Cheng, *Controlling Risk of Retrieval-augmented Generation: A Counterfactual
Prompting Framework* (Findings of EMNLP 2024, arXiv 2409.16146). Spec: docs/methods/counterfactual.md (§3.x and
§8.x below are its sections; §4 and App. are the paper's);
[code] is the released code (ict-bigdatalab/RC-RAG). Files: ``prompts.py``, ``parse.py`` (reply parsing, refusal
phrases, the match rule, fusion replies), ``method.py`` (the pipeline and the one-line reason).

The paper's modules in order (§4):

1. generation: the RAG answer with its evidence (passage ids or internal knowledge), step ``rag_answer``;
2. generation, counterfactual: CF-quality ("your passages were poor") and CF-usage ("you used them improperly"),
   each in its own conversation continuing the RAG turn (the assistant turn holds the parsed answer only, as
   [code]), both branches concurrently, T rounds each (``cf_{scenario}_round_{t}``);
3. judgment: a branch keeps when its answer is the same as the RAG answer in every round (exact, the RAG answer
   inside it, token F1 > θ or ROUGE-L recall > θ; θ = 0.7 [code]; empty answers compare evidence), compared with
   the RAG answer every round, stopping at the first change;
4. fusion, only when the branches disagree: ``direct`` (the paper's default: the discarding branch is asked to keep
   or discard, ``fusion_direct``), ``probability`` (both branches give the probability that their answer is right;
   the more confident branch's judgment wins, a tie discards [code]; ``fusion_probability`` ×2) or ``safety``
   ([code] only, not in the paper: any discard wins, no call);
5. override: a kept RAG answer that is a refusal ("unknown") is discarded (§3.7).

Cost: 1 + 2T calls, + 1 for direct selection or + 2 for probability comparison when the branches disagree; with the
defaults 3 to 5 calls per question.

Defaults are the paper's: ``k=3`` passages, ``iterations`` (T) = 1, ``fusion="direct"``, ``max_tokens=256``,
temperature 0 (a model setting: ``LLMConfig.temperature``, default 0, applies to every call).

Choices the paper leaves open ([ours]):

* On a local model (``local/<name>``, a small model on a CPU) the keep/discard and probability replies are capped at
  64 tokens (``TaskSpec.reply_tokens``); the answers keep ``max_tokens``. Hosted models keep ``max_tokens`` throughout.

* Passages: ``Passage-{i}: text`` with ids from 0 (the prompt's own example; §8.12). In ``retrieve`` mode the
  top ``k`` are read; in ``given`` mode the dataset's documents for the question are the retrieved passages and all
  are read (the dataset stands for the retriever's output).
* Parsing (§3.2) follows [code] (the answer before the first "Evidence: ", the last ``##...##`` group as
  evidence), except: passage ids of any length ([code] reads one digit), a trailing full stop is dropped from the
  answer, and "don't know" / "do not know" join the refusal phrases (our models say "I don't know" where the
  paper's said "unknown"). ``refusal_scope="answer"`` scans the answer only (§8.9; default: the whole output).
* Match (§8.2, §8.3): ``substring="faithful"`` (default) is [code]'s raw, case-sensitive containment;
  ``"strict"`` uses normalised whole words. ROUGE-L recall comes from ``rouge_score`` with the Porter stemmer, as
  [code]'s metric script.
* Fusion replies (§8.6, §8.7): ``$$ keep $$`` / ``$$ discard $$``; both or neither, the decision the sentence
  makes ("keep it rather than discard it" is keep), else discard ([code]'s ``$$`` regex never matches: ``$`` is an
  anchor); probabilities accept integers, percentages, fractions and decimal commas ([code] reads "1" and "95%" as
  0.0), unreadable -> 0.0. Every reader says how it read (exact / lenient / unreadable, ``backend.llm.formats``). The direct-selection decision applies
  to the RAG answer (§8.8); the offline model is told that answer.
* Two readings (``backend.methods.reading``; ``method.py`` decides through ``ctx.readings``). Decisions read from
  replies: the RAG answer and its refusal flag, each counterfactual round's judgment, direct selection's keep /
  discard, each branch's probability. ``tolerant``: the readers above. ``paper``: [code]'s parsers, one function
  each in ``parse.py`` (``read_cf_reply_released``, ``released_refusal``, ``released_keep_discard``: "keep" in the
  reply, else discard; ``released_probability``: the first ``\\d+\\.\\d+``, else ``\\d+\\.``, else 0.0, over
  the answer part). [ours] in the paper reading: the answer keeps the two changes of the tolerant reading's exact
  path (a trailing full stop dropped, passage ids of any length in order of mention), so replies in the paper's
  format read alike and the conversations' answer turns, hence the calls, are the same under both readings;
  ``refusal_scope`` and ``substring`` are method options and apply to both readings; a structured reply (the call
  asked for the task's JSON schema, ``LLMCall.structured``) is read from the schema's fields, not as text; each
  round's judgment compares a reading's reply with the same reading's RAG answer; the RAG answer is compared
  normalised (so "apple." and "apple" are one decision) and a round's judgment by its keep / discard; what follows
  a difference (the next prompts) is not simulated (``backend.methods.reading``); the refusal test's tokenizer
  splits combining marks off their letters ([code]'s keeps them together: only a phrase glued to an accented letter
  reads differently).
* History (§8.4): the branches' assistant turns hold the parsed answer only ([code]).
* A kept decision with no answer text (the RAG reply was only evidence) abstains, noted.
* A failed model call fails the run (``MethodResult.error``), as for every method; a malformed reply never does.
"""

from backend.methods.counterfactual.method import FUSIONS, SCENARIOS, CounterfactualRAG, reason
from backend.methods.counterfactual.parse import (RELEASED_REFUSAL_PHRASES, REFUSAL_PHRASES, THRESHOLD, judge, match,
                                                  parse_keep_discard, parse_probability, parse_reply, read_cf_reply,
                                                  read_cf_reply_released, refusal, released_keep_discard,
                                                  released_probability, released_refusal, rouge_l_recall)

__all__ = ["FUSIONS", "RELEASED_REFUSAL_PHRASES", "REFUSAL_PHRASES", "SCENARIOS", "THRESHOLD", "CounterfactualRAG",
           "judge", "match", "parse_keep_discard", "parse_probability", "parse_reply", "read_cf_reply",
           "read_cf_reply_released", "reason", "refusal", "released_keep_discard", "released_probability",
           "released_refusal", "rouge_l_recall"]
