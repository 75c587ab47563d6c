"""BRIDGE tasks of the offline model: soft-bias allocator, sub-queries, multi-query generator, reflection
and responder (docs/methods/bridge.md §3-4, §9).

* ``soft_bias``: 20% retrieve / 80% direct when memory is present and the question has no recency cue;
  80/20 when memory is absent or the question says latest / most recent / current(ly) / newest / as of, or
  names a year >= 2023.
* ``sub_queries``: n (default 10) template paraphrases in a fixed order, each embedding the original
  question and naming its subject (the question's focus, ``reader.analyse``); past 10 the templates repeat
  with "(restated k)".
* ``multi_answer``: one numbered answer per sub-query, read from memory: the answer, then the memory sentence it
  comes from (the prompt asks the model to analyse before answering, so a line carries its reason; the Knowledge
  Scorer then compares generated knowledge with K_int as passages, not as bare names). A sub-query that keeps
  the original question's subject has, by construction, the original's answer, so memory is read with the
  original question; any other sub-query is read as asked. "I don't know" without memory / answer.
* ``reflect``: one line of contradiction analysis (the main internal answer -- memory passages and the
  generated answers -- against the main external one), then n questions from a second template family.
* ``select_option``: each option scores 1 per passage whose reading matches it (``answers.matches``) and
  0.5 per other passage that contains it; ties go to the option sharing more words with the passages, then
  the earlier option. No option scoring above 0 -> the "I don't know" option (or, without one, the option
  sharing most words with the passages).

Prompts (``methods.bridge.prompts``): each carries what its task reads -- the question, the number of questions to
write, the sub-queries, K_int / K_ext / K_gen / K_ret, the options -- except the model's own memory, recalled
(``knowledge``) by the question (allocator, K_int) or, for the generator, whose prompt holds only the sub-queries (as
the paper's), by the question the sub-queries ask again. The responder's document is one passage a line.
"""

from __future__ import annotations

import re

from backend.answers import matches, normalize
from backend.llm.formats import IDK, is_idk
from backend.llm.offline.check import same_joined
from backend.llm.offline.common import (Fields, as_int, content_words, focus_words, group_answers,
                                        is_memory_source, known, memory_text, one_line, passages, read_texts,
                                        recency_cue, sentence)
from backend.llm.offline.knowledge import Knowledge, remember_question
from backend.llm.offline.prompt import Prompt, matcher, read_numbered
from backend.llm.offline.registry import PromptReader, register_handlers, register_readers
from backend.llm.reader import analyse, read_batch


_SUB_TEMPLATES = (
    "Which answer do reliable sources give to the question: {Q}?",
    "What does the record on {E} say when asked: {Q}?",
    "Who or what is named as the answer to: {Q}?",
    "How would an encyclopedia entry about {E} answer: {Q}?",
    "According to documented facts about {E}, {q}?",
    "Where is the fact that answers \"{Q}\" recorded for {E}?",
    "When checked against published sources, {q}?",
    "Why do sources about {E} give the answer they give to: {Q}?",
    "Whose account of {E} answers the question: {Q}?",
    "Is there a single agreed answer to: {Q}?",
)

_REFLECT_TEMPLATES = (
    "Considering that sources may conflict, which answer to \"{Q}\" is best supported?",
    "What do the most reliable sources about {E} state for: {Q}?",
    "Setting aside outdated information, {q}?",
    "How do independent sources about {E} answer: {Q}?",
    "Who is confirmed across sources as the answer to: {Q}?",
    "Where do sources about {E} agree on the answer to: {Q}?",
    "When the contradictions are resolved, what is the answer to: {Q}?",
    "Why would a careful reader settle \"{Q}\" one way rather than another?",
    "Whose information about {E} settles: {Q}?",
    "Is the most recent information about {E} consistent with an answer to: {Q}?",
)


