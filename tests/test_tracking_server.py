"""Two shards into a REAL PostgreSQL-backed MLflow server (``impostor tracking-server``), one SIGKILLed
mid-way and restarted: the export from the server holds every game exactly once, every experiment
run is FINISHED, and ``impostor report --experiment`` builds a report (issue 18, CI version)."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import pandas as pd
import pytest
import yaml

from test_sweep_helpers import cli_env, free_port, impostor_cmd, run_cli

pytestmark = pytest.mark.slow
EXPERIMENT = "pgshards"


def _postgres_or_skip() -> None:
    pytest.importorskip("psycopg2", reason="psycopg2-binary missing: scripts/install.sh installs it (test extra)")
    if shutil.which("initdb") or glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("PostgreSQL is not installed and apt-get is not usable here (scripts/install.sh installs it as root)")
    r = subprocess.run("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql",
                       shell=True, capture_output=True, text=True, timeout=600)
    if r.returncode:
        pytest.skip(f"apt-get install postgresql failed (offline?): {r.stderr.strip()[-300:]}")


@pytest.fixture(scope="module")
def server():
    """``impostor tracking-server`` in a subprocess; yields (uri, data dir); SIGTERM must stop it cleanly."""
    _postgres_or_skip()
    # not under pytest's tmp_path: as root the cluster runs as `postgres`, which cannot enter /tmp/pytest-of-root
    root = Path(tempfile.mkdtemp(prefix="impostor-pg-"))
    os.chmod(root, 0o755)
    port = free_port()
    out = open(root / "server.out", "w+")
    proc = subprocess.Popen(impostor_cmd() + ["tracking-server", "--dir", str(root / "tracking"), "--port", str(port),
                                              "--workers", "2"],
                            env=cli_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 180
        while f"MLFLOW_TRACKING_URI={uri}" not in (root / "server.out").read_text():
            assert proc.poll() is None, f"tracking-server exited: {(root / 'server.out').read_text()[-2000:]}"
            assert time.time() < deadline, "tracking-server did not come up in 180 s"
            time.sleep(0.5)
        assert httpx.get(f"{uri}/health", timeout=5).text == "OK"
        yield uri, root / "tracking"
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert not (root / "tracking/pgdata/postmaster.pid").exists(), "PostgreSQL left running"
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{uri}/health", timeout=2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            subprocess.run(["runuser", "-u", "postgres", "--", "pg_ctl", "-D", str(root / "tracking/pgdata"),
                            "-m", "immediate", "stop"], capture_output=True)
        out.close()
        shutil.rmtree(root, ignore_errors=True)


def _config(path: Path) -> Path:
    cfg = {"name": "pg", "models": ["bot/random", "bot/embedding"],
           "modes": ["homogeneous", "cross_play", "team_blind", "team_aware", "team_semi_aware"],
           "difficulties": ["easy"], "games_per_experiment": 32, "seeds": [0],
           # one experiment at a time per shard, so a kill lands between "one finished" and "all finished"
           "concurrency": {"max_connections": 4, "max_samples": 8, "max_tasks": 1},
           "retries": {"attempts": 2, "wait": 0}, "output_dir": str(path.parent / "logs"),
           "tracking": {"experiment": EXPERIMENT}}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _shard(cfg: Path, i: int, env: dict) -> subprocess.Popen:
    return subprocess.Popen(impostor_cmd() + ["sweep", str(cfg), "--shard", f"{i}/2", "--display", "none"],
                            cwd=cfg.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def test_two_shards_with_a_kill_into_postgres_server(server, tmp_path):
    uri, data = server
    from impostor.export import tables_from_logs
    from impostor.sweep import plan

    cfg = _config(tmp_path / "sweep.yaml")
    total = sum(e.n_games for e in plan(cfg).experiments)
    n_exps = len(plan(cfg).experiments)
    assert total >= 200
    env = cli_env(MLFLOW_TRACKING_URI=uri, MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR="false")
    env.pop("IMPOSTOR_MLFLOW", None)  # conftest switches tracking off by default
    t0 = time.time()
    s1, s2 = _shard(cfg, 1, env), _shard(cfg, 2, env)
    shard1_logs = tmp_path / "logs/pg/shard-1-of-2"
    # SIGKILL shard 1 once its first experiment is done and its second has started
    deadline = time.time() + 150
    while len(list(shard1_logs.glob("*.eval"))) < 2:
        assert s1.poll() is None, f"shard 1 ended before the kill: {s1.stdout.read()[-2000:]}"
        assert time.time() < deadline, "shard 1 made no progress"
        time.sleep(0.1)
    os.killpg(s1.pid, signal.SIGKILL)
    s1.wait()
    print(f"\n[pg-shards] shard 1 killed after {time.time() - t0:.0f}s")
    s1 = _shard(cfg, 1, env)  # the same command resumes it
    for s in (s1, s2):
        out = s.communicate(timeout=400)[0]
        assert s.returncode == 0, out[-3000:]
        assert "not tracked in MLflow" not in out, out[-2000:]
        assert "View run" not in out  # MLflow's two lines per run against a server are silenced
    sweep_s = time.time() - t0

    # export from the server: every planned game exactly once, the same games the logs hold
    t1 = time.time()
    r = run_cli(["export", "--experiment", EXPERIMENT, "--tracking-uri", uri, "--out", str(tmp_path / "exp")],
                cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    export_s = time.time() - t1
    games = pd.read_parquet(tmp_path / "exp/games.parquet")
    assert len(games) == total
    assert games["game_id"].is_unique
    from_logs = tables_from_logs(tmp_path / "logs/pg")
    assert set(games["game_id"]) == set(from_logs.games["game_id"])
    players = pd.read_parquet(tmp_path / "exp/players.parquet")
    assert len(players) == 4 * total and not players.duplicated(["game_id", "seat"]).any()

    # every experiment run FINISHED, one per planned experiment
    import mlflow

    client = mlflow.MlflowClient(uri)
    exp = client.get_experiment_by_name(EXPERIMENT)
    runs = client.search_runs([exp.experiment_id], "tags.`impostor.kind` = 'experiment'", max_results=1000)
    finished = [r for r in runs if r.info.status == "FINISHED"]
    assert len({r.data.tags["impostor.experiment_id"] for r in finished}) == n_exps
    assert all(r.info.status == "FINISHED" for r in runs), [(r.info.run_name, r.info.status) for r in runs]

    # the report builds from the server
    t2 = time.time()
    r = run_cli(["report", "--experiment", EXPERIMENT, "--tracking-uri", uri, "--out", str(tmp_path / "report"),
                 "--bootstrap-reps", "100", "--permutation-reps", "100", "--no-figures"], cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    report_s = time.time() - t2
    assert any((tmp_path / "report").rglob("*.csv"))

    from impostor.tracking.server import Postgres, database_size

    pg = Postgres(data, port=_pg_port(data))
    db_mb = database_size(pg) / 1e6
    art_mb = sum(p.stat().st_size for p in (data / "artifacts").rglob("*") if p.is_file()) / 1e6
    print(f"\n[pg-shards] {total} games, {n_exps} experiments, 2 shards (one killed and resumed): "
          f"sweep {sweep_s:.0f}s, export {export_s:.1f}s, report {report_s:.1f}s, "
          f"database {db_mb:.1f} MB, artifacts {art_mb:.1f} MB")


def _pg_port(data: Path) -> int:
    """The port the running cluster listens on (line 4 of postmaster.pid)."""
    return int((data / "pgdata/postmaster.pid").read_text().splitlines()[3])


def test_unreachable_data_dir_is_a_one_line_error():
    """As root the cluster runs as `postgres`: a DIR under a 0700 folder is refused, naming the folder."""
    if os.geteuid() != 0:
        pytest.skip("only root hands the cluster to the postgres user")
    from impostor.core.errors import ImpostorError
    from impostor.tracking.server import Postgres

    base = Path(tempfile.mkdtemp(prefix="impostor-pg-"))  # pytest's own tmp_path is already 0700
    try:
        os.chmod(base, 0o755)
        locked = base / "locked"
        locked.mkdir(mode=0o700)
        with pytest.raises(ImpostorError, match=r"postgres user cannot enter .*locked \(mode 0o700\).*--dir"):
            Postgres(locked / "tracking").init()
        assert not (locked / "tracking/pgdata").exists()
    finally:
        shutil.rmtree(base)
