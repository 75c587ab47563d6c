"""``backend.outputs``: evaluation and attack folders written by real runs read back typed, the summary models give
the files back key for key (the writers go through them), and malformed or half-written files say what is wrong."""

from __future__ import annotations

import json
import os
import time

import pytest

from backend.data import load_dataset
from backend.evaluate import evaluate, load_results, summarize
from backend.llm.providers import scripted
from backend.outputs import (AttackError, Evaluation, ResultsError, find_attacks, find_runs, method_order,
                             open_attack, open_evaluation, read_results, rows_written)
from backend.schema.summary import AttackSettings, AttackSummary, MethodSummary, Summary
from backend.whatif.campaign import attack_dataset
from tests.test_evaluate import QUESTIONS, _runner, _script
from tests.whatif.conftest import city_question, majority_reader, scripted_runner

METHODS = ["vanilla_rag", "no_rag"]  # run in this order; shown in the registry's


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return load_dataset(path)


@pytest.fixture
def run(tiny, tmp_path):
    """An evaluation folder written by ``evaluate``: ``<tmp>/cache/evaluations/tiny-1``."""
    out = tmp_path / "cache" / "evaluations" / "tiny-1"
    with scripted(_script()):
        summary = evaluate(_runner(tiny), tiny.questions, METHODS, out)
    return out, summary


@pytest.fixture
def attack(tmp_path):
    questions = [city_question("two", ["Paris", "Paris"]), city_question("one", ["Paris"])]
    out = tmp_path / "attacks" / "cities-1"
    with scripted({"keyword_answer": majority_reader, "closed_book": "I don't know"}):
        summary = attack_dataset(scripted_runner(questions), questions, ["vanilla_rag", "no_rag"], out, ks=[0, 1, 3])
    return out, summary


def _finder(ds):
    return lambda name: ds if name == ds.name else None


# --- the summary models --------------------------------------------------------------------------------------

def test_the_summary_model_gives_the_file_back_key_for_key(run, tiny):
    out, summary = run
    text = (out / "summary.json").read_text(encoding="utf-8")
    typed = Summary.model_validate_json(text)
    assert json.dumps(typed.as_dict(), ensure_ascii=False, indent=2) + "\n" == text  # same keys, same order
    assert typed.as_dict() == summary
    no_rag = typed.methods["no_rag"]
    assert isinstance(no_rag, MethodSummary) and no_rag.risk is not None and no_rag.risk.AK == 2
    assert typed.methods["vanilla_rag"].risk is None and "risk" not in typed.as_dict()["methods"]["vanilla_rag"]
    assert typed.methods["vanilla_rag"].slices["mix"]["misinfo"].lenient_match == 100.0
    assert typed.gold.from_ == "dataset" and typed.complete
    # what summarize computes (the writer validates it through the model) is what the model dumps, key order too
    results, _ = load_results(out / "results.jsonl")
    raw = summarize(tiny, results, methods=METHODS, model="scripted/x", gold={"from": "labels.csv", "analyst": "x"})
    assert json.dumps(Summary.model_validate(raw).as_dict()) == json.dumps(raw)


def test_an_older_or_newer_summary_still_loads():
    old = {"dataset": "d", "model": "m", "questions": 2, "complete": True,
           "methods": {"a": {"n": 2, "errors": 0, "accuracy": 50.0, "strict_em": 50.0, "precision": None,
                             "recall": None, "f1": None, "refusal_rate": 0.0, "mean_calls": 1.0}}}
    s = Summary.model_validate(old)
    assert (s.methods["a"].lenient_match, s.methods["a"].lenient_all_gold) == (50.0, 50.0)  # the keys' old names
    assert s.methods["a"].scored == 2 and s.methods["a"].missing == 0 and s.methods["a"].slices == {}
    assert s.methods["a"].mean_tokens is None and s.gold.from_ == "dataset"
    newer = {**old, "engine": "ray", "methods": {"a": {**old["methods"]["a"], "p95_wall_s": 3.0}}}
    dumped = Summary.model_validate(newer).as_dict()
    assert dumped["engine"] == "ray" and dumped["methods"]["a"]["p95_wall_s"] == 3.0


def test_the_attack_models_give_the_files_back(attack):
    out, summary = attack
    typed = AttackSummary.model_validate_json((out / "summary.json").read_bytes())
    assert (out / "summary.json").read_text() == json.dumps(summary, ensure_ascii=False, indent=2) + "\n"
    assert typed.as_dict() == summary and typed.ks() == [0, 1, 3] and typed.complete()
    assert [(m, k) for m, k, _ in typed.cells()] == [(m, k) for m in ("vanilla_rag", "no_rag") for k in (0, 1, 3)]
    settings = json.loads((out / "attack.json").read_text())
    assert AttackSettings.model_validate(settings).as_dict() == settings


