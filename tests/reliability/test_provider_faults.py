"""Provider faults through Inspect's real ``openai-api`` provider against the fault server.

No client is mocked: requests go over TCP to :mod:`fault_server` on 127.0.0.1.
The one concession to speed is Inspect's own backoff between retries
(exponential from 3 s with jitter): tests that exercise Inspect's retry layer
shorten it to 50 ms through the provider's ``retry_wait()`` hook.  The OpenAI
client's own retries (2 by default) honour the server's ``retry-after-ms``.
"""

from __future__ import annotations

import os
import time
from typing import Callable

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import eval_retry
from inspect_ai.log import EvalLog, read_eval_log
from tenacity import wait_fixed

from impostor_bench.tasks.impostor import game_samples, impostor

from .fault_server import VOTING_SYSTEM, FaultServer, Plan, cycle

N_GAMES = 4
NO_CLIENT_RETRIES = {"max_retries": 0}  # -M max_retries=0: only Inspect's retry layer


@pytest.fixture(scope="module")
def server():
    with FaultServer(slow_s=2.0, hang_s=20.0) as srv:
        old = {k: os.environ.get(k) for k in ("FAULT_BASE_URL", "FAULT_API_KEY")}
        os.environ["FAULT_BASE_URL"] = srv.base_url
        os.environ["FAULT_API_KEY"] = "sk-fault-test-key"
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


@pytest.fixture(scope="module")
def games():
    """Words of each scheduled game (the server tells games apart by the words in the prompt)."""
    return [s.metadata for s in game_samples("homogeneous", "easy", N_GAMES, 0, None, None)]


def mentions(body: dict, word: str) -> bool:
    user = body["messages"][1]["content"]
    user = user if isinstance(user, str) else "".join(p.get("text", "") for p in user)
    return f"Your word is: {word}" in user or f"Your word was: {word}" in user


def in_game(md: dict) -> Callable[[dict], bool]:
    return lambda body: mentions(body, md["majority_word"]) or mentions(body, md["impostor_word"])


def voting(body: dict) -> bool:
    return body["messages"][0]["content"] == VOTING_SYSTEM


def when(pred: Callable[[dict], bool], fault: str, times: float = float("inf"), active=lambda: True) -> Plan:
    """``fault`` for requests matching ``pred`` (at most ``times`` of them, while ``active()``)."""
    state = {"n": 0}

    def plan(n: int, body: dict) -> str:
        if active() and pred(body) and state["n"] < times:
            state["n"] += 1
            return fault
        return "ok"

    return plan


def run(tmp_path, name: str, n_games: int = N_GAMES, **kw) -> EvalLog:
    kw.setdefault("fail_on_error", False)
    # Inspect's default is to retry forever: a test must fail, not hang, if a fault persists.
    kw.setdefault("max_retries", 3)
    kw.setdefault("timeout", 60)
    logs = inspect_eval(
        impostor(n_games=n_games), model=f"openai-api/fault/{name}", log_dir=str(tmp_path / "logs"),
        display="none", log_level="error", **kw,
    )
    return logs[0]


def scored(log: EvalLog) -> dict[str, dict]:
    return {str(s.id): s.scores["impostor_winner"].metadata for s in log.samples if s.scores}


def game_facts(md: dict) -> list:
    """What a game decided, independent of the model's name (which is in the ids)."""
    return [md["game"]["win_condition"], md["game"]["winner"]] + [
        (p["description"], p["vote"], p["description_attempts"], p["ballot_attempts"]) for p in md["players"]
    ]


def assert_complete(log: EvalLog, n_games: int = N_GAMES) -> None:
    assert log.status == "success", log.error
    ids = [str(s.id) for s in log.samples]
    assert len(ids) == n_games == len(set(ids)), ids
    for s in log.samples:
        assert s.error is None, (s.id, s.error)
        assert "impostor_winner" in (s.scores or {}), s.id


# ---------------------------------------------------------------- transient faults


