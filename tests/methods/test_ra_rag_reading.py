"""RA-RAG's two readings of a source's keyword reply (backend/methods/ra_rag/parse.py, backend.methods.reading).

The paper's rule, written out here (no released code is imported): Algorithm 1 line 3 / Algorithm 2 line 5 apply
f_align to ỹ_i, the model's output for the source; the released code (ml-postech/RA-RAG, ``src/utils.py``
``extract_final_answer``) makes that output from the generation by lower-casing it, deleting "answer:", deleting the
articles a / an / the, stripping it and dropping one trailing "."; an empty result is "I don't know". That string is
filtered (ROUGE-1 precision ≥ 0.9, paper §3.2) and, when kept, voted; an answer containing "i don't know" casts no
vote. The tolerant reading (the default) reads the answer out of a chat-style reply first ("The answer is X." -> X).
"""

import pytest

from backend.data import load_dataset
from backend.llm.client import LLMClient, LLMConfig
from backend.llm.providers import scripted
from backend.methods.base import RunContext, run_sync
from backend.methods.ra_rag import RARAG, f_align
from backend.methods.ra_rag.answering import paper_reading, tolerant_reading
from backend.methods.ra_rag.parse import read_paper, read_tolerant, released_answer
from backend.methods.reading import Readings
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from backend.schema import Document, Question, ReliabilityEstimate, SourceReliability

Q = "Whose company designed the Eiffel Tower?"
#: no "answer", no "is": a reply that says "The answer is …" has tokens the documents lack
EIFFEL = "The engineering company of Gustave Eiffel designed the tower for the 1889 World's Fair."
KOECHLIN = "Maurice Koechlin drew the first sketch of the tower in 1884."
CHATTY = "The answer is Gustave Eiffel."


def _released_by_hand(reply: str) -> str:
    """The paper's (released code's) reading, written out step by step for the tests."""
    text = reply.lower().replace("answer:", "")
    for article in ("a", "an", "the"):   # whole words only
        text = " ".join("" if w == article else w for w in text.split(" "))
    text = text.strip()
    if len(text) > 1 and text.endswith("."):
        text = text[:-1]
    return text or "I don't know"


# --- the readers against hand-written replies -----------------------------------------------------------------

@pytest.mark.parametrize("reply, paper, tolerant", [
    ("Gustave Eiffel", "gustave eiffel", "Gustave Eiffel"),
    (CHATTY, "answer is gustave eiffel", "Gustave Eiffel"),          # the paper keeps the sentence
    ("Answer: Gustave Eiffel.", "gustave eiffel", "Gustave Eiffel"),
    ("The Beatles", "beatles", "The Beatles"),                        # articles deleted, as released
    ("**Gustave Eiffel**", "**gustave eiffel**", "Gustave Eiffel"),   # Markdown: only the tolerant reader removes it
])
def test_the_paper_reads_the_reply_as_the_released_code_passes_it_to_the_filter(reply, paper, tolerant):
    assert released_answer(reply) == paper
    assert released_answer(reply).split() == _released_by_hand(reply).split()
    assert read_paper(reply).value == paper and read_tolerant(reply).value == tolerant


@pytest.mark.parametrize("reply, paper_idk, tolerant_idk", [
    ("I don't know", True, True),
    ("I don't know.", True, True),
    ("I don't know the answer to that.", True, True),    # contains "i don't know": the released vote skips it
    ("", True, True),                                    # empty: "I don't know" (released), unreadable here
    ("Unknown", False, True),                            # the paper scores it like any answer
    ("I'm sorry, the context does not say.", False, True),  # a refusal: only the tolerant reader knows it
])
def test_i_dont_know_in_each_reading(reply, paper_idk, tolerant_idk):
    assert (read_paper(reply).value is None) == paper_idk
    assert (read_tolerant(reply).value is None) == tolerant_idk


