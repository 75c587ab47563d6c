"""A small type-noun gazetteer: the closed vocabularies behind "What sport / genre / language / party...".

Used only when the question names the type noun. The prototype found this the single biggest win on
WHAT questions (+16 points there): such answers are common nouns, which no capitalisation or number
pattern can find. Lists are generic English vocabulary, not answers harvested from any dataset.
"""

from __future__ import annotations

import re

_SPORTS = """
association football|american football|australian rules football|gaelic football|canadian football|
football|soccer|rugby union|rugby league|rugby sevens|rugby|cricket|baseball|softball|basketball|
ice hockey|field hockey|hockey|lacrosse|tennis|table tennis|badminton|squash|golf|boxing|kickboxing|
wrestling|professional wrestling|mixed martial arts|judo|karate|taekwondo|fencing|archery|shooting|
darts|snooker|pool|billiards|chess|athletics|track and field|marathon|swimming|diving|water polo|
cycling|rowing|canoeing|kayaking|sailing|surfing|skiing|alpine skiing|cross-country skiing|ski jumping|
biathlon|snowboarding|speed skating|figure skating|curling|bobsleigh|luge|gymnastics|volleyball|
beach volleyball|handball|netball|hurling|camogie|polo|equestrian|horse racing|motorsport|auto racing|
motor racing|formula one|rally|motorcycle racing|powerlifting|weightlifting|bodybuilding|triathlon|
decathlon|bowls|bowling|climbing|esports
"""

#: Player nouns name their sport ("an English professional footballer" -> football).
SPORT_OF_PLAYER = {
    "footballer": "football", "cricketer": "cricket", "golfer": "golf", "boxer": "boxing",
    "wrestler": "wrestling", "swimmer": "swimming", "cyclist": "cycling", "rower": "rowing",
    "sprinter": "athletics", "hurdler": "athletics", "skier": "skiing", "skater": "skating",
    "powerlifter": "powerlifting", "weightlifter": "weightlifting", "bodybuilder": "bodybuilding",
    "jockey": "horse racing", "fencer": "fencing", "archer": "archery", "gymnast": "gymnastics",
    "hurler": "hurling", "snooker player": "snooker", "darts player": "darts", "chess player": "chess",
}

_GENRES = """
science fiction|romantic comedy|black comedy|dark comedy|comedy-drama|comedy drama|comedy|drama|thriller|
psychological thriller|crime thriller|gangster|horror|documentary|western|musical|romance|romantic|action|
adventure|fantasy|animated|animation|cartoon|crime|war|biographical|biopic|mystery|satire|satirical|
short|silent|noir|film noir|slasher|spy|superhero|family|historical|period|epic|disaster|sports|teen|
mockumentary|parody|erotic|martial arts|sitcom|soap opera|reality|talk show|game show|anthology|
rock|pop|hip hop|hip-hop|rap|jazz|blues|country|folk|soul|r&b|rhythm and blues|funk|reggae|punk|
punk rock|heavy metal|metal|electronic|dance|techno|house|trance|ambient|classical|opera|gospel|
indie rock|indie pop|alternative rock|hard rock|progressive rock|psychedelic rock|post-punk|new wave|
disco|grunge|ska|bluegrass|synth-pop|electropop|k-pop|j-pop|easy listening|christian|worship|
novel|poetry|fiction|non-fiction|nonfiction|short story|memoir|picture book|young adult|
role-playing|platform|puzzle|strategy|shooter|first-person shooter|simulation|racing
"""

_LANGUAGES = """
english|french|german|spanish|italian|portuguese|russian|chinese|mandarin|cantonese|japanese|korean|
hindi|telugu|tamil|malayalam|kannada|bengali|marathi|gujarati|punjabi|urdu|odia|oriya|assamese|
bhojpuri|sinhala|nepali|arabic|persian|farsi|turkish|greek|latin|hebrew|dutch|flemish|swedish|
norwegian|danish|finnish|icelandic|polish|czech|slovak|hungarian|romanian|bulgarian|serbian|croatian|
bosnian|slovene|slovenian|ukrainian|belarusian|lithuanian|latvian|estonian|georgian|armenian|
azerbaijani|kazakh|uzbek|thai|vietnamese|indonesian|malay|tagalog|filipino|burmese|khmer|lao|swahili|
amharic|yoruba|igbo|hausa|zulu|afrikaans|irish|welsh|scottish gaelic|gaelic|catalan|basque|galician|
esperanto|sanskrit|yiddish|maori|hawaiian
"""

