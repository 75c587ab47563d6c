"""Typed candidate answers in one sentence: dates, numbers, names, places, gazetteer terms, copula phrases.

Each extractor returns ``Cand`` objects with a *prior* (how good a span of this shape is for the question
type, before context is considered). Context (cue words, closeness to the subject) is scored in
``score.py``. Junk filters live here: a span that is only question words, a nationality, a month or
page furniture ("Retrieved", "Categories") is never an answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import gazetteer
from .qtype import QInfo
from .text import STOPWORDS, stem, words

_MONTHS = ("january february march april may june july august september october november december "
           "jan feb mar apr jun jul aug sep sept oct nov dec").split()
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December|" \
         r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
_YEAR = r"(?:1[0-9]{3}|20[0-4][0-9])"
_DAY = r"(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_DATE_PATTERNS = [  # most specific first; the prior says how complete the date is
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\s*,?\s+{_YEAR}\b"), "date", 1.0),
    (re.compile(rf"\b{_MONTH}\s+{_DAY}\s*,?\s+{_YEAR}\b"), "date", 1.0),
    (re.compile(rf"\b(?:early|mid|late|spring|summer|autumn|fall|winter)(?:\s+of)?\s+{_YEAR}\b", re.I),
     "date", 0.8),
    (re.compile(rf"\b{_MONTH}\s*,?\s+{_YEAR}\b"), "date", 0.85),
    (re.compile(rf"\b{_YEAR}s\b"), "year", 0.45),                                  # a decade: "1990s"
    (re.compile(rf"(?<![\d,.$])\b{_YEAR}\b(?![,.]?\d)(?!\s*%)"), "year", 0.7),   # not inside 1,917
]
_NUMBER = re.compile(r"(?<![\w.,])(\$\s?)?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
                     r"(\s?(?:million|billion|thousand))?(?![\w,]*\d)")
_NUM_GOOD_UNITS = {"people", "inhabitants", "residents", "persons", "citizens", "individuals"}
_NUM_BAD_AFTER = {"households", "household", "families", "family", "housing", "units", "km", "km2", "sq",
                  "square", "mi", "miles", "mile", "acres", "hectares", "per", "percent", "%", "years", "year",
                  "males", "females", "men", "women", "m", "ft", "feet", "metres", "meters", "kilometres",
                  "votes", "am", "pm", "minutes", "seconds", "points", "goals", "cm", "kg", "lb"}

#: Capitalised words that are never (part of) an answer: page furniture and section titles of web and
#: wiki pages, calendar words, pronouns and function words that open sentences.
JUNK_CAPS = frozenset("""
retrieved archived categories category wikipedia isbn issn doi edit references external links see also
jump main navigation contents menu search log home page allmusic imdb discogs source sources note notes
citation cite list copyright privacy policy cookie cookies loading print download share twitter facebook
instagram youtube photo image file add toggle disclaimers contact developers statistics talk donate
create account contribute help learn upload special appearance hide move sidebar read view tools
languages topic quick facts official website more information close review reviews lead
directed produced written starring born died release released composition genre length label producer
chronology track tracks single singles personnel credits summarize perspective albums songs works
notable residents demographics geography history overview career reception bibliography filmography
discography footnotes further reading
monday tuesday wednesday thursday friday saturday sunday today
he she it they his her its their we our you your i this that these those there here mr mrs ms dr sir
a an the in on at for from by with after before during when while although however but and or as if
then thus following according since until about over under between among into
""".split())
#: Last words that make a capitalised run an organisation or a place rather than a person.
ORG_WORDS = frozenset("""records recordings music entertainment studios studio pictures films productions
media network networks magazine newspaper times press company corporation corp inc ltd llc group
university college school academy institute museum gallery library church cathedral society association
council board committee commission department ministry cabinet government party league club team
orchestra system systems station street avenue road county city state river award awards prize festival
chart charts billboard television tv radio channel foundation trust bank hospital""".split())
#: Role words that precede a name in running text or infoboxes ("Singer Irma Thomas", "Father Malik Shah").
_ROLE_WORDS = frozenset("""father mother son daughter wife husband brother sister spouse predecessor successor
parent parents issue names name king queen emperor empress sultan prince princess president chairman
captain coach manager rabbi saint st lord lady sir dame count duke mr mrs ms dr""".split())
_STREET = frozenset("street st avenue ave road rd boulevard blvd drive lane way square plaza highway".split())
NATIONALITIES = frozenset("""american british english scottish welsh irish french german italian spanish
portuguese dutch belgian swiss austrian swedish norwegian danish finnish icelandic polish czech slovak
hungarian romanian bulgarian greek turkish russian ukrainian serbian croatian bosnian slovenian
albanian macedonian canadian mexican brazilian argentine argentinian chilean colombian peruvian
venezuelan cuban jamaican australian zealander indian pakistani bangladeshi sri lankan nepalese chinese
japanese korean taiwanese vietnamese thai filipino indonesian malaysian singaporean persian iranian
iraqi israeli egyptian nigerian kenyan ethiopian ghanaian african european asian latin ottoman roman
byzantine soviet qing ming mughal prussian bavarian catholic protestant christian muslim jewish
""".split())
_CONNECT = frozenset("of de du da van von der den la le del della di bin ibn al y e and & the".split())
_DESC_STOP = frozenset("""who which that whose whom where when based located founded formed created
established directed written produced released published from in on at by with for since during after
before between and or but while as known best also featuring starring""".split())


@dataclass(frozen=True)
class Cand:
    text: str
    start: int   # character offsets in the sentence
    end: int
    kind: str    # date year num name place gaz head desc acronym
    prior: float


def _is_question_words(text: str, q: QInfo) -> bool:
    """True when the span adds nothing to the question (``Broken Bow`` for 'population of Broken Bow')."""
    ws = [w for w in words(text) if w not in STOPWORDS]
    qs = set(q.terms) | q.focus_stems
    return bool(ws) and all(stem(w) in qs for w in ws)


# ------------------------------------------------------------------------------------------------- dates

#: Dates of a web page rather than of the fact: "Retrieved 7 August 2020", "© 2019", "Sunday, 26 June".
_CITATION = re.compile(r"(?:\b(?:retrieved|accessed|archived|updated|edited|copyright|published online|"
                       r"posted|last modified)(?:\s+(?:from|on|the|original|at|\d+|[a-z]+)){0,4}\s*[:,]?\s*$"
                       r"|\u00a9\s*$|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\s*,?\s*$)",
                       re.I)


def dates(sentence: str) -> list[Cand]:
    """Full dates, month-years, seasons, decades and bare years; each span once, in its longest form."""
    out: list[Cand] = []
    taken: list[tuple[int, int]] = []
    for pat, kind, prior in _DATE_PATTERNS:
        for m in pat.finditer(sentence):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue  # inside a more specific date already found
            taken.append((m.start(), m.end()))
            if _CITATION.search(sentence[max(0, m.start() - 50):m.start()]):
                continue  # "Retrieved 7 August 2020": when a web page was read, not the fact
            text = re.sub(r"\s+,", ",", m.group(0))
            out.append(Cand(text, m.start(), m.end(), kind, prior))
    return sorted(out, key=lambda c: c.start)


# ----------------------------------------------------------------------------------------------- numbers

def numbers(sentence: str, q: QInfo) -> list[Cand]:
    money = bool(set(words(q.text)) & {"income", "cost", "costs", "price", "budget", "salary", "revenue",
                                        "worth", "gross", "wage", "earnings", "rent", "value"})
    date_spans = [(c.start, c.end) for c in dates(sentence) if c.kind == "date"]
    out = []
    for m in _NUMBER.finditer(sentence):
        if any(s <= m.start() < e for s, e in date_spans):
            continue
        dollar, value, scale = m.group(1), m.group(2), m.group(3) or ""
        tail = sentence[m.end():m.end() + 30]
        after = words(tail)[:2]
        before = words(sentence[max(0, m.start() - 40):m.start()])[-3:]
        if re.match(r"\s*(?:[A-Za-z]+\s*)?(?:%|percent\b|per\b|/)", tail):
            continue  # a percentage, a density or a rate ("people/km2"), never a count
        if len(value) > 1 and value[0] == "0":
            continue  # a code or an id ("0454046"), not a quantity
        if re.search(r"\[\s*$", sentence[max(0, m.start() - 3):m.start()]) and re.match(r"\s*\]", tail):
            continue  # a citation marker "[ 2 ]"
        # the counted noun follows within two words: "3,559 people", "291 contributing buildings"
        unit_ok = any(w in _NUM_GOOD_UNITS or stem(w) == q.unit for w in after[:2])
        if re.search(rf"(?<![\d,.]){re.escape(value)}(?![\d,.])", q.text):
            continue  # a number the question itself gives ("the 1991 census")
        if re.fullmatch(_YEAR, value) and not scale and not unit_ok:
            continue  # a bare year is a date, not a count
        prior = 0.6
        if "," in value or scale:
            prior += 0.2   # formatted counts are what populations and totals look like
        if unit_ok or ("population" in before and before[-1] in {"population", "of", "was", "is", "at"}):
            prior += 0.5   # "3,559 people", "291 buildings", "population was 459"
        if after and after[0] in _NUM_BAD_AFTER:
            if q.predicate == "population":
                continue  # "3 miles", "600 households": never the population
            prior -= 0.6
        if q.predicate == "population" and float(value.replace(",", "")) < 10 and not scale:
            continue  # no settlement has a population under ten; such numbers are ranks, counts of things
        if "." in value and not scale:
            prior -= 0.4
        if dollar and not money:
            continue  # an amount of money never answers a count
        if money and not dollar:
            prior -= 0.4
        text = (("$" if dollar else "") + value + scale).strip()
        out.append(Cand(text, m.start(), m.end(), "num", prior))
    return out


# ---------------------------------------------------------------------------------------- capitalised runs

_TOKEN = re.compile(r"[\w\u00C0-\u024F](?:[\w\u00C0-\u024F'\u2019.&-]*[\w\u00C0-\u024F.])?|[^\w\s]")


def _is_cap(tok: str) -> bool:
    return tok[0].isupper() or (tok[0].isdigit() and any(c.isalpha() for c in tok))


def cap_runs(sentence: str) -> list[tuple[str, int, int]]:
    """Maximal runs of capitalised tokens joined by of/de/van...; junk words split runs."""
    toks = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(sentence)]
    runs, cur = [], []

    def flush():
        while cur and (cur[-1][0].lower() in _CONNECT):
            cur.pop()
        while cur and cur[0][0].lower() in {"the", "a", "an"} | _CONNECT:
            cur.pop(0)
        if cur:
            text = sentence[cur[0][1]:cur[-1][2]]
            runs.append((text.rstrip("."), cur[0][1], cur[0][1] + len(text.rstrip("."))))
        cur.clear()

    for i, (t, s, e) in enumerate(toks):
        low = t.lower().rstrip(".")
        if _is_cap(t) and low not in JUNK_CAPS and low not in _MONTHS:
            if i == 0 or toks[i - 1][0] in ".!?":  # sentence-initial: only names, not "After", "In"
                if low in STOPWORDS:
                    flush()
                    continue
            cur.append((t, s, e))
            if t.endswith(("'s", "\u2019s")):
                cur[-1] = (t[:-2], s, e - 2)
                flush()
        elif cur and low in _CONNECT and t.islower() and i + 1 < len(toks) and _is_cap(toks[i + 1][0]):
            cur.append((t, s, e))
        elif t in ("\u2019", "'") and cur:
            flush()
        else:
            flush()
    flush()
    return runs


def _name_ok(text: str, q: QInfo) -> bool:
    ws = text.split()
    if not any(w[0].isupper() for w in ws):
        return False  # only numbers/ordinals ("1970s", "24th"): not a name
    if all(w.lower().strip(".,") in NATIONALITIES | JUNK_CAPS | STOPWORDS for w in ws):
        return False
    return not _is_question_words(text, q)


def names(sentence: str, q: QInfo) -> list[Cand]:
    out = []
    for text, s, e in cap_runs(sentence):
        # a leading nationality/role word is a modifier, not part of the name ("American singer X")
        toks = text.split()
        while len(toks) > 1 and (toks[0].lower() in NATIONALITIES | _ROLE_WORDS
                                 or toks[0].lower() in gazetteer.CATEGORIES["profession"]):
            s += len(toks[0]) + 1
            toks = toks[1:]
        text = " ".join(toks)
        if not text or not _name_ok(text, q):
            continue
        n = len(toks)
        prior = 1.0 if 2 <= n <= 4 else (0.55 if n == 1 else 0.2 if n == 5 else -0.3)  # long: a list
        if any(ch.isdigit() for ch in text):
            prior -= 0.3
        if toks[-1].lower() in ORG_WORDS or text.lower() in gazetteer.CATEGORIES["country"] \
                or text.lower() in gazetteer.CATEGORIES["state"]:
            prior -= 0.6   # "Columbia Records", "Canada": not a person
        if n == 1 and text.isupper() and len(text) > 1:
            prior -= 0.2   # bare acronyms are rarely the person asked for
        if n == 1 and not sentence[:s].strip(" \"'([`"):
            prior -= 0.3   # a lone capitalised word opening a sentence is usually an ordinary word
        out.append(Cand(text, s, s + len(text), "name", prior))
    return out


def places(sentence: str, q: QInfo) -> list[Cand]:
    """Capitalised runs chained by commas ("Aguadilla, Puerto Rico"): the usual shape of a location."""
    runs = [r for r in cap_runs(sentence) if _name_ok(r[0], q) or "," in sentence[r[1]:r[2]]]
    out, i = [], 0
    while i < len(runs):
        text, s, e = runs[i]
        j = i
        while j + 1 < len(runs) and re.fullmatch(r"\s*,\s*", sentence[runs[j][2]:runs[j + 1][1]]):
            j += 1
        chain_end = runs[j][2]
        full = re.sub(r"\s+,", ",", sentence[s:chain_end])
        if not _is_question_words(full, q):
            prior = 1.0 if j > i else 0.75
            if len(full.split()) > 5:
                prior -= 0.6   # a run of many capitalised words is a menu or a list, not a place
            last = text.split()[-1].lower().rstrip(".")
            if last in _STREET or (last in ORG_WORDS and j == i):
                prior -= 0.5   # a street or an institution, not a town
            if j == i and text.isupper():
                prior -= 0.4   # an acronym (MBTA), rarely the place asked for
            out.append(Cand(full, s, chain_end, "place", prior))
        i = j + 1
    return out


# ------------------------------------------------------------------------------------------- gazetteer

_HEAD_AFTER = re.compile(r"^[\s-]*(film|movie|album|song|single|novel|series|game|music|band|"
                         r"comedy|drama|short|player|musician)\b", re.I)


def gazetteer_terms(sentence: str, q: QInfo) -> list[Cand]:
    """Gazetteer terms of the question's category; adjacent terms merge ("gangster thriller film")."""
    hits = gazetteer.find(q.category, sentence) if q.category else []
    out, i = [], 0
    while i < len(hits):
        text, s, e = hits[i]
        j = i
        while q.category == "genre" and j + 1 < len(hits) \
                and re.fullmatch(r"[\s-]+", sentence[hits[j][2]:hits[j + 1][1]] or "x"):
            j += 1  # "gangster thriller film"; other categories list alternatives ("Golf Tennis")
        e = hits[j][2]
        if q.category == "genre":
            m = _HEAD_AFTER.match(sentence[e:])
            if m:
                e += m.end()
        surface = sentence[s:e]
        canon = gazetteer.canonical(q.category, surface) if j == i else surface
        if q.category == "sport":
            m = re.match(r"\s+player\b", sentence[e:])
            if m:  # "snooker player": the sport is the term itself
                canon = gazetteer.canonical(q.category, surface)
        if not _is_question_words(canon, q):
            out.append(Cand(canon, s, e, "gaz", 1.0 + 0.1 * (j - i)))
        i = j + 1
    return out


