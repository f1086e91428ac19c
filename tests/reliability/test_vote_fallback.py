"""A call that can never succeed must not hang a plain eval (issue 15, section 3).

* A server that refuses structured ballots (the fault server in llama_cpp.server's words,
  and the real ``llama_cpp.server`` in a slow test): the vote falls back to the next weaker
  form once per model, the eval finishes, and the fallback is in the log and the metrics.
* The task's bounded call defaults (``impostor_bench.core.call_limits``) reach every call, the
  model roles' included, and the command line overrides them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model._model import ModelGenerateError
from tenacity import RetryError, wait_fixed

from impostor_bench.core import call_limits
from impostor_bench.solvers.vote_format import refusal_reason
from impostor_bench.tasks.impostor import impostor

from test_sweep_helpers import llama_cpp_server

from .fault_server import VOTING_SYSTEM, FaultServer, cycle, refuses_formats

REPO = Path(__file__).resolve().parents[2]
LLAMA_REFUSAL = ("1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                 "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}")


@pytest.fixture(scope="module")
def server():
    with FaultServer(hang_s=6.0) as srv:
        srv.app.plans.update({
            "noschema": refuses_formats("json_schema"),  # llama_cpp.server: HTTP 500, json_object taken
            "noformat": refuses_formats("json_schema", "json_object", status=400),
        })
        old = {k: os.environ.get(k) for k in ("FAULT_BASE_URL", "FAULT_API_KEY")}
        os.environ.update(FAULT_BASE_URL=srv.base_url, FAULT_API_KEY="sk-fault-test-key")
        yield srv
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def fast_inspect_backoff(monkeypatch):
    from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI

    monkeypatch.setattr(OpenAICompatibleAPI, "retry_wait", lambda self: wait_fixed(0.05))


def _status_error(cls: type, status: int, message: str) -> Exception:
    response = httpx.Response(status, request=httpx.Request("POST", "http://x/v1/chat/completions"))
    return cls(f"Error code: {status} - {message}", response=response, body={"error": {"message": message}})


# ---------------------------------------------------------------- which errors are refusals


def test_refusal_reason_tells_a_refused_format_from_other_errors():
    llama_500 = _status_error(openai.InternalServerError, 500, LLAMA_REFUSAL)
    assert refusal_reason(llama_500).startswith("HTTP 500 InternalServerError")
    # Inspect's retry layer wraps the last attempt's error; Inspect wraps a 400 in ModelGenerateError
    retry = RetryError(last_attempt=type("A", (), {"exception": lambda self: llama_500})())
    assert refusal_reason(retry).startswith("HTTP 500")
    groq_400 = _status_error(openai.BadRequestError, 400, "`response_format` json_schema is not supported with this model")
    wrapped = ModelGenerateError("Request: {...}", status_code=400)
    wrapped.__cause__ = groq_400
    assert refusal_reason(wrapped).startswith("HTTP 400 BadRequestError")
    tgi_422 = _status_error(openai.UnprocessableEntityError, 422, "response_format: unknown variant `json_schema`")
    assert refusal_reason(tgi_422).startswith("HTTP 422")
    # not refusals: a plain 5xx, a rate limit, a 400 about something else whose wrapper quotes the
    # request (response_format included), a dropped connection
    assert refusal_reason(_status_error(openai.InternalServerError, 500, "injected 500")) is None
    assert refusal_reason(_status_error(openai.RateLimitError, 429, "response_format requests are rate limited")) is None
    other_400 = ModelGenerateError('Request: {"response_format": {"type": "json_schema"}} ...', status_code=400)
    other_400.__cause__ = _status_error(openai.BadRequestError, 400, "maximum context length exceeded")
    assert refusal_reason(other_400) is None
    assert refusal_reason(openai.APIConnectionError(request=httpx.Request("POST", "http://x"))) is None


# ---------------------------------------------------------------- through the command line


def _inspect(tmp: Path, model: str, *args: str) -> tuple[subprocess.CompletedProcess, EvalLog | None]:
    env = dict(os.environ, IMPOSTOR_MLFLOW="0", LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    cmd = [str(Path(sys.executable).parent / "inspect"), "eval", "tasks/impostor.py", "--model", model,
           "--log-dir", str(tmp), "--display", "none", *args]
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    logs = sorted(tmp.glob("*.eval"))
    return r, read_eval_log(str(logs[-1])) if logs else None


def _players(log: EvalLog) -> list[dict]:
    return [p for s in log.samples for p in s.scores["impostor_winner"].metadata["players"]]


def _fallbacks(log: EvalLog) -> list[dict]:
    return [e for s in log.samples for e in s.metadata.get("vote_format_fallbacks", [])]


def _metric(log: EvalLog, name: str) -> float:
    return next(m.value for sc in log.results.scores for k, m in sc.metrics.items() if k == name)


def _formats(server: FaultServer, model: str) -> list:
    """The response_format type of each voting request, in order (None: no format)."""
    return [(b.get("response_format") or {}).get("type") for b in server.app.bodies[model]
            if b["messages"][0]["content"] == VOTING_SYSTEM]


@pytest.mark.slow
def test_refused_schema_falls_back_and_the_eval_finishes(server, tmp_path):
    """``-T constrained_votes=true`` against a server that answers json_schema with HTTP 500
    (json_object taken) and ``-T structured_votes=true`` against one that refuses both with
    400: every game finishes, every ballot is parsed, the fallback is made once per model and
    recorded; the task's bounded call limits are the defaults, ``--max-retries`` overrides them."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        schema = pool.submit(_inspect, tmp_path / "noschema", "openai-api/fault/noschema",
                             "-T", "n_games=2", "-T", "constrained_votes=true")
        both = pool.submit(_inspect, tmp_path / "noformat", "openai-api/fault/noformat",
                           "-T", "n_games=2", "-T", "structured_votes=true", "--max-retries", "3",
                           "--attempt-timeout", "20")
        (r1, log1), (r2, log2) = schema.result(), both.result()
    assert r1.returncode == 0 and r2.returncode == 0, (r1.stderr[-2000:], r2.stderr[-2000:])
    for log, asked, used, steps in ((log1, "constrained", "json_object", [("json_schema", "json_object")]),
                                    (log2, "structured", "free", [("json_schema", "json_object"),
                                                                   ("json_object", "prompt")])):
        assert log.status == "success" and len(log.samples) == 2
        assert all(s.error is None for s in log.samples)
        players = _players(log)
        assert {(p["vote_mode"], p["vote_fallback"]) for p in players} == {(used, f"{asked}->{used}")}
        assert all(p["ballot_class"] == "valid" and p["vote"] is not None for p in players)
        assert {s.scores["impostor_winner"].metadata["game"]["vote_mode"] for s in log.samples} == {used}
        assert _metric(log, "vote_fallback_count") == 8
        events = _fallbacks(log)  # once per model, not once per game or seat
        assert [(e["from"], e["to"]) for e in events] == steps
        assert all(e["model"] == log.eval.model and e["reason"].startswith("HTTP") for e in events)
        assert "response_format" in events[0]["reason"] and "Request:" not in events[0]["reason"]
        infos = [e.data["vote_format_fallback"] for s in log.samples for e in s.events
                 if e.event == "info" and isinstance(e.data, dict) and "vote_format_fallback" in e.data]
        assert [(i["from"], i["to"]) for i in infos] == steps
    # the server saw one refused probe per form (and the OpenAI client's own 2 retries of a 500), then the
    # weaker form only: 8 ballots
    assert _formats(server, "noschema") == ["json_schema"] * 3 + ["json_object"] * 8
    assert _formats(server, "noformat") == ["json_schema", "json_object"] + [None] * 8
    # bounded model calls by default, the command line overrides
    assert (log1.plan.config.max_retries, log1.plan.config.attempt_timeout) == (call_limits.MAX_RETRIES,
                                                                                call_limits.ATTEMPT_TIMEOUT)
    assert (log2.plan.config.max_retries, log2.plan.config.attempt_timeout) == (3, 20)