# --- evaluations ---------------------------------------------------------------------------------------------

def test_open_evaluation_with_the_dataset_recomputes_the_summary(run, tiny):
    out, summary = run
    ev = open_evaluation(out, _finder(tiny))  # the folder
    assert isinstance(ev, Evaluation) and ev.path == out / "results.jsonl" and ev.dataset is tiny
    assert ev.methods == method_order(METHODS) == ["no_rag", "vanilla_rag"]  # the registry's order
    assert [q.id for q in ev.questions] == ["q1", "q2", "q3"] and len(ev.results) == 6 and ev.notes == []
    for m in METHODS:
        assert ev.summary.methods[m].lenient_match == summary["methods"][m]["lenient_match"]
    assert open_evaluation(out / "results.jsonl", _finder(tiny)).summary == ev.summary  # the file alike


def test_open_evaluation_recomputes_the_other_reading_too(tiny, tmp_path):
    from backend.runner import Runner

    out = tmp_path / "cache" / "evaluations" / "tiny-2"
    summary = evaluate(Runner(tiny), tiny.questions, METHODS, out, other_reading=True)  # offline: nothing to replay
    assert all(summary["methods"][m]["other_reading"]["reading"] == "paper" for m in METHODS)
    ev = open_evaluation(out, _finder(tiny))
    for m in METHODS:
        assert ev.summary.methods[m].other_reading is not None
        assert ev.summary.as_dict()["methods"][m]["other_reading"] == summary["methods"][m]["other_reading"]
        assert ev.summary.methods[m].own_metric == "squad_em" and ev.summary.methods[m].reading == "tolerant"
    assert open_evaluation(out, lambda name: None).summary.as_dict() == summary  # as written, without the dataset
    (out / "other_reading" / "results.jsonl").unlink()  # without its rows the recomputed summary has none
    assert all(m.other_reading is None for m in open_evaluation(out, _finder(tiny)).summary.methods.values())


def test_open_evaluation_without_the_dataset_shows_the_summary_as_written(run):
    out, summary = run
    ev = open_evaluation(out, lambda name: None)
    assert ev.dataset is None and ev.questions == [] and ev.summary.as_dict() == summary
    assert "not loaded here" in ev.notes[-1]
    (out / "summary.json").write_text('{"dataset": "tiny", "methods": {"a": {"n": ', encoding="utf-8")  # half-written
    with pytest.raises(ResultsError, match="summary.json: cannot be read"):
        open_evaluation(out, lambda name: None)
    (out / "summary.json").write_text('{"dataset": "tiny", "methods": {"a": {"n": "many"}}}', encoding="utf-8")
    with pytest.raises(ResultsError, match=r"not a summary of `evaluate` \(methods\.a\.n: "):
        open_evaluation(out, lambda name: None)
    (out / "summary.json").unlink()
    with pytest.raises(ResultsError, match="not loaded here, and there is no summary.json"):
        open_evaluation(out, lambda name: None)


def test_half_written_and_unreadable_lines_are_left_out_and_reported(run, tiny):
    out, _ = run
    path = out / "results.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(lines[0] + "not json\n" + "".join(lines[1:]) + lines[0][:40], encoding="utf-8")
    ev = open_evaluation(out, _finder(tiny))
    assert len(ev.results) == 6
    assert any(":2: unreadable" in n for n in ev.notes) and any("half-written" in n for n in ev.notes)
    assert path.read_text(encoding="utf-8").endswith(lines[0][:40])  # read only: never repaired on disk


def test_malformed_results_say_what_is_wrong(tmp_path, tiny):
    find = _finder(tiny)
    with pytest.raises(ResultsError, match="Enter the path"):
        open_evaluation("  ", find)
    with pytest.raises(ResultsError, match="no such file or folder"):
        open_evaluation(tmp_path / "nope", find)
    with pytest.raises(ResultsError, match="no results.jsonl in this folder"):
        open_evaluation(tmp_path, find)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "results.jsonl").write_text("")
    with pytest.raises(ResultsError, match="has no results yet"):
        open_evaluation(tmp_path / "empty", find)
    (tmp_path / "other.jsonl").write_text('{"question": "not a row"}\n')
    with pytest.raises(ResultsError, match="not a results file.*missing question_id, method or result"):
        open_evaluation(tmp_path / "other.jsonl", find)
    (tmp_path / "binary.jsonl").write_bytes(b"\xff\xfe\x00garbage\n")
    with pytest.raises(ResultsError, match="cannot be read"):
        open_evaluation(tmp_path / "binary.jsonl", find)


