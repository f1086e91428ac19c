"""A shared MLflow tracking server backed by PostgreSQL, for shards on several hosts.

``impostor tracking-server`` (and ``scripts/tracking-server.sh``) keeps a
PostgreSQL cluster under ``DIR/pgdata`` and runs the standard ``mlflow server``
on it with proxied artifact storage (``--serve-artifacts``, files under
``DIR/artifacts``), so a shard on another host needs only the server's URL.
Why PostgreSQL: several shards writing one SQLite file over a network share
lock each other out; PostgreSQL takes concurrent writers. SQLite stays the
zero-setup default (docs/tracking.md). Ctrl-C / SIGTERM stops both cleanly;
starting again on the same DIR reuses the database. No secret is ever on a command
line, and a server reachable from other hosts requires a login
(``impostor_bench.tracking.serverauth``).
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from impostor_bench.core.errors import ImpostorError
from impostor_bench.tracking.serverauth import (
    AUTH_DB,
    Auth,
    allowed_hosts,
    client_lines,
    file_in,
    is_loopback,
    private_dir,
    read_private,
    write_pgpass,
    write_private,
)

PG_USER = "impostor"
PG_DB = "mlflow"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin(name: str) -> str:
    """Path of a PostgreSQL server program (Debian keeps them off PATH)."""
    found = shutil.which(name)
    if found:
        return found
    cands = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    if cands:
        return cands[-1]
    raise ImpostorError(f"PostgreSQL's {name} was not found: install it (Debian: apt-get install -y postgresql; "
                        "scripts/tracking-server.sh does this when run as root)")


def _as_pg_user(cmd: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run its programs as the ``postgres`` user then."""
    if os.geteuid() != 0:
        return cmd
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", "postgres", "--"] + cmd
    return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(map(_shq, cmd))]


