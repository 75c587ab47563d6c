"""``evaluate --engine ray`` on a real Ray cluster (``ray start --head`` on loopback, started here): every (question,
method) row is written exactly once, a resumed run adds only the missing pairs, and the rows are the local engine's
(but for wall-clock fields)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from backend.evaluate import EvaluationError
from backend.evaluate_ray import is_loopback, runtime_env
from backend.paths import REPO_ROOT, SAMPLE_DATA
from backend.schema import MethodResult, without_timings
from tests.conftest import ROOT
from tests.servers import ray_head

METHODS = ["no_rag", "vanilla_rag", "madam"]


def _evaluate(out, limit: int, *extra: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "backend", "evaluate", "--dataset", str(SAMPLE_DATA / "ramdocs_dev"),
                           "--methods", ",".join(METHODS), "--limit", str(limit), "--cache-mode", "off",
                           "--out", str(out), *extra], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _rows(out) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def _by_pair(rows: list[dict]) -> dict[tuple[str, str], dict]:
    return {(r["question_id"], r["method"]): {**r, "result": without_timings(MethodResult.model_validate(r["result"]))}
            for r in rows}


@pytest.mark.slow
def test_ray_engine_writes_each_pair_once_resumes_and_matches_the_local_engine(tmp_path):
    with ray_head() as address:
        ray_out = tmp_path / "ray"
        first = _evaluate(ray_out, 3, "--engine", "ray", "--ray-address", address)
        assert Counter((r["question_id"], r["method"]) for r in _rows(ray_out)).total() == 3 * len(METHODS)
        assert "madam" in first.stdout
        _evaluate(ray_out, 5, "--engine", "ray", "--ray-address", address, "--resume")
    rows = _rows(ray_out)
    pairs = Counter((r["question_id"], r["method"]) for r in rows)
    questions = [json.loads(line)["id"] for line in
                 (SAMPLE_DATA / "ramdocs_dev" / "questions.jsonl").read_text(encoding="utf-8").splitlines()[:5]]
    assert set(pairs) == {(q, m) for q in questions for m in METHODS}
    assert set(pairs.values()) == {1}  # exactly once each: the resumed run added only the two new questions
    summary = json.loads((ray_out / "summary.json").read_text())
    assert summary["complete"] and summary["questions"] == 5 and summary["notes"] == []
    assert all(summary["methods"][m]["n"] == 5 and summary["methods"][m]["errors"] == 0 for m in METHODS)

    local_out = tmp_path / "local"
    _evaluate(local_out, 5)
    local, ray_rows = _by_pair(_rows(local_out)), _by_pair(rows)
    assert local.keys() == ray_rows.keys()
    for pair in local:
        assert ray_rows[pair] == local[pair], pair
    local_summary = json.loads((local_out / "summary.json").read_text())
    for m in METHODS:  # the same metrics from the same rows
        for metric in ("lenient_match", "lenient_all_gold", "squad_em", "ramdocs_em", "refusal_rate", "mean_calls"):
            assert summary["methods"][m][metric] == local_summary["methods"][m][metric], (m, metric)


def test_workers_get_the_offline_environment_and_this_checkout(monkeypatch, tmp_path):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = runtime_env()["env_vars"]
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True" and env["HF_HUB_OFFLINE"] == "1"
    assert env["RAY_USAGE_STATS_ENABLED"] == "0" and env["CONFLICTLENS_CACHE_DIR"] == str(tmp_path)
    assert env["PYTHONPATH"].split(":") == [str(REPO_ROOT), "/elsewhere"]
    assert is_loopback("127.0.0.1:6379") and is_loopback("localhost:1") and not is_loopback("10.0.0.5:6379")
    assert not is_loopback(None)


def test_ray_arguments_need_the_ray_engine(tmp_path):
    done = subprocess.run([sys.executable, "-m", "backend", "evaluate", "--dataset", str(SAMPLE_DATA / "ramdocs_dev"),
                           "--out", str(tmp_path / "y"), "--ray-address", "127.0.0.1:1"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--engine ray" in done.stderr


def test_a_worker_runner_is_built_from_plain_data_and_adopts_the_drivers_stage_1(monkeypatch, tmp_path):
    import pickle

    from backend.data import load_dataset
    from backend.evaluate_ray import build_runner, runner_spec
    from backend.methods.ra_rag import RARAG
    from backend.runner import Runner

    ds = load_dataset(SAMPLE_DATA / "multisource")
    driver = Runner(ds, method_params={"ra_rag": {"calibration_size": 2}})
    spec = runner_spec(driver, ["no_rag", "ra_rag"])  # computes stage 1 here, once
    assert list(spec["prepared"]) == ["ra_rag"] and spec["chroma_url"] is None and spec["cache"] is None
    assert pickle.loads(pickle.dumps(spec)) == spec and json.loads(json.dumps(spec)) == spec  # plain data
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path))  # a node whose disk holds no stage 1
    worker = build_runner(ds, spec)
    assert worker.prepared("ra_rag") == driver.prepared("ra_rag")
    assert worker.preparation("ra_rag") == driver.preparation("ra_rag")
    assert not (tmp_path / RARAG.prepared_folder).exists()  # nothing computed, nothing saved on the worker
    other = Runner(ds, method_params={"ra_rag": {"calibration_size": 3}})
    with pytest.raises(ValueError, match="other data, model or parameters"):
        other.adopt_prepared("ra_rag", driver.prepared("ra_rag"), driver.preparation("ra_rag"))
    with pytest.raises(EvaluationError, match="never sends API keys"):
        runner_spec(Runner(ds, api_key="sk-not-sent"), ["no_rag"])


def test_a_worker_reads_replies_as_the_driver_does():
    """The reading travels with the runner's description: a paper-reading run is read the paper's way on every worker
    (and a worker's runner asks for the same stage-1 artefact key as the driver's)."""
    from backend.data import load_dataset
    from backend.evaluate_ray import build_runner, runner_spec
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    ds = load_dataset(SAMPLE_DATA / "ramdocs_dev")
    for reading in ("tolerant", "paper"):
        spec = runner_spec(Runner(ds, llm=LLMConfig(cache_mode="off"), reading=reading), ["no_rag"])
        assert spec["reading"] == reading and build_runner(ds, spec).reading == reading
    older = {k: v for k, v in spec.items() if k != "reading"}  # a spec from a driver before readings
    assert build_runner(ds, older).reading == "tolerant"