def head_names(sentence: str, q: QInfo) -> list[Cand]:
    """Proper names built on the question's head noun: "Snake River" for 'what river', "Infantry
    Regiment" for 'which type of unit'. The run is cut after the head ("Second Congo War | Pretoria")
    and, for unit types, leading ordinals are dropped ("372nd Infantry Regiment" -> "Infantry Regiment")."""
    heads = {q.head} if q.head else set(gazetteer.CATEGORIES["unit"]) if q.category == "unit" else set()
    out = []
    for text, s, e in cap_runs(sentence):
        toks = text.split()
        idx = [i for i, t in enumerate(toks) if t.lower() in heads]
        if not idx:
            continue
        h = idx[0]
        if h == 0:   # head first: "Division III", keep a short tail
            keep = toks[:min(len(toks), 2)]
        else:
            keep = toks[:h + 1]
            if q.category == "unit":
                while keep and re.match(r"\d", keep[0]):
                    keep = keep[1:]
            keep = keep[-4:]
        cand = " ".join(keep)
        if len(keep) < 2 or _is_question_words(cand, q):
            continue
        a = s + text.find(cand)
        out.append(Cand(cand, a, a + len(cand), "head", 1.2))
    return out


# ------------------------------------------------------------------------------------ descriptions

_COPULA = re.compile(r"\b(?:is|was|are|were)\s+(?:(?:also|now|currently|originally)\s+)?"
                     r"(?:an?|the|one of the)\s+", re.I)


