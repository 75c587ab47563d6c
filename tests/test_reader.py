"""backend.llm.reader: typed extraction per question type, abstention, determinism, batch == single,
and the reader benchmark's metrics on a tiny hand-built dataset."""

from __future__ import annotations

import json

import pytest

from backend.llm import reader
from backend.llm.reader import analyse, read, read_batch, read_many
from benchmarks.reader_accuracy import main as benchmark_main
from benchmarks.reader_accuracy import matches, metrics

# (question, passage, expected answer by the benchmark's lenient match)
CASES = [
    ("Who directed the film \"Jaws\"?",
     "Jaws is a 1975 American thriller film directed by Steven Spielberg and based on the 1974 novel "
     "by Peter Benchley. It stars Roy Scheider as a police chief.", "Steven Spielberg"),
    ("Who is the artist of the album \"Quiet Fields\"?",
     "Quiet Fields is the third studio album by American singer-songwriter Laura Benton, released in "
     "2004 by Harbor Records.", "Laura Benton"),
    ("When was Horace Rumbold born?",
     "Sir Horace Rumbold (2 July 1829 \u2013 30 November 1913) was a British diplomat. He served as "
     "ambassador to Austria-Hungary.", "2 July 1829"),
    ("When did Horace Rumbold die?",
     "Sir Horace Rumbold (2 July 1829 \u2013 30 November 1913) was a British diplomat. He served as "
     "ambassador to Austria-Hungary.", "30 November 1913"),
    ("When was Millbrook Academy established?",
     "Millbrook Academy is a private school in Ohio. It was founded in 1887 by a group of local "
     "merchants. The school moved to its present campus in 1990.", "1887"),
    ("How many buildings are included in the Oak Hill Historic District?",
     "The Oak Hill Historic District is a national historic district. It encompasses 112 contributing "
     "buildings, 3 contributing sites, and 1 contributing structure.", "112"),
    ("What is the population of Millbrook?",
     "Millbrook is a village in Ohio. As of the census of 2010, there were 1,452 people, 600 households, "
     "and 410 families residing in the village.", "1,452"),
    ("What is the population of Eastfield?",
     "In 2010, 12.5% of residents were under 18. As of the 2010 census, the population of Eastfield was "
     "4,211. The town covers 3 square miles.", "4,211"),
    ("Where is Rivertown High School located?",
     "Rivertown High School is a public high school located in Springfield, Illinois. It serves "
     "students in grades 9 through 12.", "Springfield, Illinois"),
    ("What sport is John Carver associated with?",
     "John Carver (born 1965) is an English former professional footballer who played as a midfielder "
     "for Leeds United.", "football"),
    ("What is the genre of the film \"Dark Harbor\"?",
     "Dark Harbor is a 1998 American psychological thriller film written and directed by Adam Coleman.",
     "psychological thriller"),
    ("What political party was Samuel Reed affiliated with?",
     "Samuel Reed (1801\u20131870) was an American politician. He was a member of the Whig Party and "
     "served two terms in Congress.", "Whig"),
    ("What river does Bear Creek flow into?",
     "Bear Creek is a stream in Colorado. It rises near Mount Evans and flows east into the South Platte "
     "River at Denver.", "South Platte River"),
    ("What does the abbreviation \"NATO\" stand for?",
     "The North Atlantic Treaty Organization (NATO) is an intergovernmental military alliance of "
     "European and North American countries.", "North Atlantic Treaty Organization"),
]

OFF_TOPIC = ("When was Horace Rumbold born?",
             "To cook pasta, bring a large pot of salted water to the boil. Add the pasta and stir it "
             "often so that it does not stick.")


@pytest.fixture(autouse=True)
def _fresh_caches():
    reader.clear_caches()
    yield
    reader.clear_caches()


def test_question_types():
    assert analyse("When was Horace Rumbold born?").qtype == "DATE"
    assert analyse("64th Division was formed in which year?").qtype == "DATE"
    assert analyse("What is the population of Broken Bow?").qtype == "NUM"
    assert analyse("How many buildings are in the district?").qtype == "NUM"
    assert analyse("Who is the director of the film \"Turkey Shoot\"?").qtype == "PERSON"
    assert analyse("Where is the UPRA located?").qtype == "LOC"
    assert analyse("In which city is the Washington Street station located?").qtype == "LOC"
    q = analyse("What sport is William Carrier associated with?")
    assert (q.qtype, q.category, q.focus) == ("WHAT", "sport", ("William Carrier",))
    assert analyse("What war did the Pretoria Peace Agreement end?").head == "war"
    assert analyse("What is \"The 1975\"?").qtype == "DESC"
    assert analyse("What does the abbreviation \"IGY\" stand for?").acronym == "IGY"


