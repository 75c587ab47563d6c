"""A Streamlit client without a browser, as a visitor's script would be: it opens the app's websocket (with an XSRF
token of its own, as any client may mint), asks for a run, reads its session id from the server's first message,
then PUTs a file to Streamlit's upload endpoint. ``signed_in_as`` sends the signed sign-in cookie Streamlit's own
st.login sets (the test wrote the cookie secret, so it can sign as the provider's callback does)."""

from __future__ import annotations

import json
import socket
import time
from contextlib import contextmanager
from urllib.parse import urlsplit

import httpx
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.web.server.starlette.starlette_app_utils import create_signed_value, generate_xsrf_token_string
from websockets.sync.client import connect

USER_COOKIE = "_streamlit_user"
XSRF_COOKIE = "_streamlit_xsrf"


def user_cookie(url: str, cookie_secret: str, claims: dict) -> str:
    """The value of the sign-in cookie Streamlit's /oauth2callback sets for ``claims`` (signed, with its origin)."""
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    value = json.dumps(dict(claims, origin=origin, is_logged_in=True, provider="default"))
    return create_signed_value(cookie_secret, USER_COOKIE, value).decode()


@contextmanager
def session(url: str, cookies: dict[str, str] | None = None, timeout: float = 120):
    """A connected session of the app at ``url``: yields ``(session_id, cookies)`` once its first run has ended
    (the id comes in the run's first message), the websocket kept open meanwhile (the session stays active)."""
    token = generate_xsrf_token_string()
    jar = {XSRF_COOKIE: token, **(cookies or {})}
    ws_url = url.replace("http://", "ws://", 1) + "/_stcore/stream"
    header = "; ".join(f"{k}={v}" for k, v in jar.items())
    with connect(ws_url, subprotocols=["streamlit", token], open_timeout=timeout, max_size=None,
                 additional_headers={"Origin": url, "Cookie": header}) as ws:
        ask = BackMsg()
        ask.rerun_script.query_string = ""
        ws.send(ask.SerializeToString())
        deadline, session_id = time.monotonic() + timeout, None
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.WhichOneof("type") == "new_session":
                session_id = msg.new_session.initialize.session_id
            elif msg.WhichOneof("type") == "script_finished" and session_id:
                break
        yield session_id, jar


def put_file(url: str, session_id: str, jar: dict[str, str], data: bytes, name: str = "mine.jsonl",
             file_id: str = "f1") -> httpx.Response:
    """The browser's upload request for one file: multipart, the XSRF header matching its cookie."""
    return httpx.put(f"{url}/_stcore/upload_file/{session_id}/{file_id}",
                     files={"file": (name, data, "application/jsonl")}, cookies=jar,
                     headers={"X-Xsrftoken": jar[XSRF_COOKIE], "Origin": url}, timeout=60)


def answer_before_body(url: str, session_id: str, jar: dict[str, str], declared: int,
                       timeout: float = 30) -> tuple[int, int]:
    """An upload that declares ``declared`` bytes and sends only its headers and a first 64 KB: the status line the
    server answers with (0 if it waits for the rest) and the bytes sent by then."""
    host, port = urlsplit(url).hostname, urlsplit(url).port
    boundary = "conflictlens-boundary"
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n'
            "Content-Type: application/jsonl\r\n\r\n").encode()
    cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
    request = (f"PUT /_stcore/upload_file/{session_id}/big HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {declared}\r\n"
               f"X-Xsrftoken: {jar[XSRF_COOKIE]}\r\nOrigin: {url}\r\nCookie: {cookie}\r\n\r\n").encode()
    first = head + b"x" * (64 * 1024)
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request + first)
        sock.settimeout(timeout)
        try:
            reply = sock.recv(4096)
        except TimeoutError:
            return 0, len(first)
    status = reply.split(b"\r\n", 1)[0].split()
    return (int(status[1]) if len(status) > 1 else 0), len(first)