def test_the_chatty_reply_is_kept_by_the_tolerant_filter_and_discarded_by_the_papers():
    raw = f_align(CHATTY, [EIFFEL])                 # the raw reply: the, gustave, eiffel of 5 tokens
    assert raw.precision == pytest.approx(0.6) and raw.answer is None
    paper = paper_reading(CHATTY, [EIFFEL], 0.9)    # as released: "answer is gustave eiffel", 2 of 4 tokens
    assert paper.aligned.precision == pytest.approx(0.5) and paper.aligned.unmatched == ["answer", "is"]
    assert paper.aligned.answer is None and paper.cluster is None
    assert paper.shown() == "I don't know (ROUGE-1 precision 0.50 < 0.9)"
    tolerant = tolerant_reading(CHATTY, [EIFFEL], 0.9)
    assert tolerant.aligned.precision == 1.0 and tolerant.aligned.answer == "Gustave Eiffel"
    assert tolerant.cluster == "gustave eiffel"
    # a reply in the paper's format: both readings vote alike (the wording differs, the vote key does not)
    same = [r("Gustave Eiffel", [EIFFEL], 0.9) for r in (paper_reading, tolerant_reading)]
    assert [s.aligned.answer for s in same] == ["gustave eiffel", "Gustave Eiffel"]
    assert same[0].cluster == same[1].cluster == "gustave eiffel"
    # "Unknown": IDK by the tolerant test, scored (and here discarded) by the paper's filter
    assert paper_reading("Unknown", [EIFFEL], 0.9).aligned.reason == "ROUGE-1 precision 0.00 < 0.9"
    assert tolerant_reading("Unknown", [EIFFEL], 0.9).aligned.reason == "model said I don't know"


# --- runs with scripted replies ---------------------------------------------------------------------------------

REPLIES = {"A": CHATTY, "B": CHATTY, "C": "Maurice Koechlin"}


def _question() -> Question:
    return Question(id="eiffel", question=Q, documents=[
        Document(id="dA", source="A", text=EIFFEL), Document(id="dB", source="B", text=EIFFEL),
        Document(id="dC", source="C", text=KOECHLIN)])


def _run(reading: str, **kw):
    ctx = RunContext(client=LLMClient(LLMConfig(model="scripted/x", cache_mode="off")).for_method("ra_rag"),
                     sources=list(REPLIES), readings=Readings(reading))
    with scripted({"keyword_answer": lambda f: REPLIES[f["passages"][0]["source"]]}):
        return RARAG(**kw).run(_question(), ctx)


def test_a_tolerant_run_records_the_answers_the_paper_would_have_discarded():
    r = _run("tolerant")
    assert r.error is None and r.answers == ["Gustave Eiffel"] and r.reading == "tolerant"
    assert r.decisions_read == 3                     # one per source asked (no stage-1 weights: v = 1, MV order)
    diffs = r.reading_differences
    assert [(d.step, d.what, d.used, d.other) for d in diffs] == [
        ("source_answer", f"{s}'s answer", "Gustave Eiffel", "I don't know (ROUGE-1 precision 0.50 < 0.9)")
        for s in ("A", "B")]
    calls = {c.id for c in r.calls}
    assert all(d.call_id in calls for d in diffs)
    a = next(s for s in r.trace.sources if s.source == "A")
    assert (a.parsed_answer, a.filtered_answer, a.rouge1_precision) == ("Gustave Eiffel", "Gustave Eiffel", 1.0)


def test_the_paper_run_discards_the_chatty_answers_and_the_vote_changes():
    r = _run("paper")
    assert r.error is None and r.reading == "paper" and r.decisions_read == 3
    assert r.answers == ["maurice koechlin"]         # the only kept answer, in the released code's wording
    assert [(d.what, d.used, d.other) for d in r.reading_differences] == [
        (f"{s}'s answer", "I don't know (ROUGE-1 precision 0.50 < 0.9)", "Gustave Eiffel") for s in ("A", "B")]
    rows = {s.source: s for s in r.trace.sources}
    assert rows["A"].parsed_answer == "answer is gustave eiffel" and rows["A"].filtered_answer is None
    assert rows["A"].rouge1_precision == 0.5 and rows["A"].unmatched_tokens == ["answer", "is"]
    assert rows["C"].cluster == "maurice koechlin"
    assert {v.cluster: v.rrss for v in r.trace.votes} == {"maurice koechlin": 1.0}


def test_replies_in_the_papers_format_read_alike():
    global REPLIES
    saved, REPLIES = REPLIES, {"A": "Gustave Eiffel", "B": "I don't know", "C": "Maurice Koechlin"}
    try:
        tolerant, paper = _run("tolerant"), _run("paper")
    finally:
        REPLIES = saved
    assert tolerant.decisions_read == paper.decisions_read == 3
    assert tolerant.reading_differences == paper.reading_differences == []
    assert [a.lower() for a in tolerant.answers] == paper.answers == ["gustave eiffel"]