def descriptions(sentence: str, q: QInfo) -> list[Cand]:
    """The noun phrase after 'is a/an/the' ("an English rock band"), cut at the first relative word."""
    out = []
    for m in _COPULA.finditer(sentence):
        toks = list(re.finditer(r"[\w\u00C0-\u024F'-]+|[^\w\s]", sentence[m.end():]))
        kept = []
        for t in toks[:8]:
            w = t.group(0)
            if not re.match(r"[\w\u00C0-\u024F]", w) or w.lower() in _DESC_STOP:
                break
            kept.append(t)
        if not kept:
            continue
        s, e = m.end() + kept[0].start(), m.end() + kept[-1].end()
        text = sentence[s:e]
        if not _is_question_words(text, q):
            out.append(Cand(text, s, e, "desc", 0.8))
    return out


def acronym_expansions(sentence: str, q: QInfo) -> list[Cand]:
    """Capitalised runs whose initials spell the question's acronym (IGY -> International Geophysical Year)."""
    if not q.acronym:
        return []
    want = q.acronym.upper()
    out = []
    for text, s, e in cap_runs(sentence):
        toks = [t for t in re.split(r"[\s-]+", text) if t.lower() not in {"of", "the", "and", "for", "&"}]
        for i in range(len(toks)):
            for j in range(i + 1, len(toks) + 1):
                if "".join(t[0].upper() for t in toks[i:j]) == want:
                    first, last = toks[i], toks[j - 1]
                    a = text.find(first)
                    b = text.find(last, a) + len(last)
                    out.append(Cand(text[a:b], s + a, s + b, "acronym", 1.6))
    return out


