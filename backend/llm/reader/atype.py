"""Does an answer have the type its question asks for? A cheap, deterministic check on the answer text alone.

    fits("PERSON", "Meeting Minutes All")  -> False     fits("PERSON", "Ahmed Hussen") -> True
    fits("DATE", "2 July 1829") -> True                  fits("NUM", "3,559") -> True
    fits("PERSON", "Library of Parliament", "Who is the current Minister of Immigration?") -> False
    missing("PERSON", "Who is the current Minister of Immigration?") -> "no person named"

The reader (``reader._finish``) keeps only candidates that fit and abstains, saying why (``missing``), when none
does; ``benchmarks/reader_types.py`` counts answers that do not fit (type mismatches). Types are the question
analysis' (``qtype``): who -> PERSON (a person *or an organisation*: bands, labels and studios answer "who"
questions), when -> DATE, how many / population -> NUM, where -> LOC. WHAT and DESC ("What is X?") accept any
answer: their type is named by the question's noun, which the extractors already follow.

[ours] What counts as name-like (the issue names no rule): one to six tokens, at least one capitalised; no function
word other than the connectors names use (of, the, and, de, van...: "Meeting Minutes All", "Piano Quartet No");
not a bare date or number; the last word is not a generic noun for a page part, a document, a kind of work, a
format or a prize ("Open Data", "Code of Conduct", "Best Screenplay"), nor a sentence adverb ("Actually"). The word
lists are generic English vocabulary, written while reading the RAMDocs dev set's wrong-type answers, not answers
harvested from it. A place (LOC) is name-like by the same rule, commas allowed ("Aguadilla, Puerto Rico"). A token
shaped like a verb form (an adverb in -ly, a long past participle in -ed, a gerund in -izing/-ating/-owing) or an
abstract noun (-ship, -ism, -ness, -tion, -ment, -ology) is no name's last word ("Sponsored Jointly Seconded
Showing", "Refugees and Citizenship"), and no name opens with a lower-case word ("of Reconstruction and Supply").
When the question names a role only a person holds ("Who is the current Minister of Immigration?", the director,
the father...), an organisation, a country or an all-capitals acronym does not answer it ("Library of Parliament").
"""

from __future__ import annotations

import re

from . import gazetteer
from .spans import ORG_WORDS
from .text import STOPWORDS

#: Words names are built with ("Bank of England", "The Beatles", "Simon and Garfunkel", "Ludwig van Beethoven").
NAME_CONNECTORS = frozenset("of the a an and & de du da van von der den la le del della di bin ibn al y e".split())

#: Generic nouns that head a span naming a thing, never an agent: page parts and documents, kinds of works and
#: formats, prizes and meetings. A name ending in one of them is not a person or an organisation.
THING_HEADS = frozenset("""
minutes meeting meetings data title titles code conduct background overview summary contents index
notice notices information info details terms conditions policy policies map sitemap page pages website
site link links menu section chapter article articles report reports document documents file files
session sessions bill bills act acts motion motions agenda transcript transcripts
album albums song songs single singles track tracks film films movie movies book books novel novels
episode episodes series season seasons edition editions version versions
quartet quintet trio sonata sonatas symphony symphonies concerto concertos requiem mass opus suite
overture prelude etude nocturne cantata oratorio
cd cds dvd dvds lp lps ep eps vinyl cassette mp3 format formats
screenplay screenplays actor actress director picture score soundtrack award awards prize prizes nomination
nominations look view views comment comments reply replies review reviews rating ratings
accolades honours honors accessibility guides guide sports mobile science sciences studies
""".split())
#: Kinds of musical work: a span holding one anywhere names a work ("Violin Concerto Vocal", "Piano Quartet No").
_WORKS = frozenset("quartet quintet sextet sonata sonatas concerto concertos requiem cantata oratorio nocturne".split())
#: Verb forms: an adverb in -ly (not -lly/-ily/-erly: McNally, Emily, Beverly; "Actually" is), a long past participle in -ed (not
#: Alfred, Mildred, Reed, Mohammed), a gerund of a derived verb. Names rarely contain them; page debris does.
_VERB_FORM = re.compile(r"(?!(?:limited|united|incorporated|associated)$)(?:[a-z]{3,}(?:ually|(?<!e)[^li]ly)|"
                        r"[a-z]{5,}(?<!fr)(?<!dr)(?<![emi])ed|[a-z]{3,}(?:izing|ising|ating|owing))", re.I)
#: The adverb part of ``_VERB_FORM``: debris starts with one ("Jointly Owned"); a surname may end in one (Priestly).
_ADVERB = re.compile(r"[a-z]{3,}(?:ually|(?<!e)[^li]ly)", re.I)
#: Abstract nouns ("Citizenship", "Transformation"); long enough not to catch Nation or Ness; organisations
#: named by such a noun (Foundation, Association) are in ``_ORG_HEADS`` and pass.
_ABSTRACT = re.compile(r"[a-z]{3,}(?:ship|ism|ology)|[a-z]{4,}(?:ness|tion|sion)", re.I)
#: Nouns in a who-question that only a person can be ("the current Minister", "the director", "his father").
PERSON_ROLES = frozenset("""minister president premier chancellor governor mayor senator secretary ambassador king queen
emperor empress prince princess pope bishop father mother son daughter wife husband brother sister spouse child
children grandfather grandmother uncle aunt director directed composer author writer novelist poet painter
sculptor actor actress singer songwriter rapper guitarist drummer player coach captain chairman ceo inventor
scientist judge presenter narrator protagonist character""".split())
#: A role word followed by one of these asks for a body, not a person ("the parent company", "the host nation").
_NOT_A_PERSON_AFTER = frozenset("""company companies country nation state city team club band group firm
organisation organization agency party network label school university""".split())
_ORG_HEADS = ORG_WORDS | frozenset("""nation library parliament treaty government ministry agency office service
services court assembly congress senate corps army navy force police foundation corporation association
federation organization organisation administration institution coalition commission union""".split())
_COUNTRIES = frozenset(gazetteer.CATEGORIES["country"]) | frozenset(gazetteer.CATEGORIES["state"])

