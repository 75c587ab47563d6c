"""A loopback HTTP listener standing in for a model endpoint a user typed: it records what every request carried
(path, headers, body) and answers each with a valid OpenAI-style chat completion."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: The headers a provider's key travels in.
KEY_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key")


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]   # lower-cased names
    body: bytes

    def raw(self) -> str:
        """Everything the request carried, as text: where a key could be."""
        return "\n".join([self.path, json.dumps(self.headers), self.body.decode("latin-1")])

    def keys(self) -> list[str]:
        """The values of the headers a key travels in."""
        return [self.headers[h] for h in KEY_HEADERS if h in self.headers]


class Listener:
    """``with Listener() as srv:`` a server on 127.0.0.1 (a free port); ``srv.base`` is its ``/v1`` URL."""

    def __init__(self, reply: str = "ready") -> None:
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                with listener._lock:
                    listener.requests.append(Request(self.command, self.path,
                                                     {k.lower(): v for k, v in self.headers.items()}, body))
                out = json.dumps({"id": "chatcmpl-listener", "object": "chat.completion", "created": 1,
                                  "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                                                             "message": {"role": "assistant", "content": reply}}],
                                  "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_POST = do_GET = do_PUT = _answer

            def log_message(self, *args) -> None:  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self._server.server_port}/v1"

    def __enter__(self) -> Listener:
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="key-listener",
                         daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def received(self) -> list[Request]:
        with self._lock:
            return list(self.requests)

    def carried(self, secret: str) -> int:
        """How many requests carried ``secret`` anywhere (path, headers, body)."""
        return sum(secret in r.raw() for r in self.received())

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
