"""Each call records what it cost (issue 25 §6): litellm's completion cost of the reply for a model whose price is
known — here one registered for the test and served by a real serve-model over HTTP —, $0 for the offline model and
for a cache hit (which shows what it saved), None when the price is unknown."""

from __future__ import annotations

import litellm
import pytest

from backend.llm.client import LLMClient, LLMConfig, LLMError, default_cache
from backend.llm.pricing import is_free, price, usd
from backend.llm.server import running_server

PRICED = "openai/test-priced"
PER_PROMPT, PER_COMPLETION = 1e-6, 2e-6
QUESTION = "Who designed the Velmora Bridge?"
MESSAGES = [{"role": "user", "content": f"Context: The Velmora Bridge was designed by Ingrid Haldane.\n"
                                        f"Question: {QUESTION}"}]


@pytest.fixture(scope="module", autouse=True)
def priced_model():
    """A price for ``openai/test-priced`` in litellm's map (what a user does for a model the map does not list)."""
    litellm.register_model({PRICED: {"input_cost_per_token": PER_PROMPT, "output_cost_per_token": PER_COMPLETION,
                                     "litellm_provider": "openai", "mode": "chat"}})


def ask(model: str, api_base: str | None, cache=None, **cfg):
    client = LLMClient(LLMConfig(model=model, api_base=api_base, timeout_s=10, num_retries=0,
                                 cache_mode="live" if cache else "off", **cfg), api_key="sk-test-0123456789",
                       cache=cache)
    return client.complete(MESSAGES, task="keyword_answer", step="answer", question=QUESTION)


def test_a_priced_model_over_http_records_litellms_cost_and_a_cache_hit_records_what_it_saved(tmp_path):
    cache = default_cache(tmp_path)
    with running_server(model_name="test-priced") as srv:
        first = ask(PRICED, srv.base_url, cache)
        again = ask(PRICED, srv.base_url, cache)
    expected = first.prompt_tokens * PER_PROMPT + first.completion_tokens * PER_COMPLETION
    assert first.prompt_tokens > 0 and first.cost_usd == pytest.approx(expected) and first.saved_usd is None
    assert again.cache_hit and again.cost_usd == 0.0 and again.saved_usd == pytest.approx(expected)
    cache.close()


def test_the_offline_model_costs_nothing_and_an_unknown_price_is_unknown():
    offline = ask("offline/reader", None)
    assert offline.cost_usd == 0.0 and is_free("offline/reader") and usd(0.0) == "$0"
    with running_server() as srv:               # serve-model under a name litellm's price map does not list
        unknown = ask("openai/reader", srv.base_url)
    assert unknown.response and unknown.cost_usd is None and price("openai/reader", srv.base_url) is None
    assert usd(None) == "price unknown"


def test_a_failed_call_of_a_priced_model_has_no_known_cost():
    with running_server(model_name="test-priced", fail_first=1) as srv, pytest.raises(LLMError) as failed:
        ask(PRICED, srv.base_url)
    assert failed.value.call is not None and failed.value.call.cost_usd is None
