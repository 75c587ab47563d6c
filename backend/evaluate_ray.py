"""The Ray engine of ``backend.evaluate``: questions fanned out to workers of a Ray cluster.

Each worker is a Ray actor that builds its own ``Runner`` from a description of the driver's (the dataset as data,
the model config, the cache folder, the methods' parameters, the chroma server, and the methods' dataset-level
artefacts the driver computed first, so no worker computes them again), never from the live runner: the model
endpoint is shared by name (a hosted API, a vLLM fleet, a LiteLLM proxy, ``serve-model``). A worker answers one
question's pending methods exactly as the local engine does (``evaluate.answer_question``) and sends the results
back; the driver writes each row once, through the local engine's writer, as results arrive. What to run, resuming
and the summary stay in ``backend.evaluate``.

Workers get the package's offline environment (``backend.OFFLINE_ENV``), the cache folder and a ``PYTHONPATH``
holding this checkout through the job's ``runtime_env``. On a cluster of several machines the project must be at the
same path on every node (a shared filesystem or the same checkout, with the same virtual environment), or on the
nodes' own ``PYTHONPATH``; the dataset needs no shared filesystem (it travels as data). API keys are never sent:
each node reads its own environment (set them where ``ray start`` runs).

Several workers on one machine would share the embedded retrieval index folder, which chromadb does not support
across processes: when a method needs the index, the driver builds it first (workers then only read), and a
chroma server (``--chroma-url``) is the setting meant for clusters.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import backend
from backend.evaluate import Engine, EvaluationError, Progress, answer_question
from backend.methods import METHODS
from backend.paths import REPO_ROOT
from backend.schema import MethodResult, Preparation, Question, strip_truth

#: Environment variables of the driver that workers get too when set (where the caches are, which embedding model).
PASSED_ENV = ("CONFLICTLENS_CACHE_DIR", "CONFLICTLENS_EMBEDDING_MODEL")
#: Ray replaces a loopback address by the machine's network address (so that other nodes can reach it) unless told
#: the cluster is one machine: set before Ray is imported, and for `ray start --head` of such a cluster too.
LOOPBACK_ONLY_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def is_loopback(address: str | None) -> bool:
    host = (address or "").rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")


def runtime_env() -> dict[str, Any]:
    """The job's ``runtime_env``: the offline environment, the driver's cache settings and this checkout on the
    workers' ``PYTHONPATH``."""
    env = {name: os.environ.get(name, value) for name, value in backend.OFFLINE_ENV.items()}
    env |= {name: os.environ[name] for name in PASSED_ENV if os.environ.get(name)}
    from backend import deployment

    if endpoints := deployment.current().key_endpoints:  # the workers' calls follow the driver's rule on keys
        env[deployment.ENV_KEY_ENDPOINTS] = ",".join(endpoints)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
    return {"env_vars": env}


def runner_spec(runner, methods: list[str]) -> dict[str, Any]:
    """What a worker needs to build a runner like ``runner`` (plain data). Its methods' dataset-level artefacts are
    computed here first (a failure is left to the workers, which report it as that method's error)."""
    if runner.api_key:
        raise EvaluationError("the Ray engine never sends API keys to workers: set the key in the environment of "
                              "every node (where `ray start` runs) instead of passing it to the runner")
    if runner.evidence_mode == "retrieve" or any(METHODS[m].needs_index for m in methods):
        runner.retriever().build()  # workers then only read the index
    runner.prepare_all(methods)  # a failure is left to the workers, which report it as that method's error
    prepared = {name: {"artefact": artefact.model_dump(mode="json"),
                       "preparation": runner.preparation(name).model_dump(mode="json")}
                for name in methods if (artefact := runner.prepared(name)) is not None}
    return {"llm": runner.llm.model_dump(mode="json"),
            "cache": str(runner.cache.path) if runner.cache is not None else None,
            "evidence_mode": runner.evidence_mode, "top_k": runner.top_k, "method_params": runner.method_params,
            "chroma_url": runner.chroma_url, "reading": runner.reading, "prepared": prepared}


def build_runner(dataset, spec: dict[str, Any]):
    """A worker's own runner from ``runner_spec``'s description."""
    from backend.llm.cache import CallCache
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    runner = Runner(dataset, llm=LLMConfig.model_validate(spec["llm"]),
                    cache=CallCache(spec["cache"]) if spec["cache"] else None, evidence_mode=spec["evidence_mode"],
                    top_k=spec["top_k"], method_params=spec["method_params"], chroma_url=spec["chroma_url"],
                    reading=spec.get("reading", "tolerant"))  # how the driver's run reads replies
    for name, found in spec["prepared"].items():
        artefact = runner.method(name).prepared_type.model_validate(found["artefact"])
        runner.adopt_prepared(name, artefact, Preparation.model_validate(found["preparation"]))
    return runner


class Worker:
    """One Ray worker: its own runner; answers a question's pending methods (made a Ray actor by ``run_on_ray``)."""

    def __init__(self, dataset, spec: dict[str, Any]) -> None:
        self.runner = build_runner(dataset, spec)

    def ready(self) -> int:
        return os.getpid()

    async def answer(self, question: Question, methods: list[str]) -> list[dict[str, Any]]:
        results: list[MethodResult] = []
        await answer_question(self.runner, question, methods, results.append)
        return [r.model_dump(mode="json") for r in results]