# ---------------------------------------------------------------- in process (fast backoff)


def _eval(tmp_path, model: str, **kw) -> EvalLog:
    task_args = {k: kw.pop(k) for k in ("n_games", "mode", "constrained_votes") if k in kw}
    return inspect_eval(impostor(**{"n_games": 1, **task_args}), model=model, log_dir=str(tmp_path),
                        display="none", log_level="error", **kw)[0]


def test_a_transient_error_on_the_probe_keeps_the_schema(server, tmp_path, fast_inspect_backoff):
    """A 500 that is not about the format (and a dropped connection) takes Inspect's retry path:
    no fallback, the ballots keep the schema."""
    server.app.plans["flaky"] = lambda n, body: (
        "500" if body.get("response_format") and server.app.faults[("flaky", "500")] < 1 else
        "drop" if body.get("response_format") and server.app.faults[("flaky", "drop")] < 1 else "ok")
    log = _eval(tmp_path, "openai-api/fault/flaky", constrained_votes=True, model_args={"max_retries": 0})
    assert log.status == "success" and log.samples[0].error is None
    assert {(p["vote_mode"], p["vote_fallback"]) for p in _players(log)} == {("constrained", None)}
    assert not _fallbacks(log) and _metric(log, "vote_fallback_count") == 0
    assert server.app.faults[("flaky", "500")] == 1 and server.app.faults[("flaky", "drop")] == 1
    assert _formats(server, "flaky") == ["json_schema"] * 6


