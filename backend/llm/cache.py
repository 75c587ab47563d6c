"""On-disk request cache for model calls (SQLite, shared safely by the app, the CLI and tests).

The key is a sha256 of the canonical request: the model's identity (its name and, for a model behind an
``api_base``, a hash of the endpoint: ``LLMConfig.identity``, so one server's replies never answer for another
serving the same name), messages, temperature, max_tokens, the task fields and, with structured output, the
``response_format``. API keys and ``api_base`` URLs
themselves are never part of the key or the stored row. SQLite (WAL) is used
rather than litellm's disk cache because we need an explicit replay mode that fails loudly on a miss,
a cache-hit flag per call, and clearing from the dashboard.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from backend.paths import create_private, private_dir

CacheMode = Literal["live", "record", "replay", "off"]
#: live: read the cache, call the model on a miss and store; record: always call and overwrite;
#: replay: cache only, a miss is an error; off: neither read nor write.
CACHE_MODES: tuple[str, ...] = ("live", "record", "replay", "off")


def request_key(model: str, messages: list[dict[str, str]], temperature: float, max_tokens: int,
                fields: dict[str, Any], response_format: dict[str, Any] | None = None,
                stop: list[str] | None = None) -> str:
    """``response_format`` (structured output, ``backend.llm.structured``) is keyed when one is sent: a JSON reply
    never answers a request for the text format, nor one schema's reply another's. Without one the key is as before,
    so the replies cached for the papers' formats stay valid."""
    request = {"model": model, "messages": messages, "temperature": temperature, "max_tokens": max_tokens,
               "fields": fields}
    if response_format is not None:
        request["response_format"] = response_format
    if stop:  # stop sequences change the reply (the local model's, per task): keyed when sent
        request["stop"] = stop
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedReply:
    response: str
    prompt_tokens: int
    completion_tokens: int
    #: what the reply cost when the model was called (``backend.llm.pricing.reply_cost``; None: unknown): a later hit
    #: costs nothing and shows this as the cost it saved
    cost_usd: float | None = None
    #: how long the call took when the model was called (None: a reply cached before latencies were recorded): a
    #: later hit shows this rather than its own cache-read time
    latency_s: float | None = None
    #: what the server said about the reply beyond its text (None: nothing, or a reply cached before these were kept):
    #: ``finish_reason``, ``cut_off`` (a reply that ran into max_tokens repeating itself: its text; the reply is then
    #: ""), ``server_s`` (the server's own time: llama.cpp's prompt + generation ms), ``cached_tokens`` (prompt tokens
    #: the server's prompt cache answered)
    extra: dict[str, Any] | None = None


class CallCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        private_dir(self.path.parent)
        create_private(self.path)  # owner-only, and so its -wal and -shm: replies someone paid for
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            # no fsync per stored reply (RA-RAG's stage 1 stores 1,112 in a row): under WAL the file stays consistent,
            # and a power cut can lose only the last replies, which are recomputed: it is a cache
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                             "response TEXT NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER, "
                             "created REAL)")
            # one method's run on one question, keyed by the requests it made: the wall time of the run that made
            # the replies, shown for a later run that read them all from the cache (``LLMClient.first_run_s``)
            self._db.execute("CREATE TABLE IF NOT EXISTS runs (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                             "wall_s REAL NOT NULL, created REAL)")
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(calls)")}
            for column, kind in (("cost_usd", "REAL"), ("latency_s", "REAL"), ("extra", "TEXT")):
                if column not in columns:  # a cache written before these were recorded keeps its replies
                    try:
                        self._db.execute(f"ALTER TABLE calls ADD COLUMN {column} {kind}")
                    except sqlite3.OperationalError:  # another process added it between the look and the change
                        pass
            self._db.commit()

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            row = self._db.execute("SELECT response, prompt_tokens, completion_tokens, cost_usd, latency_s, extra "
                                   "FROM calls WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        try:
            extra = json.loads(row[5]) if row[5] else None
        except ValueError:
            extra = None
        return CachedReply(row[0], row[1] or 0, row[2] or 0, row[3], row[4], extra if isinstance(extra, dict) else None)

    def put(self, key: str, model: str, reply: CachedReply) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO calls (key, model, response, prompt_tokens, completion_tokens, "
                             "created, cost_usd, latency_s, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (key, model, reply.response, reply.prompt_tokens, reply.completion_tokens,
                              time.time(), reply.cost_usd, reply.latency_s,
                              json.dumps(reply.extra) if reply.extra else None))
            self._db.commit()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            n, models = self._db.execute("SELECT COUNT(*), COUNT(DISTINCT model) FROM calls").fetchone()
        return {"entries": n, "models": models, "path": str(self.path),
                "bytes": self.path.stat().st_size if self.path.exists() else 0}

    def clear(self, model: str | None = None) -> int:
        """Delete every cached reply (or one model's); returns how many were deleted."""
        with self._lock:
            cur = (self._db.execute("DELETE FROM calls WHERE model = ?", (model,)) if model
                   else self._db.execute("DELETE FROM calls"))
            deleted = cur.rowcount
            if model:
                self._db.execute("DELETE FROM runs WHERE model = ?", (model,))
            else:
                self._db.execute("DELETE FROM runs")
            self._db.commit()
            return deleted

    def put_run(self, key: str, model: str, wall_s: float) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO runs (key, model, wall_s, created) VALUES (?, ?, ?, ?)",
                             (key, model, wall_s, time.time()))
            self._db.commit()

    def get_run(self, key: str) -> float | None:
        with self._lock:
            row = self._db.execute("SELECT wall_s FROM runs WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        with self._lock:
            self._db.close()
