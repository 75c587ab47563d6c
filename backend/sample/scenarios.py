"""BRIDGE/TRD-style scenario set ("synthetic mini-TRD", docs/methods/bridge.md §5), from real questions.

Each item pairs a simulated memory (``internal_knowledge``, 1–2 sentences) with 1–2 short external
passages, and has 4 options (gold, two same-type wrong answers, "I don't know"):

| scenario | memory                          | external passages      | gold          |
|----------|---------------------------------|------------------------|---------------|
| FA       | right                           | right                  | true answer   |
| FI       | right                           | wrong (entity swapped) | true answer   |
| FE       | outdated (evolution) or absent  | right                  | true answer   |
| RA       | outdated (evolution) or absent  | wrong                  | I don't know  |

[ours] A memory is a passage in the style of the documents, as a model's memory is when a method elicits it
(TRD's K_int is a written paragraph on the same fact): a short passage from the same pools, stating the answer the
scenario needs (right memory: a factual passage; outdated memory: a factual passage with the answer swapped, as
misinformation is made), never a template. It is a passage other than the item's documents and other than their
entity-swapped twins (TRD writes K_int apart from K_ext) when the pool has one; otherwise it is a document's own
passage or its twin (``meta.memory_twin``), which is exactly the case an embedding scorer cannot tell apart
(docs/methods/bridge.md §8.16). Evolution items get a recency cue ("most recent", "latest", "current") prefixed to
the question unless it has one; the gold stays the dataset's answer (this world's "latest" one). RA options hold
three wrong answers and "I don't know", not the true answer, so "I don't know" is the only right choice.
"""

from __future__ import annotations

import re

import numpy as np

from backend.answer_text import mentions, readable, sentences, short_passage, substitute
from backend.llm.reader.text import content_stems
from backend.sample.pools import IDK, Candidate
from backend.schema import DocLabel, Document, Question

PER_SCENARIO = 12
#: (scenario, temporal) for the 12 items of each scenario, in order.
PLAN = ([("FA", "none")] * 12 + [("FI", "none")] * 12
        + [("FE", "evolution")] * 6 + [("FE", "perpetuation")] * 6
        + [("RA", "evolution")] * 6 + [("RA", "perpetuation")] * 6)
_RECENCY = re.compile(r"\b(current|currently|latest|most recent|recent|now)\b", re.IGNORECASE)
_CUES = ("According to the most recent records, ", "As of the latest figures, ", "Going by current sources, ")
_CHANGING = re.compile(r"\b(population|current|how many|record|won|win|champion|president|minister|"
                       r"leader|latest|recent)\b", re.IGNORECASE)


def _passages(c: Candidate) -> list[str]:
    """Short (1–2 sentence) passages that state the gold answer."""
    out = [p for t in c.factual if (p := short_passage(t, c.gold))]
    return list(dict.fromkeys(out))


def _wrong_passages(c: Candidate, wrong: str, right: list[str]) -> list[str]:
    """Short passages for ``wrong``: the dataset's own (PoisonedRAG) or the right ones with the answer swapped."""
    own = [p for t in c.misinfo.get(wrong, [])
           if (p := short_passage(t, wrong)) and not mentions(p, c.gold, unless=wrong)]
    return list(dict.fromkeys(own + [s for p in right if (s := substitute(p, c.gold, wrong))]))


def _with_cue(question: str, i: int) -> str:
    if _RECENCY.search(question):
        return question
    q = _CUES[i % len(_CUES)] + question[:1].lower() + question[1:]
    return q


def _usable(c: Candidate, wrongs: list[str]) -> bool:
    right = _passages(c)
    return len(wrongs) >= 3 and bool(right) and bool(_wrong_passages(c, wrongs[0], right))


def _choose(cands: list[tuple[Candidate, list[str]]], rng: np.random.Generator) -> list[tuple[Candidate, list[str]]]:
    """48 distinct items: RAMDocs and PoisonedRAG alternating (each shuffled), evolution slots first
    taken from questions about things that change (population, records, winners, office holders)."""
    usable = [(c, w) for c, w in cands if _usable(c, w)]
    ram = [usable[i] for i in rng.permutation(len(usable)) if usable[i][0].origin.startswith("RAMDocs")]
    prd = [usable[i] for i in rng.permutation(len(usable)) if not usable[i][0].origin.startswith("RAMDocs")]
    mixed = [x for pair in zip(ram, prd) for x in pair] + ram[len(prd):] + prd[len(ram):]
    changing = [x for x in mixed if _CHANGING.search(x[0].question)]
    n_evo = sum(t == "evolution" for _, t in PLAN)
    evo = changing[:n_evo]
    rest = [x for x in mixed if all(x[0] is not e[0] for e in evo)]
    chosen, evo_iter, rest_iter = [], iter(evo), iter(rest)
    for _, temporal in PLAN:
        item = next(evo_iter, None) if temporal == "evolution" else None
        chosen.append(item or next(rest_iter))
    return chosen


