"""The local page of ``human/web``: the standard library's HTTP server in a daemon thread.

Bound to 127.0.0.1 by default.  Every request for the game's state or an answer must
carry the session's one-time token (``?t=...`` in the printed URL), so nobody else on
the machine can answer for the player.  The page's own files (HTML, CSS, JS) are
static, served from this package, and load nothing from elsewhere (offline; the
Content-Security-Policy forbids other origins).
"""

from __future__ import annotations

import hmac
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit

from impostor_bench.providers.human.session import FieldError, HumanSession

STATIC = {"/": ("index.html", "text/html; charset=utf-8"),
          "/app.js": ("app.js", "text/javascript; charset=utf-8"),
          "/app.css": ("app.css", "text/css; charset=utf-8")}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
MAX_BODY = 64 * 1024
#: Seconds a connection may stay silent (a request's headers or body not coming): a stalled
#: client's thread is then freed, not held for ever.
IDLE_TIMEOUT_S = 15.0


def _static(name: str) -> bytes:
    return resources.files("impostor_bench.providers.human").joinpath("static", name).read_bytes()


class PageServer:
    """Serves one session's page until :meth:`close`."""

    def __init__(self, session: HumanSession, host: str = "127.0.0.1", port: int = 0) -> None:
        self.session = session
        handler = type("Handler", (_Handler,), {"session": session})
        try:
            self.httpd = _QuietServer((host, port), handler)
        except OSError as e:
            raise OSError(f"human/web: cannot listen on {host}:{port} ({e.strerror}); "
                          f"fix: pick another port (-M port=..., or impostor play --port ...; 0 = any free port)") from e
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="human-web", daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else str(host)
        return f"http://{shown}:{port}/?t={self.session.token}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up or stalls (a closed tab, a reload mid-answer, a port scan) is
    the client's business: no traceback in the player's terminal (``socketserver`` printed
    one per ``BrokenPipeError``); anything else is one line."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        print(f"human/web: a request from {client_address[0]} failed ({type(exc).__name__}: {str(exc)[:200]})",
              file=sys.stderr)


class _Handler(BaseHTTPRequestHandler):
    session: HumanSession
    server_version = "impostor-human"
    timeout = IDLE_TIMEOUT_S  # per socket operation (StreamRequestHandler sets it on the connection)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet: the terminal is the user's
        pass

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode(), "application/json; charset=utf-8")

    def _token_ok(self, query: dict[str, list[str]]) -> bool:
        given = (query.get("t") or [""])[0]
        return hmac.compare_digest(given.encode(), self.session.token.encode())

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path in STATIC:
            if url.path == "/" and not self._token_ok(query):
                self._send(403, b"Wrong or missing token: open the URL printed in the terminal.\n",
                           "text/plain; charset=utf-8")
                return
            name, ctype = STATIC[url.path]
            self._send(200, _static(name), ctype)
        elif url.path == "/state":
            if not self._token_ok(query):
                self._json(403, {"error": "wrong or missing token"})
                return
            self._json(200, self.session.state(outcome_shown=(query.get("shown") or [""])[0] == "outcome"))
        else:
            self._send(404, b"not found\n", "text/plain; charset=utf-8")

    def do_POST(self) -> None:  # noqa: N802
        url = urlsplit(self.path)
        if url.path != "/answer" or not self._token_ok(parse_qs(url.query)):
            self._json(403 if url.path == "/answer" else 404, {"error": "wrong or missing token"})
            return
        body = self._read_json()
        if body is None or not isinstance(body.get("id"), str) or not isinstance(body.get("fields"), dict):
            self._json(400, {"error": "expected JSON {\"id\": move id, \"fields\": {...}}"})
            return
        try:
            error = self.session.submit(body["id"], body["fields"])
        except FieldError as exc:
            self._json(422, {"error": str(exc)})
            return
        self._json(409 if error else 200, {"error": error} if error else {"ok": True})

    def _read_json(self) -> Optional[dict]:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        if not 0 < length <= MAX_BODY:
            return None
        try:
            obj = json.loads(self.rfile.read(length))
        except (ValueError, RecursionError):  # RecursionError: a body of 64 kB of "[[[["
            return None
        return obj if isinstance(obj, dict) else None
