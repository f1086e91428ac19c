"""SIGKILL a sweep in each phase of a game, and while it logs to MLflow; re-run it.

The sweep (``impostor sweep`` in a subprocess, tracked in the default SQLite
store under its working directory) plays against the fault server through
Inspect's real ``openai-api`` provider.  The server holds the request at which
the kill is due, so the kill lands exactly in the phase named:

1. during a description phase (a description request is in flight),
2. during a voting round (a ballot request is in flight),
3. while a finished experiment is being logged to MLflow (``slow_mlflow``
   stalls its first artifact upload, after the metrics),

and the same command is re-run after each kill.  In the end every scheduled
game is recorded exactly once, every MLflow experiment run is FINISHED with all
its games, and no run was left RUNNING without saying so.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from impostor_bench.export import tables_from_logs
from impostor_bench.tasks.impostor import game_samples

from .fault_server import VOTING_SYSTEM, FaultServer

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
GAMES = 6
MODELS = ["openai-api/fault/crash-a", "openai-api/fault/crash-b"]

pytestmark = pytest.mark.slow


class KillSwitch:
    """Server plan: hold the ``after``-th request of ``phase`` and tell the test to kill."""

    def __init__(self) -> None:
        self.phase: str | None = None
        self.after = 0
        self.seen = 0
        self.held = threading.Event()
        self.lock = threading.Lock()

    def arm(self, phase: str | None, after: int = 1) -> None:
        with self.lock:
            self.phase, self.after, self.seen = phase, after, 0
            self.held.clear()

    def __call__(self, n: int, body: dict) -> str:
        phase = "vote" if body["messages"][0]["content"] == VOTING_SYSTEM else "describe"
        with self.lock:
            if self.phase == phase:
                self.seen += 1
                if self.seen == self.after:
                    self.held.set()
                    return "hang"
        return "ok"


@pytest.fixture(scope="module")
def server():
    with FaultServer(hang_s=600) as srv:
        switch = KillSwitch()
        for m in MODELS:
            srv.app.plans[m.split("/", 2)[2]] = switch
        srv.switch = switch  # type: ignore[attr-defined]
        yield srv


def _env(server: FaultServer, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join([str(HERE), str(REPO), env.get("PYTHONPATH", "")]),
        IMPOSTOR_MLFLOW="1", LITELLM_LOCAL_MODEL_COST_MAP="True",
        FAULT_BASE_URL=server.base_url, FAULT_API_KEY="sk-crash-test",
    )
    env.pop("MLFLOW_TRACKING_URI", None)
    env.pop("IMPOSTOR_TEST_MLFLOW_STALL", None)
    env.update(extra)
    return env


def _cmd(cfg: Path, log_dir: Path) -> list[str]:
    exe = Path(sys.executable).parent / "impostor"
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "impostor_bench.cli"]
    return base + ["sweep", str(cfg), "--log-dir", str(log_dir), "--display", "none"]


def _start(cfg: Path, log_dir: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(_cmd(cfg, log_dir), cwd=cfg.parent, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _kill_when(proc: subprocess.Popen, ready, what: str, timeout: float = 150) -> None:
    deadline = time.time() + timeout
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"sweep ended before the kill {what}:\n{proc.stdout.read()[-3000:]}")
        if time.time() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"no kill point reached {what}")
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _runs(work: Path) -> list:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{work}/mlruns/mlflow.db")
    exp = client.get_experiment_by_name("crash")
    return client.search_runs([exp.experiment_id]) if exp else []


@pytest.fixture(scope="module")
def crashed(server, tmp_path_factory):
    """Kill the sweep in each phase, resuming after each kill; return what the last run left."""
    work = tmp_path_factory.mktemp("crash")
    cfg = work / "sweep.yaml"
    cfg.write_text(yaml.safe_dump({
        "name": "crash", "models": MODELS, "modes": ["homogeneous"], "difficulties": ["easy"],
        "games_per_experiment": GAMES, "seeds": [0], "imports": ["slow_mlflow"],
        "concurrency": {"max_connections": 4, "max_samples": 2, "max_tasks": 2},
        "retries": {"attempts": 1, "wait": 0}, "tracking": {"experiment": "crash"},
    }, sort_keys=False))
    log_dir = work / "logs"
    switch: KillSwitch = server.switch  # type: ignore[attr-defined]
    state: dict = {"work": work, "log_dir": log_dir, "env": _env(server)}

    # 1. kill while a game is describing (the 7th description request is held)
    switch.arm("describe", after=7)
    proc = _start(cfg, log_dir, _env(server))
    _kill_when(proc, switch.held.is_set, "during descriptions")

    # 2. resume, kill while a game is voting
    switch.arm("vote", after=6)
    proc = _start(cfg, log_dir, _env(server))
    _kill_when(proc, switch.held.is_set, "during voting")

    # 3. resume, kill while a finished experiment is being logged to MLflow
    switch.arm(None)
    marker = work / "mlflow-stalled"
    proc = _start(cfg, log_dir, _env(server, IMPOSTOR_TEST_MLFLOW_STALL=str(marker)))
    _kill_when(proc, marker.exists, "during MLflow logging")
    state["half_logged"] = [
        (r.data.tags.get("mlflow.runName"), r.info.status) for r in _runs(work)
        if r.data.tags.get("impostor.kind") == "experiment" and r.data.tags.get("impostor.tables_logged") != "1"
    ]
    exe = Path(sys.executable).parent / "impostor"
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "impostor_bench.cli"]
    state["export_killed"] = subprocess.run(base + ["export", "--experiment", "crash", "--out", str(work / "x")],
                                            cwd=work, env=_env(server), capture_output=True, text=True, timeout=120)

    # 4. resume to the end
    proc = _start(cfg, log_dir, _env(server))
    out, _ = proc.communicate(timeout=240)
    state["out"], state["rc"] = out, proc.returncode
    return state


def test_kill_during_mlflow_logging_leaves_a_visibly_unfinished_run(crashed):
    assert crashed["half_logged"], "the kill should leave a half-logged run behind"
    assert all(status == "RUNNING" for _, status in crashed["half_logged"])


def test_export_of_the_killed_sweep_says_unfinished_not_errored(crashed):
    """``impostor export --experiment`` right after the kill: the half-logged run is an
    unfinished run (resume or sync), not errored games."""
    r = crashed["export_killed"]
    said = r.stdout + r.stderr
    n = len(crashed["half_logged"])
    assert f"{n} experiment run(s) unfinished" in said, said[-3000:]
    assert "errored" not in said and "resume the sweep" in said and "impostor sync" in said, said[-3000:]


def test_resume_loses_and_duplicates_no_game(crashed):
    out = crashed["out"]
    assert crashed["rc"] == 0, out[-4000:]
    assert f"2/2 experiments complete, {2 * GAMES}/{2 * GAMES} games" in out, out[-3000:]
    tables = tables_from_logs(crashed["log_dir"])
    ids = list(tables.games["game_id"])
    sample_ids = [str(s.id) for s in game_samples("homogeneous", "easy", GAMES, 0, None, None)]
    expected = {f"homogeneous|easy|{m}|s0/{sid}" for m in MODELS for sid in sample_ids}
    assert len(ids) == len(set(ids)) == 2 * GAMES
    assert set(ids) == expected
    assert not tables.errors and not tables.missing
    assert len(tables.players) == 4 * 2 * GAMES


def _assert_runs_complete(work: Path) -> None:
    runs = _runs(work)
    experiments = [r for r in runs if r.data.tags.get("impostor.kind") == "experiment"]
    assert len(experiments) == 2, [r.data.tags.get("mlflow.runName") for r in experiments]
    for r in experiments:
        name = r.data.tags.get("mlflow.runName")
        assert r.info.status == "FINISHED", (name, r.info.status)
        assert r.data.tags.get("impostor.tables_logged") == "1", name
        assert r.data.metrics.get("games_completed") == GAMES, name
    assert not [r for r in runs if r.info.status == "RUNNING"]


def test_resumed_sweep_completes_the_half_logged_run(crashed):
    _assert_runs_complete(crashed["work"])


def test_impostor_sync_completes_the_half_logged_run(crashed):
    exe = Path(sys.executable).parent / "impostor"
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "impostor_bench.cli"]
    r = subprocess.run(base + ["sync", str(crashed["log_dir"])], cwd=crashed["work"], env=crashed["env"],
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    _assert_runs_complete(crashed["work"])


def test_tracking_server_down_then_sync(server, tmp_path):
    """MLflow unreachable: the sweep still plays and writes its Inspect logs, says so and how to
    fix it; `impostor sync` logs them once a store is reachable."""
    server.switch.arm(None)  # type: ignore[attr-defined]
    cfg = tmp_path / "down.yaml"
    cfg.write_text(yaml.safe_dump({
        "name": "down", "models": MODELS[:1], "modes": ["homogeneous"], "difficulties": ["easy"],
        "games_per_experiment": 2, "seeds": [0], "retries": {"attempts": 1, "wait": 0},
        "tracking": {"experiment": "down"},
    }, sort_keys=False))
    with __import__("socket").socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    env = _env(server, MLFLOW_TRACKING_URI=dead)
    log_dir = tmp_path / "logs"
    r = subprocess.run(_cmd(cfg, log_dir), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    said = r.stdout + r.stderr
    assert r.returncode == 0, said[-3000:]
    assert "not reachable" in said and f"impostor sync {log_dir}" in said, said[-3000:]
    assert len(tables_from_logs(log_dir).games) == 2
    env.pop("MLFLOW_TRACKING_URI")
    exe = _cmd(cfg, log_dir)[:-6]
    store = f"sqlite:///{tmp_path}/store/mlflow.db"
    r = subprocess.run(exe + ["sync", str(log_dir), "--tracking-uri", store], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    from mlflow.tracking import MlflowClient

    client = MlflowClient(store)
    runs = client.search_runs([client.get_experiment_by_name("down").experiment_id])
    exp_runs = [x for x in runs if x.data.tags.get("impostor.kind") == "experiment"]
    assert len(exp_runs) == 1 and exp_runs[0].info.status == "FINISHED"
    assert exp_runs[0].data.metrics["games_completed"] == 2