@pytest.mark.parametrize("question,passage,expected", CASES, ids=[c[0][:40] for c in CASES])
def test_extracts_expected_answer(question, passage, expected):
    r = read(question, passage)
    assert r.answer is not None, r.signals
    assert matches(r.answer, expected), (r.answer, r.candidates, r.signals)
    assert r.sentence and expected.split()[0] in r.sentence
    assert 0.0 <= r.relevance <= 1.0


def test_what_year_answers_a_bare_year():
    r = read("What year was Horace Rumbold born?", CASES[2][1])
    assert r.answer == "1829"


def test_abstains_on_off_topic_passage():
    r = read(*OFF_TOPIC)
    assert r.answer is None
    assert r.signals["reason"]


def test_abstains_on_empty_and_junk_passages():
    assert read("Who directed Jaws?", "   ").answer is None
    assert read("What sport is John Carver associated with?",
                "endobj 398 0 obj < < /R7 408 0 R > > endobj stream \ufffd\ufffd endstream").answer is None


def test_same_output_twice():
    first = [read(q, p) for q, p, _ in CASES]
    reader.clear_caches()
    second = [read(q, p) for q, p, _ in CASES]
    assert first == second


def test_batch_equals_single_whatever_the_batch():
    items = [(q, p) for q, p, _ in CASES] + [OFF_TOPIC]
    single = []
    for it in items:
        reader.clear_caches()
        single.append(read(*it))
    reader.clear_caches()
    assert read_batch(items) == single
    reader.clear_caches()
    assert read_batch(items[::-1]) == single[::-1]
    reader.clear_caches()
    assert read_batch(items[3:7]) == single[3:7]
    reader.clear_caches()
    q, p, _ = CASES[0]
    assert read_many(q, [p, OFF_TOPIC[1]]) == [single[0], read(q, OFF_TOPIC[1])]


def test_readings_are_independent_copies():
    q, p, _ = CASES[0]
    r = read(q, p)
    r.candidates.clear()
    r.signals.clear()
    again = read(q, p)  # served from the cache, untouched by the caller's edits
    assert again.candidates and again.signals


def test_matches_rule():
    assert matches("1829", "2 July 1829")              # containment, either way
    assert matches("The Beatles", "beatles")           # articles and case ignored
    assert matches("Abingdon, Illinois", "Abingdon")
    assert matches("gangster thriller film", "gangster thriller")
    assert not matches("1830", "2 July 1829")
    assert not matches(None, "x") and not matches("x", None)


def test_metrics_on_tiny_dataset():
    recs = [
        {"type": "correct", "label": "2 July 1829", "answer": "1829", "qtype": "DATE"},
        {"type": "correct", "label": "Frank Oz", "answer": "Quentin Tarantino", "qtype": "PERSON"},
        {"type": "correct", "label": "Boston", "answer": None, "qtype": "LOC"},
        {"type": "correct", "label": "Football", "answer": "football", "qtype": "WHAT"},
        {"type": "misinfo", "label": "Chess", "answer": "chess", "qtype": "WHAT"},
        {"type": "misinfo", "label": "1,234", "answer": "459", "qtype": "NUM"},
        {"type": "noise", "label": None, "answer": None, "qtype": "NUM"},
        {"type": "noise", "label": None, "answer": "1990", "qtype": "DATE"},
        {"type": "noise", "label": None, "answer": None, "qtype": "DATE"},
    ]
    m = metrics(recs)
    assert m["correct_doc_accuracy"] == 0.5
    assert m["correct_doc_abstention"] == 0.25
    assert m["misinfo_doc_faithfulness"] == 0.5
    assert m["noise_doc_abstention"] == round(2 / 3, 4)
    assert m["counts"] == {"correct": 4, "misinfo": 2, "noise": 3}
    assert m["per_qtype_correct"]["DATE"] == {"n": 1, "accuracy": 1.0, "abstention": 0.0}
    assert m["per_qtype_noise"]["DATE"]["abstention"] == 0.5


def test_benchmark_end_to_end_on_a_raw_ramdocs_file(tmp_path, capsys):
    row = {"question": CASES[0][0], "gold_answers": ["Steven Spielberg"], "wrong_answers": [],
           "disambig_entity": [], "documents": [
               {"text": CASES[0][1], "type": "correct", "answer": "Steven Spielberg"},
               {"text": OFF_TOPIC[1], "type": "noise", "answer": "unknown"}]}
    path = tmp_path / "mini.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert benchmark_main(["--dataset", str(path), "--repeat", "1"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(last) == {"correct_doc_accuracy", "correct_doc_abstention", "misinfo_doc_faithfulness",
                         "noise_doc_abstention", "docs_per_second"}
    assert last["correct_doc_accuracy"] == 1.0 and last["noise_doc_abstention"] == 1.0
    assert last["misinfo_doc_faithfulness"] is None   # no misinfo documents to score
