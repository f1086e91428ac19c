"""Secrets of ``impostor tracking-server``: the PostgreSQL password file and MLflow's basic-auth app.

Nothing secret goes on a command line (any local user reads ``/proc/*/cmdline``):
``mlflow server`` gets a database URI without a password and finds the password
in a libpq password file (``DIR/pgpass``, 0600, named by ``PGPASSFILE``).

A server that listens beyond loopback runs MLflow's own basic-auth app
(``mlflow server --app-name basic-auth``): its users live in a second database of
the same cluster (``mlflow_auth``), its settings in ``DIR/auth/basic_auth.ini``
(0600, named by ``MLFLOW_AUTH_CONFIG_PATH``).  The admin password is generated on
first start into ``DIR/auth/admin-password`` (0600); MLflow creates the admin user
from the ini on its first start and ignores the setting afterwards.  Shards log in
with MLflow's standard ``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD``.

Roles: the admin creates and writes anything; any other user reads (MLflow's
``default_permission = READ``) and writes only where the admin granted EDIT or
MANAGE on an experiment.  MLflow itself lets every logged-in user create
experiments and registered models (and then MANAGE them), so a "read-only" user
could run a whole sweep into an experiment of their own; ``authenticate_request``
below lets a non-admin write only what ``NON_ADMIN_WRITES`` allows (HTTP 403 otherwise).
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
from pathlib import Path
from typing import Any

ADMIN_USER = "admin"
AUTH_DB = "mlflow_auth"
# MLflow checks a password with PBKDF2 on every request (~0.1-0.3 s of CPU): without its
# cache a busy shard's requests would cost the server more than the games.  The cache is
# per worker; a changed password reaches every worker within this many seconds.
AUTH_CACHE_TTL_S = 60


#: The writes a user who is not the admin may send, named by the validator MLflow's basic-auth
#: runs for them (``mlflow.server.auth``): reads sent as POST (MLflow checks READ), and logging
#: into an experiment or run the admin granted EDIT or MANAGE on (MLflow checks the grant).  Any
#: other write is refused (HTTP 403) whatever it is: creating an experiment, a registered model,
#: a prompt, a gateway secret, endpoint or model definition, a dataset, a user; a route MLflow
#: adds in a later version; a route MLflow does not check at all.  Deny by default: a list of
#: what is allowed, not of what is known to be dangerous.
NON_ADMIN_WRITES = frozenset({
    # reads sent as POST
    "validate_can_read_experiment", "validate_can_read_run", "validate_can_read_traces_by_experiment_ids",
    "validate_can_batch_get_traces", "validate_can_query_trace_metrics", "validate_can_search_logged_models",
    # a run's life in an experiment the user may edit
    "validate_can_create_run", "validate_can_update_run", "validate_can_delete_run", "validate_can_update_experiment",
    "validate_can_log_metric", "validate_can_log_batch", "validate_can_log_inputs", "validate_can_log_outputs",
    "validate_can_update_run_artifact", "validate_can_update_run_or_logged_model",
    # the run's traces
    "validate_can_start_trace", "validate_can_update_trace_by_trace_id", "validate_can_update_trace_by_request_id",
    "validate_can_link_traces_to_run",
    # one's own password
    "validate_can_update_user_password",
})
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def write_allowed(req: Any) -> bool:
    """Whether a user who is not the admin may send ``req`` (a Flask request that is not a read):
    its MLflow validator is one of ``NON_ADMIN_WRITES``; a route without one passes only where
    MLflow authorizes it another way (an artifact upload checked against its experiment, a search
    that filters its results by the user).  MLflow's lookups are private functions: where one is
    missing (another MLflow version) the answer is no."""
    from mlflow.server import auth

    find = getattr(auth, "_find_validator", None)
    validator = find(req) if find is not None else None
    if validator is not None:
        return getattr(validator, "__name__", "") in NON_ADMIN_WRITES
    checked_elsewhere = (getattr(auth, "_is_proxy_artifact_path", None), getattr(auth, "_authorized_outside_before_request", None))
    return (checked_elsewhere[0] is not None and bool(checked_elsewhere[0](req.path))) or \
        (checked_elsewhere[1] is not None and bool(checked_elsewhere[1](req)))


def authenticate_request() -> Any:
    """MLflow basic-auth's login check (``authorization_function`` in ``basic_auth.ini``), then:
    a user who is not the admin reads, and writes only what ``write_allowed`` lets through
    (HTTP 403 for anything else).

    MLflow lets every logged-in user create experiments, registered models, gateway secrets and
    endpoints (and then MANAGE them), so a "read-only" user could run a whole sweep into an
    experiment of their own or store provider keys on the server; this is the one place that
    stops them.  MLflow calls it for its Flask routes and for its native FastAPI routes
    (``/gateway/...``) alike.
    """
    from flask import Response, request
    from mlflow.server import auth

    result = auth.authenticate_request_basic_auth()
    if isinstance(result, Response) or request.method in READ_METHODS:
        return result
    user = auth.store.get_user(result.username) if result.username else None
    if user is None or not user.is_admin:
        if not write_allowed(request):
            return auth.make_forbidden_response()
    return result


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to a file that only its owner can read, created 0600 (never briefly wider)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o600)  # an existing file keeps its old mode under O_CREAT


def private_dir(path: Path) -> Path:
    """The folder ``path``, created 0700 or made 0700 (a folder ``mkdir`` made under the usual
    umask is 0755: every local user would read what the server stores there)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def read_private(path: Path) -> str:
    """The secret a ``write_private`` file holds (without its newline)."""
    return path.read_text().strip()


