"""Every method runs to a result on a real language model over HTTP, reads every reply and says how, and replays for
free (``tests/real_model/conftest.py``)."""

from __future__ import annotations

from tests.real_model.conftest import METHODS, MODEL, runner_for


def test_every_method_returns_a_result_from_the_real_model(real_run):
    for qid, results in real_run.items():
        assert set(results) == set(METHODS), qid
        for name, result in results.items():
            assert result.error is None, (qid, name, result.error)
            assert result.calls, (qid, name)
            assert any(not c.cache_hit for c in result.calls) or name == "ra_rag", (qid, name)
            assert result.answers or result.abstained, (qid, name)
            for call in result.calls:
                assert call.model == MODEL and call.error is None
                # the first run met the server; a hit is a request this run made before (RA-RAG's stage 1 asks what
                # its per-source answers ask again), recorded with how long it took then
                assert not call.cache_hit or call.recorded_latency_s is not None
                assert call.server_s is not None and call.server_s > 0  # llama.cpp's own timings came back
                assert call.finish_reason in ("stop", "length")
                assert call.completion_tokens > 0 or call.cut_off is not None or call.response == ""


def test_every_call_records_how_its_reply_was_read(real_run):
    calls = [c for results in real_run.values() for r in results.values() for c in r.calls]
    assert calls and all(c.read_status in ("exact", "lenient", "unreadable") for c in calls)
    for call in calls:
        if call.read_status != "exact":  # lenient says what it assumed; unreadable names the default the method used
            assert call.read_note, (call.method, call.step, call.response)
        if call.read_status == "unreadable":
            assert "default" in call.read_note or "no reply" in call.read_note or "cut off" in call.read_note, \
                call.read_note
        if call.cut_off is not None:  # a runaway reply is never read as an answer
            assert call.response == "" and call.read_status == "unreadable" and "cut off" in call.read_note


def test_the_local_model_is_free_and_its_calls_queue_for_the_servers_slots(real_run):
    calls = [c for results in real_run.values() for r in results.values() for c in r.calls]
    assert all(c.cost_usd == 0.0 for c in calls)
    sent = [c for c in calls if not c.cache_hit]
    assert all(c.queued_s is not None and c.queued_s >= 0 for c in sent)
    assert all(c.attempts == 1 for c in sent)  # nothing retried on a healthy local server


def test_a_replay_costs_no_call_and_gives_the_same_answers(real_run, tiny, real_cache, local_server):
    from backend.llm.client import LLMConfig

    replay = runner_for(tiny, real_cache, cache_mode="replay")
    assert replay.llm.identity == LLMConfig(model=MODEL).identity  # the weights, not the port, name the model
    for question in tiny.questions:
        again = replay.run(question, METHODS)
        for name, result in again.items():
            first = real_run[question.id][name]
            assert result.error is None, (name, result.error)
            assert all(c.cache_hit for c in result.calls), name
            assert (result.answers, result.abstained) == (first.answers, first.abstained), name
            # concurrent calls finish in any order: the same calls, each read the same way
            assert {c.id: c.read_status for c in result.calls} == {c.id: c.read_status for c in first.calls}, name


def test_evaluate_counts_the_real_models_format_failures(real_run, tmp_path, real_cache, capsys):
    """``evaluate`` over the tiny dataset (answered from the first run's replies) writes a summary whose format
    failures are the unreadable share of the calls the first run recorded."""
    import json

    from backend.cli import main

    cache_dir = real_cache.path.parent
    out = tmp_path / "eval"
    assert main(["evaluate", "--dataset", str(tiny_path()), "--model", MODEL, "--out", str(out),
                 "--cache-dir", str(cache_dir), "--cache-mode", "replay", "--timeout", "300"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    for name in METHODS:
        calls = [c for results in real_run.values() for c in results[name].calls]
        unreadable = sum(c.read_status == "unreadable" for c in calls)
        entry = summary["methods"][name] if "methods" in summary else summary[name]
        assert entry["unreadable_calls"] == unreadable, name
        assert entry["errors"] == 0
        if unreadable:
            assert entry["format_failures"] and entry["format_failures"] > 0


def tiny_path():
    from tests.real_model.conftest import TINY

    return TINY