def soft_bias(fields: Fields) -> str:
    cue = recency_cue(fields["question"])
    memory = memory_text(fields)
    if cue:
        why = f"The question asks for up-to-date information (\"{cue}\"), which pre-trained knowledge may lack"
        r, d = 80, 20
    elif not memory:
        why = "Internal knowledge holds nothing reliable on this question, so external knowledge is needed"
        r, d = 80, 20
    else:
        why = "The question asks for a stable fact that internal knowledge covers, so it can be answered directly"
        r, d = 20, 80
    return (f"Analysis: {why}.\nProbability of retrieving external knowledge: {r}%\n"
            f"Probability of answering directly: {d}%")


def _slots(question: str) -> dict[str, str]:
    body = one_line(question).rstrip(" ?.")
    lower = body[:1].lower() + body[1:] if body.split()[:1] and body.split()[0].lower() in {
        "who", "what", "when", "where", "which", "why", "how", "whose", "whom", "is", "are", "was", "were",
        "do", "does", "did", "can", "in", "on", "at"} else body
    focus = analyse(question).focus
    return {"Q": body, "q": lower, "E": focus[0] if focus else "this subject"}


def _questions(question: str, n: int, templates: tuple[str, ...]) -> list[str]:
    slots = _slots(question)
    out = []
    for k in range(max(1, n)):
        text = templates[k % len(templates)].format(**slots)
        if k >= len(templates):
            text = f"{text} (restated {k // len(templates) + 1})"
        out.append(text)
    return out


def _numbered(items: list[str]) -> str:
    return "\n".join(f"{k}. {one_line(item) or IDK}" for k, item in enumerate(items, start=1))


def sub_queries(fields: Fields) -> str:
    return _numbered(_questions(fields["question"], as_int(fields.get("n"), 10), _SUB_TEMPLATES))


def _keeps_subject(sub_query: str, question: str) -> bool:
    key = focus_words(question) or content_words(question)
    return bool(key) and len(key & content_words(sub_query)) * 2 >= len(key)


def multi_answer(fields: Fields) -> str:
    question = fields["question"]
    subs = [str(s) for s in fields.get("sub_queries") or []] or [question]
    memory = memory_text(fields)
    if not memory:
        return _numbered([IDK] * len(subs))
    asked = [question if _keeps_subject(s, question) else s for s in subs]
    unique = list(dict.fromkeys(asked))
    readings = dict(zip(unique, read_batch([(q, memory) for q in unique])))
    return _numbered([_with_reason(readings[q]) for q in asked])


def _with_reason(reading) -> str:
    """``answer: the sentence it was read from`` (just the answer when the sentence adds nothing)."""
    if not known(reading.answer):
        return IDK
    s = sentence(reading.sentence)
    return f"{reading.answer}: {s}" if s and normalize(s) != normalize(reading.answer) else reading.answer


def _main_answer(answers: list[str | None]) -> str | None:
    groups = group_answers(answers)
    if not groups:
        return None
    return max(groups, key=lambda g: (len(g.members), -g.members[0])).answer


def reflect(fields: Fields) -> str:
    question = fields["question"]
    ps = passages(fields)
    readings = read_texts(question, [str(p.get("text") or "") for p in ps])
    internal = [r.answer for p, r in zip(ps, readings) if is_memory_source(p.get("source"))]
    internal += [str(a) for a in fields.get("answers") or [] if known(str(a))]
    external = [r.answer for p, r in zip(ps, readings) if not is_memory_source(p.get("source"))]
    a_int, a_ext = _main_answer(internal), _main_answer(external)
    if a_int and a_ext and not matches(a_int, a_ext):
        kind = "timeliness" if recency_cue(question) else "factual"
        analysis = (f"Main contradiction: internal knowledge says {a_int} while external knowledge says {a_ext}; "
                    f"contradiction type: {kind}; possible cause: model knowledge limitation or external "
                    f"knowledge bias.")
    elif a_int and a_ext:
        analysis = (f"Internal and external knowledge agree on {a_int}; the remaining doubt is retrieval "
                    f"matching, so the questions are reworded.")
    elif a_int or a_ext:
        side, answer = ("internal", a_int) if a_int else ("external", a_ext)
        analysis = (f"Only {side} knowledge gives an answer ({answer}); contradiction type: integrity "
                    f"(information coverage difference).")
    else:
        analysis = ("No source states an answer; contradiction type: integrity; possible cause: retrieval "
                    "matching error.")
    n = as_int(fields.get("n"), 10)
    return f"Analysis: {analysis}\nNew questions:\n" + _numbered(_questions(question, n, _REFLECT_TEMPLATES))