# ------------------------------------------------------------------------------------------- dispatch

def extract(sentence: str, q: QInfo) -> list[Cand]:
    """All candidates of the question's answer type in one sentence."""
    t = q.qtype
    if t == "DATE":
        if q.year_only:  # "what year": answer the year, even when the passage gives a full date
            return [Cand(m.group(0), c.start, c.end, c.kind, c.prior)   # context is still the whole date
                    for c in dates(sentence) if (m := re.search(_YEAR, c.text))]
        return dates(sentence)
    if t == "NUM":
        return numbers(sentence, q)
    if t == "PERSON":
        return names(sentence, q)
    if t == "LOC":
        cands = places(sentence, q)
        if q.category:  # "which state": a gazetteer state, or a place chain that contains one
            gaz = gazetteer_terms(sentence, q)
            cands = gaz + [Cand(c.text, c.start, c.end, c.kind,
                                c.prior - (0.3 if any(c.start <= g.start < c.end for g in gaz) else 0.8))
                           for c in cands]
        return cands
    if t == "DESC":
        return acronym_expansions(sentence, q) + descriptions(sentence, q)
    # WHAT
    cands = head_names(sentence, q) + gazetteer_terms(sentence, q)
    if not q.category and not q.head:
        cands += [Cand(c.text, c.start, c.end, c.kind, c.prior - 0.3) for c in names(sentence, q)]
        cands += descriptions(sentence, q)
    return cands