def file_in(folder: str, name: str) -> property:
    """A read-only attribute: the file ``name`` inside the folder held by attribute ``folder``.
    The server's files (PostgreSQL's and basic-auth's) are each declared once, by name."""
    return property(lambda self: Path(getattr(self, folder)) / name)


def write_pgpass(path: Path, user: str, password: str) -> None:
    """A libpq password file for ``user`` on 127.0.0.1, any port (the cluster's port changes per start)."""
    esc = password.replace("\\", "\\\\").replace(":", "\\:")
    write_private(path, f"127.0.0.1:*:*:{user}:{esc}\n")


def is_loopback(host: str) -> bool:
    """Whether ``--host`` keeps the server to this machine (only then may authentication be off)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Auth:
    """The basic-auth files under ``root/auth``: admin password, MLflow's ini, the Flask secret key."""

    password_file = file_in("dir", "admin-password")
    config_file = file_in("dir", "basic_auth.ini")
    _secret_key_file = file_in("dir", "flask-secret-key")

    def __init__(self, root: Path):
        self.dir = Path(root) / "auth"

    def ensure(self) -> None:
        """Generate the admin password and the Flask secret key once (kept across restarts)."""
        private_dir(self.dir)
        for path in (self.password_file, self._secret_key_file):
            if not path.exists() or not path.read_text().strip():
                write_private(path, secrets.token_urlsafe(24) + "\n")

    def password(self) -> str:
        return read_private(self.password_file)

    def write_config(self, db_port: int, db_user: str) -> None:
        """MLflow's basic_auth.ini for this start (the database port changes per start)."""
        write_private(self.config_file, "\n".join([
            "[mlflow]",
            "default_permission = READ",
            f"database_uri = postgresql+psycopg2://{db_user}@127.0.0.1:{db_port}/{AUTH_DB}",
            f"admin_username = {ADMIN_USER}",
            f"admin_password = {self.password()}",
            "authorization_function = impostor_bench.tracking.serverauth:authenticate_request",
            f"auth_cache_ttl_seconds = {AUTH_CACHE_TTL_S}",
            "",
        ]))

    def server_env(self) -> dict[str, str]:
        """What ``mlflow server --app-name basic-auth`` needs, by environment (never argv)."""
        return {"MLFLOW_AUTH_CONFIG_PATH": str(self.config_file),
                "MLFLOW_FLASK_SERVER_SECRET_KEY": read_private(self._secret_key_file)}


def allowed_hosts(host: str) -> str:
    """``MLFLOW_SERVER_ALLOWED_HOSTS`` for a server listening on ``host``.

    MLflow refuses (403 "Invalid Host header") any Host that is not loopback or a private
    IP, so the machine's own names, which the printed URL uses, are added to its defaults.
    """
    from mlflow.server.security_utils import get_default_allowed_hosts

    names = {socket.gethostname(), socket.getfqdn()}
    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        names.add(host)
    extra = [p for n in sorted(names) if n for p in (n, f"{n}:*")]
    return ",".join(get_default_allowed_hosts() + extra)


def client_lines(url: str, auth: Auth | None) -> list[str]:
    """The variables a shard sets; the password is named by its file, never printed."""
    lines = [f"  export MLFLOW_TRACKING_URI={url}"]
    if auth is not None:
        lines += [f"  export MLFLOW_TRACKING_USERNAME={ADMIN_USER}",
                  f'  export MLFLOW_TRACKING_PASSWORD="$(cat {auth.password_file})"',
                  f"  # on another host: copy {auth.password_file} there (mode 0600) and cat that copy"]
    return lines