def test_transient_faults_retried_and_game_unchanged(server, tmp_path):
    """429/5xx/dropped connections: the OpenAI client retries (honouring retry-after-ms)
    and every game is recorded exactly as a fault-free run records it."""
    faults = ("429", "500", "502", "503", "drop", "drop_mid", "429", "500")
    server.app.plans["transient"] = cycle(*faults)
    t0 = time.monotonic()
    log = run(tmp_path, "transient")
    assert_complete(log)
    assert time.monotonic() - t0 < 30
    assert sum(server.app.faults[("transient", f)] for f in set(faults)) == len(faults)
    assert server.app.requests["transient"] == 8 * N_GAMES + len(faults)
    clean = run(tmp_path, "clean")
    assert_complete(clean)
    assert {k: game_facts(v) for k, v in scored(log).items()} == {k: game_facts(v) for k, v in scored(clean).items()}


def test_inspect_retry_layer(server, tmp_path, fast_inspect_backoff):
    """With the client's own retries off (-M max_retries=0), Inspect's GenerateConfig
    max_retries retries 5xx, rate limits and dropped connections."""
    server.app.plans["inspect-retry"] = cycle("500", "429", "drop", "503", "drop_mid")
    log = run(tmp_path, "inspect-retry", model_args=NO_CLIENT_RETRIES, max_retries=5)
    assert_complete(log)
    assert server.app.requests["inspect-retry"] == 8 * N_GAMES + 5


def test_attempt_timeout_recovers_from_a_hung_request(server, tmp_path, fast_inspect_backoff):
    """A request that never answers is cut off by attempt_timeout and retried."""
    server.app.plans["hang"] = cycle("hang", "slow")
    t0 = time.monotonic()
    log = run(tmp_path, "hang", n_games=1, model_args=NO_CLIENT_RETRIES, attempt_timeout=1, max_retries=3)
    assert_complete(log, 1)
    assert time.monotonic() - t0 < 15  # not the 20 s hang
    assert server.app.faults[("hang", "hang")] == 1 and server.app.faults[("hang", "slow")] == 1


# ------------------------------------------------- games that cannot finish, then resume


def _errored(log: EvalLog) -> dict[str, str]:
    return {str(s.id): s.error.message for s in log.samples if s.error is not None}


def test_exhausted_retries_error_the_game_then_eval_retry_completes_it(server, tmp_path, games, fast_inspect_backoff):
    broken = {"on": True}
    target = games[1]
    server.app.plans["down"] = when(in_game(target), "500", active=lambda: broken["on"])
    log = run(tmp_path, "down", model_args=NO_CLIENT_RETRIES, max_retries=2)
    # The eval completes; the one game that could not finish is errored with its reason ...
    assert log.status == "success"
    errored = _errored(log)
    assert list(errored) == [target["sample_id"]]
    assert "500" in errored[target["sample_id"]] or "InternalServerError" in errored[target["sample_id"]]
    # ... and never half-scored: no score, and the metrics cover the finished games only.
    bad = next(s for s in log.samples if str(s.id) == target["sample_id"])
    assert not bad.scores
    assert len(scored(log)) == N_GAMES - 1
    assert log.results.completed_samples == N_GAMES - 1
    # The provider recovers; eval_retry re-plays only the errored game.
    broken["on"] = False
    before = {md["sample_id"]: sum(in_game(md)(b) for b in server.app.bodies["down"]) for md in games}
    retried = eval_retry(log, log_dir=str(tmp_path / "logs"), display="none", log_level="error")[0]
    assert_complete(retried)
    after = {md["sample_id"]: sum(in_game(md)(b) for b in server.app.bodies["down"]) for md in games}
    assert {k: after[k] - before[k] for k in after} == {md["sample_id"]: (8 if md is target else 0) for md in games}
    assert set(scored(retried)) == {md["sample_id"] for md in games}
    on_disk = read_eval_log(retried.location)
    assert len(on_disk.samples) == N_GAMES and all(s.scores for s in on_disk.samples)