def ray_engine(address: str | None = None, workers: int | None = None) -> Engine:
    """The engine for ``evaluate(..., engine=...)``: the Ray cluster at ``address`` (default: ``$RAY_ADDRESS``, else
    a local Ray started for the run), ``workers`` workers (default: one per CPU of the cluster)."""
    def engine(runner, work, todo, write, concurrency, on_progress, stop=None) -> list[str]:
        return run_on_ray(runner, work, todo, write, concurrency, on_progress, address=address, workers=workers,
                          stop=stop)

    return engine


def run_on_ray(runner, work: list[Question], todo: dict[str, list[str]], write: Callable[[MethodResult], None],
               concurrency: int, on_progress: Progress | None, address: str | None = None,
               workers: int | None = None, stop: Callable[[], bool] | None = None) -> list[str]:
    """Answer ``work`` (``todo[question id]``: its pending methods) on Ray, ``concurrency`` questions at once per
    worker, calling ``write`` with each result as it comes back; returns notes on questions a worker lost (their
    pairs stay missing: ``--resume`` runs them)."""
    if is_loopback(address):  # a one-machine cluster on loopback: keep every connection there
        os.environ.setdefault(LOOPBACK_ONLY_ENV, "0")
    import ray
    from ray.exceptions import RayActorError, RayError

    methods = list(dict.fromkeys(m for q in work for m in todo[q.id]))
    spec = runner_spec(runner, methods)
    try:
        ray.init(address=address, runtime_env=runtime_env(), log_to_driver=False, logging_level=logging.WARNING)
    except Exception as err:  # noqa: BLE001 - ConnectionError, ValueError, RuntimeError...: one clear error
        raise EvaluationError(f"cannot connect to the Ray cluster at {address or 'RAY_ADDRESS / a local Ray'}: "
                              f"{err}") from err
    notes: list[str] = []
    actors: list[Any] = []
    try:
        count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actor = ray.remote(num_cpus=1, max_concurrency=concurrency)(Worker)
        dataset = ray.put(runner.stripped)  # workers never need the truth: rows are scored on the driver
        actors = [actor.remote(dataset, spec) for _ in range(min(count, len(work)))]
        try:
            ray.get([a.ready.remote() for a in actors], timeout=600)
        except (RayError, TimeoutError) as err:
            raise EvaluationError(f"the Ray workers could not start: {err}") from err
        queue, pending, finished = deque(work), {}, 0

        def submit(worker) -> None:
            q = queue.popleft()
            pending[worker.answer.remote(strip_truth(q), todo[q.id])] = (worker, q)

        for worker in actors:
            for _ in range(concurrency):
                if queue:
                    submit(worker)
        while pending:
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            worker, q = pending.pop(ref)
            try:
                rows = ray.get(ref)
            except RayActorError as err:
                notes.append(f"question {q.id}: its Ray worker died ({err.__class__.__name__}); its pairs were not "
                             "written (--resume runs them)")
                finished += 1
                if on_progress is not None:
                    on_progress(finished, len(work))
                continue  # that worker gets no more work
            except RayError as err:
                notes.append(f"question {q.id}: the Ray worker failed: {str(err).splitlines()[0]}; its pairs were "
                             "not written (--resume runs them)")
            else:
                for row in rows:
                    write(MethodResult.model_validate(row))
            finished += 1
            if on_progress is not None:
                on_progress(finished, len(work))
            if queue and not (stop is not None and stop()):  # a cost limit reached: nothing new starts
                submit(worker)
        if queue and not (stop is not None and stop()):
            notes.append(f"{len(queue)} question(s) not run: no Ray worker was left (--resume runs them)")
    finally:
        for worker in actors:
            ray.kill(worker)
        ray.shutdown()
    return notes


# --- a throwaway one-machine cluster (tests, benchmarks, trying the engine out) ---------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (zombies left to init do not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


@contextmanager
def local_cluster(num_cpus: int = 2) -> Iterator[str]:
    """``ray start --head`` on loopback ports only, its files in a throwaway ``--temp-dir``; yields its address.
    Stopped through its own process group, never ``ray stop`` (which stops every Ray on the machine); the workers
    exit with their raylet. Raises ``EvaluationError`` when the head does not start (with its log)."""
    beside = Path(sys.executable).parent / "ray"
    ray = str(beside) if beside.exists() else shutil.which("ray")
    if ray is None:
        raise EvaluationError("no `ray` executable beside the interpreter or on PATH (pip install ray)")
    root = Path(tempfile.mkdtemp(prefix="cl-ray-"))  # short: Ray's socket paths must fit in 107 bytes
    port, log = _free_port(), root / "start.log"
    cmd = [ray, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus", str(num_cpus),
           "--include-dashboard=false", "--dashboard-port", str(_free_port()), "--ray-client-server-port",
           str(_free_port()), "--dashboard-agent-listen-port", str(_free_port()), "--temp-dir", str(root),
           "--disable-usage-stats"]
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", **{LOOPBACK_ONLY_ENV: "0"})
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        try:
            code = proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            code = None
        if code != 0:
            raise EvaluationError(f"`ray start --head` failed: {log.read_text(errors='replace')[-800:]}")
        yield f"127.0.0.1:{port}"
    finally:
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 10)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and _group_alive(proc.pid):
                time.sleep(0.2)
            if not _group_alive(proc.pid):
                break
        shutil.rmtree(root, ignore_errors=True)