def _shq(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def _chown_pg(path: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(path, "postgres", "postgres")


def _check_reachable(path: Path) -> None:
    """As root the cluster runs as ``postgres``, which must be able to enter every parent folder."""
    if os.geteuid() != 0:
        return
    for parent in list(path.resolve().parents)[::-1]:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            raise ImpostorError(f"the postgres user cannot enter {parent} (mode {oct(mode & 0o777)}): "
                                "give a DIR outside it (e.g. --dir /srv/impostor-tracking) or chmod o+x it")


@dataclass
class Postgres:
    """A private PostgreSQL cluster in ``root/pgdata`` listening on 127.0.0.1 only, password auth."""

    root: Path
    port: int = 0

    data = file_in("root", "pgdata")
    password_file = file_in("root", "pg-password")
    # libpq's password file for ``mlflow server`` (``PGPASSFILE``): the password stays off its argv
    pgpass_file = file_in("root", "pgpass")

    def uri(self) -> str:
        """With the password: for this process only (psycopg2), never for a command line."""
        pw = read_private(self.password_file)
        return f"postgresql://{PG_USER}:{pw}@127.0.0.1:{self.port}/{PG_DB}"

    def backend_uri(self) -> str:
        """SQLAlchemy URI for ``mlflow server``, without the password (libpq reads ``pgpass_file``);
        names psycopg2 (SQLAlchemy >= 2.1 defaults to psycopg 3)."""
        return f"postgresql+psycopg2://{PG_USER}@127.0.0.1:{self.port}/{PG_DB}"

    def write_pgpass(self) -> None:
        write_pgpass(self.pgpass_file, PG_USER, read_private(self.password_file))

    def init(self) -> None:
        """Create the cluster on first use (a random password, kept 0600 in DIR/pg-password)."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ImpostorError(f"--dir {self.root}: cannot create it ({exc.strerror}); fix: give a folder path "
                                "that can be created (e.g. --dir /srv/impostor-tracking)") from None
        _check_reachable(self.root)
        if (self.data / "PG_VERSION").exists():
            return
        pw = secrets.token_urlsafe(24)
        write_private(self.password_file, pw + "\n")
        self.data.mkdir(mode=0o700, exist_ok=True)
        _chown_pg(self.data)
        tmp_pw = self.root / ".initdb-pw"  # initdb (as postgres) reads it; removed right after
        write_private(tmp_pw, pw + "\n")
        _chown_pg(tmp_pw)
        try:
            r = subprocess.run(_as_pg_user([pg_bin("initdb"), "-D", str(self.data), "-U", PG_USER, "-E", "UTF8",
                                            "--auth-host=scram-sha-256", "--auth-local=peer",
                                            f"--pwfile={tmp_pw}"]),
                               capture_output=True, text=True)
        finally:
            tmp_pw.unlink(missing_ok=True)
        if r.returncode:
            raise ImpostorError(f"initdb failed: {(r.stderr or r.stdout).strip()[-800:]}")

    def start(self) -> None:
        self.port = self.port or _free_port()
        log = self.root / "postgres.log"
        if not log.exists():
            log.touch()
        _chown_pg(log)
        status = subprocess.run(_as_pg_user([pg_bin("pg_ctl"), "-D", str(self.data), "status"]), capture_output=True)
        if status.returncode == 0:  # left running by a killed tracking-server: restart it on a fresh port
            self.stop()
        opts = f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories=''"
        r = subprocess.run(_as_pg_user([pg_bin("pg_ctl"), "-D", str(self.data), "-l", str(log), "-o", opts,
                                        "-w", "-t", "60", "start"]), capture_output=True, text=True)
        if r.returncode:
            raise ImpostorError(f"PostgreSQL did not start ({(r.stderr or r.stdout).strip()[-300:]}); "
                                f"see {log}")
        self._ensure_db()

    def _ensure_db(self) -> None:
        import psycopg2

        pw = read_private(self.password_file)
        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user=PG_USER, password=pw, dbname="postgres")
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                for db in (PG_DB, AUTH_DB):  # the runs; MLflow's basic-auth users
                    cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,))
                    if cur.fetchone() is None:
                        cur.execute(f"CREATE DATABASE {db}")
        finally:
            conn.close()

    def stop(self) -> None:
        subprocess.run(_as_pg_user([pg_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"]),
                       capture_output=True, text=True)


def database_size(pg: Postgres) -> int:
    """Bytes of the MLflow database (for docs/tracking.md's figures)."""
    import psycopg2

    conn = psycopg2.connect(pg.uri())
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_database_size(%s)", (PG_DB,))
            return int(cur.fetchone()[0])
    finally:
        conn.close()


def mlflow_server_cmd(backend_uri: str, artifacts: Path, host: str, port: int, workers: int,
                      auth: bool = False) -> list[str]:
    exe = Path(sys.executable).parent / "mlflow"
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "mlflow"]
    return base + ["server", "--backend-store-uri", backend_uri, "--serve-artifacts",
                   "--artifacts-destination", str(artifacts), "--host", host, "--port", str(port),
                   "--workers", str(workers)] + (["--app-name", "basic-auth"] if auth else [])


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float, log: Path) -> None:
    import httpx

    deadline = time.time() + timeout
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            raise ImpostorError(f"mlflow server did not start; see {log}: "
                                f"{log.read_text(errors='replace')[-600:]}")
        time.sleep(0.5)


def _stop_leftover(pidfile: Path) -> None:
    """An ``mlflow server`` left by a SIGKILLed tracking-server still holds the port: stop its group."""
    try:
        pid = int(pidfile.read_text())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return
    if b"mlflow" in cmdline and b"server" in cmdline:
        try:
            os.killpg(pid, signal.SIGTERM)
            for _ in range(30):
                time.sleep(0.5)
                os.killpg(pid, 0)
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    pidfile.unlink(missing_ok=True)


class _Stop(Exception):
    pass


def _raise_stop(signum, frame):  # noqa: ARG001
    raise _Stop()


def _check_auth(url: str, log: Path) -> None:
    """The login is really required: an API call without credentials must get 401."""
    import httpx

    r = httpx.get(f"{url}/api/2.0/mlflow/experiments/search", params={"max_results": 1}, timeout=10)
    if r.status_code != 401:
        raise ImpostorError(f"mlflow server answered {r.status_code}, not 401, to a request without credentials: "
                            f"the basic-auth app is not active; see {log}")


def serve(root: Path, host: str = "127.0.0.1", port: int = 5000, workers: int = 2, pg_port: int = 0,
          timeout: float = 180, auth: bool | None = None) -> int:
    """Start PostgreSQL and ``mlflow server``; print the URL (and the login); stop both on Ctrl-C / SIGTERM.

    ``auth`` None: on unless ``host`` is loopback (MLflow's basic-auth app)."""
    root = Path(root).resolve()
    exposed = not is_loopback(host)
    if auth is None:
        auth = exposed
    if exposed and not auth:
        print(f"tracking-server: WARNING: --no-auth with --host {host}: anyone who can reach port {port} can read, "
              "change and delete every run; keep it behind a firewall, a VPN or an SSH tunnel", file=sys.stderr,
              flush=True)
    pg = Postgres(root, pg_port)
    pg.init()
    pg.write_pgpass()
    artifacts = private_dir(root / "artifacts")  # every run's tables and logs: not for other local users
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")  # else `mlflow server` hangs at start offline
    for var in ("MLFLOW_TRACKING_URI", "MLFLOW_BACKEND_STORE_URI", "MLFLOW_AUTH_ADMIN_USERNAME",
                "MLFLOW_AUTH_ADMIN_PASSWORD"):  # ours, from DIR, or the admin could differ from DIR/auth
        env.pop(var, None)
    env["PGPASSFILE"] = str(pg.pgpass_file)
    env.setdefault("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")  # GenAI job runner: 8 idle processes we never use
    if exposed:
        env.setdefault("MLFLOW_SERVER_ALLOWED_HOSTS", allowed_hosts(host))
    gate = Auth(root) if auth else None
    if gate is not None:
        try:
            import flask_wtf  # noqa: F401 - MLflow's basic-auth app fails in its workers without it
        except ImportError:
            raise ImpostorError("MLflow's basic-auth app needs Flask-WTF: fix: pip install 'Flask-WTF>=1,<2' "
                                "(mlflow's auth extra; scripts/tracking-server.sh installs it)") from None
        gate.ensure()
    old = {s: signal.signal(s, _raise_stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    proc = None
    pg_started = False
    try:
        pg.start()
        pg_started = True
        if gate is not None:
            gate.write_config(pg.port, PG_USER)
            env.update(gate.server_env())
        log_path = root / "mlflow-server.log"
        _stop_leftover(root / "mlflow-server.pid")
        with open(log_path, "a") as log:
            proc = subprocess.Popen(mlflow_server_cmd(pg.backend_uri(), artifacts, host, port, workers,
                                                      auth=gate is not None),
                                    env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        (root / "mlflow-server.pid").write_text(f"{proc.pid}\n")
        shown = socket.gethostname() if host in ("0.0.0.0", "::") else host  # what other hosts dial
        url = f"http://{shown}:{port}"
        _wait_healthy(f"http://127.0.0.1:{port}", proc, timeout, log_path)
        if gate is not None:
            _check_auth(f"http://127.0.0.1:{port}", log_path)
        login = ("with authentication (MLflow basic-auth; requests without the login get HTTP 401)"
                 if gate is not None else "without authentication")
        print(f"MLflow tracking server (PostgreSQL on 127.0.0.1:{pg.port}, artifacts {artifacts}) is up, {login}.\n"
              "A shard (impostor sweep, inspect eval, impostor export/report/sync) uses it with:\n"
              + "\n".join(client_lines(url, gate)) + f"\n(Ctrl-C stops it; log {log_path})", flush=True)
        while proc.poll() is None:
            time.sleep(0.5)
        print(f"mlflow server exited with {proc.returncode}; see {log_path}", file=sys.stderr)
        return 1
    except (_Stop, KeyboardInterrupt):
        print("tracking-server: stopping", flush=True)
        return 0
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        if pg_started:
            pg.stop()
