"""Load, in the background, what the first run of methods will need: the embedding model and chromadb (~1.2 CPU-s;
every run of all methods: BRIDGE searches the index), ROUGE-L's rouge_score + nltk (~1 CPU-s: counterfactual
prompting's answer match) and litellm (~2 CPU-s: any model call not answered from the reply cache).

The app starts it once per process after drawing its first page, so these loads overlap the time a user spends
choosing a dataset and a question instead of adding to the first Inspect result; no page's first render waits for
them. A failure here is ignored: the run that needs the library reports it.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_started = False


def _embedding_model() -> None:
    import backend.retrieval  # noqa: F401  (chromadb)
    from backend.embeddings import get_model

    get_model()


def _rouge() -> None:
    from backend.methods.counterfactual.parse import _rouge

    _rouge()


def _litellm() -> None:
    from backend.llm.client import _litellm

    _litellm()


def _load() -> None:
    for step in (_embedding_model, _rouge, _litellm):  # in the order a run answered from the reply cache needs them
        try:
            step()
        except Exception:  # noqa: BLE001 - the run that needs it reports the failure
            pass


def start() -> None:
    """Start the background loads, once per process (later calls return at once)."""
    global _started
    with _lock:
        if _started:
            return
        _started = True
    threading.Thread(target=_load, name="conflictlens-warmup", daemon=True).start()
