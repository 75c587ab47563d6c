"""The real-model tier: SmolLM2-135M-Instruct on llama.cpp's server (``xllamacpp``), started once per test session on
the bundled weights, answering every method over HTTP on a tiny dataset (``tests/fixtures/real_model``: prompts of
~200 tokens).

What is asserted is structure and honesty -- every method returns, every call is read and says how, an unreadable
reply is flagged with the paper's default named, a replay costs nothing -- never accuracy: a 135M model is wrong
often, and temperature 0 is not bit-stable across llama.cpp's prompt cache (dependencies.md §9).

The server and the weights are installed by the README's test command (``scripts/test.sh``, which sets
``CONFLICTLENS_REAL_MODEL=required``): there a missing server or weights fail the tier; elsewhere they skip it, saying
what to install.
"""

from __future__ import annotations

import os

import pytest

from tests.conftest import FIXTURES

TINY = FIXTURES / "real_model"
MODEL = "local/smollm2"
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/real_model/" in str(item.fspath):
            item.add_marker(pytest.mark.real_model)
            item.add_marker(pytest.mark.slow)


METHODS = ["ra_rag", "astute", "madam", "counterfactual", "bridge", "no_rag", "vanilla_rag"]


def _unavailable(why: str):
    if os.environ.get("CONFLICTLENS_REAL_MODEL") == "required":
        pytest.fail(f"the real-model tier cannot run: {why}", pytrace=False)
    pytest.skip(f"the real-model tier needs the local model: {why}")


@pytest.fixture(scope="session")
def local_server():
    """The session's llama.cpp server for local/smollm2 (the one every client of this process uses)."""
    from backend.llm.local.server import LocalModelError, ensure

    try:
        server = ensure("smollm2")
    except LocalModelError as err:
        _unavailable(str(err))
    yield server


@pytest.fixture(scope="session")
def tiny():
    from backend.data import load_dataset

    return load_dataset(TINY)


def runner_for(dataset, cache, **llm):
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    # a generous per-call floor: the timeout also scales with the tokens asked for at the measured speed
    return Runner(dataset, llm=LLMConfig(model=MODEL, timeout_s=300, **llm), cache=cache)


@pytest.fixture(scope="session")
def real_cache():
    """The session's own reply cache (``CONFLICTLENS_CACHE_DIR``), which the app and the CLI open too: what the real
    run recorded, they answer from."""
    from backend.llm.client import default_cache

    return default_cache()


@pytest.fixture(scope="session")
def real_run(local_server, tiny, real_cache):
    """Every method on every question of the tiny dataset, live against the server: {question id: {method: result}}."""
    runner = runner_for(tiny, real_cache)
    return {q.id: runner.run(q, METHODS) for q in tiny.questions}
