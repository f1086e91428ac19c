"""Where runs go: ``MLFLOW_TRACKING_URI`` if set, else a local SQLite store under ``./mlruns``.

Default (no server)::

    tracking URI   sqlite:///<cwd>/mlruns/mlflow.db
    artifacts      <cwd>/mlruns/artifacts/<experiment name>/<run id>/artifacts

Open it with (from the same directory)::

    LITELLM_LOCAL_MODEL_COST_MAP=True mlflow ui --backend-store-uri sqlite:///mlruns/mlflow.db
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterator, Optional

DEFAULT_EXPERIMENT = "impostor"
ENV_DISABLE = "IMPOSTOR_MLFLOW"  # 0/false/off disables the hooks
ENV_EXPERIMENT = "IMPOSTOR_MLFLOW_EXPERIMENT"
STORE_DIR = "mlruns"
DB_FILE = "mlflow.db"
ARTIFACTS_DIR = "artifacts"

_warned: set[str] = set()


class TrackingUnavailable(Exception):
    """The tracking store cannot be reached; the Inspect log is still the source of truth."""


def tracking_disabled() -> bool:
    return os.environ.get(ENV_DISABLE, "1").strip().lower() in {"0", "false", "no", "off"}


def default_store_root() -> Path:
    return Path.cwd() / STORE_DIR


def tracking_uri(explicit: Optional[str] = None) -> str:
    uri = explicit or os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri
    return f"sqlite:///{(default_store_root() / DB_FILE).as_posix()}"


def experiment_name(explicit: Optional[str] = None) -> str:
    return explicit or os.environ.get(ENV_EXPERIMENT) or os.environ.get("MLFLOW_EXPERIMENT_NAME") or DEFAULT_EXPERIMENT


def shown_uri(uri: str) -> str:
    """The URI without credentials, for messages."""
    return re.sub(r"://[^/@\s]+@", "://***@", uri)


def warn(key: str, message: str) -> None:
    """Print a one-line warning to stderr once per process."""
    if key in _warned:
        return
    _warned.add(key)
    print(f"impostor tracking: {message}", file=sys.stderr, flush=True)


def check_reachable(uri: str, timeout: float = 3.0) -> None:
    """Fail fast (instead of MLflow's minutes of retries) when an HTTP tracking server is down."""
    if uri.startswith(("http://", "https://")):
        import httpx

        try:
            r = httpx.get(uri.rstrip("/") + "/health", timeout=timeout)
        except Exception as exc:  # noqa: BLE001
            raise TrackingUnavailable(f"MLflow tracking server {shown_uri(uri)} is not reachable ({type(exc).__name__})") from exc
        if r.status_code >= 500:
            raise TrackingUnavailable(f"MLflow tracking server {shown_uri(uri)} answered {r.status_code} on /health")
        # keep a later outage from hanging the eval for minutes in MLflow's retry loop
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")
    elif uri.startswith("sqlite:///"):
        Path(uri.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)


def get_client(uri: Optional[str] = None) -> tuple[Any, str]:
    """An MlflowClient for the resolved URI (raises TrackingUnavailable when unreachable)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # MLflow prints two "View run / View experiment" lines per run ended against an http
    # server: 756 pairs in a grid shard's output; the sweep prints its runs table once.
    os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
    uri = tracking_uri(uri)
    check_reachable(uri)
    from mlflow.tracking import MlflowClient

    try:
        with _sqlite_setup_lock(uri):
            client = MlflowClient(tracking_uri=uri)
            client.search_experiments(max_results=1)  # creates / migrates the schema now, under the lock
        return client, uri
    except Exception as exc:  # noqa: BLE001
        raise TrackingUnavailable(f"MLflow tracking at {shown_uri(uri)} cannot be opened ({exc})") from exc


@contextlib.contextmanager
def _sqlite_setup_lock(uri: str) -> Iterator[None]:
    """One process at a time opens a local SQLite store.

    Two sweep shards started together on one machine both found the new store
    empty and raced in MLflow's schema migration; one ran untracked ("Online
    migration expected to match one row", measured).  An advisory lock file next
    to the database serialises the opening; afterwards SQLite handles the writes.
    """
    try:
        import fcntl
    except ImportError:  # Windows: no flock; shards there should start one after the other
        yield
        return
    if not uri.startswith("sqlite:///"):
        yield
        return
    with open(uri.removeprefix("sqlite:///") + ".lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def runs_page(experiment_id: str, base: str = "http://127.0.0.1:5000") -> str:
    """The address of an experiment's runs table in MLflow's UI.  MLflow 3 opens an experiment on the
    page of the browser's GenAI / Model training switch (GenAI's traces overview until switched),
    whatever the experiment's tags (``mlflow.experimentKind`` is not read by the 3.10-3.17 UI);
    ``workflowType=machine_learning`` in the address opens the runs table (docs/tracking.md)."""
    return f"{base.rstrip('/')}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "experiment"


def ensure_experiment(client: Any, name: str, uri: str) -> str:
    """Experiment id by name, created (with artifacts under ./mlruns/artifacts for the default store) if absent.
    A local store that was moved or copied is re-pointed first (``impostor.tracking.relocate``)."""
    try:
        if uri.startswith("sqlite:///"):
            from impostor.tracking.relocate import repoint_if_moved

            repoint_if_moved(uri)
        exp = client.get_experiment_by_name(name)
        if exp is not None:
            if exp.lifecycle_stage == "deleted":
                client.restore_experiment(exp.experiment_id)
            return exp.experiment_id
        location = None
        if uri.startswith("sqlite:///") and not os.environ.get("MLFLOW_TRACKING_URI"):
            db = Path(uri.removeprefix("sqlite:///"))
            location = (db.parent / ARTIFACTS_DIR / _slug(name)).resolve().as_uri()
        try:
            return client.create_experiment(name, artifact_location=location)
        except Exception:  # noqa: BLE001 - created concurrently by another process
            exp = client.get_experiment_by_name(name)
            if exp is None:
                raise
            return exp.experiment_id
    except TrackingUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001
        raise TrackingUnavailable(f"MLflow tracking at {shown_uri(uri)}: cannot use experiment {name!r} ({exc})") from exc
