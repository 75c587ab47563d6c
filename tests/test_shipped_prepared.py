"""The dataset-level artefacts shipped with the bundled datasets (``sample_data/prepared/``, RA-RAG's stage 1 with
the offline model): found by a default runner without a call, never by another setting, and what a fresh
computation gives today (a change to a method or the reader that moves them fails here, instead of shipping a stale
estimate)."""

import json

import pytest

from backend import prepared as store
from backend.data import BUNDLED, load_dataset
from backend.llm.client import LLMConfig
from backend.methods import METHODS
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from backend.sample.prepared import compute

SHIPPED = sorted(p.name for p in store.SHIPPED_DIR.rglob("*.json"))


def _with_prepare():
    return [(ds, name) for ds in BUNDLED for name, cls in sorted(METHODS.items()) if cls.prepared_type is not None]


def test_every_bundled_dataset_that_needs_an_artefact_ships_one():
    expected = []
    for ds_name, name in _with_prepare():
        runner = Runner(load_dataset(SAMPLE_DATA / ds_name), llm=LLMConfig(cache_mode="off"))
        if (key := runner.prepare_key(name)) is not None:
            expected.append(store.path(METHODS[name].prepared_folder or name, ds_name, key, store.SHIPPED_DIR).name)
    assert expected and sorted(expected) == SHIPPED


def test_a_default_runner_reuses_the_shipped_estimate_and_other_settings_do_not(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))   # an empty user cache
    ds = load_dataset(SAMPLE_DATA / "multisource")
    runner = Runner(ds, llm=LLMConfig(cache_mode="off"))
    est = runner.prepared("ra_rag")
    assert est is not None and est.dataset == "multisource" and est.questions == 200
    result = runner.run(ds.questions[0], ["ra_rag"])["ra_rag"]
    assert result.error is None and result.preparation.reused           # this run paid nothing for stage 1
    assert not list(tmp_path.rglob("*.json"))                            # nothing recomputed into the user cache
    other = Runner(ds, llm=LLMConfig(cache_mode="off"), method_params={"ra_rag": {"calibration_size": 50}})
    assert other.prepared("ra_rag") is None
    monkeypatch.setenv("CONFLICTLENS_SHIPPED_PREPARED", "0")
    assert Runner(ds, llm=LLMConfig(cache_mode="off")).prepared("ra_rag") is None


@pytest.mark.slow
@pytest.mark.parametrize("ds_name, name", _with_prepare())
def test_the_shipped_artefact_is_what_a_fresh_computation_gives(ds_name, name):
    found = compute(load_dataset(SAMPLE_DATA / ds_name), name)
    if found is None:
        pytest.skip(f"{name} prepares no dataset-level artefact on {ds_name} (its prepare_key is None), so none is "
                    f"shipped in sample_data/prepared/ to compare")
    artefact, preparation, key = found
    folder = METHODS[name].prepared_folder or name
    path = store.path(folder, ds_name, key, store.SHIPPED_DIR)
    assert path.is_file(), f"{path} is not shipped: `python -m backend build-sample` writes it"
    shipped = json.loads(path.read_text(encoding="utf-8"))
    assert shipped == {"preparation": preparation.model_dump(mode="json"), "artefact": artefact.model_dump(mode="json")}
