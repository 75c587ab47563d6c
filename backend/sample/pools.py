"""Raw question pools for the sample builder (``backend/sample/build.py``): candidates (the text helpers they use
are ``backend.answer_text``'s).

A :class:`Candidate` is one real question (RAMDocs dev or PoisonedRAG) reduced to a single gold answer,
its own wrong answers and the passages the raw data gives for each. Answer substitution (RA-RAG's benchmark,
docs/methods/ra_rag.md §5 / TRD-style entity substitution) turns a passage for one answer into a passage for another; every
substituted passage is checked so that the replaced answer does not leak (docs/methods/ra_rag.md §8.14).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from backend.answer_text import NUMBER, is_name, mentions, norm, perturb_number, question_keys, substitute

IDK = "I don't know"


# --- candidates -----------------------------------------------------------------------------------

@dataclass
class Candidate:
    origin: str                 # "RAMDocs dev line 7" / "PoisonedRAG nq test1"
    question: str
    gold: str
    other_golds: list[str]      # RAMDocs' other gold answers (other entities); never used as wrong answers
    own_wrong: list[str]        # the dataset's own wrong answers
    factual: list[str]          # passages supporting ``gold``
    misinfo: dict[str, list[str]] = field(default_factory=dict)  # wrong answer -> passages from the dataset
    noise: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def all_golds(self) -> list[str]:
        return [self.gold, *self.other_golds]

    def misinfo_pool(self, wrong: str) -> list[str]:
        """The dataset's passages for ``wrong`` plus factual passages with the gold swapped for it."""
        pool = [t for t in self.misinfo.get(wrong, []) if not mentions(t, self.gold, unless=wrong)]
        pool += [s for t in self.factual if (s := substitute(t, self.gold, wrong))]
        return list(dict.fromkeys(pool))


def _dedupe(items: list[str], exclude: list[str]) -> list[str]:
    seen = {norm(e) for e in exclude}
    out = []
    for it in items:
        if it.strip() and norm(it) not in seen:
            seen.add(norm(it))
            out.append(it.strip())
    return out


def ramdocs_candidates(path: Path) -> list[Candidate]:
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(line)
        golds = _dedupe(row["gold_answers"], [])
        gold, docs = golds[0], row["documents"]
        if mentions(row["question"], gold):
            continue
        wrongs = _dedupe(row["wrong_answers"], golds)
        factual = [d["text"] for d in docs if d["type"] == "correct" and d["answer"] == row["gold_answers"][0]]
        misinfo: dict[str, list[str]] = {}
        for d in docs:
            if d["type"] == "misinfo" and d["answer"].strip() in wrongs:
                misinfo.setdefault(d["answer"].strip(), []).append(d["text"])
                # Reverse substitution: a misinformation passage with the gold put back is factual.
                if fixed := substitute(d["text"], d["answer"], gold):
                    factual.append(fixed)
        out.append(Candidate(
            origin=f"RAMDocs dev line {lineno}", question=row["question"], gold=gold, other_golds=golds[1:],
            own_wrong=wrongs, factual=list(dict.fromkeys(factual)), misinfo=misinfo,
            noise=[d["text"] for d in docs if d["type"] == "noise"],
            meta={"disambig_entity": row.get("disambig_entity", [])}))
    return out


def poisonedrag_candidates(path: Path, name: str) -> list[Candidate]:
    out = []
    for key, row in json.loads(path.read_text(encoding="utf-8")).items():
        gold, wrong, q = row["correct answer"].strip(), row["incorrect answer"].strip(), row["question"]
        if norm(gold) == norm(wrong) or mentions(q, gold) or mentions(q, wrong):
            continue  # comparison / yes-no questions name their answers: substitution makes no sense
        adv = [t for t in row["adv_texts"] if mentions(t, wrong) and not mentions(t, gold, unless=wrong)]
        # Reverse substitution: the adversarial passage with the correct answer put back is factual.
        factual = [s for t in adv if (s := substitute(t, wrong, gold))]
        out.append(Candidate(origin=f"PoisonedRAG {name} {key}", question=q, gold=gold, other_golds=[],
                             own_wrong=[wrong], factual=list(dict.fromkeys(factual)), misinfo={wrong: adv}))
    return out


class WrongAnswers:
    """Wrong answers for a question: its own first, then perturbed numbers (numeric golds) or answers
    borrowed from other questions with the same wh-phrase ("who is the", "what sport is", ...)."""

    def __init__(self, candidates: list[Candidate]):
        self.by_key: dict[str, list[str]] = {}
        for c in candidates:
            for key in question_keys(c.question):
                self.by_key.setdefault(key, []).extend([c.gold, *c.own_wrong])

    def pick(self, c: Candidate, k: int, rng: np.random.Generator) -> dict[str, str]:
        """Up to ``k`` wrong answers -> how each was made ("dataset" / "perturbed" / "borrowed")."""
        def ok(w: str) -> bool:
            # Same shape as the gold (a name or not), new, unrelated to any gold, and not already stated
            # by the question or a factual passage (else its misinformation would be muddled).
            return (is_name(w) == is_name(c.gold) and norm(w) not in taken
                    and not any(mentions(w, g) or mentions(g, w) for g in c.all_golds())
                    and not mentions(c.question, w) and not any(mentions(t, w) for t in c.factual))

        out: dict[str, str] = {}
        taken = {norm(g) for g in c.all_golds()}
        for w in c.own_wrong:
            if len(out) < k and norm(w) not in taken:
                out[w] = "dataset"
                taken.add(norm(w))
        if NUMBER.search(c.gold):
            extra = [(w, "perturbed") for w in perturb_number(c.gold, rng, 3 * k)]
        else:
            extra = []
            for key in question_keys(c.question):
                pool = sorted({w for w in self.by_key.get(key, []) if not NUMBER.search(w)})
                extra += [(pool[i], "borrowed") for i in rng.permutation(len(pool))]
        for w, kind in extra:
            if len(out) >= k:
                break
            if ok(w):
                out[w] = kind
                taken.add(norm(w))
        return out


def load_candidates(raw: Path) -> list[Candidate]:
    """All candidates in a fixed order: RAMDocs dev lines, then PoisonedRAG nq, then hotpotqa."""
    return (ramdocs_candidates(raw / "ramdocs" / "RAMDocs_dev100.jsonl")
            + poisonedrag_candidates(raw / "poisonedrag_adv_targeted" / "nq.json", "nq")
            + poisonedrag_candidates(raw / "poisonedrag_adv_targeted" / "hotpotqa.json", "hotpotqa"))
