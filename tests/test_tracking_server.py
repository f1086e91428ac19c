"""Two shards into a REAL PostgreSQL-backed MLflow server (``impostor tracking-server``), one SIGKILLed
mid-way and restarted: the export from the server holds every game exactly once, every experiment
run is FINISHED, and ``impostor report --experiment`` builds a report (issue 18, CI version).

The server listens on 0.0.0.0, so MLflow's basic-auth app is on (issue 33): the shards use the login
the command printed; a request without it gets 401, a missing or wrong one is one line naming the
variable; no password is on any process's command line (issue 30) or in any log, run or trace."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import re
import sys
from types import SimpleNamespace

import httpx
import pandas as pd
import pytest
import yaml

from test_sweep_helpers import REPO, all_bytes_under, cli_env, free_port, impostor_cmd, run_cli

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


def _printed_login(text: str) -> dict[str, str]:
    """The variables the command printed for a shard, ``$(cat FILE)`` read as a shell would."""
    env = {}
    for name, value in re.findall(r"^\s*export (MLFLOW_TRACKING_\w+)=(.+)$", text, re.M):
        m = re.fullmatch(r'"\$\(cat (.+)\)"', value.strip())
        env[name] = Path(m.group(1)).read_text().strip() if m else value.strip()
    return env


@pytest.fixture(scope="module")
def server():
    """``impostor tracking-server --host 0.0.0.0`` (so with authentication) in a subprocess; yields its
    URI, data dir, printed login and output; SIGTERM must stop it cleanly."""
    _postgres_or_skip()
    pytest.importorskip("flask_wtf", reason="Flask-WTF (mlflow's auth extra) missing: pip install -e '.[test]'")
    # not under pytest's tmp_path: as root the cluster runs as `postgres`, which cannot enter /tmp/pytest-of-root
    root = Path(tempfile.mkdtemp(prefix="impostor-pg-"))
    os.chmod(root, 0o755)
    port = free_port()
    out = open(root / "server.out", "w+")
    proc = subprocess.Popen(impostor_cmd() + ["tracking-server", "--dir", str(root / "tracking"), "--host", "0.0.0.0",
                                              "--port", str(port), "--workers", "2"],
                            env=cli_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.time() + 180
        while "MLFLOW_TRACKING_PASSWORD=" not in (root / "server.out").read_text():
            assert proc.poll() is None, f"tracking-server exited: {(root / 'server.out').read_text()[-2000:]}"
            assert time.time() < deadline, "tracking-server did not come up in 180 s"
            time.sleep(0.5)
        login = _printed_login((root / "server.out").read_text())
        uri = login["MLFLOW_TRACKING_URI"]  # http://<this host's name>:port, what other hosts dial
        assert uri.endswith(f":{port}") and login["MLFLOW_TRACKING_USERNAME"] == "admin"
        assert len(login["MLFLOW_TRACKING_PASSWORD"]) >= 24
        assert httpx.get(f"{uri}/health", timeout=5).text == "OK"
        yield SimpleNamespace(uri=uri, data=root / "tracking", login=login, out=root / "server.out", pid=proc.pid)
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


def _pg_dump(data: Path, db: str) -> bytes:
    """The whole database as SQL text (pg_dump over TCP; the password from the server's pgpass file)."""
    from impostor_bench.tracking.server import PG_USER, pg_bin

    r = subprocess.run([pg_bin("pg_dump"), "-h", "127.0.0.1", "-p", str(_pg_port(data)), "-U", PG_USER, db],
                       env=dict(os.environ, PGPASSFILE=str(data / "pgpass")), capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr[-1000:]
    return r.stdout


def test_two_shards_with_a_kill_into_postgres_server(server, tmp_path):
    uri, data = server.uri, server.data
    from impostor_bench.export import tables_from_logs
    from impostor_bench.sweep import plan

    cfg = _config(tmp_path / "sweep.yaml")
    total = sum(e.n_games for e in plan(cfg).experiments)
    n_exps = len(plan(cfg).experiments)
    assert total >= 200
    env = cli_env(**server.login, MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR="false")  # exactly what it printed
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
    with pytest.raises(mlflow.exceptions.MlflowException, match="401"):  # this process has no login
        client.get_experiment_by_name(EXPERIMENT)
    runs = _as_admin(server, lambda c: c.search_runs([c.get_experiment_by_name(EXPERIMENT).experiment_id],
                                                     "tags.`impostor.kind` = 'experiment'", max_results=1000))
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

    from impostor_bench.tracking.server import Postgres, database_size

    pg = Postgres(data, port=_pg_port(data))
    db_mb = database_size(pg) / 1e6
    art_mb = sum(p.stat().st_size for p in (data / "artifacts").rglob("*") if p.is_file()) / 1e6
    print(f"\n[pg-shards] {total} games, {n_exps} experiments, 2 shards (one killed and resumed), auth on: "
          f"sweep {sweep_s:.0f}s, export {export_s:.1f}s, report {report_s:.1f}s, "
          f"database {db_mb:.1f} MB, artifacts {art_mb:.1f} MB")

    # the login reached no log, run, param, tag, artifact or trace: grep every byte of them
    secret = server.login["MLFLOW_TRACKING_PASSWORD"].encode()
    for path, blob in all_bytes_under(tmp_path / "logs", tmp_path / "exp", tmp_path / "report", data / "artifacts"):
        assert secret not in blob, path
    for log in (data / "mlflow-server.log", data / "postgres.log", server.out):
        assert secret not in log.read_bytes(), log
    dump = _pg_dump(data, "mlflow")  # runs, params, tags, metrics, traces, spans
    assert b"impostor.experiment_id" in dump and secret not in dump


def _pg_port(data: Path) -> int:
    """The port the running cluster listens on (line 4 of postmaster.pid)."""
    return int((data / "pgdata/postmaster.pid").read_text().splitlines()[3])


def test_unreachable_data_dir_is_a_one_line_error():
    """As root the cluster runs as `postgres`: a DIR under a 0700 folder is refused, naming the folder."""
    if os.geteuid() != 0:
        pytest.skip("only root hands the cluster to the postgres user")
    from impostor_bench.core.errors import ImpostorError
    from impostor_bench.tracking.server import Postgres

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


# ------------------------------------------------------------------ authentication and secrets (issues 33, 30)


def test_no_login_is_refused_and_no_secret_is_on_a_command_line(server):
    """Without the login the API answers 401 (only /health is open); the PostgreSQL and admin passwords
    are on no process's command line (any local user reads /proc/*/cmdline) nor in any environment,
    and their files are 0600."""
    api = f"{server.uri}/api/2.0/mlflow/experiments/search"
    pw = server.login["MLFLOW_TRACKING_PASSWORD"]
    assert httpx.get(api, params={"max_results": 1}, timeout=10).status_code == 401
    assert httpx.get(api, params={"max_results": 1}, auth=("admin", pw + "x"), timeout=10).status_code == 401
    assert httpx.get(api, params={"max_results": 1}, auth=("admin", pw), timeout=10).status_code == 200
    data = server.data
    pg_pw = (data / "pg-password").read_text().strip()
    for f in (data / "pg-password", data / "pgpass", data / "auth/admin-password", data / "auth/basic_auth.ini"):
        assert f.stat().st_mode & 0o777 == 0o600, f
    assert (data / "auth").stat().st_mode & 0o777 == 0o700
    assert (data / "artifacts").stat().st_mode & 0o777 == 0o700  # every run's tables: not for other users
    seen = 0
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if b"mlflow" in cmdline and b"server" in cmdline or b"postgres" in cmdline:
            seen += 1
        for secret in (pg_pw, pw):
            assert secret.encode() not in cmdline, (proc, cmdline[:300])
            assert secret.encode() not in environ, (proc, cmdline[:300])
    assert seen >= 3  # mlflow server, its workers, PostgreSQL: the scan did look at them
    for log in (data / "mlflow-server.log", data / "postgres.log", server.out):
        text = log.read_text(errors="replace")
        assert pg_pw not in text and pw not in text, log


def _as_admin(server, fn):
    """``fn(MlflowClient)`` with the printed admin login in this process's environment."""
    import mlflow

    os.environ.update({k: v for k, v in server.login.items() if k != "MLFLOW_TRACKING_URI"})
    try:
        return fn(mlflow.MlflowClient(server.uri))
    finally:
        for k in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
            os.environ.pop(k, None)


def _one_line_error(r: subprocess.CompletedProcess, variable: str) -> str:
    err = r.stderr.strip()
    assert "Traceback" not in r.stderr + r.stdout, r.stderr[-2000:]
    lines = [ln for ln in err.splitlines() if variable in ln]
    assert len(lines) == 1 and "fix:" in lines[0] and "admin-password" in lines[0], err[-2000:]
    return lines[0]


def test_missing_or_wrong_login_is_one_line(server, tmp_path):
    """A sweep without the login, or with a wrong password, refuses before any game (exit 2, one line
    naming the variable and the fix); export, report and sync likewise."""
    cfg = _config(tmp_path / "sweep.yaml")
    base = cli_env(MLFLOW_TRACKING_URI=server.uri)
    base.pop("IMPOSTOR_MLFLOW", None)
    wrong = dict(base, MLFLOW_TRACKING_USERNAME="admin", MLFLOW_TRACKING_PASSWORD="not-the-password-at-all")
    r = run_cli(["sweep", str(cfg), "--shard", "1/2", "--display", "none"], cwd=tmp_path, env=base)
    assert r.returncode == 2, r.stdout[-1000:] + r.stderr[-1000:]
    assert "requires a login (HTTP 401)" in _one_line_error(r, "MLFLOW_TRACKING_USERNAME")
    assert not list((tmp_path / "logs").rglob("*.eval")), "games were played untracked"
    r = run_cli(["sweep", str(cfg), "--shard", "1/2", "--display", "none"], cwd=tmp_path,
                env=dict(base, MLFLOW_TRACKING_USERNAME="admin"))
    assert r.returncode == 2 and "MLFLOW_TRACKING_PASSWORD is not set" in _one_line_error(r, "MLFLOW_TRACKING_PASSWORD")
    r = run_cli(["sweep", str(cfg), "--shard", "1/2", "--display", "none"], cwd=tmp_path, env=wrong)
    assert r.returncode == 2 and "refused the login" in _one_line_error(r, "MLFLOW_TRACKING_PASSWORD")
    assert "not-the-password-at-all" not in r.stderr + r.stdout
    assert not list((tmp_path / "logs").rglob("*.eval"))
    # a user with MLflow's default READ permission on an experiment the admin made: HTTP 403, one line
    _as_admin(server, lambda c: (c.get_experiment_by_name(EXPERIMENT) or c.create_experiment(EXPERIMENT)))
    from mlflow.server import get_app_client

    _as_admin(server, lambda c: get_app_client("basic-auth", tracking_uri=server.uri).create_user(
        "reader", "reader-password-1234"))
    r = run_cli(["sweep", str(cfg), "--shard", "1/2", "--display", "none"], cwd=tmp_path,
                env=dict(base, MLFLOW_TRACKING_USERNAME="reader", MLFLOW_TRACKING_PASSWORD="reader-password-1234"))
    assert r.returncode == 2 and "refused user 'reader' (HTTP 403" in _one_line_error(r, "MLFLOW_TRACKING_USERNAME")
    assert not list((tmp_path / "logs").rglob("*.eval"))
    # issue 42: nor can it create an experiment of its own and sweep into that (MLflow allows it)
    own = tmp_path / "own.yaml"
    own.write_text(cfg.read_text().replace(f"experiment: {EXPERIMENT}", "experiment: readers-own"))
    r = run_cli(["sweep", str(own), "--shard", "1/2", "--display", "none"], cwd=tmp_path,
                env=dict(base, MLFLOW_TRACKING_USERNAME="reader", MLFLOW_TRACKING_PASSWORD="reader-password-1234"))
    line = _one_line_error(r, "MLFLOW_TRACKING_USERNAME")
    assert r.returncode == 2 and "refused user 'reader' (HTTP 403" in line and "only an admin creates" in line
    assert _as_admin(server, lambda c: c.get_experiment_by_name("readers-own")) is None
    assert not list((tmp_path / "logs").rglob("*.eval"))
    r = run_cli(["export", "--experiment", EXPERIMENT, "--out", str(tmp_path / "exp")], cwd=tmp_path, env=base)
    assert r.returncode == 2 and "requires a login" in _one_line_error(r, "MLFLOW_TRACKING_USERNAME")
    r = run_cli(["report", "--experiment", EXPERIMENT, "--out", str(tmp_path / "rep"), "--no-figures"], cwd=tmp_path,
                env=wrong)
    assert r.returncode == 2 and "refused the login" in _one_line_error(r, "MLFLOW_TRACKING_PASSWORD")


def test_plain_inspect_eval_logs_with_the_login_and_says_so_without(server, tmp_path):
    """`inspect eval` with the tracking hook: with the printed variables its run is on the server;
    with a wrong password the eval still plays, and one line names the variable (no silent miss)."""
    inspect_exe = Path(sys.executable).parent / "inspect"
    task = os.path.relpath(REPO / "tasks" / "impostor.py", tmp_path)  # Inspect wants a relative path
    env = cli_env(**server.login, IMPOSTOR_MLFLOW_EXPERIMENT="plain-auth")
    env.pop("IMPOSTOR_MLFLOW", None)
    cmd = [str(inspect_exe), "eval", task, "--model", "bot/random", "-T", "n_games=2", "--display", "none"]
    r = subprocess.run(cmd + ["--log-dir", "ok"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "not tracked" not in r.stderr, r.stderr[-2000:]
    r = subprocess.run(cmd + ["--log-dir", "bad"], cwd=tmp_path, env=dict(env, MLFLOW_TRACKING_PASSWORD="wrong-password"),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    line = next(ln for ln in r.stderr.splitlines() if "refused the login" in ln)
    assert "MLFLOW_TRACKING_PASSWORD" in line and "not tracked" in line and "fix:" in line
    # impostor sync: refused the same way with the wrong password, then logs the eval with the right one
    r = run_cli(["sync", "bad"], cwd=tmp_path, env=dict(env, MLFLOW_TRACKING_PASSWORD="wrong-password"))
    assert r.returncode == 2 and "refused the login" in _one_line_error(r, "MLFLOW_TRACKING_PASSWORD")
    r = run_cli(["sync", "bad"], cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    runs = _as_admin(server, lambda c: c.search_runs([c.get_experiment_by_name("plain-auth").experiment_id]))
    assert len(runs) == 2 and {x.data.tags["impostor.source"] for x in runs} == {"hook", "sync"}
    assert all(x.info.status == "FINISHED" and x.data.metrics["games_completed"] == 2 for x in runs)
    secret = server.login["MLFLOW_TRACKING_PASSWORD"].encode()
    for path, blob in all_bytes_under(tmp_path, server.data / "artifacts"):
        assert secret not in blob, path


def test_no_auth_beyond_loopback_warns():
    """--no-auth with --host 0.0.0.0 says what it exposes before anything starts (here the DIR is then
    refused, so no server is started)."""
    base = Path(tempfile.mkdtemp(prefix="impostor-pg-"))
    try:
        bad = base / "file"
        bad.write_text("")
        r = run_cli(["tracking-server", "--host", "0.0.0.0", "--no-auth", "--dir", str(bad / "sub")], cwd=base,
                    timeout=60)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert "WARNING: --no-auth with --host 0.0.0.0: anyone who can reach port 5000" in r.stderr
    finally:
        shutil.rmtree(base)
