"""The store under load and under a kill: two processes writing 500 labels each at once, and ``kill -9`` in the
middle of a stream of saves (nothing committed is lost, the file stays sound)."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

import pytest

from backend.labels import LabelDraft, LabelStore
from tests.conftest import ROOT
from tests.labels.writer import DATASET


def _writer(where, n, analyst) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.labels.writer", str(where), str(n), analyst], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _two_writers(where) -> list[str]:
    procs = [_writer(where, 500, name) for name in ("ana", "ben")]  # the store does not exist yet: both create it
    uids = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        uids += out.split()
    return uids


def _check_thousand(store: LabelStore, uids: list[str]) -> None:
    versions = store.versions(DATASET)
    assert len(versions) == 1000 and store.count() == 1000
    assert sorted(v.uid for v in versions) == sorted(uids)
    assert Counter(v.analyst for v in versions) == {"ana": 500, "ben": 500}
    for qid in {v.question_id for v in versions}:  # each question's versions are 1..n; each analyst's version is
        history = store.history(DATASET, qid)      # on that analyst's previous one (their own chain)
        assert [h.version for h in history] == list(range(1, len(history) + 1))
        for who in ("ana", "ben"):
            chain = [h for h in history if h.analyst == who]
            assert [h.supersedes for h in chain] == [None] + [prev.uid for prev in chain[:-1]]
        assert set(store.current(DATASET)[qid].analysts) == {h.analyst for h in history}  # both labels current


def test_two_processes_write_500_labels_each_on_sqlite(tmp_path):
    where = tmp_path / "labels.db"
    uids = _two_writers(where)
    store = LabelStore(where)
    _check_thousand(store, uids)
    with sqlite3.connect(where) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_two_processes_write_500_labels_each_on_postgresql(postgres):
    from tests.servers import fresh_database

    where = fresh_database(postgres, "load")
    _check_thousand(LabelStore(where), _two_writers(where))


def test_a_kill_mid_write_loses_nothing_committed(tmp_path):
    where = tmp_path / "labels.db"
    proc = _writer(where, 100_000, "ana")
    committed = []
    deadline = time.monotonic() + 120
    while len(committed) < 200 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        committed.append(line.strip())
    os.kill(proc.pid, signal.SIGKILL)  # mid-stream: very likely inside a transaction
    proc.wait(timeout=30)
    committed += proc.stdout.read().split()  # whatever it had printed: committed too
    if len(committed) < 200:
        pytest.fail(f"the writer printed only {len(committed)} labels: {proc.stderr.read()[-500:]}")
    with sqlite3.connect(where) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    store = LabelStore(where)
    stored = {v.uid for v in store.versions(DATASET)}
    assert set(committed) <= stored
    assert len(stored) - len(committed) <= 1  # at most the one committed between its print and the kill
    after = store.save(LabelDraft(dataset=DATASET, question_id="q00", answers=["after"], analyst="ben"))
    assert after.version == len(store.history(DATASET, "q00"))
