"""``poisonedrag_nq``: the PoisonedRAG NQ questions (``raw/poisonedrag_adv_targeted/nq.json``) as an attack set.

Each question keeps its correct answer as gold and its "incorrect answer" as the attack target. PoisonedRAG ships
no clean passages (they come from the BEIR NQ corpus, not redistributed here), so the clean documents are its own
adversarial passages with the correct answer put back (reverse substitution, ``pools.poisonedrag_candidates``):
question i keeps the first 1 + (i mod 3) of them (1, 2 or 3 clean documents, so an attack can be sliced by how
much clean evidence a question had); a passage that still names a word of the incorrect answer that the correct
answer and the question do not ("this Einstein" after "Albert Einstein" became "Charles Darwin") is not clean and is
skipped. The adversarial passages themselves stay in ``meta["attack"]`` (truth side:
never shown to a method) for ``python -m backend attack`` to inject. Questions with no passage that survives the
reverse substitution are left out. No randomness.
"""

from __future__ import annotations

from pathlib import Path

from backend.sample.pools import norm, poisonedrag_candidates
from backend.schema import DocLabel, Document, Question


def _leaks(text: str, wrong: str, gold: str, question: str) -> bool:
    """Does ``text`` name a word of ``wrong`` (4+ letters) that neither ``gold`` nor the question has?"""
    own = set(norm(gold).split()) | set(norm(question).split())
    return bool(({w for w in norm(wrong).split() if len(w) >= 4} - own) & set(norm(text).split()))


def poisonedrag_questions(path: Path, name: str = "nq") -> list[Question]:
    out: list[Question] = []
    for c in poisonedrag_candidates(path, name):
        wrong = c.own_wrong[0]
        adversarial = c.misinfo.get(wrong, [])
        factual = [t for t in c.factual if not _leaks(t, wrong, c.gold, c.question)]
        if not factual or not adversarial:
            continue
        qid = f"prag-{name}-{len(out) + 1:04d}"
        clean = factual[: 1 + len(out) % 3]
        docs = [Document(id=f"{qid}-d{i}", text=t, label=DocLabel(type="correct", answer=c.gold))
                for i, t in enumerate(clean, start=1)]
        out.append(Question(id=qid, question=c.question, documents=docs, gold_answers=[c.gold],
                            wrong_answers=[wrong],
                            meta={"origin": c.origin, "attack": {"target": wrong, "passages": adversarial}}))
    return out