UNRETRYABLE = ("malformed", "no_choices", "latin1", "400")


def test_unretryable_responses_error_the_game_with_reason(server, tmp_path, games):
    """Bodies that are not a chat completion are not retried by Inspect: the game errors at
    once, naming the problem; resuming completes it."""
    broken = {"on": True}
    plans = [when(in_game(md), fault, active=lambda: broken["on"]) for md, fault in zip(games, UNRETRYABLE)]

    def plan(n: int, body: dict) -> str:
        return next((f for f in (p(n, body) for p in plans) if f != "ok"), "ok")

    server.app.plans["garbled"] = plan
    log = run(tmp_path, "garbled")
    assert log.status == "success"
    errored = _errored(log)
    assert set(errored) == {md["sample_id"] for md in games}
    reasons = {md["sample_id"]: f for md, f in zip(games, UNRETRYABLE)}
    expect = {"malformed": "JSONDecodeError", "no_choices": "TypeError", "latin1": "UnicodeDecodeError",
              "400": "BadRequestError"}
    for sid, message in errored.items():
        assert expect[reasons[sid]] in message or reasons[sid] in message, (reasons[sid], message[:300])
    assert not scored(log)
    broken["on"] = False
    retried = eval_retry(log, log_dir=str(tmp_path / "logs"), display="none", log_level="error")[0]
    assert_complete(retried)


def test_retry_on_error_replays_the_whole_game(server, tmp_path, games):
    """retry_on_error restarts an errored game from scratch: nothing of the failed attempt
    (half a game of descriptions) leaks into the recorded one."""
    target = games[2]
    server.app.plans["replay"] = when(lambda b: in_game(target)(b) and voting(b), "malformed", times=1)
    log = run(tmp_path, "replay", retry_on_error=1)
    assert_complete(log)
    md = scored(log)[target["sample_id"]]
    for p in md["players"]:
        assert p["description_attempts"] == 1 and p["ballot_attempts"] == 1, p
    sample = next(s for s in log.samples if str(s.id) == target["sample_id"])
    transcript = "\n".join(m.text for m in sample.messages if m.role == "assistant")
    assert transcript.count("(speaks ") == 4 and transcript.count(" votes ") == 4  # one game, not one and a half
    assert sample.error_retries and len(sample.error_retries) == 1


def test_fail_on_error_marks_the_eval_and_eval_retry_resumes(server, tmp_path, games):
    """Default Inspect policy (fail_on_error=True) with the task's ``continue_on_fail`` (issue 42):
    the other games play on, the eval is marked error, the broken game keeps the reason;
    eval_retry resumes it, keeping every game that had finished."""
    broken = {"on": True}
    server.app.plans["fatal"] = when(in_game(games[0]), "400", active=lambda: broken["on"])
    log = run(tmp_path, "fatal", fail_on_error=True)
    assert log.status == "error"
    [reason] = _errored(log).values()
    assert "400" in reason or "BadRequest" in reason
    assert sum(1 for s in log.samples if s.scores) == N_GAMES - 1  # not stopped at the broken game
    broken["on"] = False
    retried = eval_retry(log, log_dir=str(tmp_path / "logs"), display="none", log_level="error")[0]
    assert_complete(retried)


def test_surrogate_escapes_from_the_wire_are_cleaned(server, tmp_path):
    """A valid JSON body whose text decodes to lone surrogates (\\udcff) is recorded as U+FFFD."""
    bad = "Half a byte \udcff here."
    honest = server.app.player
    server.app.player = lambda msgs: bad if msgs[0]["content"] != VOTING_SYSTEM else honest(msgs)
    try:
        log = run(tmp_path, "surrogate", n_games=1)
    finally:
        server.app.player = honest
    assert_complete(log, 1)
    md = next(iter(scored(log).values()))
    assert all(p["description"] == "Half a byte \ufffd here." for p in md["players"])
