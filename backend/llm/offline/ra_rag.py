"""RA-RAG's prompts as the offline model reads them (docs/methods/ra_rag.md): the keyword prompt of §3.1 (one source's
documents, one per line) and the App. I entailment prompt. Both are general tasks (``keyword_answer``, ``entailment``),
answered by the handlers in ``handlers``."""

from __future__ import annotations

import re

from backend.llm.offline.prompt import Prompt, matcher
from backend.llm.offline.registry import Fields, PromptReader, register_readers

_KEYWORD_SYSTEM = re.compile(r"Answer the question using only the context below, never your own knowledge\. .*", re.S)


def _keyword(m: re.Match[str], prompt: Prompt) -> Fields | None:
    if not _KEYWORD_SYSTEM.fullmatch(prompt.system):
        return None
    return {"question": m["question"], "passages": [{"text": line} for line in m["context"].split("\n")]}


def _entailment(m: re.Match[str], prompt: Prompt) -> Fields:
    return {"question": m["question"], "premise": m["premise"], "hypothesis": m["hypothesis"]}


register_readers(
    # one document a line (the prompt folds a document's own line breaks)
    PromptReader("keyword_answer", "RA-RAG keyword prompt",
                 matcher(r"Context: (?P<context>.*)\nQuestion: (?P<question>.*?)\nAnswer:", _keyword)),
    PromptReader("entailment", "RA-RAG bidirectional entailment",
                 matcher(r'We are evaluating answers to the question "(?P<question>.*)"\n'
                         r"Here are two possible answers:\nPossible Answer 1: (?P<premise>.*)\n"
                         r"Possible Answer 2: (?P<hypothesis>.*)\nDoes Possible Answer 1 semantically entail "
                         r"Possible Answer 2\? Respond only with yes or no\.\nResponse:",
                         _entailment)),
)
