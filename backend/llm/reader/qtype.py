"""Question analysis: the expected answer type, the question's subject, and the words that cue an answer.

Answer types (from the wh-word and a handful of templates):
DATE (when / what year), NUM (how many, population, income), PERSON (who), LOC (where, in which city),
WHAT (a named type noun: sport, genre, river...), DESC ("What is X?", "Who is X?", "stand for").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from . import gazetteer
from .text import STOPWORDS, TEMPLATE_WORDS, fold, stem, words

#: Question words -> extra passage words that express the same relation (all compared by stem).
#: Answers sit next to these words ("born on 2 July", "directed by Frank Oz", "3,559 people").
_SYNONYMS = {
    "born": "born birth b", "birth": "born birth b",
    "die": "died death d killed", "died": "died death d killed", "death": "died death d killed",
    "established": "established founded formed created opened incorporated organized organised raised "
                   "built constructed completed launched started began commissioned inaugurated chartered "
                   "constituted set dedicated",
    "released": "released release published premiered aired issued debuted broadcast",
    "population": "population inhabitants people residents persons census",
    "income": "income median",
    "director": "directed director", "directed": "directed director",
    "artist": "by album recorded artist singer band rapper duo group released",
    "album": "album by recorded", "song": "song single by recorded",
    "composer": "composed composer by", "composed": "composed composer by",
    "creator": "created creator by written developed", "created": "created creator by",
    "father": "son father daughter child", "mother": "son mother daughter child",
    "led": "led commanded leader under", "elected": "elected election won",
    "flow": "flows tributary into joins confluence", "located": "located in at near based",
    "published": "published based in", "place": "took fought battle",
    "play": "plays played playing as", "profession": "is was", "character": "protagonist character player",
    "minister": "minister", "name": "name named called known renamed formerly",
}
for _trigger in ("establish", "found", "founded", "form", "formed", "create", "built", "build",
                 "open", "opened", "incorporated", "raised", "completed", "launched", "constructed"):
    _SYNONYMS[_trigger] = _SYNONYMS["established"]
for _trigger in ("release", "premiere", "aired"):
    _SYNONYMS[_trigger] = _SYNONYMS["released"]

_PRIORITY = ("born", "birth", "died", "die", "death", "population", "income", "established", "founded",
             "formed", "built", "incorporated", "raised", "completed", "launched", "released", "elected",
             "directed", "director", "composed", "composer", "created", "creator", "artist", "father",
             "mother", "led", "flow", "published", "located")

#: Non-category type nouns whose answers are proper names containing the noun ("Snake River",
#: "Second Boer War", "Division I-A", "Republican Party").
HEAD_NOUNS = frozenset("""river war division league conference party battle lake mountain island
county city town station team club award prize church band""".split())
_LOC_NOUNS = {"city", "town", "village", "county", "region", "location", "place", "area", "district",
              "province", "state", "country", "island", "continent", "neighborhood", "neighbourhood"}
_DATE_NOUNS = {"year", "date", "decade", "century", "day", "month"}

_FOCUS_CONNECT = {"of", "the", "de", "du", "da", "van", "von", "la", "le", "del", "and", "&", "for", "on",
                  "upon"}


@dataclass(frozen=True)
class QInfo:
    text: str
    qtype: str                      # DATE NUM PERSON LOC WHAT DESC
    category: str | None = None     # gazetteer category named by the question (sport, genre...)
    head: str | None = None         # a proper-name head noun the answer contains (river, war...)
    focus: tuple[str, ...] = ()     # the subject: quoted titles and capitalised names in the question
    terms: dict = field(default_factory=dict)  # stem -> weight (static weights, see _weights)
    cues: frozenset = frozenset()   # stems that sit next to an answer in a passage
    predicate: str | None = None    # born / died / population / ... when recognised
    year_only: bool = False         # "what year": a bare year is the expected form
    acronym: str | None = None      # "What does IGY stand for"
    unit: str | None = None         # stem of the counted noun: "how many buildings" -> "build"

    @property
    def focus_stems(self) -> frozenset:
        return frozenset(stem(w) for f in self.focus for w in words(f) if w not in STOPWORDS)


def _focus(q: str) -> tuple[str, ...]:
    """Quoted titles, then runs of capitalised / numeric tokens (joined by of/the/de...)."""
    found = [m.group(1).strip() for m in re.finditer(r"[\"\u201c]([^\"\u201d]+)[\"\u201d]", q)]
    rest = re.sub(r"[\"\u201c][^\"\u201d]+[\"\u201d]", " , ", q)
    toks = re.findall(r"[\w\u00C0-\u024F][\w\u00C0-\u024F.'\u2019&-]*|[,?;:()]", rest)
    run: list[str] = []

    def flush():
        while run and run[-1].lower() in _FOCUS_CONNECT:
            run.pop()
        if run:
            found.append(" ".join(run))
        run.clear()

    for i, t in enumerate(toks):
        low = t.lower()
        starts_cap = t[0].isupper() or t[0].isdigit()
        first_wh = i == 0 and low in STOPWORDS | {"in", "what", "which", "who", "when", "where", "how"}
        if starts_cap and not first_wh and (low not in STOPWORDS or i > 0 and run):
            run.append(t.rstrip(".,'\u2019").removesuffix("'s").removesuffix("\u2019s")
                       if t.endswith(("'s", "\u2019s")) else t)
            if t.endswith(("'s", "\u2019s")):
                flush()
        elif run and low in _FOCUS_CONNECT:
            run.append(t)
        else:
            flush()
    flush()
    # drop duplicates and a lone leading wh-word
    out, seen = [], set()
    for f in found:
        key = f.lower()
        if key and key not in seen and key not in {"what", "who", "when", "where", "which", "how"}:
            seen.add(key)
            out.append(f)
    return tuple(out)


def _type_noun(ql: str) -> str | None:
    """The noun the question asks for: 'what sport', 'the genre of', "X's profession", 'which year'."""
    verb = r"(?:is|was|are|were|does|did|do|has|had)\b"
    the_x_of = r"\b(?:what|which)\s+(?:is|was|are|were)\s+the\s+(?:[a-z-]+\s+)?"
    of = r"\s+(?:of|for|associated|where|that|in)\b"
    pats = [
        r"\b(?:what|which)\s+(?:type|kind|sort)\s+of\s+([a-z-]+)",
        r"\bthe\s+(?:type|kind)\s+of\s+([a-z-]+)",
        r"\b(?:what|which)\s+([a-z-]+\s[a-z-]+)\s+" + verb,
        r"\b(?:what|which)\s+([a-z-]+)\s+" + verb,
        the_x_of + r"([a-z-]+\s[a-z-]+)" + of,
        the_x_of + r"([a-z-]+)" + of,
        r"\b(?:what|which)\s+(?:is|was|are|were)\s+the\s+([a-z-]+)\b",
        r"'s\s+([a-z-]+)\s*\??$",
        r"\b(?:in|of|to|at)\s+(?:what|which)\s+([a-z-]+)",
        r"\bwhich\s+([a-z-]+)\s*\??$",
    ]
    for p in pats:
        m = re.search(p, ql)
        if not m:
            continue
        noun = m.group(1).strip()
        last = noun.split()[-1]
        if noun in gazetteer.TYPE_NOUNS or last in gazetteer.TYPE_NOUNS or last in HEAD_NOUNS \
                or noun in _LOC_NOUNS | _DATE_NOUNS or " " not in noun:
            if " " in noun and noun not in gazetteer.TYPE_NOUNS:
                noun = noun.split()[-1]
            return noun
    return None


def _weights(q: str, focus: tuple[str, ...], noun: str | None) -> dict[str, float]:
    """Static term weights (no corpus IDF, so results never depend on what else is read): the subject's
    words matter most, numbers next, ordinary content words 1, template words barely."""
    focus_words = {w for f in focus for w in words(f)}
    out: dict[str, float] = {}
    for w in words(q):
        if w in STOPWORDS or w in {"what", "which", "who", "when", "where", "how"}:
            continue
        if w in focus_words:
            wt = 2.0
        elif w.isdigit():
            wt = 1.5
        elif w in TEMPLATE_WORDS or (noun and w == noun):
            wt = 0.3
        else:
            wt = 1.0
        s = stem(w)
        out[s] = max(out.get(s, 0.0), wt)
    return out


@lru_cache(maxsize=4096)
def analyse(question: str) -> QInfo:
    q = re.sub(r"\s+", " ", fold(question)).strip()
    ql = q.lower()
    focus = _focus(q)
    noun = _type_noun(ql)
    qwords = words(q)
    category = gazetteer.TYPE_NOUNS.get(noun) if noun else None
    if noun and noun.split()[-1] in gazetteer.TYPE_NOUNS and not category:
        category = gazetteer.TYPE_NOUNS[noun.split()[-1]]
    head = noun if noun in HEAD_NOUNS else None
    acronym = None
    year_only = bool(re.search(r"\b(?:what|which)\s+year\b|\byear\s+(?:was|did|is)\b", ql))

    rest = re.sub(r"^(?:what|who)\s+(?:is|was|are|were)\s+", "", ql).rstrip(" ?")
    is_bare_entity = bool(focus) and rest.strip("\"' ") in {f.lower() for f in focus}
    if re.search(r"\bstand(?:s)? for\b|\babbreviat|\bacronym", ql):
        qtype = "DESC"
        acr = [f for f in focus if re.fullmatch(r"[A-Z][A-Z0-9.&]{1,9}", f)]
        acronym = acr[0].replace(".", "") if acr else None
    elif re.match(r"^(?:what|who)\s+(?:is|was|are|were)\s", ql) and is_bare_entity:
        qtype = "DESC"
    elif re.search(r"\brefers? to\b|\bwhat does .* mean\b", ql) and not noun:
        qtype = "DESC"
    elif re.search(r"\bhow (?:many|much|tall|long|old|large|big|far|high)\b|\bpopulation\b|\bincome\b|"
                   r"\bnumber of\b|\bwhat (?:is|was) the (?:total )?(?:area|height|length|capacity)\b", ql):
        qtype = "NUM"
    elif ql.startswith("when") or noun in _DATE_NOUNS or re.search(r"\bwhen (?:was|did|is|were)\b", ql):
        qtype = "DATE"
    elif re.match(r"^(?:who|whom)\b", ql) or re.search(r"\bby whom\b|\bwhich person\b", ql):
        qtype = "PERSON"
    elif ql.startswith("where") or (noun in _LOC_NOUNS) or re.search(r"\blocation of\b", ql):
        qtype = "LOC"
    else:
        qtype = "WHAT"
    if qtype == "LOC" and noun in ("state", "country", "province"):
        category = gazetteer.TYPE_NOUNS[noun]

    predicate = None
    cues: set[str] = set()
    matched = [w for w in qwords if w in _SYNONYMS and not any(w in f.lower().split() for f in focus)]
    for w in matched:
        cues |= {stem(x) for x in _SYNONYMS[w].split()}
    if matched:  # the relation words (born, released...) name the predicate before the object nouns
        predicate = min(matched, key=lambda w: (_PRIORITY.index(w) if w in _PRIORITY else 99,
                                                qwords.index(w)))
    if qtype == "NUM" and "population" in qwords:
        predicate = "population"
    m = re.search(r"\bhow many ([a-z-]+)|\bnumber of ([a-z-]+)", ql)
    unit = stem(m.group(1) or m.group(2)) if m else None
    terms = _weights(q, focus, noun)
    cues |= {s for s, wt in terms.items() if wt == 1.0}  # ordinary question words also cue the answer
    return QInfo(text=question, qtype=qtype, category=category, head=head, focus=focus, terms=terms,
                 cues=frozenset(cues), predicate=predicate, year_only=year_only, acronym=acronym, unit=unit)
