"""Load, in the background, what the first run of methods will need: the embedding model and chromadb (~0.6 CPU-s;
every run of all methods: BRIDGE searches the index), what each method loads of its own (``MethodSpec.warm``:
ROUGE-L's rouge_score + nltk for counterfactual prompting's answer match, ~0.3 CPU-s; backend.imports) and litellm
(~1.8 CPU-s: any model call not answered from the reply cache).

The app starts it once per process after drawing its first page, so these loads overlap the time a user spends
choosing a dataset and a question instead of adding to the first Inspect result; no page's first render waits for
them. A failure here is ignored: the run that needs the library reports it.

The loads create ~500,000 long-lived objects, and Python's collector walks all of them in every full collection:
several during these loads (3.2 instead of 2.3 CPU-s; benchmarks/import_cost.py), and more while the first run
allocates, all holding the GIL. So the collector is paused while they load; then the garbage made meanwhile is
collected and what is left is frozen (``gc.freeze``: module-level objects that live as long as the process), so later
collections walk only what runs create.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_started = False


def _embedding_model() -> None:
    import backend.retrieval  # noqa: F401  (chromadb)
    from backend.embeddings import get_model

    get_model()


def _methods() -> None:
    """What each method's first run loads of its own (``MethodSpec.warm``: counterfactual prompting's ROUGE-L)."""
    from backend.methods import SPECS

    for spec in SPECS.values():
        if spec.warm is not None:
            spec.warm()


def _litellm() -> None:
    from backend.llm.client import _litellm

    _litellm()


def _load() -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        # in the order a run answered from the reply cache needs them
        for step in (_embedding_model, _methods, _litellm):
            try:
                step()
            except Exception:  # noqa: BLE001 - the run that needs it reports the failure
                pass
    finally:
        # Everything allocated meanwhile (by any thread: a session's first run too) is still in the youngest
        # generation: collect it first (~0.2 CPU-s), so that no cyclic garbage is frozen, and leaked, with the modules.
        gc.collect(0)
        gc.freeze()
        if was_enabled:
            gc.enable()


def start() -> None:
    """Start the background loads, once per process (later calls return at once)."""
    global _started
    with _lock:
        if _started:
            return
        _started = True
    threading.Thread(target=_load, name="conflictlens-warmup", daemon=True).start()