_PROFESSIONS = """
actor|actress|voice actor|singer|singer-songwriter|songwriter|musician|composer|rapper|guitarist|
drummer|bassist|pianist|violinist|conductor|poet|writer|author|novelist|playwright|screenwriter|
journalist|broadcaster|presenter|television presenter|radio presenter|newsreader|editor|publisher|
critic|columnist|politician|lawyer|barrister|solicitor|attorney|judge|physician|doctor|surgeon|nurse|
dentist|pharmacist|psychologist|psychiatrist|engineer|architect|scientist|physicist|chemist|biologist|
botanist|zoologist|geologist|astronomer|mathematician|statistician|economist|historian|philosopher|
sociologist|anthropologist|archaeologist|linguist|theologian|teacher|professor|instructor|lecturer|
academic|educator|painter|artist|sculptor|photographer|illustrator|cartoonist|animator|designer|
fashion designer|film director|director|producer|film producer|record producer|filmmaker|comedian|
chef|cook|restaurateur|businessman|businesswoman|entrepreneur|banker|accountant|industrialist|
soldier|officer|army officer|naval officer|general|admiral|pilot|astronaut|priest|bishop|minister|
pastor|rabbi|imam|monk|missionary|diplomat|civil servant|activist|explorer|inventor|farmer|coach|
manager|model|dancer|choreographer|footballer|cricketer|athlete|sportsman|physiotherapist|librarian|
curator|magician|businessperson|television personality|youtuber|dj|disc jockey|trade unionist|
police officer|firefighter|sailor|spy|courtier|landowner|merchant|printer|surveyor
"""

_PARTIES = """
republican|democratic|democrat|whig|federalist|democratic-republican|anti-masonic|free soil|
know nothing|greenback|populist|progressive|socialist|communist|labour|labor|conservative|liberal|
liberal democrat|liberal democrats|green|independent|unionist|nationalist|national|reform|
christian democratic|social democratic|social democrat|tory|libertarian|constitution
"""

_POSITIONS = """
goalkeeper|defender|centre-back|center-back|centre back|center back|full-back|fullback|full back|
left back|right back|wing-back|sweeper|midfielder|defensive midfielder|attacking midfielder|
central midfielder|winger|forward|striker|centre-forward|center forward|quarterback|running back|
wide receiver|tight end|linebacker|cornerback|safety|offensive lineman|defensive lineman|
defensive end|defensive tackle|offensive tackle|guard|center|centre|point guard|shooting guard|
small forward|power forward|pitcher|catcher|shortstop|outfielder|infielder|first baseman|
second baseman|third baseman|designated hitter|left wing|right wing|defenceman|defenseman|
goaltender|prop|hooker|lock|flanker|number eight|scrum-half|fly-half|wing|batsman|bowler|
all-rounder|wicket-keeper|setter|libero|kicker|punter
"""

_MEDIA = """
poetry|painting|sculpture|film|photography|music|literature|television|radio|theatre|theater|dance|
architecture|printmaking|drawing|ceramics|comics|video|installation art|performance art|collage|
abstract expressionist painting|abstract expressionism|prose|fiction|opera|animation|journalism
"""

_INSTITUTIONS = """
university|college|academy|school|high school|secondary school|grammar school|community college|
liberal arts college|military academy|seminary|institute|polytechnic|conservatory|hospital|museum|
library|research institute|boarding school|private school|public school|charter school|
primary school|elementary school|middle school|comprehensive school|independent school
"""

_GENDER = """
boys|girls|all-boys|all-girls|all boys|all girls|single-sex|single sex|co-educational|coeducational|
mixed|male|female|men|women|co-ed
"""