_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december|"
          r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?")
_DATE = re.compile(rf"\b(?:1[0-9]{{3}}|20[0-9]{{2}})s?\b|\b{_MONTH}\b|\b\d+(?:st|nd|rd|th)?\s+century\b|"
                   rf"\b\d{{1,4}}\s*(?:BC|BCE|AD|CE)\b|\b(?:AD|CE)\s*\d{{1,4}}\b|"
                   rf"\b\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{2,4}}\b", re.I)
_NUMBER_WORDS = frozenset("""zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand
million billion trillion dozen""".split())
_TOKEN = re.compile(r"[^\s,;:()\[\]\"]+")

#: One short clause per checked type, for an abstention's reason ("... : no person or organisation named").
_MISSING = {
    "PERSON": "no person named",
    "DATE": "no date given",
    "NUM": "no number given",
    "LOC": "no place named",
}
CHECKED = frozenset(_MISSING)


def _words(text: str) -> list[str]:
    return [t.strip(".'\u2019!?") for t in _TOKEN.findall(text) if t.strip(".'\u2019!?-")]


def is_date(text: str) -> bool:
    """A year (1000-2099, or a decade "1990s"), a month name, a century or a numeric date."""
    return bool(_DATE.search(text or ""))


def is_number(text: str) -> bool:
    """A digit or a number word ("3,559", "$1.2 million", "twelve")."""
    t = text or ""
    return bool(re.search(r"\d", t)) or any(w.lower() in _NUMBER_WORDS for w in _words(t))


def name_like(text: str) -> bool:
    """A proper name: 1-6 tokens, one capitalised, no function word but the connectors names use, not a bare
    date or number, not headed by a generic thing noun or a sentence adverb (see the module docstring)."""
    ws = _words(text or "")
    if not 1 <= len(ws) <= 6:
        return False
    low = [w.lower() for w in ws]
    if not any(w[0].isupper() for w in ws if w[0].isalpha()) or ws[0][0].islower():
        return False
    if any(_VERB_FORM.fullmatch(w) and not (i and _ADVERB.fullmatch(w)) for i, w in enumerate(ws)) or (_ABSTRACT.fullmatch(ws[-1]) and low[-1] not in _ORG_HEADS):
        return False
    if any(w in STOPWORDS and w not in NAME_CONNECTORS for w in low):
        return False
    if all(re.fullmatch(r"[\d.,$%/-]+", w) or w in _NUMBER_WORDS for w in low):
        return False
    if re.fullmatch(r"[\s\d,.-]*" + _DATE.pattern + r"[\s\d,.-]*", text.strip(), re.I):
        return False  # "2 July 1829", "1990s": a date, not a name
    return low[-1] not in THING_HEADS and not any(w in _WORKS for w in low)


def person_like(text: str) -> bool:
    """Name-like and not an organisation, a country or state, or a bare acronym ("Library of Parliament", "XML CSV")."""
    if not name_like(text):
        return False
    ws = _words(text)
    low = [w.lower() for w in ws]
    tails = {" ".join(low[i:]) for i in range(len(low))}   # "... Canada", "... New Zealand"
    return (not any(w in _ORG_HEADS or w == "opera" for w in low) and not tails & _COUNTRIES
            and not all(w.isupper() or not w.isalpha() for w in ws))


def person_role(question: str) -> bool:
    """The question asks for someone only a person can be (a minister, the director, a father)."""
    words = re.findall(r"[a-z]+", (question or "").lower())
    return any(w in PERSON_ROLES and (i + 1 == len(words) or words[i + 1] not in _NOT_A_PERSON_AFTER)
               for i, w in enumerate(words))


def fits(qtype: str, text: str | None, question: str = "") -> bool:
    """True when ``text`` is an answer of the type ``qtype`` asks for (always True for WHAT / DESC). ``question``
    narrows PERSON to a person when it names a role only a person holds (``person_role``)."""
    if not text or not text.strip():
        return False
    if qtype == "DATE":
        return is_date(text)
    if qtype == "NUM":
        return is_number(text)
    if qtype == "PERSON":
        return person_like(text) if person_role(question) else name_like(text)
    if qtype == "LOC":
        return name_like(text)
    return True


def missing(qtype: str, question: str = "") -> str:
    """The short clause saying no answer of the type exists ("no person named", "no date given")."""
    if qtype == "PERSON" and not person_role(question):
        return "no person or organisation named"
    return _MISSING.get(qtype, "no answer of the expected type")


def wh_bucket(question: str) -> str:
    """The question's kind by its wording, for reports: who / when / where / how many / what / other."""
    q = re.sub(r"\s+", " ", question or "").strip().lower()
    if re.match(r"(?:who|whom|whose)\b", q) or re.search(r"\bby whom\b", q):
        return "who"
    if q.startswith("when") or re.search(r"\b(?:what|which|in what|in which) (?:year|date|decade|century)\b", q):
        return "when"
    if q.startswith("where") or re.search(r"\b(?:in|at) (?:what|which) (?:city|town|country|state|place)\b", q):
        return "where"
    if re.search(r"\bhow (?:many|much)\b|\bpopulation\b|\bnumber of\b", q):
        return "how many"
    if re.match(r"(?:what|which)\b", q) or re.search(r"\b(?:what|which)\b", q):
        return "what"
    return "other"