_LETTER_PREFIX = re.compile(r"^\s*\(?[A-Ha-h][.):]\s+")


def _option_text(option) -> str:
    return _LETTER_PREFIX.sub("", str(option)).strip()


def _is_idk_option(text: str) -> bool:
    n = normalize(text)
    return is_idk(text) or "don t know" in n or "dont know" in n or n in {"unknown", "not sure"}


def select_option(fields: Fields) -> str:
    options = [_option_text(o) for o in fields.get("options") or []]
    letters = "ABCDEFGH"
    if not options:
        return "Correct Option: A"
    texts = [t for t in (str(p.get("text") or "") for p in passages(fields)) if t.strip() and not is_idk(t)]
    readings = read_texts(fields["question"], texts)
    norm_texts = [f" {normalize(t)} " for t in texts]
    all_words = set().union(*(content_words(t) for t in texts)) if texts else set()
    scored = []
    for k, opt in enumerate(options):
        if _is_idk_option(opt) or not normalize(opt):
            continue
        score = 0.0
        for r, nt in zip(readings, norm_texts):
            if known(r.answer) and matches(opt, r.answer):
                score += 1.0
            elif f" {normalize(opt)} " in nt:
                score += 0.5
        scored.append((score, len(content_words(opt) & all_words), -k))
    idk = next((k for k, o in enumerate(options) if _is_idk_option(o)), None)
    best = max(scored, default=None)
    if best is not None and best[0] > 0:
        choice = -best[2]
    elif idk is not None:
        choice = idk
    elif best is not None:
        choice = -max(scored, key=lambda s: (s[1], s[2]))[2]
    else:
        choice = 0
    return f"Correct Option: {letters[choice]}"


HANDLERS = register_handlers({"soft_bias": soft_bias, "sub_queries": sub_queries, "multi_answer": multi_answer,
                            "reflect": reflect, "select_option": select_option})


# ------------------------------------------------------------------------------------------- prompts

_NONE = "None"   # what BRIDGE's prompts say for an empty knowledge set (``methods.bridge.IDK_TEXT``)
_ALLOCATOR = (r"Task Description:\nJudge how likely the question below needs external knowledge to be answered, .*"
              r"\nEvaluate the following question: (?P<question>.*)")
_INTERNAL = (r"Write a short passage with what you know that answers the question, without looking anything up\. If "
             r"you do not know, reply None\.\nQuestion: (?P<question>.*)\nPassage:\s*")
_SUB_QUERIES = (r"Write (?P<n>\d+) new, widely different questions, in different words, that have the same answer as "
                r"the original question\. Requirements:\n.*?\nOriginal question: (?P<question>.*?)\nNew questions:\n"
                r"1\. \[new question 1\]\n.*")
_GENERATOR = (r"Analyse each of the following questions before answering it\. .*?\nQuestions:\n(?P<queries>.*)"
              r"\nAnswers:\s*")
_REFLECT = (r"==Input data==\nOriginal question: (?P<question>.*?)\nKnowledge:\nInternal knowledge: (?P<internal>.*?)"
            r"\nExternal knowledge: (?P<external>.*?)\nGenerated knowledge: (?P<generated>.*?)\nRetrieved knowledge: "
            r"(?P<retrieved>.*?)\nPhase 1: analyse the contradictions in the knowledge\n.*?\nWrite (?P<n>\d+) new, "
            r"widely different questions, .*")
