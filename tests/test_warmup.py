"""backend.warmup: one background load per process of what a first run needs, off every page's render path."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

SCRIPT = """
import gc, sys, threading
from backend import warmup
from backend import embeddings
assert not {'litellm', 'rouge_score', 'chromadb'} & set(sys.modules)
import time, weakref
warmup.start(); warmup.start()
loads = [t for t in threading.enumerate() if t.name == 'conflictlens-warmup']
assert len(loads) == 1, loads
deadline = time.monotonic() + 60
while gc.isenabled() and time.monotonic() < deadline:
    time.sleep(0.001)
assert not gc.isenabled(), 'the collector is paused while the loads run'
class Cycle: pass
garbage = Cycle(); garbage.me = garbage; ref = weakref.ref(garbage); del garbage   # made by another thread meanwhile
loads[0].join(120)
assert ref() is None, 'garbage made during the loads was frozen with them (leaked)'
from backend.methods.counterfactual.parse import _rouge
assert {'litellm', 'rouge_score', 'bm25s'} <= set(sys.modules)
# chromadb is for retrieve mode and the Dataset page only: a given-mode run (BRIDGE too: backend.corpus) never loads it
assert 'chromadb' not in sys.modules
assert _rouge.cache_info().currsize == 1 and embeddings._models, 'the scorer and the embedding model are loaded'
assert gc.isenabled() and gc.get_freeze_count() > 100_000, 'the collector is back on, the loaded modules frozen'
# scipy.sparse is bm25s's own (BRIDGE's warm-up); nltk's extras would bring scipy.stats and scikit-learn
assert not {'scipy.stats', 'sklearn'} & set(sys.modules), "nltk's optional extras stay unloaded (backend.imports)"
print('ok')
"""


def test_one_background_load_per_process_brings_in_what_a_run_needs():
    """In a fresh interpreter: this one has imported everything already."""
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_litellm_comes_next_once_a_call_waits_for_it(monkeypatch):
    """A run's first model call waits for litellm: the warm-up's other loads then come after it, not during it;
    otherwise (a run answered from the reply cache never needs litellm) litellm comes last."""
    from backend import warmup
    from backend.llm import client

    order: list[str] = []
    for name in ("_embedding_model", "_methods", "_litellm"):
        monkeypatch.setattr(warmup, name, lambda name=name: order.append(name))
    monkeypatch.setattr(client, "LITELLM_WANTED", client.threading.Event())
    monkeypatch.setattr(warmup.gc, "freeze", lambda: None)  # nothing of this test process is frozen
    warmup._load()
    assert order == ["_embedding_model", "_methods", "_litellm"]
    order.clear()
    client.LITELLM_WANTED.set()
    warmup._load()
    assert order == ["_litellm", "_embedding_model", "_methods"]


EXIT_SCRIPT = """
import atexit, sys
from backend import warmup
# atexit runs its callbacks last-registered first: this one runs after whatever warmup.start() registers
atexit.register(lambda: print('alive' if warmup._thread.is_alive() else 'stopped', flush=True))
warmup.start()
sys.exit(0)   # at once: the loads are in the middle of an import
"""


def test_a_process_that_exits_during_the_loads_stops_them_before_shutdown():
    """The interpreter freezes daemon threads at shutdown; one frozen mid-import holds the import lock, and a
    finaliser that imports (litellm's HTTP handler's ``__del__``) then hangs the exit (``inspect`` on a cold cache
    did). The warm-up is stopped and joined at exit instead: by then its thread has ended."""
    out = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "stopped", (out.stdout, out.stderr[-2000:])


def test_finish_stops_the_loads_after_the_one_in_progress(monkeypatch):
    from backend import warmup
    from backend.llm import client

    order: list[str] = []
    monkeypatch.setattr(client, "LITELLM_WANTED", client.threading.Event())  # no call waits: the usual order

    def first() -> None:
        order.append("first")
        warmup._stop.set()   # as ``finish`` does at exit while this load runs
    monkeypatch.setattr(warmup, "_stop", warmup.threading.Event())
    monkeypatch.setattr(warmup, "_embedding_model", first)
    monkeypatch.setattr(warmup, "_methods", lambda: order.append("methods"))
    monkeypatch.setattr(warmup, "_litellm", lambda: order.append("litellm"))
    monkeypatch.setattr(warmup.gc, "freeze", lambda: None)
    warmup._load()
    assert order == ["first"]
