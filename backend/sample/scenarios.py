"""BRIDGE/TRD-style scenario set ("synthetic mini-TRD", docs/methods/bridge.md §5), from real questions.

Each item pairs a simulated memory (``internal_knowledge``, 1–2 sentences) with 1–2 short external
passages, and has 4 options (gold, two same-type wrong answers, "I don't know"):

| scenario | memory                          | external passages      | gold          |
|----------|---------------------------------|------------------------|---------------|
| FA       | right                           | right                  | true answer   |
| FI       | right                           | wrong (entity swapped) | true answer   |
| FE       | outdated (evolution) or absent  | right                  | true answer   |
| RA       | outdated (evolution) or absent  | wrong                  | I don't know  |

[ours] Memory passages come from fixed templates that quote the question, so they share the question's
words but few others with the passages (docs/methods/bridge.md §9: S1 must stay low for FI). Evolution items get a
recency cue ("most recent", "latest", "current") prefixed to the question unless it has one, and their
memory is dated 2021; the gold stays the dataset's answer (this world's "latest" one). RA options hold
three wrong answers and "I don't know", not the true answer, so "I don't know" is the only right choice.
"""

from __future__ import annotations

import re

import numpy as np

from backend.answer_text import mentions, readable, sentences, short_passage, substitute
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
_MEMORY = (  # curly quotes: questions often hold straight ones
    "If memory serves, the answer to “{q}” is {a}.",
    "I recall that {a} is the right reply to “{q}”.",
    "My stored knowledge says {a}. That is what I remember about “{q}”.",
)
_OUTDATED = "Back in 2021 the answer to “{q}” was {a}, as far as I recall; my knowledge stops around then."


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
        memory_q = q_text.rstrip(" ?")
        internal, internal_answer = None, None
        if scenario in ("FA", "FI"):
            internal, internal_answer = _MEMORY[n % len(_MEMORY)].format(q=memory_q, a=c.gold), c.gold
        elif temporal == "evolution":
            # FE/RA evolution: memory holds an outdated answer (for RA, a different one than the documents).
            internal_answer = w_ext if scenario == "FE" else w_int
            internal = _OUTDATED.format(q=memory_q, a=internal_answer)
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
        # The answer the conflicting side pushes is always an option (FI: documents, FE: memory, RA: both).
        gold, wrong_opts = (IDK, [w_ext, w_int, w_other]) if scenario == "RA" else (c.gold, [w_ext, w_other])
        options = [gold, *wrong_opts] if gold == IDK else [gold, *wrong_opts, IDK]
        options = [options[i] for i in rng.permutation(len(options))]
        questions.append(Question(
            id=qid, question=q_text, documents=docs, gold_answers=[gold], wrong_answers=wrong_opts,
            internal_knowledge=internal, options=options,
            meta={"scenario": scenario, "temporal": temporal, "internal_answer": internal_answer,
                  "external_answer": external_answer, "true_answer": c.gold, "origin": c.origin}))
    return questions


def _head(text: str, n: int = 2) -> str | None:
    """The first ``n`` sentences of a (noise) passage, if they make a readable passage."""
    head = " ".join(sentences(text)[:n])
    return head if readable(head) else None
