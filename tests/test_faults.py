"""The evaluation under faults, through the real HTTP path: ``python -m backend serve-model`` answers 20% of requests
with HTTP 429/500, 5% with garbage text and hangs on 2% far past the client's timeout; ``python -m backend evaluate``
runs every method on 50 ramdocs_dev questions against it (``openai/reader`` + ``--api-base``, no reply cache, so
nothing hides a fault). Every (question, method) row is there once, a failed row names what failed, retries are
bounded and back off (read from the server's request log), and a hung request is abandoned at the timeout. Then a
run killed with SIGKILL resumes with nothing lost and nothing duplicated.

The figures quoted in the README come from the ``FAULTS:`` lines these tests print (``pytest -s``)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from contextlib import contextmanager

import pytest

from backend.data import load_dataset
from backend.evaluate import load_results
from backend.llm.failures import classify_failure
from backend.llm.server import garbage_text, messages_key
from backend.methods import resolve
from backend.paths import SAMPLE_DATA
from tests.conftest import ROOT
from tests.servers import stop_process

pytestmark = pytest.mark.slow

TIMEOUT_S, RETRIES, BACKOFF_S = 3.0, 2, 0.5   # BACKOFF_S: LLMConfig.backoff_s, the first retry's least wait
SEED = 16
FAULTS = ["--fail-rate", "0.20", "--garbage-rate", "0.05", "--hang-rate", "0.02", "--hang-s", "600",
          "--seed", str(SEED)]
DATASET = SAMPLE_DATA / "ramdocs_dev"
METHODS = resolve("all")
#: How late a hung request may end after the client's timeout (the server notices the disconnect on its own loop,
#: on a shared two-core machine): far below the 600 s it would otherwise hang.
HANG_SLACK_S = 3.0


@contextmanager
def fault_server(tmp_path):
    """serve-model with the faults above on a free loopback port; yields (api_base, request log path)."""
    log = tmp_path / "requests.jsonl"
    err = open(tmp_path / "server.err", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "backend", "serve-model", "--port", "0", *FAULTS,
                             "--log-level", "warning", "--request-log", str(log)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        line = proc.stdout.readline()  # printed once the reader is warm
        found = re.search(r"api_base='(http://127\.0\.0\.1:\d+/v1)'", line)
        if found is None:
            pytest.fail(f"serve-model did not start: {line}{(tmp_path / 'server.err').read_text()[-2000:]}")
        yield found[1], log
    finally:
        stop_process(proc, wait=20)
        err.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with fault_server(tmp_path_factory.mktemp("fault-server")) as found:
        yield found


def evaluate_args(api_base: str, out, limit: int, *extra: str) -> list[str]:
    # no reply cache (a cached reply would hide the fault); the retrieval index stays in the session's cache folder
    return [sys.executable, "-m", "backend", "evaluate", "--dataset", str(DATASET), "--limit", str(limit),
            "--methods", "all", "--model", "openai/reader", "--api-base", api_base, "--timeout", str(TIMEOUT_S),
            "--retries", str(RETRIES), "--concurrency", "8", "--cache-mode", "off", "--out", str(out), *extra]


def env() -> dict[str, str]:
    # litellm's OpenAI provider wants a key; serve-model ignores it
    return dict(os.environ, OPENAI_API_KEY="sk-local-serve-model")


def pairs(path) -> Counter:
    return Counter((json.loads(line)["question_id"], json.loads(line)["method"])
                   for line in path.read_text(encoding="utf-8").splitlines())


def read_log(path, skip: int = 0) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()[skip:]]


def test_evaluation_under_faults_has_every_row_bounded_retries_and_timeouts(server, tmp_path):
    api_base, log = server
    already = len(read_log(log)) if log.exists() else 0
    out = tmp_path / "out"
    start = time.monotonic()
    proc = subprocess.run(evaluate_args(api_base, out, 50), cwd=ROOT, env=env(), capture_output=True, text=True,
                          timeout=1200)
    wall = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-3000:]   # 0: every pair has a row, failed ones included

    # every (question, method) pair exactly once
    questions = load_dataset(DATASET).questions[:50]
    counts = pairs(out / "results.jsonl")
    assert set(counts) == {(q.id, m) for q in questions for m in METHODS}
    assert set(counts.values()) == {1}
    results, notes = load_results(out / "results.jsonl")
    assert len(results) == 50 * 7 and notes == []

    # a failed row says what failed: the model call, the kind of failure and where it went
    causes = Counter()
    for (qid, method), r in results.items():
        if r.error:
            assert r.error.startswith("model call failed: openai/reader: "), (qid, method, r.error)
            failure = classify_failure(r.error)
            assert failure.cause in ("rate_limit", "server", "timeout"), (qid, method, r.error)
            assert f"[api_base {api_base}]" in r.error and failure.problem
            causes[failure.cause] += 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["missing"] == {} and summary["questions"] == 50
    assert all(summary["methods"][m]["n"] == 50 and summary["methods"][m]["missing"] == 0 for m in METHODS)
    assert sum(summary["errors"].values()) == sum(causes.values())

    # the faults happened, and garbage replies reached the methods
    requests = read_log(log, already)
    faults = Counter(r["fault"] for r in requests)
    assert faults["fail"] and faults["hang"] and faults["garbage"] and faults["ok"]
    calls = [c for r in results.values() for c in r.calls]
    garbage = {garbage_text(SEED, r["n"]) for r in requests if r["fault"] == "garbage"}
    assert any(c.response in garbage for c in calls)

    # bounded retries: no call tries more than retries + 1 times, and the server saw no request no call accounts for
    assert max(c.attempts for c in calls) <= RETRIES + 1
    attempts, calls_per_key = Counter(), Counter()
    for c in calls:
        attempts[messages_key(c.messages)] += c.attempts
        calls_per_key[messages_key(c.messages)] += 1
    received = Counter(r["key"] for r in requests)
    assert all(received[k] <= attempts[k] for k in received), [k for k in received if received[k] > attempts[k]]

    # backoff: a call's next request comes at least backoff_s after the server answered 429/500 (doubling after)
    by_key = defaultdict(list)
    for r in requests:
        by_key[r["key"]].append(r)
    gaps = defaultdict(list)   # retry number -> seconds between the failed reply and the next request
    for key, rs in by_key.items():
        if calls_per_key[key] != 1:
            continue   # two calls with the same messages: their requests cannot be told apart
        rs.sort(key=lambda r: r["received"])
        for i, (prev, nxt) in enumerate(zip(rs, rs[1:]), 1):
            if prev["status"] in (429, 500):
                gaps[i].append(nxt["received"] - prev["ended"])
    assert gaps[1] and min(g for gs in gaps.values() for g in gs) >= BACKOFF_S
    if gaps[2]:
        assert min(gaps[2]) >= 2 * BACKOFF_S

    # nothing waits past its timeout: every hung request was abandoned by its client at the timeout
    hangs = [r["ended"] - r["received"] for r in requests if r["fault"] == "hang"]
    assert {r["status"] for r in requests if r["fault"] == "hang"} == {499}   # the client left, not the server
    assert max(hangs) < TIMEOUT_S + HANG_SLACK_S

    retried = Counter(c.attempts for c in calls)
    print(f"\nFAULTS: evaluate 50 questions x {len(METHODS)} methods against serve-model {' '.join(FAULTS)}, "
          f"--timeout {TIMEOUT_S:g} --retries {RETRIES}: wall {wall:.0f} s; rows {len(results)}, "
          f"error rows {sum(causes.values())} {dict(causes)}; server requests {len(requests)} {dict(faults)}; "
          f"calls {len(calls)} by attempts {dict(sorted(retried.items()))}; "
          f"backoff gaps after retry 1: min {min(gaps[1]):.2f} s, after retry 2: "
          f"{f'min {min(gaps[2]):.2f} s' if gaps[2] else 'none'}; hung requests abandoned after "
          f"{min(hangs):.2f}-{max(hangs):.2f} s; max call latency (queueing for a slot included) "
          f"{max(c.latency_s for c in calls):.1f} s")


def test_killed_run_under_faults_resumes_with_nothing_lost_or_duplicated(server, tmp_path):
    api_base, _ = server
    limit = 12
    out = tmp_path / "out"
    results = out / "results.jsonl"
    proc = subprocess.Popen(evaluate_args(api_base, out, limit), cwd=ROOT, env=env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            if results.exists() and results.read_bytes().count(b"\n") >= 10:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    at_kill = results.read_bytes()
    whole = at_kill[: at_kill.rfind(b"\n") + 1]   # the complete lines; a half-written one is cut and run again
    killed_rows = whole.count(b"\n")
    assert 10 <= killed_rows < limit * 7

    resumed = subprocess.run(evaluate_args(api_base, out, limit, "--resume"), cwd=ROOT, env=env(),
                             capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after_resume = results.read_bytes()
    assert after_resume.startswith(whole)   # nothing lost: every row written before the kill, byte for byte
    expected = {(q.id, m) for q in load_dataset(DATASET).questions[:limit] for m in METHODS}
    counts = pairs(results)
    assert set(counts) == expected and set(counts.values()) == {1}   # nothing duplicated
    errors_before = {p for p, r in load_results(results)[0].items() if r.error}

    retried = subprocess.run(evaluate_args(api_base, out, limit, "--resume", "--retry-errors"), cwd=ROOT, env=env(),
                             capture_output=True, text=True, timeout=900)
    assert retried.returncode == 0, retried.stderr[-3000:]
    assert results.read_bytes().startswith(after_resume)   # a retry appends; it rewrites nothing
    counts = pairs(results)
    assert set(counts) == expected
    assert {p for p, n in counts.items() if n > 1} == errors_before and set(counts.values()) <= {1, 2}
    final, notes = load_results(results)
    assert set(final) == expected and notes == []   # the newest row of a pair wins
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["questions"] == limit
    errors_after = {p for p, r in final.items() if r.error}
    print(f"\nFAULTS: kill -9 after {killed_rows} of {limit * 7} rows, --resume: {len(expected)} pairs once "
          f"each, the {killed_rows} earlier rows byte-identical; error rows {len(errors_before)}, "
          f"after --retry-errors {len(errors_after)} ({len(errors_before)} rows superseded)")