def test_the_task_bounds_the_retries_of_every_seat(server, tmp_path, fast_inspect_backoff):
    """A provider that always fails ends the game after the task's MAX_RETRIES retries, also
    when it plays a model role (cross-play impostor); the eval ends instead of hanging."""
    server.app.plans["dead"] = lambda n, body: "503"
    no_client_retries = {"max_retries": 0}
    log = _eval(tmp_path, "openai-api/fault/dead", model_args=no_client_retries, fail_on_error=False)
    assert log.samples[0].error is not None
    assert server.app.requests["dead"] == call_limits.MAX_RETRIES + 1
    server.app.plans["dead-2"] = lambda n, body: "503"  # the eval's (command line's) max_retries wins
    log = _eval(tmp_path, "openai-api/fault/dead-2", model_args=no_client_retries, fail_on_error=False, max_retries=2)
    assert log.samples[0].error is not None and server.app.requests["dead-2"] == 3
    server.app.plans["dead-role"] = lambda n, body: "503"
    from inspect_ai.model import get_model

    log = _eval(tmp_path, "openai-api/fault/alive", mode="cross_play", fail_on_error=False,
                model_roles={"impostor": get_model("openai-api/fault/dead-role", max_retries=0)})
    assert log.samples[0].error is not None
    assert server.app.requests["dead-role"] == call_limits.MAX_RETRIES + 1


def test_a_model_role_gets_the_attempt_timeout(server, tmp_path, fast_inspect_backoff):
    """Inspect passes a model role the eval's max_retries and timeout but not its
    attempt_timeout; the game passes it per call, so a hung request of a role is cut off."""
    from inspect_ai.model import get_model

    server.app.plans["hung-role"] = cycle("hang")
    t0 = time.monotonic()
    log = _eval(tmp_path, "openai-api/fault/fine", mode="cross_play", attempt_timeout=1,
                model_roles={"impostor": get_model("openai-api/fault/hung-role", max_retries=0)})
    assert log.status == "success" and log.samples[0].error is None
    assert time.monotonic() - t0 < 6  # not the 6 s hang
    assert server.app.faults[("hung-role", "hang")] == 1
    assert server.app.requests["hung-role"] == 3  # description (cut off, then again) and ballot


# ---------------------------------------------------------------- the real llama_cpp.server


@pytest.mark.slow
def test_real_llama_cpp_server_refuses_the_schema_and_the_game_finishes(tmp_path):
    """llama-cpp-python's own OpenAI-compatible server with the shipped SmolLM2 answers
    json_schema ballots with HTTP 500: its vote falls back to json_object and the eval ends.

    It plays the impostor of a cross-play game against bots (a few SmolLM2 calls, not a
    dozen, on 2 shared cores); the bots keep the schema: the fallback is per model."""
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] not installed")
    with llama_cpp_server(timeout=60) as base_url:
        os.environ.update(LLAMA_BASE_URL=base_url, LLAMA_API_KEY="none")
        try:
            r, log = _inspect(tmp_path, "bot/random", "--model-role", "impostor=openai-api/llama/smollm2",
                              "-T", "mode=cross_play", "-T", "n_games=1", "-T", "constrained_votes=true",
                              "-T", "max_tokens=24", "--max-retries", "2")
        finally:
            for k in ("LLAMA_BASE_URL", "LLAMA_API_KEY"):
                os.environ.pop(k, None)
    assert r.returncode == 0, r.stderr[-3000:]
    assert log.status == "success" and log.samples[0].error is None
    [smol] = [p for p in _players(log) if p["model"] == "openai-api/llama/smollm2"]
    bots = [p for p in _players(log) if p["model"] != smol["model"]]
    assert (smol["vote_mode"], smol["vote_fallback"]) == ("json_object", "constrained->json_object")
    assert {(p["vote_mode"], p["vote_fallback"]) for p in bots} == {("constrained", None)}
    # the server's JSON grammar shaped the ballot (SmolLM2 prompted alone answers prose), then the parser read it
    assert smol["vote_raw"].lstrip().startswith("{") and smol["ballot_class"] != "missing"
    [event] = _fallbacks(log)
    assert (event["model"], event["from"], event["to"]) == (smol["model"], "json_schema", "json_object")
    assert "HTTP 500" in event["reason"] and "json_object" in event["reason"]
    assert _metric(log, "vote_fallback_count") == 1
