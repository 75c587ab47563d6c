"""How fast the local model runs on this machine, measured and kept: the time estimate before a run comes from it.

Every reply from llama.cpp carries its own ``timings`` (prompt and generated tokens per second); each is a sample.
They are kept per weights (``digest``) in ``<cache>/local/throughput.json``: the median of the last ``KEEP`` samples
of each kind (a sample counts once it measured enough tokens to mean something). Before any real call has been
made, ``calibrate`` sends one short request on a new server to have a first figure.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.paths import default_cache_dir, private_dir, write_private

KEEP = 40
MIN_PROMPT_TOKENS = 32
MIN_GENERATED_TOKENS = 8
_lock = threading.Lock()


@dataclass(frozen=True)
class Throughput:
    prompt_per_s: float
    generated_per_s: float
    samples: int
    measured_at: float

    def seconds(self, prompt_tokens: int, completion_tokens: int) -> float:
        """One request's expected server time (a slot to itself, no prompt cache)."""
        return prompt_tokens / self.prompt_per_s + completion_tokens / self.generated_per_s

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d", time.localtime(self.measured_at))
        replies = "1 reply" if self.samples == 1 else f"{self.samples} replies"
        return (f"{self.prompt_per_s:.0f} prompt and {self.generated_per_s:.0f} generated tokens/s, measured on this "
                f"machine ({replies}, last {when})")


def _path() -> Path:
    return default_cache_dir() / "local" / "throughput.json"


def _load() -> dict[str, Any]:
    try:
        return json.loads(_path().read_text())
    except (OSError, ValueError):
        return {}


def record(digest: str, timings: dict[str, Any] | None) -> None:
    """Keep one reply's ``timings`` as samples (nothing kept from a reply without enough tokens)."""
    if not timings:
        return
    prompt = timings.get("prompt_per_second") if (timings.get("prompt_n") or 0) >= MIN_PROMPT_TOKENS else None
    generated = (timings.get("predicted_per_second")
                 if (timings.get("predicted_n") or 0) >= MIN_GENERATED_TOKENS else None)
    if not prompt and not generated:
        return
    with _lock:
        data = _load()
        mine = data.setdefault(digest, {"prompt": [], "generated": []})
        for kind, value in (("prompt", prompt), ("generated", generated)):
            if value:
                mine[kind] = (mine.get(kind, []) + [round(float(value), 2)])[-KEEP:]
        mine["at"] = time.time()
        path = _path()
        private_dir(path.parent)
        tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
        write_private(tmp, json.dumps(data))
        tmp.replace(path)


def measured(digest: str) -> Throughput | None:
    mine = _load().get(digest) or {}
    prompt, generated = mine.get("prompt") or [], mine.get("generated") or []
    if not prompt or not generated:
        return None
    return Throughput(statistics.median(prompt), statistics.median(generated), max(len(prompt), len(generated)),
                      mine.get("at") or time.time())


#: A first request that measures both speeds: ~120 prompt tokens, 24 generated.
CALIBRATION = [{"role": "user", "content": "Here is a list of cities: " + ", ".join(
    ["Paris", "Lyon", "Berlin", "Madrid", "Rome", "Vienna", "Prague", "Warsaw", "Oslo", "Lisbon"] * 4)
    + ". Write one sentence about travelling between two of them."}]


def calibrate(url: str, digest: str) -> None:
    """One short request to a new server, so the first estimate has figures (a failure only leaves none)."""
    import httpx

    try:
        reply = httpx.post(f"{url}/v1/chat/completions", timeout=120, json={
            "messages": CALIBRATION, "max_tokens": 24, "temperature": 0, "cache_prompt": False}).json()
        record(digest, reply.get("timings"))
    except (httpx.HTTPError, ValueError):
        pass
