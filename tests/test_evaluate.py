"""Batch evaluation: results.jsonl survives a kill and resumes to exactly one row per pair, a half-written line is
repaired and reported, the summary's numbers match hand-computed ones, and failed calls become error rows that
--retry-errors runs again."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from backend.data import load_dataset
from backend.evaluate import EvaluationError, evaluate, load_results, read_rows
from backend.llm.client import LLMConfig
from backend.llm.providers import scripted
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from backend.schema import MethodResult
from tests.conftest import ROOT

METHODS = ["no_rag", "vanilla_rag"]


def _cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "backend", "evaluate", *args], capture_output=True, text=True,
                          cwd=ROOT, **kw)


def _pairs(path) -> Counter:
    return Counter((json.loads(line)["question_id"], json.loads(line)["method"])
                   for line in path.read_text(encoding="utf-8").splitlines())


# --- kill and resume, through the real command line -------------------------------------------------------------

@pytest.mark.slow  # three command-line evaluations: 9 s idle, 47 s on a 2-core machine at load 5-11
def test_killed_run_resumes_to_one_row_per_pair(tmp_path):
    out = tmp_path / "out"
    results = out / "results.jsonl"
    args = ["--dataset", str(SAMPLE_DATA / "ramdocs_dev"), "--methods", ",".join(METHODS), "--limit", "30",
            "--cache-dir", str(tmp_path / "cache")]
    proc = subprocess.Popen([sys.executable, "-m", "backend", "evaluate", *args, "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if results.exists() and results.read_bytes().count(b"\n") >= 6:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    killed_lines = results.read_bytes().count(b"\n")
    assert 6 <= killed_lines < 60
    # the killed run held the folder's lock (it was writing rows); an OS lock goes with its process, so the resume
    # below is not refused

    again = _cli(*args, "--out", str(out))  # without --resume an existing results file is refused
    assert again.returncode == 2 and "--resume" in again.stderr

    resumed = _cli(*args, "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    counts = _pairs(results)
    questions = load_dataset(SAMPLE_DATA / "ramdocs_dev").questions[:30]
    assert set(counts) == {(q.id, m) for q in questions for m in METHODS}
    assert set(counts.values()) == {1}, [p for p, n in counts.items() if n != 1]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["missing"] == {} and summary["questions"] == 30
    for m in METHODS:
        assert summary["methods"][m]["n"] == 30 and summary["methods"][m]["missing"] == 0
        assert summary["methods"][m]["lenient_match"] is not None
    assert "vanilla_rag" in resumed.stdout and str(out / "summary.json") in resumed.stdout


def test_cli_rejects_bad_arguments(tmp_path):
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    data = str(SAMPLE_DATA / "ramdocs_dev")
    bad_out = _cli("--dataset", data, "--out", str(afile))
    assert bad_out.returncode == 2 and "not a folder" in bad_out.stderr
    bad_methods = _cli("--dataset", data, "--methods", "no_rag,nope", "--out", str(tmp_path / "o"))
    assert bad_methods.returncode == 2 and "nope" in bad_methods.stderr
    bad_retry = _cli("--dataset", data, "--retry-errors", "--out", str(tmp_path / "o"))
    assert bad_retry.returncode == 2 and "--resume" in bad_retry.stderr


# --- a hand-checked tiny dataset with a scripted model ----------------------------------------------------------

QUESTIONS = [
    {"id": "q1", "question": "Who wrote A?", "gold_answers": ["Ann"], "wrong_answers": ["Bob"],
     "documents": [{"id": "q1-d1", "text": "Ann wrote A.", "label": {"type": "correct", "answer": "Ann"}},
                   {"id": "q1-d2", "text": "Bob wrote A.", "label": {"type": "misinfo", "answer": "Bob"}}]},
    {"id": "q2", "question": "Who wrote B?", "gold_answers": ["Cy", "Di"],
     "documents": [{"id": "q2-d1", "text": "Cy wrote B.", "label": {"type": "correct", "answer": "Cy"}},
                   {"id": "q2-d2", "text": "Di wrote B.", "label": {"type": "correct", "answer": "Di"}}]},
    {"id": "q3", "question": "Who wrote C?", "gold_answers": ["Ed"], "meta": {"scenario": "FA"},
     "documents": [{"id": "q3-d1", "text": "Ed wrote C.", "label": {"type": "correct", "answer": "Ed"}},
                   {"id": "q3-d2", "text": "The weather was fine.", "label": {"type": "noise"}},
                   {"id": "q3-d3", "text": "C is a letter.", "label": {"type": "noise"}}]},
]
#: per task (closed_book = no_rag, keyword_answer = vanilla_rag), per question text: the model's reply
REPLIES = {"closed_book": {"Who wrote A?": "I don't know", "Who wrote B?": "Di", "Who wrote C?": "Ed"},
           "keyword_answer": {"Who wrote A?": "Ann", "Who wrote B?": "Cy", "Who wrote C?": "Zed"}}


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    return load_dataset(path)


def _script(fail: str | None = None):
    def reply(task: str):
        def answer(fields):
            if fields["question"] == fail:
                raise RuntimeError("scripted failure")
            return REPLIES[task][fields["question"]]
        return answer
    return {task: reply(task) for task in REPLIES}


def _runner(ds) -> Runner:
    return Runner(ds, llm=LLMConfig(model="scripted/x", num_retries=0))  # cache None: no cache


def test_summary_matches_hand_computed_metrics(tiny, tmp_path):
    with scripted(_script()):
        summary = evaluate(_runner(tiny), tiny.questions, METHODS, tmp_path / "out", concurrency=2)
    assert summary == json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["complete"] and summary["errors"] == {} and summary["notes"] == []
    van, nor = summary["methods"]["vanilla_rag"], summary["methods"]["no_rag"]
    # vanilla: Ann (right), Cy (one of two gold), Zed (wrong)
    assert (van["n"], van["scored"], van["errors"], van["missing"]) == (3, 3, 0, 0)
    assert (van["lenient_match"], van["lenient_all_gold"], van["refusal_rate"]) == (66.67, 33.33, 0.0)
    assert (van["precision"], van["recall"], van["f1"]) == (66.67, 50.0, 55.56)  # F1 (1 + 2/3 + 0) / 3
    assert van["mean_calls"] == 1 and "risk" not in van  # never abstained
    # the papers' own metrics: SQuAD EM/F1 take the best gold answer (Cy of Cy, Di is right); RAMDocs' exact match
    # wants both of q2's and no wrong one (only Ann on q1); Astute's gold-in-response is a substring test on
    # characters, so "Zed" holds the gold "Ed" (the spec keeps the paper's rule literal)
    assert {k: van[k] for k in ("squad_em", "squad_f1", "gold_in_response", "ramdocs_em")} == {
        "squad_em": 66.67, "squad_f1": 66.67, "gold_in_response": 100.0, "ramdocs_em": 33.33}
    assert (van["own_metric"], summary["methods"]["no_rag"]["own_metric"]) == ("squad_em", "squad_em")
    assert (van["reading"], van["reading_dependent"], van["rows_reading_dependent"]) == ("tolerant", 0, 0)
    assert "other_reading" not in van  # not asked for
    # no_rag: refuses q1, Di (one of two gold), Ed (right)
    assert (nor["lenient_match"], nor["lenient_all_gold"], nor["refusal_rate"]) == (66.67, 33.33, 33.33)
    assert (nor["precision"], nor["recall"], nor["f1"]) == (66.67, 50.0, 55.56)
    # "I don't know" is wrong for every paper's metric (q1 is answerable)
    assert (nor["squad_em"], nor["gold_in_response"], nor["ramdocs_em"]) == (66.67, 66.67, 33.33)
    # its abstention on q1 would be labelled by RC-RAG's RAG answer, and RC-RAG is not among the methods: unlabelled;
    # q2, q3 answered right: AK
    risk = nor["risk"]
    assert {f: risk[f] for f in ("AK", "AD", "UK", "UD")} == {"AK": 2, "AD": 0, "UK": 0, "UD": 0}
    assert (risk["risk"], risk["carefulness"], risk["coverage"], risk["unlabelled"]) == (0.0, None, 100.0, 1)
    # slices: q1 misinfo, q2 ambiguity (two gold answers), q3 noise; scenario only on q3; 2 or 3 documents
    mix = van["slices"]["mix"]
    assert {k: (v["n"], v["lenient_match"], v["lenient_all_gold"]) for k, v in mix.items()} == {
        "misinfo": (1, 100.0, 100.0), "ambiguity": (1, 100.0, 0.0), "noise": (1, 0.0, 0.0)}
    assert {k: v["n"] for k, v in van["slices"]["scenario"].items()} == {"FA": 1}
    docs = van["slices"]["documents"]
    assert (docs["2"]["n"], docs["2"]["lenient_match"], docs["3"]["n"]) == (2, 100.0, 1)


def test_failed_calls_are_error_rows_and_retry_errors_reruns_them(tiny, tmp_path):
    out = tmp_path / "out"
    with scripted(_script(fail="Who wrote B?")):
        summary = evaluate(_runner(tiny), tiny.questions, METHODS, out)
    results, notes = load_results(out / "results.jsonl")
    assert len(results) == 6 and notes == []  # no row missing
    assert {p for p, r in results.items() if r.error} == {("q2", "no_rag"), ("q2", "vanilla_rag")}
    assert summary["errors"] == {"no_rag": 1, "vanilla_rag": 1} and summary["complete"]
    van = summary["methods"]["vanilla_rag"]
    assert (van["n"], van["errors"], van["scored"], van["lenient_match"]) == (3, 1, 2, 50.0)  # Ann right, Zed wrong

    with scripted(_script()):  # resume alone keeps the error rows
        again = evaluate(_runner(tiny), tiny.questions, METHODS, out, resume=True)
    assert again["errors"] == summary["errors"] and sum(_pairs(out / "results.jsonl").values()) == 6
    with scripted(_script()):
        retried = evaluate(_runner(tiny), tiny.questions, METHODS, out, resume=True, retry_errors=True)
    assert retried["errors"] == {} and retried["methods"]["vanilla_rag"]["lenient_match"] == 66.67
    counts = _pairs(out / "results.jsonl")
    assert counts[("q2", "vanilla_rag")] == 2 and sum(counts.values()) == 8  # appended; the last row wins
    results, _ = load_results(out / "results.jsonl")
    assert not any(r.error for r in results.values())


def test_half_written_last_line_is_repaired_and_reported(tiny, tmp_path):
    out = tmp_path / "out"
    with scripted(_script()):
        evaluate(_runner(tiny), tiny.questions[:2], METHODS, out)
    path = out / "results.jsonl"
    whole = path.read_bytes()
    with open(path, "ab") as fh:
        fh.write(b'{"dataset": "tiny", "model": "scripted/x", "question_id": "q3", "meth')
    rows, notes = read_rows(path)
    assert len(rows) == 4 and "half-written" in notes[0] and ":5:" in notes[0]
    with scripted(_script()):
        summary = evaluate(_runner(tiny), tiny.questions, METHODS, out, resume=True)
    assert any("half-written" in n and "removed" in n for n in summary["notes"]), summary["notes"]
    data = path.read_bytes()
    assert data.startswith(whole) and data.endswith(b"\n")
    assert set(_pairs(path).values()) == {1} and len(_pairs(path)) == 6 and summary["complete"]


def test_missing_pairs_are_counted_and_output_folder_is_checked(tiny, tmp_path):
    out = tmp_path / "out"
    with scripted(_script()):
        evaluate(_runner(tiny), tiny.questions[:1], METHODS, out)
        with pytest.raises(EvaluationError, match="resume"):
            evaluate(_runner(tiny), tiny.questions, METHODS, out)
    from backend.evaluate import summarize

    results, _ = load_results(out / "results.jsonl")
    summary = summarize(tiny, results, methods=METHODS)
    assert summary["missing"] == {"no_rag": 2, "vanilla_rag": 2} and not summary["complete"]
    afile = tmp_path / "f"
    afile.write_text("")
    with pytest.raises(EvaluationError, match="not a folder"):
        evaluate(_runner(tiny), tiny.questions, METHODS, afile)


def test_runner_works_out_of_the_box(tiny):
    runner = Runner(tiny)
    assert runner.cache is None and runner.llm.cache_mode == "off"
    assert Runner(tiny, cache="default").cache is not None
    with scripted(_script()):
        result = Runner(tiny, llm=LLMConfig(model="scripted/x")).run(tiny.questions[0], ["vanilla_rag"])
    assert result["vanilla_rag"].answers == ["Ann"]


def test_a_second_run_on_a_folder_being_written_is_refused(tiny, tmp_path):
    """Another process (or app session) writing the folder holds its lock: a run there is refused, not doubled."""
    from filelock import FileLock

    from backend.evaluate import LOCK

    out = tmp_path / "out"
    out.mkdir()
    with FileLock(out / LOCK):
        with pytest.raises(EvaluationError, match="another run is writing to this folder"):
            evaluate(_runner(tiny), tiny.questions, METHODS, out)
        assert not (out / "results.jsonl").exists()
        refused = _cli("--dataset", str(tiny.path), "--methods", "no_rag", "--out", str(out), "--resume",
                       "--cache-dir", str(tmp_path / "cache"), timeout=300)
        assert refused.returncode == 2 and "another run is writing to this folder" in refused.stderr
    with scripted(_script()):
        summary = evaluate(_runner(tiny), tiny.questions, METHODS, out)  # once released
    assert summary["complete"] and _pairs(out / "results.jsonl") == {(q.id, m): 1 for q in tiny.questions
                                                                      for m in METHODS}


# --- the other reading (evaluate(..., other_reading=True)) ----------------------------------------------------

def test_the_other_reading_is_run_into_its_own_folder_and_summarised(tiny, tmp_path):
    out = tmp_path / "out"
    summary = evaluate(Runner(tiny), tiny.questions, METHODS, out, other_reading=True)  # offline: replies computed
    assert summary == json.loads((out / "summary.json").read_text())
    others, notes = load_results(out / "other_reading" / "results.jsonl")
    assert notes == [] and set(others) == {(q.id, m) for q in tiny.questions for m in METHODS}
    assert {r.reading for r in others.values()} == {"paper"}
    main, _ = load_results(out / "results.jsonl")
    assert {r.reading for r in main.values()} == {"tolerant"}
    for m in METHODS:
        entry = summary["methods"][m]
        other = entry["other_reading"]
        assert other["reading"] == "paper" and other["not_replayed"] == 0 and other["scores"]["n"] == 3
        assert set(other["scores"]) >= {"lenient_match", "squad_em", "ramdocs_em", "refusal_rate"}
        assert entry["reading"] == "tolerant" and entry["decisions_read"] >= 0
    # resumable like the main folder: a second run adds no row to either
    again = evaluate(Runner(tiny), tiny.questions, METHODS, out, resume=True, other_reading=True)
    assert again["methods"] == summary["methods"]
    assert len(_pairs(out / "other_reading" / "results.jsonl")) == 6
    assert sum(_pairs(out / "other_reading" / "results.jsonl").values()) == 6


def test_the_other_reading_of_a_paid_model_only_replays(tiny, tmp_path):
    from backend.evaluate import other_reading_runner
    from backend.llm.cache import CallCache

    hosted = Runner(tiny, llm=LLMConfig(model="openai/x", api_base="http://127.0.0.1:9/v1"),
                    cache=CallCache(tmp_path / "c0.sqlite"))
    other = other_reading_runner(hosted)
    assert (other.llm.cache_mode, other.reading, other.llm.model) == ("replay", "paper", "openai/x")
    assert hosted.llm.cache_mode == "live" and hosted.reading == "tolerant"  # the run's own runner is untouched
    offline = other_reading_runner(Runner(tiny))
    assert offline.llm.cache_mode == Runner(tiny).llm.cache_mode and offline.reading == "paper"

    # a scripted model stands for a paid one: the main run fills the cache, the other reading answers from it
    out = tmp_path / "out"
    with scripted(_script()) as model:
        summary = evaluate(Runner(tiny, llm=LLMConfig(model="scripted/x", num_retries=0),
                                  cache=CallCache(tmp_path / "c1.sqlite")), tiny.questions, METHODS, out,
                           other_reading=True)
        asked = len(model.received)
    assert asked == 6  # one call per pair: the other reading made none
    for m in METHODS:
        assert summary["methods"][m]["other_reading"]["not_replayed"] == 0
        assert summary["methods"][m]["other_reading"]["scores"]["n"] == 3
    # the same rows against an empty cache: every pair of the other reading misses it, is counted, and calls nothing
    out2 = tmp_path / "out2"
    with scripted(_script()) as model:
        evaluate(_runner(tiny), tiny.questions, METHODS, out2)  # the main rows (no cache)
        model.received.clear()
        summary = evaluate(Runner(tiny, llm=LLMConfig(model="scripted/x", num_retries=0),
                                  cache=CallCache(tmp_path / "c2.sqlite")), tiny.questions, METHODS, out2,
                           resume=True, other_reading=True)
        assert model.received == []
    for m in METHODS:
        other = summary["methods"][m]["other_reading"]
        assert other["not_replayed"] == 3 and other["scores"]["n"] == 0, other


def test_without_a_reply_cache_the_other_reading_is_not_run_and_the_summary_says_why(tiny, tmp_path):
    with scripted(_script()) as model:
        summary = evaluate(_runner(tiny), tiny.questions, METHODS, tmp_path / "out", other_reading=True)
        asked = len(model.received)
    assert asked == 6 and not (tmp_path / "out" / "other_reading").exists()
    assert all("other_reading" not in summary["methods"][m] for m in METHODS)
    assert any(n.startswith("other reading not run: this run has no reply cache") for n in summary["notes"])


def test_a_folder_holds_one_reading(tiny, tmp_path):
    """A resume with another --reading is refused, as one with another model is: the folder's rows (and its
    other_reading/ rows) would mix readings and the summary would say neither."""
    out = tmp_path / "out"
    with scripted(_script()):
        evaluate(_runner(tiny), tiny.questions[:2], METHODS, out)
        paper = Runner(tiny, llm=LLMConfig(model="scripted/x", num_retries=0), reading="paper")
        with pytest.raises(EvaluationError, match="holds results read 'tolerant', not 'paper'"):
            evaluate(paper, tiny.questions, METHODS, out, resume=True)
        resumed = evaluate(_runner(tiny), tiny.questions, METHODS, out, resume=True)
    assert all(resumed["methods"][m]["reading"] == "tolerant" and resumed["methods"][m]["n"] == 3 for m in METHODS)


def test_the_other_reading_counts_only_rows_of_that_reading(tiny):
    from backend.evaluate import add_other_reading, summarize

    results = {(q.id, m): MethodResult(method=m, question_id=q.id, answers=["Ann"], reading="tolerant")
               for q in tiny.questions for m in METHODS}
    summary = summarize(tiny, results, methods=METHODS)
    add_other_reading(summary, Runner(tiny), dict(results), tiny.questions)  # stale rows read tolerant, not paper
    for m in METHODS:
        assert summary["methods"][m]["other_reading"]["reading"] == "paper"
        assert summary["methods"][m]["other_reading"]["scores"]["n"] == 0


def test_a_summary_written_before_the_papers_metrics_still_loads():
    from backend.schema.summary import Summary

    old = {"dataset": "d", "model": "m", "questions": 3, "complete": True,
           "methods": {"a": {"n": 3, "errors": 0, "accuracy": 66.67, "strict_em": 33.33, "precision": 66.67,
                             "recall": 50.0, "f1": 55.56, "refusal_rate": 0.0, "mean_calls": 1.0,
                             "slices": {"mix": {"noise": {"n": 1, "accuracy": 0.0, "strict_em": 0.0}}}}}}
    s = Summary.model_validate(old)
    a = s.methods["a"]
    assert (a.lenient_match, a.lenient_all_gold) == (66.67, 33.33)
    assert a.slices["mix"]["noise"].lenient_match == 0.0
    assert (a.squad_em, a.ramdocs_em, a.own_metric, a.other_reading, a.paper("squad_em"), a.paper("risk")) == (
        None, None, None, None, None, None)
    dumped = s.as_dict()["methods"]["a"]
    assert dumped["lenient_match"] == 66.67 and "accuracy" not in dumped and "other_reading" not in dumped
    assert Summary.model_validate(s.as_dict()) == s  # and the new file loads back alike