def test_entailment_judgements_are_one_rule_for_both_readings():
    def entails(fields):
        return "Yes" if fields["premise"].lower() == fields["hypothesis"].lower() else "No"

    replies = {"A": "Gustave Eiffel", "B": "Eiffel", "C": "Maurice Koechlin"}
    ctx = RunContext(client=LLMClient(LLMConfig(model="scripted/x", cache_mode="off")).for_method("ra_rag"),
                     sources=list(replies), readings=Readings("paper"))
    with scripted({"keyword_answer": lambda f: replies[f["passages"][0]["source"]], "entailment": entails}):
        r = RARAG(variant="mv", clustering="entailment").run(_question(), ctx)
    assert r.error is None and len(r.trace.entailments) == 6      # 3 distinct answers, each pair both ways
    assert r.decisions_read == 3 + 6 and r.reading_differences == []


# --- stage 1: the reading is part of the estimate's key, and its differences are counted in it ----------------

def _calibration_questions() -> list[Question]:
    return [Question(id=f"c{j}", question=f"{Q} ({j})", documents=[
        Document(id=f"c{j}{s}", source=s, text=EIFFEL if s != "C" else KOECHLIN) for s in "ABC"]) for j in range(3)]


def _calibrate(reading: str) -> ReliabilityEstimate:
    ctx = RunContext(client=LLMClient(LLMConfig(model="scripted/x", cache_mode="off")).for_method("ra_rag"),
                     readings=Readings(reading))
    with scripted({"keyword_answer": lambda f: REPLIES[f["passages"][0]["source"]]}):
        return run_sync(RARAG().calibrate(_calibration_questions(), list(REPLIES), ctx))


def test_stage1_under_each_reading_counts_the_calibration_answers_read_differently():
    tolerant, paper = _calibrate("tolerant"), _calibrate("paper")
    assert "reading" not in tolerant.params and paper.params["reading"] == "paper"
    assert tolerant.key != paper.key
    # tolerant: A and B agree on Gustave Eiffel (C alone); paper: only C ever answers
    assert tolerant.estimated() == {"A": 1.0, "B": 1.0, "C": 0.0}
    assert paper.estimated() == {"A": None, "B": None, "C": 1.0}
    for est, used, other in ((tolerant, "Gustave Eiffel", "I don't know (ROUGE-1 precision 0.50 < 0.9)"),
                             (paper, "I don't know (ROUGE-1 precision 0.50 < 0.9)", "Gustave Eiffel")):
        r = est.readings
        assert r is not None and r.reading == est.params.get("reading", "tolerant")
        assert (r.decisions, r.differences) == (9, 6)           # 3 questions x 3 sources; A and B each time
        assert [(d.step, d.what, d.used, d.other) for d in r.examples] == [
            ("calibration_answer", f"{s}'s answer", used, other) for _ in range(3) for s in "AB"]  # calibration order
        assert "readings" in est.model_dump(mode="json")
    # stage 2 says so in the weights' note, and its own decisions are its own
    ctx = RunContext(client=LLMClient(LLMConfig(model="scripted/x", cache_mode="off")).for_method("ra_rag"),
                     sources=list(REPLIES), prepared=tolerant)
    with scripted({"keyword_answer": lambda f: REPLIES[f["passages"][0]["source"]]}):
        r = RARAG().run(_question(), ctx)
    assert "6 of its 9 calibration answers would be read differently by the paper reading" in r.trace.weights_note
    assert r.decisions_read == 3 and len(r.reading_differences) == 2


def test_an_estimate_without_differences_is_stored_as_before():
    est = ReliabilityEstimate(sources=[SourceReliability(name="A")], questions=1, iterations=1, converged=True)
    assert est.readings is None and "readings" not in est.model_dump(mode="json")
    assert ReliabilityEstimate.model_validate_json(est.model_dump_json()) == est


def test_the_tolerant_key_is_unchanged_and_a_paper_runner_never_reuses_a_tolerant_estimate(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))   # an empty user cache: only the shipped estimates
    ds = load_dataset(SAMPLE_DATA / "multisource")
    tolerant = Runner(ds, llm=LLMConfig(cache_mode="off"))
    paper = Runner(ds, llm=LLMConfig(cache_mode="off"), reading="paper")
    method = RARAG()
    assert method.calibration_params("tolerant") == method.calibration_params() and \
        "reading" not in method.calibration_params()
    assert tolerant.prepare_key("ra_rag") != paper.prepare_key("ra_rag")
    assert tolerant.prepared("ra_rag") is not None                # the shipped estimate, found under its old key
    assert paper.prepared("ra_rag") is None                       # never the tolerant one
