"""A fault-injecting OpenAI-compatible chat server that plays the Impostor Game.

``POST /v1/chat/completions`` answers with real chat-completion JSON (``usage``
included) holding a game move: a harmless description in the description
phase, a JSON ballot in the voting phase.  A *plan* decides, per request, to
answer normally or to inject a fault instead:

=================  ==========================================================
``ok``             a normal answer
``429``/``500``..  that HTTP status with an OpenAI-style error body
                   (``retry-after-ms`` header set, see ``retry_after_ms``)
``malformed``      200, ``content-type: application/json``, body not JSON
``no_choices``     200, valid JSON without ``choices``
``latin1``         200, a body whose message text holds latin-1 (non-UTF-8) bytes
``slow``           a normal answer after ``slow_s`` seconds
``hang``           no answer for ``hang_s`` seconds (past any client timeout)
``drop``           the TCP connection is closed before any response byte
``drop_mid``       headers and half the body are sent, then the connection closes
``format500``..    that HTTP status refusing the request's ``response_format`` in
                   llama-cpp-python's words (see :func:`refuses_formats`)
``401echo``        401 quoting the request's key as OpenAI does ("Incorrect API key
                   provided: <key>")
``echo_key``       200, the answer repeats the request's Authorization header
=================  ==========================================================

A plan is a function ``(request_number, body) -> fault`` registered under the
request's model name (the part after ``openai-api/<service>/``); the request
number counts that model's requests from 1.  The server runs on 127.0.0.1 in a
background thread (:class:`FaultServer`) or as a process
(``python -m tests.reliability.fault_server --port 8999 --latency 0.2``).

Use it through Inspect's real ``openai-api`` provider::

    FAULT_BASE_URL=http://127.0.0.1:PORT/v1 FAULT_API_KEY=anything \\
        inspect eval tasks/impostor.py --model openai-api/fault/flaky
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import socket
import threading
import time
from collections import Counter, defaultdict
from typing import Any, Callable, Optional

import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

VOTING_SYSTEM = "You are playing a word guessing game. You must respond with valid JSON only."
DESCRIPTION = "Something you might come across on an ordinary day."

Plan = Callable[[int, dict], str]
Player = Callable[[list[dict]], str]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def honest_player(messages: list[dict]) -> str:
    """A deterministic player: fixed description; votes for the next player up."""
    system = _text(messages[0].get("content")) if messages else ""
    user = _text(messages[1].get("content")) if len(messages) > 1 else ""
    if system != VOTING_SYSTEM:
        return DESCRIPTION
    labels = re.findall(r"You are Player (\d)", user)
    me = int(labels[-1]) if labels else 1
    return json.dumps({
        "suspected_impostor_id": f"Player {me % 4 + 1}", "confidence": 0.6,
        "reasoning": "their description was vague", "self_declaration": False, "word_guess": None,
    })


def completion(model: str, text: str) -> dict:
    return {
        "id": f"chatcmpl-fault-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{
            "index": 0, "finish_reason": "stop", "logprobs": None,
            "message": {"role": "assistant", "content": text, "refusal": None},
        }],
        "usage": {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140},
    }


def ok_plan(n: int, body: dict) -> str:
    return "ok"


def cycle(*faults: str, then: str = "ok") -> Plan:
    """The first requests get ``faults`` in order, every later one ``then``."""
    return lambda n, body: faults[n - 1] if n <= len(faults) else then


def refuses_formats(*types: str, status: int = 500) -> Plan:
    """A server that refuses ``response_format`` of these ``types`` (``json_schema``, ``json_object``):
    llama_cpp.server takes ``text`` and ``json_object`` only, and answers ``json_schema`` with HTTP 500."""
    return lambda n, body: f"format{status}" if (body.get("response_format") or {}).get("type") in types else "ok"


def every(k: int, fault: str) -> Plan:
    """Every k-th request of the model gets ``fault``."""
    return lambda n, body: fault if n % k == 0 else "ok"


class FaultApp:
    """The ASGI application (plans, player and counters are plain attributes)."""

    def __init__(
        self,
        plans: Optional[dict[str, Plan]] = None,
        player: Player = honest_player,
        latency: float = 0.0,
        slow_s: float = 1.5,
        hang_s: float = 30.0,
        retry_after_ms: Optional[int] = 20,
    ):
        self.plans: dict[str, Plan] = dict(plans or {})
        self.default_plan: Plan = ok_plan  # for models without a plan
        self.player = player
        self.latency = latency
        self.slow_s = slow_s
        self.hang_s = hang_s
        self.retry_after_ms = retry_after_ms
        self.requests: Counter[str] = Counter()  # by model
        self.faults: Counter[tuple[str, str]] = Counter()  # (model, fault)
        self.bodies: dict[str, list[dict]] = defaultdict(list)
        self.keys: set[str] = set()  # Authorization headers seen
        self.in_flight = 0
        self.max_in_flight = 0

    def reset(self) -> None:
        self.requests.clear()
        self.faults.clear()
        self.bodies.clear()
        self.keys.clear()
        self.max_in_flight = 0

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        if request.method == "GET" and request.url.path.rstrip("/").endswith("/health"):
            await JSONResponse({"ok": True})(scope, receive, send)
            return
        if request.method != "POST" or not request.url.path.rstrip("/").endswith("/chat/completions"):
            await JSONResponse({"error": {"message": "not found", "type": "invalid_request_error"}},
                               status_code=404)(scope, receive, send)
            return
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self._chat(request, scope, receive, send)
        finally:
            self.in_flight -= 1

    async def _chat(self, request: Request, scope: dict, receive: Callable, send: Callable) -> None:
        try:
            body = await request.json()
        except ValueError:
            await JSONResponse({"error": {"message": "request is not JSON", "type": "invalid_request_error"}},
                               status_code=400)(scope, receive, send)
            return
        model = str(body.get("model", ""))
        self.keys.add(request.headers.get("authorization", ""))
        self.requests[model] += 1
        self.bodies[model].append(body)
        fault = self.plans.get(model, self.default_plan)(self.requests[model], body)
        self.faults[(model, fault)] += 1
        if self.latency:
            await asyncio.sleep(self.latency)
        if fault == "ok":
            # ASCII JSON: a player's text may hold anything, lone surrogates included (as \\udXXX).
            answer = json.dumps(completion(model, self.player(body.get("messages", []))))
            await Response(answer.encode(), media_type="application/json")(scope, receive, send)
        elif fault.isdigit():
            status = int(fault)
            kind = {429: "rate_limit_exceeded", 400: "invalid_request_error"}.get(status, "server_error")
            headers = {"retry-after-ms": str(self.retry_after_ms)} if self.retry_after_ms is not None else {}
            await JSONResponse({"error": {"message": f"injected {status}", "type": kind, "code": kind}},
                               status_code=status, headers=headers)(scope, receive, send)
        elif fault.startswith("format"):  # llama_cpp.server's answer to a response_format it does not take
            kind = (body.get("response_format") or {}).get("type")
            message = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                       f"'msg': \"Input should be 'text' or 'json_object'\", 'input': '{kind}'}}")
            await JSONResponse({"error": {"message": message, "type": "internal_server_error", "param": None,
                                          "code": None}}, status_code=int(fault[len("format"):]))(scope, receive, send)
        elif fault == "401echo":
            key = request.headers.get("authorization", "").removeprefix("Bearer ")
            message = (f"Incorrect API key provided: {key}. You can find your API key at "
                       "https://platform.openai.com/account/api-keys.")
            await JSONResponse({"error": {"message": message, "type": "invalid_request_error", "param": None,
                                          "code": "invalid_api_key"}}, status_code=401)(scope, receive, send)
        elif fault == "echo_key":
            answer = f"my key is {request.headers.get('authorization', '')}"
            await JSONResponse(completion(model, answer))(scope, receive, send)
        elif fault == "malformed":
            await Response(b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "unterminated',
                           media_type="application/json")(scope, receive, send)
        elif fault == "no_choices":
            await JSONResponse({"id": "chatcmpl-x", "object": "chat.completion", "model": model})(scope, receive, send)
        elif fault == "latin1":
            answer = completion(model, "@@TEXT@@")
            raw = json.dumps(answer).encode().replace(b"@@TEXT@@", "Caf\u00e9 cr\u00e8me, quite ordinary.".encode("latin-1"))
            await Response(raw, media_type="application/json")(scope, receive, send)
        elif fault == "slow":
            await asyncio.sleep(self.slow_s)
            await JSONResponse(completion(model, self.player(body.get("messages", []))))(scope, receive, send)
        elif fault == "hang":
            await asyncio.sleep(self.hang_s)
            await JSONResponse(completion(model, self.player(body.get("messages", []))))(scope, receive, send)
        elif fault == "drop":
            transport = getattr(getattr(send, "__self__", None), "transport", None)
            if transport is None:  # not uvicorn: fall back to a mid-body drop
                await self._drop_mid(model, body, send)
            else:
                transport.abort()
        elif fault == "drop_mid":
            await self._drop_mid(model, body, send)
        else:
            raise ValueError(f"unknown fault {fault!r}")

    async def _drop_mid(self, model: str, body: dict, send: Callable) -> None:
        raw = json.dumps(completion(model, self.player(body.get("messages", [])))).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]})
        await send({"type": "http.response.body", "body": raw[: len(raw) // 2], "more_body": True})
        # Returning without completing the response makes uvicorn close the connection.


class FaultServer:
    """Run a :class:`FaultApp` on 127.0.0.1 in a background thread (context manager)."""

    def __init__(self, app: Optional[FaultApp] = None, port: int = 0, **app_kwargs: Any):
        self.app = app or FaultApp(**app_kwargs)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self.port = self._sock.getsockname()[1]
        logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)  # injected drops are expected
        config = uvicorn.Config(self.app, log_level="critical", access_log=False, lifespan="off",
                                timeout_keep_alive=30, backlog=2048, timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "FaultServer":
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("fault server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> "FaultServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8999)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer")
    parser.add_argument("--every", default=None, help="K:FAULT, e.g. 5:500 (every 5th request of each model)")
    parser.add_argument("--refuse-format", default=None, metavar="TYPES",
                        help="refuse these response_format types with HTTP 500, e.g. json_schema,json_object")
    args = parser.parse_args()
    app = FaultApp(latency=args.latency)
    if args.refuse_format:
        app.default_plan = refuses_formats(*args.refuse_format.split(","))
    if args.every:
        k, fault = args.every.split(":", 1)
        app.default_plan = every(int(k), fault)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False, lifespan="off",
                backlog=2048)


if __name__ == "__main__":
    main()
