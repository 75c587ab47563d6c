"""What model calls cost, in US dollars, from litellm's model price map (``litellm.model_cost``).

* ``is_free``: the project's own models (the offline reader ``offline/<name>``, the tests' ``scripted/<name>``) and
  the local model (``local/<name>``: llama.cpp on this CPU) run on this machine and cost $0 — said as such, never
  "unknown".
* ``price``: a model's price per prompt and per completion token, or None when litellm's map does not know it (a
  self-hosted server under an ``openai/<name>`` alias, a new model): the app and the CLI then say "price unknown".
  A user's own price is registered with ``litellm.register_model`` (the tests do so for ``openai/test-priced``).
* ``reply_cost``: what one reply cost, litellm's ``completion_cost`` (the provider's reported usage, priced), or None.

litellm is imported on first use (~2 CPU-s): the offline model's prices and a page that only shows results never pay
it. ``backend`` sets ``LITELLM_LOCAL_MODEL_COST_MAP`` before, so the map is the one bundled with litellm, never
fetched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import backend  # noqa: F401  (LITELLM_LOCAL_MODEL_COST_MAP before litellm is imported)

#: Providers served on this machine by the project itself: their calls cost nothing.
FREE_PROVIDERS = ("offline/", "scripted/", "local/")
FREE_NOTE = "the offline model runs on this machine: $0"
#: ``local/<name>``: a real language model (llama.cpp) on this machine's CPU.
LOCAL_NOTE = "the local model runs on this CPU (llama.cpp, no network, no key): $0"
UNKNOWN_NOTE = "price unknown (litellm's model price map does not list this model)"


def is_free(model: str) -> bool:
    """Calls to ``model`` cost nothing (the offline reader, the tests' scripted models)."""
    return model.startswith(FREE_PROVIDERS)


@dataclass(frozen=True)
class Price:
    """US dollars per token."""

    prompt: float
    completion: float

    def of(self, prompt_tokens: int, completion_tokens: int) -> float:
        return prompt_tokens * self.prompt + completion_tokens * self.completion


FREE = Price(0.0, 0.0)


def price(model: str, api_base: str | None = None) -> Price | None:
    """``model``'s price per token from litellm's map (``$0`` for the free models); None when the map does not list
    it. The map is read directly: litellm's own lookups answer $0 for some models the map does not list."""
    if is_free(model):
        return FREE
    import litellm

    litellm.suppress_debug_info = True
    for name in _names(litellm, model, api_base):
        info = litellm.model_cost.get(name)
        if info and info.get("input_cost_per_token") is not None:
            return Price(float(info["input_cost_per_token"]), float(info.get("output_cost_per_token") or 0.0))
    return None


def _names(litellm, model: str, api_base: str | None) -> list[str]:
    """The keys ``model`` may have in the map: as given, and as litellm resolves it (name, provider/name)."""
    try:
        name, provider, *_ = litellm.get_llm_provider(model, api_base=api_base)
    except Exception:  # noqa: BLE001 - no provider litellm knows: only the name as given
        return [model]
    return list(dict.fromkeys([model, f"{provider}/{name}", name]))


def reply_cost(response: Any, model: str) -> float | None:
    """What one provider reply cost: $0 for the free models, else litellm's ``completion_cost`` of the reply (its
    reported usage at the map's price); None when litellm cannot price it. Never raises."""
    if is_free(model):
        return 0.0
    if price(model) is None:  # not in the map: litellm's fallbacks would call it $0
        return None
    hidden = getattr(response, "_hidden_params", None) or {}
    if hidden.get("response_cost") is not None:  # litellm priced it already while handling the reply
        return float(hidden["response_cost"])
    import litellm

    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:  # noqa: BLE001 - an unmapped model
        return None


def price_note(model: str, api_base: str | None = None) -> str:
    """One line on what ``model`` costs, for the estimate's caption."""
    if model.startswith("local/"):
        return LOCAL_NOTE
    if is_free(model):
        return FREE_NOTE
    found = price(model, api_base)
    if found is None:
        return UNKNOWN_NOTE
    return (f"${found.prompt * 1e6:,.2f} per million prompt tokens, ${found.completion * 1e6:,.2f} per million "
            "completion tokens (litellm's model price map)")


def usd(value: float | None) -> str:
    """A dollar amount as the app and the CLI print it ("price unknown" for None)."""
    if value is None:
        return "price unknown"
    if value == 0:
        return "$0"
    if value < 0.0001:
        return "< $0.0001"
    if value < 0.01:
        return f"${value:.4f}"
    return f"${value:,.2f}"