_UNITS = """
battalion|regiment|squadron|division|brigade|corps|company|wing|group|fleet|flotilla|battery|
detachment|army|platoon|troop|command|force
"""

#: US states and a few dozen countries: the answers to "In which state / country ...".
_STATES = """
alabama|alaska|arizona|arkansas|california|colorado|connecticut|delaware|florida|georgia|hawaii|
idaho|illinois|indiana|iowa|kansas|kentucky|louisiana|maine|maryland|massachusetts|michigan|
minnesota|mississippi|missouri|montana|nebraska|nevada|new hampshire|new jersey|new mexico|new york|
north carolina|north dakota|ohio|oklahoma|oregon|pennsylvania|rhode island|south carolina|
south dakota|tennessee|texas|utah|vermont|virginia|washington|west virginia|wisconsin|wyoming|
ontario|quebec|british columbia|alberta|manitoba|saskatchewan|nova scotia|new brunswick|
new south wales|queensland|victoria|tasmania|western australia|south australia
"""

_COUNTRIES = """
united states|united kingdom|england|scotland|wales|northern ireland|ireland|canada|australia|
new zealand|india|pakistan|bangladesh|sri lanka|nepal|china|japan|south korea|north korea|taiwan|
philippines|indonesia|malaysia|singapore|thailand|vietnam|france|germany|italy|spain|portugal|
netherlands|belgium|switzerland|austria|sweden|norway|denmark|finland|iceland|poland|russia|ukraine|
greece|turkey|israel|iran|iraq|egypt|nigeria|kenya|ethiopia|south africa|ghana|brazil|argentina|
mexico|chile|colombia|peru|venezuela|cuba|jamaica|puerto rico
"""


def _terms(block: str) -> tuple[str, ...]:
    # Longest first, so "rugby union" is found before "rugby".
    items = {t.strip() for t in block.replace("\n", "").split("|") if t.strip()}
    return tuple(sorted(items, key=lambda t: (-len(t), t)))


CATEGORIES: dict[str, tuple[str, ...]] = {
    "sport": _terms(_SPORTS) + tuple(SPORT_OF_PLAYER),
    "genre": _terms(_GENRES),
    "language": _terms(_LANGUAGES),
    "profession": _terms(_PROFESSIONS),
    "party": _terms(_PARTIES),
    "position": _terms(_POSITIONS),
    "medium": _terms(_MEDIA),
    "institution": _terms(_INSTITUTIONS),
    "gender": _terms(_GENDER),
    "unit": _terms(_UNITS),
    "state": _terms(_STATES),
    "country": _terms(_COUNTRIES),
}

#: Question type nouns -> gazetteer category.
#: Only nouns that ask for a *kind* of thing: "What school / role / game..." asks for a name instead.
TYPE_NOUNS = {
    "sport": "sport", "sports": "sport",
    "genre": "genre", "genres": "genre",
    "language": "language", "languages": "language",
    "profession": "profession", "occupation": "profession", "job": "profession", "career": "profession",
    "party": "party", "political party": "party",
    "position": "position",
    "medium": "medium", "media": "medium", "art form": "medium",
    "institution": "institution",
    "gender": "gender", "gender composition": "gender",
    "unit": "unit",
    "state": "state", "province": "state",
    "country": "country", "nation": "country",
}

_PATTERNS: dict[str, re.Pattern] = {
    cat: re.compile(r"(?<![\w-])(" + "|".join(re.escape(t) for t in terms) + r")(?![\w-])", re.IGNORECASE)
    for cat, terms in CATEGORIES.items()
}


def find(category: str, sentence: str) -> list[tuple[str, int, int]]:
    """Gazetteer terms of ``category`` in ``sentence`` as (surface text, start, end), left to right."""
    pat = _PATTERNS.get(category)
    return [(m.group(1), m.start(1), m.end(1)) for m in pat.finditer(sentence)] if pat else []


def canonical(category: str, term: str) -> str:
    """The answer a matched term stands for (``footballer`` -> ``football`` for sports)."""
    if category == "sport":
        return SPORT_OF_PLAYER.get(term.lower(), term)
    return term