def test_read_results_is_of_one_dataset(run):
    out, _ = run
    src = read_results(out, "tiny")
    assert src.path == out / "results.jsonl" and src.model == "scripted/x" and src.dataset == "tiny"
    assert src.methods == ["no_rag", "vanilla_rag"] and len(src.results) == 6
    with pytest.raises(ResultsError, match="of the dataset 'tiny', not 'other'"):
        read_results(out, "other")


def test_find_runs_lists_a_datasets_runs_newest_first(run, tmp_path, tiny):
    old, _ = run
    root = tmp_path / "cache"
    with scripted(_script()):
        evaluate(_runner(tiny), tiny.questions[:1], METHODS, root / "evaluations" / "tiny-2")
    (root / "evaluations" / "other-1").mkdir()
    (root / "evaluations" / "other-1" / "results.jsonl").write_text('{"dataset": "other", "model": "m"}\n')
    (root / "evaluations" / "broken").mkdir()
    (root / "evaluations" / "broken" / "results.jsonl").write_text("{not json\n")
    os.utime(old / "results.jsonl", (time.time() - 60, time.time() - 60))
    runs = find_runs(root, "tiny")
    assert [r.path.parent.name for r in runs] == ["tiny-2", "tiny-1"]
    assert runs[0].label.startswith("tiny-2 · ") and runs[0].label.endswith(" · scripted/x")
    assert find_runs(tmp_path / "nowhere", "tiny") == []


# --- attacks -------------------------------------------------------------------------------------------------

def test_open_attack_reads_a_real_folder(attack):
    out, summary = attack
    opened = open_attack(out / "summary.json")  # a file in the folder opens the folder
    assert opened.path == out and opened.methods == ["no_rag", "vanilla_rag"] and opened.notes == []
    assert opened.summary.as_dict() == summary and opened.settings.ks == [0, 1, 3]
    assert len(opened.rows) == 2 * 3 * 2
    row = next(r for r in opened.rows if r.question_id == "one~attack-k3" and r.method == "vanilla_rag")
    assert (row.k, row.attack_of, row.target, row.clean_documents) == (3, "one", "Lyon", 1)
    assert row.result.answers == ["Lyon"]
    assert rows_written(out) == 12 and rows_written(out.parent / "nope") == 0


def test_malformed_attack_folders_say_what_is_wrong(attack, tmp_path):
    out, _ = attack
    with pytest.raises(AttackError, match="Enter the path"):
        open_attack(" ")
    with pytest.raises(AttackError, match="no such folder"):
        open_attack(tmp_path / "nope")
    with pytest.raises(AttackError, match="not an attack folder"):
        open_attack(tmp_path)
    with open(out / "results.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"question_id": "x", "method": "m", "result": {"method": 3}}\n{"question_id": "y"')
    opened = open_attack(out)
    assert len(opened.rows) == 12 and len(opened.notes) == 2  # the bad row and the half-written one, left out
    summary = (out / "summary.json").read_text()
    (out / "summary.json").write_text(summary[:30])
    with pytest.raises(AttackError, match="cannot be read"):
        open_attack(out)
    (out / "summary.json").write_text('{"vanilla_rag": {"1": {"n": "lots"}}}')
    with pytest.raises(AttackError, match="not the summary of an attack"):
        open_attack(out)
    (out / "summary.json").unlink()
    with pytest.raises(AttackError, match="no summary.json yet"):
        open_attack(out)


def test_find_attacks_newest_first_of_a_dataset(attack, tmp_path):
    out, _ = attack
    root = out.parent
    other = root / "d-1"
    other.mkdir()
    (other / "attack.json").write_text(json.dumps({"dataset": "d", "ks": [1], "questions": 3}))
    (root / "broken").mkdir()
    (root / "broken" / "attack.json").write_text('{"dataset": ')
    (root / "wrong").mkdir()
    (root / "wrong" / "attack.json").write_text('{"ks": "one"}')
    os.utime(out, (1, 1))
    assert [f.name for f, _ in find_attacks(root)] == ["d-1", "cities-1"]
    assert [(f, s.ks) for f, s in find_attacks(root, "cities")] == [(out, [0, 1, 3])]
    assert find_attacks(tmp_path / "none") == []
