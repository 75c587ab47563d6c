"""The sample builder: deterministic, in sync with the committed sample_data/, and the datasets hold
what their specs promise (RA-RAG-style multi-source sets, docs/methods/ra_rag.md §5; BRIDGE-style scenarios,
docs/methods/bridge.md §5; RAMDocs dev)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from backend.data import load_dataset
from backend.paths import REPO_ROOT, SAMPLE_DATA
from backend.sample.build import RAW, build_sample
from backend.answer_text import mentions, readable, substitute
from backend.sample.pools import IDK
from backend.sample.scenarios import is_twin, memory_passage

DATASETS = ("ramdocs_dev", "multisource", "multisource_beta", "scenarios", "poisonedrag_nq")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sample")
    lines = build_sample(out, vectors=False, prepared=False)  # tests/test_vectors.py, tests/test_shipped_prepared.py
    assert len(lines) == len(DATASETS)
    return out


def test_build_is_byte_identical(built, tmp_path):
    build_sample(tmp_path, vectors=False, prepared=False)
    assert _files(tmp_path) == _files(built)


def test_raw_inputs_live_in_the_repo():
    assert RAW.resolve().is_relative_to(REPO_ROOT.resolve())
    for name in ("ramdocs", "poisonedrag_adv_targeted", "madam_rag_trace_sample"):
        assert (RAW / name / "LICENSE").is_file() and (RAW / name / "SOURCE.md").is_file()


@pytest.mark.parametrize("name", DATASETS)
def test_committed_sample_data_equals_a_fresh_build(built, name):
    fresh, committed = _files(built / name), _files(SAMPLE_DATA / name)
    assert committed.keys() == fresh.keys(), "run `python -m backend build-sample` and commit sample_data/"
    for fname, data in fresh.items():
        assert committed[fname] == data, f"sample_data/{name}/{fname} is stale: run `python -m backend build-sample`"


@pytest.mark.parametrize("name", DATASETS)
def test_every_dataset_loads_and_is_newline_terminated(built, name):
    ds = load_dataset(built / name)
    assert ds.questions
    for f in (built / name).iterdir():
        assert f.read_bytes().endswith(b"\n"), f


def test_ramdocs_dev(built):
    ds = load_dataset(built / "ramdocs_dev")
    assert len(ds.questions) == 100
    assert sum(len(q.documents) for q in ds.questions) == 553
    assert ds.questions[0].id == "ramdocs-0001" and ds.questions[-1].id == "ramdocs-0100"
    assert all(d.source is None for _, d in ds.documents())
    assert all((d.label.answer is None) == (d.label.type == "noise") for _, d in ds.documents())


def test_poisonedrag_nq(built):
    from backend.answer_text import mentions

    ds = load_dataset(built / "poisonedrag_nq")
    assert len(ds.questions) == 96 and {len(q.documents) for q in ds.questions} == {1, 2, 3}
    for q in ds.questions:
        attack = q.meta["attack"]
        assert attack["target"] == q.wrong_answers[0] and attack["passages"]
        assert all(mentions(p, attack["target"]) for p in attack["passages"])   # every passage states the target
        gold = q.gold_answers[0]
        assert all(mentions(d.text, gold) and not mentions(d.text, attack["target"], unless=gold) for d in q.documents)


@pytest.mark.parametrize("name", ["multisource", "multisource_beta"])
def test_multisource(built, name):
    ds = load_dataset(built / name)
    assert len(ds.questions) >= 200
    names = [s.name for s in ds.sources]
    assert names == [f"src-{i}" for i in range(1, 9)]
    if name == "multisource":
        p = Counter(s.true_reliability for s in ds.sources)
        assert set(p) == {0.1, 0.9} and p[0.1] >= 1 and p[0.9] >= 1
    for q in ds.questions:
        assert q.documents and len(q.gold_answers) == 1
        by_source: dict[str, set] = {}
        for d in q.documents:
            assert d.source in names
            assert d.label.type in ("correct", "misinfo")
            if d.label.type == "misinfo":
                assert d.label.answer in q.wrong_answers
                assert not mentions(d.text, q.gold_answers[0], unless=d.label.answer), d.id
            else:
                assert d.label.answer == q.gold_answers[0]
            by_source.setdefault(d.source, set()).add((d.label.type, d.label.answer))
        assert all(len(kinds) == 1 for kinds in by_source.values()), q.id
        held = {s for s, a in q.meta["assignment"].items() if a != "none"}
        assert held == set(by_source)


def test_multisource_realised_reliability_tracks_the_truth(built):
    ds = load_dataset(built / "multisource")
    for s in ds.sources:
        held = [q.meta["assignment"][s.name] for q in ds.questions if q.meta["assignment"][s.name] != "none"]
        frac = sum(a == "correct" for a in held) / len(held)
        assert abs(frac - s.true_reliability) < 0.1, s.name


def test_scenarios(built):
    ds = load_dataset(built / "scenarios")
    per = Counter(q.meta["scenario"] for q in ds.questions)
    assert set(per) == {"FA", "FI", "FE", "RA"} and min(per.values()) >= 10
    for q in ds.questions:
        m = q.meta
        assert len(q.options) == 4 and len(set(q.options)) == 4 and IDK in q.options
        assert q.gold_answers[0] in q.options
        assert q.gold_answers == ([IDK] if m["scenario"] == "RA" else [m["true_answer"]])
        assert m["temporal"] in ("none", "evolution", "perpetuation")
        assert (q.internal_knowledge is None) == (m["temporal"] == "perpetuation")
        first = q.documents[0]
        assert first.source == "external" and first.label.answer == m["external_answer"]
        docs_right = m["external_answer"] == m["true_answer"]
        assert docs_right == (m["scenario"] in ("FA", "FE"))
        memory_right = m["internal_answer"] == m["true_answer"]
        assert memory_right == (m["scenario"] in ("FA", "FI"))
    cued = [q for q in ds.questions if q.meta["temporal"] == "evolution"]
    assert cued and all(any(w in q.question.lower() for w in ("most recent", "latest", "current")) for q in cued)


#: Fragments of the templated memories the scenarios used to carry ("I recall that X is the right reply to …").
TEMPLATE_FRAGMENTS = ("if memory serves", "i recall", "right reply to", "my stored knowledge", "what i remember",
                      "as far as i recall", "my knowledge stops", "back in 2021 the answer", "the answer to",
                      "“", "”")


def test_scenario_memories_are_passages_that_state_the_answer_the_scenario_needs(built):
    """Memory as a model holds it (issue 25 §9): a document-style passage from the pools, no template words, stating
    the memory's answer (the true one on FA/FI, an outdated one on FE/RA evolution, which then keeps the true one
    out); ``memory_twin`` says truly whether it is a document's passage or its entity-swapped twin."""
    ds = load_dataset(built / "scenarios")
    memories = [q for q in ds.questions if q.internal_knowledge is not None]
    assert len(memories) == 36
    for q in memories:
        m, memory = q.meta, q.internal_knowledge
        assert not [f for f in TEMPLATE_FRAGMENTS if f in memory.lower()], (q.id, memory)
        assert q.question.lower().rstrip(" ?") not in memory.lower(), (q.id, memory)   # no quoted question
        assert readable(memory), (q.id, memory)
        assert mentions(memory, m["internal_answer"]), (q.id, m["internal_answer"], memory)
        if m["internal_answer"] != m["true_answer"]:
            assert not mentions(memory, m["true_answer"], unless=m["internal_answer"]), (q.id, memory)
        answers = [m["true_answer"], *q.wrong_answers]
        twin = any(is_twin(memory, d.text, answers) for d in q.documents if d.label.answer)
        assert m["memory_twin"] == twin, q.id
    assert 0 < sum(q.meta["memory_twin"] for q in memories) < len(memories)   # both kinds occur


