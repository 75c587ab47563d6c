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
assert {'litellm', 'rouge_score', 'chromadb'} <= set(sys.modules)
assert _rouge.cache_info().currsize == 1 and embeddings._models, 'the scorer and the embedding model are loaded'
assert gc.isenabled() and gc.get_freeze_count() > 100_000, 'the collector is back on, the loaded modules frozen'
assert not {'scipy', 'sklearn'} & set(sys.modules), "nltk's optional extras stay unloaded (backend.imports)"
print('ok')
"""


def test_one_background_load_per_process_brings_in_what_a_run_needs():
    """In a fresh interpreter: this one has imported everything already."""
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
