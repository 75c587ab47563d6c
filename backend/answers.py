"""Answer normalisation, matching and clustering, shared by methods, evaluation and the offline model.

Every rule compares answers after SQuAD's ``normalize_answer`` (``normalize``: lower case, punctuation deleted,
articles dropped), which every method's paper or spec names. Three families of rules:

* ``names`` — which of a list of reference answers (gold or wrong) an answer names: the scoring rule of the
  answer metrics (``backend.scoring``; why this rule: its docstring and the README's "How answers are scored").
* ``rc_rag_match`` / ``rc_rag_correct`` — RC-RAG's released ``match`` (exact, raw substring, token F1 > 0.7,
  ROUGE-L recall > 0.7), which labels its benchmark (``scoring.risk_fold``) and judges its answers.
* ``matches`` — a lenient similarity (containment or token F1 ≥ 0.5) for the offline model's heuristics; not a
  scoring rule ("Washington Irving" matches "George Washington" under it).

Metrics and verdicts built on these rules live in ``backend.scoring``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache
from typing import NamedTuple

from backend.imports import without_optional

IDK = "I don't know"
_IDK_RE = re.compile(
    r"^\W*(i\s+(do\s*n[o']?t|dont|don’t)\s+know|unknown|no\s+answer|not\s+(stated|mentioned|provided|given)"
    r"|cannot\s+(be\s+)?(determined|answered)|n/?a|none)\W*$", re.I)


def is_idk(text: str | None) -> bool:
    """True for "I don't know" and its usual variants (and for empty text)."""
    return text is None or not text.strip() or bool(_IDK_RE.match(text.strip()))


_ARTICLES = {"a", "an", "the"}
_PUNCT = re.compile(f"[{re.escape(string.punctuation)}‘’“”–—]")


def normalize(text: str) -> str:
    """SQuAD's ``normalize_answer``: lower case, punctuation deleted (so "U.S." is "us" and "3,559" is "3559", as
    in SQuAD's evaluation script; curly quotes and dashes too), articles dropped, single spaces."""
    words = _PUNCT.sub("", text.lower()).split()
    return " ".join(w for w in words if w not in _ARTICLES)


def token_f1(a: str, b: str) -> float:
    ta, tb = normalize(a).split(), normalize(b).split()
    common = sum((Counter(ta) & Counter(tb)).values())
    if not ta or not tb or common == 0:
        return 0.0
    p, r = common / len(ta), common / len(tb)
    return 2 * p * r / (p + r)


def _contains(a: str, b: str) -> bool:
    """True when word sequence b occurs inside word sequence a."""
    return f" {b} " in f" {a} " if b else False


def exact_match(a: str, b: str) -> bool:
    return normalize(a) == normalize(b) and bool(normalize(a))


def matches(a: str, b: str, strict: bool = False) -> bool:
    """Lenient similarity: one contains the other as a word sequence, or token F1 ≥ 0.5 (``strict``: F1 only).
    The offline model's stand-in for a model's judgement of "same answer" (its entailment and option
    heuristics); never a scoring rule: it takes "Washington Irving" for "George Washington" (F1 0.5)."""
    na, nb = normalize(a), normalize(b)
    if not na or not nb:
        return False
    if not strict and (_contains(na, nb) or _contains(nb, na)):
        return True
    return token_f1(a, b) >= 0.5


def matches_any(answer: str, references: list[str], strict: bool = False) -> bool:
    return any(matches(answer, r, strict) for r in references)


def cluster(answers: list[str]) -> list[list[int]]:
    """Group answer indices whose normalised forms are equal or contain one another (first-come order)."""
    clusters: list[list[int]] = []
    keys: list[str] = []
    for i, a in enumerate(answers):
        na = normalize(a)
        for c, key in enumerate(keys):
            if na and (na == key or _contains(na, key) or _contains(key, na)):
                clusters[c].append(i)
                break
        else:
            clusters.append([i])
            keys.append(na)
    return clusters


def contains_match(a: str, b: str) -> bool:
    """Normalised equality or word-sequence containment either way, without the token-F1 rule: F1 would
    make "3,559 people" match the wrong answer "10,000 people" (F1 = 0.5). Which wrong answers count
    (``scoring.counted_wrong``) and the attack outcomes use it; the answer metrics use ``names``."""
    na, nb = normalize(a), normalize(b)
    return bool(na and nb) and (_contains(na, nb) or _contains(nb, na))


def names(answer: str, references: list[str]) -> list[str]:
    """The references (gold or wrong answers) that ``answer`` names, after normalisation:

    1. those equal to it, also as the same words in another order ("December 21, 1906" for "21 December 1906"), or
       inside it as a whole-word span ("the Chicago Bulls", "They won it in 1963." name "Chicago Bulls", "1963");
    2. failing that, the one reference it is a whole-word span of, when it is a span of exactly one distinct
       reference: a shorter form ("3,559" for "3,559 people", "Mozart" for "Wolfgang Amadeus Mozart", "Bulls"
       for "Chicago Bulls"); a span of several ("Abingdon" of "Abingdon, Illinois" and "Abingdon, Virginia")
       names none of them.

    Shared words alone never name a reference: "Washington Irving" does not name "George Washington"."""
    na = normalize(answer or "")
    refs = [(r, nr) for r in references if (nr := normalize(r or ""))]
    if not na:
        return []
    inside = [r for r, nr in refs if _contains(na, nr) or sorted(na.split()) == sorted(nr.split())]
    if inside:
        return inside
    around = [(r, nr) for r, nr in refs if _contains(nr, na)]
    return [r for r, _ in around] if len({nr for _, nr in around}) == 1 else []