_RESPONDER = (r"Answer the question by choosing the most accurate option based on the document below\. .*?\n"
              r"Document: (?P<knowledge>.*)\nQuestion: (?P<question>.*?)\nOptions: (?P<options>.*)")
_RESPONDER_FREE = (r"Answer the question from the document below with only the essential keywords\. .*?\n"
                   r"Document: (?P<knowledge>.*)\nQuestion: (?P<question>.*?)\nAnswer:\s*")


def _knowledge_list(block: str) -> list[str] | None:
    """A numbered knowledge set; [] for "None"."""
    return [] if block == _NONE else read_numbered(block)


def _document(block: str) -> list[dict[str, str]]:
    """The responder's document: one passage a line; none for "None"."""
    return [] if block == _NONE else [{"text": line} for line in block.split("\n")]


def _options(block: str) -> list[str] | None:
    """``A. x B. y C. z`` -> [x, y, z] (``methods.bridge.prompts.options_text``)."""
    if not block.startswith("A. "):
        return None
    out, start = [], 3
    for letter in "BCDEFGH":
        nxt = block.find(f" {letter}. ", start)
        if nxt < 0:
            break
        out.append(block[start:nxt])
        start = nxt + 4
    return out + [block[start:]]


def _reflection(m: re.Match[str], prompt: Prompt) -> Fields | None:
    generated, retrieved = _knowledge_list(m["generated"]), _knowledge_list(m["retrieved"])
    if generated is None or retrieved is None:
        return None
    ps = [{"source": "memory", "text": m["internal"]}, {"source": "external", "text": m["external"]}]
    ps += [{"source": "external", "text": t} for t in retrieved]
    return {"question": m["question"], "passages": ps, "answers": generated, "n": int(m["n"])}


def _generator(m: re.Match[str], prompt: Prompt) -> Fields | None:
    queries = read_numbered(m["queries"])
    return None if queries is None else {"sub_queries": queries}


def _remember_asked(fields: Fields, knowledge: Knowledge) -> Fields:
    """The generator's prompt holds only the sub-queries: the model recalls what it knows about the question they
    ask again (the original question, which a sub-query that keeps its subject repeats)."""
    found = knowledge.recall_within(fields["sub_queries"])
    question, memory = found if found else ("", None)
    return {**fields, "question": question, "memory": memory}


def _responder(m: re.Match[str], prompt: Prompt) -> Fields | None:
    options = _options(m["options"])
    return None if options is None else {"question": m["question"], "passages": _document(m["knowledge"]),
                                         "options": options}


register_readers(
    PromptReader("soft_bias", "BRIDGE allocator", matcher(_ALLOCATOR, lambda m, p: {"question": m["question"]}),
                 remember=remember_question),
    PromptReader("generate_passage", "BRIDGE K_int passage",
                 matcher(_INTERNAL, lambda m, p: {"question": m["question"], "max_passages": 1}),
                 remember=remember_question),
    PromptReader("sub_queries", "BRIDGE sub-query generation",
                 matcher(_SUB_QUERIES, lambda m, p: {"question": m["question"], "n": int(m["n"])})),
    PromptReader("multi_answer", "BRIDGE multi-query generator", matcher(_GENERATOR, _generator),
                 remember=_remember_asked),
    PromptReader("reflect", "BRIDGE reflection", matcher(_REFLECT, _reflection)),
    PromptReader("select_option", "BRIDGE responder", matcher(_RESPONDER, _responder), same={"passages": same_joined}),
    PromptReader("keyword_answer", "BRIDGE responder without options",
                 matcher(_RESPONDER_FREE,
                         lambda m, p: {"question": m["question"], "passages": _document(m["knowledge"])}),
                 same={"passages": same_joined}),
)
