"""Reading RC-RAG's replies and judging them (docs/methods/counterfactual.md §3.2, §3.4, §3.6;
§8.2, §8.3, §8.6, §8.7, §8.9).

None of these raises: an unreadable reply becomes an empty answer, a discard, or probability 0.0, and the
fallback is named in the returned note.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from backend.answers import normalize, token_f1
from backend.imports import without_optional
from backend.schema import CFMatch, CFReply

#: The released code's refusal phrases (``deal_prediction_with_evidence``), plus [ours] "don't know" / "do not
#: know": the project's models say "I don't know" where the paper's said "unknown".
REFUSAL_PHRASES = ("no specific", "unconfirmed", "uncertain", "unavailable", "sorry", "not have access",
                   "no information", "not provide", "no clear", "not mentioned", "not mention", "no mention",
                   "no answer", "N/A", "unclear", "not clear", "unknown", "partially correct", "partially incorrect",
                   "not correct", "cannot determine", "cannot answer", "not incorrect", "incomplete",
                   "don't know", "do not know")
THRESHOLD = 0.7   # θ for token F1 and ROUGE-L recall (the released code; missing from the paper's text)


def _tokens(text: str) -> list[str]:
    """NFD-normalised, lower-cased alphanumeric runs and single non-space symbols."""
    t = unicodedata.normalize("NFD", text or "").lower()
    return re.findall(r"[^\W_]+|[^\w\s]|_", t)


_PHRASES = [(p, _tokens(p)) for p in REFUSAL_PHRASES]


def refusal(text: str) -> str | None:
    """The first refusal phrase occurring in ``text`` as a whole token sequence, else None."""
    toks = _tokens(text)
    for phrase, ptoks in _PHRASES:
        n = len(ptoks)
        if any(toks[i:i + n] == ptoks for i in range(len(toks) - n + 1)):
            return phrase
    return None


def parse_reply(raw: str | None, n_passages: int, refusal_scope: str = "output") -> CFReply:
    """Answer, evidence and refusal flag of one reply, in the released code's order (§3.2). [ours]: passage ids
    of any length (the code reads one digit), and a trailing full stop is dropped from the answer."""
    if raw is None:
        return CFReply(raw="", reject=True, reject_phrase="(no reply)", internal=True)
    text = raw[7:] if raw.lower().startswith("answer:") else raw
    flat = text.replace("\n", " ").replace("Answer: ", "")
    if "Evidence: " in flat:
        answer_part, evidence_part = flat[:flat.index("Evidence: ")], flat[flat.rindex("Evidence: ") + 10:]
    else:
        answer_part = evidence_part = flat
    answer = re.sub(r"##.*?##", "", answer_part).strip()
    answer = re.sub(r"\s*\.$", "", answer).strip()
    groups = re.findall(r"##(.*?)##", evidence_part)
    mentions = list(dict.fromkeys(re.findall(r"Passage-\d+", evidence_part)))
    if groups:
        evidence = groups[-1].strip()
    elif mentions:
        evidence = ", ".join(mentions)
    else:
        evidence = evidence_part.strip()
    ids = [int(n) for n in re.findall(r"Passage-(\d+)", evidence)]
    passages = [i for i in dict.fromkeys(ids) if 0 <= i < n_passages]
    phrase = refusal(raw if refusal_scope == "output" else answer)
    return CFReply(raw=raw, answer=answer, evidence=evidence, passages=passages, internal=not passages,
                   reject=phrase is not None, reject_phrase=phrase)


@lru_cache(maxsize=1)
def _rouge():
    with without_optional("scipy", "sklearn"):  # nltk's eager extras, unused by its Porter stemmer: backend.imports
        from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l_recall(prediction: str, reference: str) -> float:
    """ROUGE-L recall of ``prediction`` against ``reference`` (rouge_score, Porter stemmer: the released code's
    metric): LCS / |reference tokens|."""
    if not prediction.strip() or not reference.strip():
        return 0.0
    return _rouge().score(reference, prediction)["rougeL"].recall


def match(prediction: str, reference: str, threshold: float = THRESHOLD, substring: str = "faithful") -> CFMatch:
    """The released code's ``match`` against one reference: exact (normalised), the reference inside the
    prediction (raw and case-sensitive; ``substring="strict"``: normalised whole words), token F1 > θ, or
    ROUGE-L recall > θ. The first test that passes is ``fired``; every score is kept."""
    exact = bool(normalize(reference)) and normalize(prediction) == normalize(reference)
    if substring == "strict":
        contained = bool(normalize(reference)) and f" {normalize(reference)} " in f" {normalize(prediction)} "
    else:
        contained = bool(reference) and reference in prediction
    f1 = round(token_f1(prediction, reference), 4)
    rouge = round(rouge_l_recall(prediction, reference), 4)
    fired = ("exact" if exact else "substring" if contained else "f1" if f1 > threshold
             else "rouge_l" if rouge > threshold else None)
    return CFMatch(compared="answer", exact=exact, substring=contained, f1=f1, rouge_l=rouge, threshold=threshold,
                   fired=fired, same=fired is not None)


def judge(reply: CFReply, rag: CFReply, threshold: float = THRESHOLD, substring: str = "faithful") -> CFMatch:
    """Same as the RAG answer -> keep (§3.4): compare answers; when either is empty, compare evidence (unless the
    reply refused); otherwise changed."""
    if reply.answer and rag.answer:
        return match(reply.answer, rag.answer, threshold, substring)
    if not reply.reject and reply.evidence and rag.evidence:
        return match(reply.evidence, rag.evidence, threshold, substring).model_copy(update={"compared": "evidence"})
    return CFMatch(compared="nothing", threshold=threshold)


def parse_keep_discard(raw: str, **_fields) -> tuple[str, str | None]:
    """Direct selection's choice and a note when it was not read from ``$$ keep $$`` / ``$$ discard $$`` (not
    the released code's regex, which never matches: ``$`` is an anchor there)."""
    tags = re.findall(r"\$\$\s*(keep|discard)\s*\$\$", raw or "", re.I)
    if tags:
        return tags[-1].lower(), None
    words = re.findall(r"\b(keep|discard)\b", raw or "", re.I)
    if words:
        return words[-1].lower(), f"no $$ marks; took the last bare word ({words[-1].lower()!r})"
    return "discard", "no keep/discard in the reply: discard"


def parse_probability(raw: str, **_fields) -> tuple[float, str | None]:
    """``Probability: 0.xx`` -> a value in [0, 1]; integers and percentages accepted (the released code reads
    "1" and "95%" as 0.0); unreadable -> 0.0 with a note."""
    text = re.sub(r"^\s*probability\s*:\s*", "", raw or "", flags=re.I)
    m = re.search(r"(\d+(?:\.\d+)?)\s*(%?)", text)
    if not m:
        return 0.0, "no probability in the reply: read as 0.0"
    value = float(m.group(1)) / (100 if m.group(2) or float(m.group(1)) > 1 else 1)
    note = None if 0 <= value <= 1 else f"probability {m.group(0)!r} out of range: clamped"
    return min(1.0, max(0.0, value)), note