def test_a_memory_is_another_passage_than_the_documents_when_the_pool_has_one():
    right = "Bianca Ryan won the first season of America's Got Talent."
    swapped = "Vicky Binns won the first season of America's Got Talent."
    other = "The first season of America's Got Talent was won by Bianca Ryan, a singer from Philadelphia."
    answers = ["Bianca Ryan", "Vicky Binns"]
    assert is_twin(right, swapped, answers) and is_twin(swapped, right, answers)
    assert not is_twin(other, swapped, answers)
    question = "Who won the first season of America's Got Talent?"
    assert memory_passage(question, [right, other], [swapped], answers) == (other, False)
    assert memory_passage(question, [right], [swapped], answers) == (right, True)   # nothing else: the twin, said so
    with pytest.raises(ValueError):
        memory_passage(question, [], [swapped], answers)


def test_substitution_never_leaks_the_replaced_answer():
    assert substitute("There were 3,559 people; 2010: 3,559.", "3,559 people", "10,000 people") == \
        "There were 10,000 people; 2010: 10,000."
    assert substitute("He played football for Wales.", "Football", "Cricket") == "He played Cricket for Wales."
    assert substitute("A footballer.", "Football", "Cricket") is None  # nothing to replace
    assert not mentions("released April 20, 2018", "March 23, 2018", unless="April 20, 2018")
    sources = json.loads((SAMPLE_DATA / "multisource" / "sources.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in sources] == [f"src-{i}" for i in range(1, 9)]
