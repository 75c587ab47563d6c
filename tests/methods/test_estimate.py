"""Every registered method declares its cost estimate (``MethodSpec.estimate``), and the estimate follows the calls
the method really makes: on the bundled datasets' questions, run with the offline model, the calls made lie between
the estimate's fewest and most, equal them where no step is conditional, and a dataset-level preparation not computed
yet makes exactly the calls estimated for it. A method added to the registry is covered the moment it is registered."""

from __future__ import annotations

import pytest

from backend.cost import estimate_run
from backend.data import load_dataset
from backend.llm.client import LLMConfig
from backend.methods import METHODS, SPECS
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from backend.schema import Dataset

NAMES = sorted(METHODS)
CASES = ["multisource", "ramdocs_dev", "scenarios"]


@pytest.fixture(scope="module")
def datasets() -> dict[str, Dataset]:
    out = {}
    for name in CASES:
        ds = load_dataset(SAMPLE_DATA / name)
        out[name] = ds.model_copy(update={"questions": ds.questions[:4]})
    return out


def test_every_registered_method_declares_an_estimate():
    assert [n for n, spec in SPECS.items() if spec.estimate is None] == []


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", NAMES)
def test_the_calls_made_lie_within_the_estimate(name, case, datasets):
    ds = datasets[case]
    runner = Runner(ds, llm=LLMConfig(model="offline/reader", cache_mode="off", concurrency=8))
    needs_preparation = runner.prepare_key(name) is not None and runner.prepared(name) is None
    for question in ds.questions[:2]:
        est = estimate_run(runner, [question], [name]).methods[name]
        result = runner.run(question, [name])[name]
        assert result.error is None, result.error
        made = len(result.calls)
        prep = est.preparation_calls  # counted in the estimate, made before the run (``Runner.prepare_all``)
        assert est.calls_min - prep <= made <= est.calls - prep, (question.id, est.steps)
        if not est.upper_bound:
            assert made == est.calls - prep
        if needs_preparation:   # the first run computed the preparation: exactly the calls estimated for it
            assert result.preparation is not None and result.preparation.calls == est.preparation_calls > 0
            needs_preparation = False
        else:
            assert est.preparation_calls == 0
