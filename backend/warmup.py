"""Load, in the background, what the first run of methods will need: the embedding model (every run of all
methods: BRIDGE scores and searches with it), what each method loads of its own (``MethodSpec.warm``: ROUGE-L's
rouge_score + nltk for counterfactual prompting's answer match, ~0.3 CPU-s; bm25s for BRIDGE; backend.imports) and
litellm (~1.8 CPU-s: any model call not answered from the reply cache). Not chromadb: only ``retrieve`` mode and
the Dataset page search the dense index. ``python -m backend inspect`` starts it too, before loading the dataset.

The app starts it once per process after drawing its first page, so these loads overlap the time a user spends
choosing a dataset and a question instead of adding to the first Inspect result; no page's first render waits for
them. A failure here is ignored: the run that needs the library reports it. litellm comes last (a run answered from
the reply cache never needs it), unless a model call already waits for it (``client.LITELLM_WANTED``: a first run
on a cold cache, e.g. a page opened on one's own file): then next, so that ROUGE-L's nltk is not imported at the same
time, halving that import's share of the GIL while the first result waits (benchmarks/own_data.py).

The loads create ~500,000 long-lived objects, and Python's collector walks all of them in every full collection:
several during these loads (3.2 instead of 2.3 CPU-s; benchmarks/import_cost.py), and more while the first run
allocates, all holding the GIL. So the collector is paused while they load; then the garbage made meanwhile is
collected and what is left is frozen (``gc.freeze``: module-level objects that live as long as the process), so later
collections walk only what runs create.
"""

from __future__ import annotations

import atexit
import gc
import threading

_lock = threading.Lock()
_started = False
#: Set at exit: the loads stop after the one in progress. A daemon thread frozen at interpreter shutdown in the middle
#: of an import holds the import lock, and a finaliser that imports (litellm's HTTP handler's ``__del__``) then waits
#: for it forever: ``inspect`` on a cold cache hung at exit.
_stop = threading.Event()
_thread: threading.Thread | None = None


def _embedding_model() -> None:
    # not chromadb (0.6 CPU-s): only ``retrieve`` mode and the Dataset page's search use the dense index; BRIDGE's
    # retriever in ``given`` mode is backend.corpus (bm25s, loaded by MethodSpec.warm)
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
        # in the order a run answered from the reply cache needs them, but litellm next once a call waits for it
        # (a first look's first result: the methods' own loads would only compete with its import)
        from backend.llm.client import LITELLM_WANTED

        pending = [_embedding_model, _methods, _litellm]
        while pending and not _stop.is_set():
            step = _litellm if _litellm in pending and LITELLM_WANTED.is_set() else pending[0]
            pending.remove(step)
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


def finish() -> None:
    """Stop the loads after the one in progress and wait for it (at exit: see ``_stop``)."""
    _stop.set()
    if _thread is not None:
        _thread.join()


def start() -> None:
    """Start the background loads, once per process (later calls return at once)."""
    global _started, _thread
    with _lock:
        if _started:
            return
        _started = True
    _thread = threading.Thread(target=_load, name="conflictlens-warmup", daemon=True)
    atexit.register(finish)  # atexit runs before daemon threads are frozen: the load in progress ends cleanly
    _thread.start()