def build_scenarios(cands: list[tuple[Candidate, list[str]]], seed: int) -> list[Question]:
    """``cands``: (candidate, its wrong answers, best first: the dataset's own come first)."""
    rng = np.random.default_rng(seed)
    questions = []
    for n, ((scenario, temporal), (c, wrongs)) in enumerate(zip(PLAN, _choose(cands, rng)), start=1):
        qid = f"sc-{n:04d}"
        right = _passages(c)
        w_ext, w_int, w_other = wrongs[0], wrongs[1], wrongs[2]
        q_text = c.question.strip()
        if temporal == "evolution":
            q_text = _with_cue(q_text, n)
        docs_right = scenario in ("FA", "FE")
        external_answer = c.gold if docs_right else w_ext
        texts = right if docs_right else _wrong_passages(c, w_ext, right)
        label = DocLabel(type="correct", answer=c.gold) if docs_right else DocLabel(type="misinfo", answer=w_ext)
        docs = [Document(id=f"{qid}-d1", source="external", text=texts[0], label=label)]
        if n % 2 == 0:  # every other item gets a second passage: RAMDocs noise if any, else a paraphrase
            noise = [p for t in c.noise if (p := _head(t))]
            if noise:
                docs.append(Document(id=f"{qid}-d2", source="external", text=noise[0],
                                     label=DocLabel(type="noise")))
            elif len(texts) > 1:
                docs.append(Document(id=f"{qid}-d2", source="external", text=texts[1], label=label))
        # Memory: right on FA/FI, outdated on evolution items (RA: another wrong answer than the documents'), none
        # on perpetuation items.
        if temporal == "evolution":
            internal_answer = w_ext if scenario == "FE" else w_int
        else:
            internal_answer = c.gold if scenario in ("FA", "FI") else None
        internal, twin = None, None
        if internal_answer is not None:
            pool = right if internal_answer == c.gold else _wrong_passages(c, internal_answer, right)
            stated = [d.text for d in docs if d.label.answer]
            internal, twin = memory_passage(c.question, pool, stated, [c.gold, *wrongs])
        # The answer the conflicting side pushes is always an option (FI: documents, FE: memory, RA: both).
        gold, wrong_opts = (IDK, [w_ext, w_int, w_other]) if scenario == "RA" else (c.gold, [w_ext, w_other])
        options = [gold, *wrong_opts] if gold == IDK else [gold, *wrong_opts, IDK]
        options = [options[i] for i in rng.permutation(len(options))]
        questions.append(Question(
            id=qid, question=q_text, documents=docs, gold_answers=[gold], wrong_answers=wrong_opts,
            internal_knowledge=internal, options=options,
            meta={"scenario": scenario, "temporal": temporal, "internal_answer": internal_answer,
                  "external_answer": external_answer, "true_answer": c.gold, "origin": c.origin,
                  "memory_twin": twin}))
    return questions


def is_twin(a: str, b: str, answers: list[str]) -> bool:
    """The same passage, or one is the other with one answer swapped for another (an entity-swapped twin)."""
    return a == b or any(substitute(a, x, y) == b for x in answers for y in answers if x != y and mentions(a, x))


def memory_passage(question: str, pool: list[str], documents: list[str], answers: list[str]) -> tuple[str, bool]:
    """The memory passage and whether it is a document's passage or its entity-swapped twin: of the passages in
    ``pool`` that are not, the one most about the question (content words shared; the earlier on a tie), as a
    model writes about what it is asked; else the first of ``pool``."""
    if not pool:
        raise ValueError(f"no passage states the answer the memory needs: {question!r}")
    distinct = [p for p in pool if not any(is_twin(p, d, answers) for d in documents)]
    if not distinct:
        return pool[0], True
    asked = content_stems(question)
    return max(distinct, key=lambda p: (len(asked & content_stems(p)), -distinct.index(p))), False


def _head(text: str, n: int = 2) -> str | None:
    """The first ``n`` sentences of a (noise) passage, if they make a readable passage."""
    head = " ".join(sentences(text)[:n])
    return head if readable(head) else None