# --- RC-RAG's released ``match`` (docs/methods/counterfactual.md §3.4, §5.1) ------------------------------------

#: θ for token F1 and ROUGE-L recall in the released code (missing from the paper's text)
RC_RAG_THRESHOLD = 0.7


@lru_cache(maxsize=1)
def rouge_scorer():
    """rouge_score's ROUGE-L with the Porter stemmer, the released code's metric; loaded on first use."""
    with without_optional("scipy", "sklearn"):  # nltk's eager extras, unused by its Porter stemmer: backend.imports
        from rouge_score import rouge_scorer as rouge

    return rouge.RougeScorer(["rougeL"], use_stemmer=True)


#: The most of each text ROUGE-L compares: its first 16,384 characters, and of their tokens the first 512. RC-RAG
#: compares answers, short by the paper's design: a reply is at most its ``max_tokens`` = 256 model tokens (§8.9), and
#: rouge_score's tokens (alphanumeric runs) are no more than the model's, so 512 tokens is twice any answer the paper
#: allows and only a reply past its own ``max_tokens`` (an endpoint that ignored it) is cut. Bounded, one comparison
#: costs at most 512 × 512 LCS steps (~0.1 CPU-s) whatever an endpoint sends: unbounded, rouge_score's full LCS table
#: took 46 s and 0.75 GB for a 30 KB reply and was killed at 17.9 GB for a 600 KB one (issue 36).
MAX_COMPARED_CHARS = 16_384
MAX_COMPARED_TOKENS = 512


def lcs_length(a: list[str], b: list[str]) -> int:
    """The length of the longest common subsequence of ``a`` and ``b``: rouge_score's dynamic programme, two rows at a
    time (memory linear in the shorter list; rouge_score keeps the whole table)."""
    if len(a) < len(b):
        a, b = b, a  # the LCS is symmetric: rows over the longer list, each row as long as the shorter
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, 1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_tokens(text: str) -> list[str]:
    """rouge_score's tokens (lower case, alphanumeric runs, the Porter stemmer) of the compared part of ``text``:
    its first ``MAX_COMPARED_CHARS`` characters, and of their tokens the first ``MAX_COMPARED_TOKENS``."""
    tokenizer = rouge_scorer()._tokenizer  # the scorer's own (rouge_score is pinned): the tokens its score() compares
    return tokenizer.tokenize(text[:MAX_COMPARED_CHARS])[:MAX_COMPARED_TOKENS]


def rouge_l_recall(prediction: str, reference: str) -> float:
    """ROUGE-L recall of ``prediction`` against ``reference``: LCS / |reference tokens| (rouge_score's tokens and
    score, on the compared part of each text: ``MAX_COMPARED_TOKENS``)."""
    if not prediction.strip() or not reference.strip():
        return 0.0
    target, candidate = rouge_tokens(reference), rouge_tokens(prediction)
    if not target or not candidate:
        return 0.0
    return lcs_length(target, candidate) / len(target)


class RCMatch(NamedTuple):
    """Every test of the released ``match`` against one reference."""

    exact: bool                    # normalised equality
    substring: bool                # the reference inside the prediction (raw, case-sensitive by default)
    f1: float                      # SQuAD token F1
    rouge_l: float                 # ROUGE-L recall, the reference as the reference

    def fired(self, threshold: float = RC_RAG_THRESHOLD) -> str | None:
        """The first test that passes, in the released code's order, else None."""
        return ("exact" if self.exact else "substring" if self.substring else "f1" if self.f1 > threshold
                else "rouge_l" if self.rouge_l > threshold else None)


def rc_rag_match(prediction: str, reference: str, substring: str = "faithful") -> RCMatch:
    """The released code's tests of ``prediction`` against one ``reference``. ``substring="faithful"``: the raw
    reference string inside the prediction, case-sensitive, as released ("1" is inside "1990");
    ``"strict"``: the normalised reference as whole words."""
    nr, np_ = normalize(reference), normalize(prediction)
    if substring == "strict":
        contained = bool(nr) and _contains(np_, nr)
    else:
        contained = bool(reference) and reference in prediction
    return RCMatch(exact=bool(nr) and np_ == nr, substring=contained, f1=token_f1(prediction, reference),
                   rouge_l=rouge_l_recall(prediction, reference))


def or_alternatives(gold: list[str]) -> list[str]:
    """The gold answers, and the parts of those containing " or " as alternatives of their own (the released
    labelling: "Ford or Chevrolet" accepts "Ford")."""
    parts = [p.strip() for g in gold if " or " in g for p in g.split(" or ")]
    return list(dict.fromkeys([*gold, *(p for p in parts if p)]))


def rc_rag_correct(prediction: str, gold: list[str], threshold: float = RC_RAG_THRESHOLD) -> bool:
    """RC-RAG's label of a RAG answer: correct ("answerable") when the released ``match`` passes against any gold
    answer or " or " alternative (docs/methods/counterfactual.md §5.1). "Bulls" is not "Chicago Bulls" here
    (F1 0.67, ROUGE-L recall 0.5)."""
    return bool(prediction and prediction.strip()) and any(
        rc_rag_match(prediction, g).fired(threshold) is not None for g in or_alternatives(gold))
