"""Extractive reader of the offline model: a short keyword answer from ONE passage, or None ("I don't know").

    from backend.llm.reader import read, read_many, read_batch
    r = read("When was Horace Rumbold born?", passage)
    r.answer, r.sentence, r.relevance, r.qtype, r.candidates, r.signals

It sees only the question and the passage text (never labels) and is deterministic: the same pair gives
the same Reading alone, in ``read_many`` or in any ``read_batch``. ``read_batch`` embeds every selected
sentence of every passage in one call to ``backend.embeddings.encode`` — use it for speed.

Modules: ``text`` (tokens, sentences), ``qtype`` (answer type, subject, cue words), ``gazetteer``
(type-noun vocabularies), ``spans`` (typed candidates + junk filters), ``rank`` (lexical + MiniLM
sentence ranking), ``score`` (candidate context rules), ``relevance`` (noise signals), ``reader``
(pipeline, abstention, caching).
"""

from .qtype import QInfo, analyse
from .reader import Reading, answer_key, clear_caches, read, read_batch, read_many

__all__ = ["QInfo", "Reading", "analyse", "answer_key", "clear_caches", "read", "read_batch", "read_many"]
