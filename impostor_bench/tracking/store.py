"""Where runs go: ``MLFLOW_TRACKING_URI`` if set, else a local SQLite store under ``./mlruns``.

Default (no server)::

    tracking URI   sqlite:///<cwd>/mlruns/mlflow.db
    artifacts      <cwd>/mlruns/artifacts/<experiment name>/<run id>/artifacts

Open it with (from the same directory)::

    LITELLM_LOCAL_MODEL_COST_MAP=True mlflow ui --backend-store-uri sqlite:///mlruns/mlflow.db

A server that requires a login is reached with MLflow's own variables
(``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD``, TLS through
``MLFLOW_TRACKING_SERVER_CERT_PATH`` ...); a refused login is a ``TrackingAuthError``
whose one line names the variable to fix.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable, NoReturn, Optional

from impostor_bench.core.errors import ImpostorError
from impostor_bench.tracking.store_files import ARTIFACTS_DIR, DB_FILE, STORE_DIR, sqlite_setup_lock

DEFAULT_EXPERIMENT = "impostor"
ENV_DISABLE = "IMPOSTOR_MLFLOW"  # 0/false/off disables the hooks
ENV_EXPERIMENT = "IMPOSTOR_MLFLOW_EXPERIMENT"

_warned: set[str] = set()


class TrackingUnavailable(Exception):
    """The tracking store cannot be reached; the Inspect log is still the source of truth."""


class TrackingAuthError(TrackingUnavailable, ImpostorError):
    """The server wants a login that the environment does not give, or refuses it: waiting or
    running untracked would not help, so commands stop with the one line that says what to set."""


_LOGIN_HELP = ("(`impostor tracking-server` prints both; the password is in DIR/auth/admin-password on "
               "the server host)")


def auth_error(exc: BaseException, uri: str) -> Optional[TrackingAuthError]:
    """A TrackingAuthError when ``exc`` (or what it wraps) is the server's HTTP 401 / 403, else None."""
    seen: set[int] = set()
    e: Optional[BaseException] = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, TrackingAuthError):
            return e
        status = getattr(e, "get_http_status_code", None)
        code = status() if callable(status) else getattr(getattr(e, "response", None), "status_code", None)
        if code in (401, 403):
            return TrackingAuthError(login_problem(uri, code))
        e = e.__cause__ or e.__context__
    return None


def refused_or(exc: BaseException, uri: str, other: Exception) -> NoReturn:
    """Raise the login error that ``exc`` is (its one line, no chained traceback), else ``other``
    from ``exc``: the one ending of every failed call to the tracking server."""
    refused = auth_error(exc, uri)
    if refused is not None:
        raise refused from None
    raise other from exc


def login_problem(uri: str, status: int) -> str:
    """One line: what the server refused and which MLflow variable to set."""
    user = os.environ.get("MLFLOW_TRACKING_USERNAME")
    has_pw = bool(os.environ.get("MLFLOW_TRACKING_PASSWORD"))
    where = f"MLflow tracking server {shown_uri(uri)}"
    if status == 403:
        return (f"{where} refused user {user!r} (HTTP 403: no permission for this); fix: use the admin login in "
                f"MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD {_LOGIN_HELP}, or have an admin grant this "
                "user EDIT on the experiment (only an admin creates experiments)")
    if not user and not has_pw and not os.environ.get("MLFLOW_TRACKING_TOKEN"):
        return (f"{where} requires a login (HTTP 401) and MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD "
                f"are not set; fix: export both {_LOGIN_HELP}")
    if user and not has_pw:
        return f"{where} requires a login (HTTP 401) and MLFLOW_TRACKING_PASSWORD is not set; fix: export it {_LOGIN_HELP}"
    if has_pw and not user:
        return f"{where} requires a login (HTTP 401) and MLFLOW_TRACKING_USERNAME is not set; fix: export it {_LOGIN_HELP}"
    return (f"{where} refused the login of MLFLOW_TRACKING_USERNAME={user!r} (HTTP 401: wrong user or "
            f"MLFLOW_TRACKING_PASSWORD); fix: set both {_LOGIN_HELP}")


def tracking_disabled() -> bool:
    return os.environ.get(ENV_DISABLE, "1").strip().lower() in {"0", "false", "no", "off"}


def default_store_root() -> Path:
    return Path.cwd() / STORE_DIR


def tracking_uri(explicit: Optional[str] = None) -> str:
    uri = explicit or os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri
    return f"sqlite:///{(default_store_root() / DB_FILE).as_posix()}"


def _checkout_root() -> Path:
    """The folder above the package: the repository root when running from a checkout."""
    return Path(__file__).resolve().parents[2]


def checkout_store_holding(experiment: str) -> Optional[Path]:
    """The checkout's own ``mlruns/mlflow.db`` when it holds ``experiment``: the demo and the
    README's sweeps run from the repository root, so a reading command run from any other folder
    (with no ``mlruns/`` there and no URI given) still finds them.  None elsewhere (an installed
    package, a store without that experiment): the command keeps MLflow's ``./mlruns`` default.

    Read with ``sqlite3`` in read-only mode, not MLflow's client: opening a store through MLflow
    may migrate or create it, and a reading command never writes."""
    import sqlite3

    root = _checkout_root()
    db = root / STORE_DIR / DB_FILE
    if not (root / "pyproject.toml").is_file() or not db.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=5)) as con:
            row = con.execute("SELECT 1 FROM experiments WHERE name = ? AND lifecycle_stage = 'active'",
                              (experiment,)).fetchone()
    except sqlite3.Error:
        return None
    return db if row else None


def reading_uri(experiment: str, explicit: Optional[str] = None) -> tuple[Optional[str], Optional[str]]:
    """The tracking URI a reading command uses for ``experiment`` and, when it is not the one the
    user would assume, one line saying which store it is.  ``explicit`` or ``MLFLOW_TRACKING_URI``
    win; then ``./mlruns``; then the checkout's store if it holds the experiment."""
    if explicit or os.environ.get("MLFLOW_TRACKING_URI") or (default_store_root() / DB_FILE).exists():
        return explicit, None
    db = checkout_store_holding(experiment)
    if db is None:
        return explicit, None
    return f"sqlite:///{db.as_posix()}", f"no mlruns/ in {Path.cwd()}; reading the project's store {db.parent}"


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


def _tls_options() -> dict[str, Any]:
    """``requests`` TLS options from MLflow's own variables, as MLflow's client uses them."""
    from mlflow.environment_variables import (
        MLFLOW_TRACKING_CLIENT_CERT_PATH,
        MLFLOW_TRACKING_INSECURE_TLS,
        MLFLOW_TRACKING_SERVER_CERT_PATH,
    )

    verify: Any = not MLFLOW_TRACKING_INSECURE_TLS.get()
    if verify and MLFLOW_TRACKING_SERVER_CERT_PATH.get():
        verify = MLFLOW_TRACKING_SERVER_CERT_PATH.get()
    return {"verify": verify, "cert": MLFLOW_TRACKING_CLIENT_CERT_PATH.get()}


def check_reachable(uri: str, timeout: float = 3.0) -> None:
    """Fail fast (instead of MLflow's minutes of retries) when an HTTP tracking server is down."""
    if uri.startswith(("http://", "https://")):
        import requests

        try:
            r = requests.get(uri.rstrip("/") + "/health", timeout=timeout, **_tls_options())
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
        with sqlite_setup_lock(uri):
            client = MlflowClient(tracking_uri=uri)
            client.search_experiments(max_results=1)  # creates / migrates the schema now, under the lock
        return client, uri
    except Exception as exc:  # noqa: BLE001
        refused_or(exc, uri, TrackingUnavailable(f"MLflow tracking at {shown_uri(uri)} cannot be opened ({exc})"))


def runs_page(experiment_id: str, base: str = "http://127.0.0.1:5000") -> str:
    """The address of an experiment's runs table in MLflow's UI.  MLflow 3 opens an experiment on the
    page of the browser's GenAI / Model training switch (GenAI's traces overview until switched),
    whatever the experiment's tags (``mlflow.experimentKind`` is not read by the 3.10-3.17 UI);
    ``workflowType=machine_learning`` in the address opens the runs table (docs/tracking.md)."""
    return f"{base.rstrip('/')}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"


#: What the printed runs-table address shows: the experiment runs only (not the sweep's parent
#: run nor a report run: ``impostor.kind``), each with its mode, models by side and key metrics.
VIEW_FILTER = "tags.`impostor.kind` = 'experiment'"
VIEW_COLUMNS = (
    "attributes.`Description`", "tags.`impostor.mode`", "tags.`impostor.difficulty`",
    "tags.`impostor.impostor_model`", "tags.`impostor.majority_model`", "metrics.`impostor_win_rate`",
    "metrics.`detection_accuracy`", "metrics.`games_completed`", "metrics.`invalid_ballot_rate`",
    "metrics.`tokens/total/total`",
)
#: Named views of the runs table: key -> the tag runs are grouped by (None: not grouped).
VIEWS = {"impostor-runs": None, "impostor-by-impostor-model": "impostor.impostor_model",
         "impostor-by-majority-model": "impostor.majority_model", "impostor-by-model": None}
#: Views of other runs than the experiments': the per-model summary runs (``tracking.modelsummary``),
#: one row per model with its rates pooled over the sweep's games.
VIEW_FILTERS = {"impostor-by-model": "tags.`impostor.kind` = 'model_summary'"}
VIEW_COLUMNS_OF = {"impostor-by-model": (
    "tags.`impostor.model`", "metrics.`impostor_win_pct`", "metrics.`detection_pct`", "metrics.`majority_win_pct`",
    "metrics.`impostor_games`", "metrics.`majority_seats`")}


def runs_view(client: Any, experiment_id: str, base: str = "http://127.0.0.1:5000",
              view: str = "impostor-runs", collapsed: Iterable[str] = ()) -> str:
    """The address of a view of the experiment's runs table with the key metric columns shown,
    grouped as ``VIEWS[view]`` says (mean of each group); the groups of the values in
    ``collapsed`` open folded, one row of means each.

    MLflow's UI keeps its column choice in the browser, not the address; its "share view"
    stores a view as the experiment tag ``mlflow.sharedViewState.<key>`` (JSON: search facets
    and table state) and opens it from ``viewStateShareKey=<key>`` in the address, which is
    what this writes (MLflow 3.10-3.18 UI; docs/tracking.md, "The runs table")."""
    import json

    group = VIEWS[view]
    state = {
        "searchFilter": VIEW_FILTERS.get(view, VIEW_FILTER),
        "orderByKey": "metrics.`impostor_win_pct`" if view in VIEW_FILTERS else "attributes.start_time",
        "orderByAsc": False,
        # a grouped view has no description per group: the room goes to the group's name
        "selectedColumns": list(VIEW_COLUMNS_OF.get(view, ())) or [
            c for c in VIEW_COLUMNS if group is None or c != "attributes.`Description`"],
        "runListHidden": False,
        "groupBy": None if group is None else {
            "aggregateFunction": "average", "groupByKeys": [{"mode": "tag", "groupByData": group}]},
        # the UI's id of a group: "<mode>.<key>.<value>" (MLflow 3.10-3.18)
        "groupsExpanded": {} if group is None else {f"tag.{group}.{v}": False for v in collapsed},
    }
    set_tag_retrying(client, experiment_id, f"mlflow.sharedViewState.{view}", json.dumps(state))
    return f"{runs_page(experiment_id, base)}&viewStateShareKey={view}"


def set_tag_retrying(client: Any, experiment_id: str, key: str, value: str, attempts: int = 3) -> None:
    """Set an experiment tag, again after a failure: sweep shards starting together write the same
    view tags, and on a PostgreSQL server the second of two concurrent first writes fails with a
    unique violation (the row the other shard just inserted); the retry updates that row."""
    import time

    for attempt in range(attempts):
        try:
            client.set_experiment_tag(experiment_id, key, value)
            return
        except Exception:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "experiment"


def ensure_experiment(client: Any, name: str, uri: str) -> str:
    """Experiment id by name, created (with artifacts under ./mlruns/artifacts for the default store) if absent.
    A local store that was moved or copied is re-pointed first (``impostor_bench.tracking.relocate``)."""
    try:
        if uri.startswith("sqlite:///"):
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
        refused_or(exc, uri, TrackingUnavailable(f"MLflow tracking at {shown_uri(uri)}: cannot use experiment "
                                                 f"{name!r} ({exc})"))


def repoint_if_moved(uri: str) -> None:
    """Before a writer (hook, sweep, sync) adds runs to a local store: re-point it if it was moved
    or copied (``impostor_bench.tracking.relocate``), so new runs write beside it and not into the folder
    it came from."""
    from impostor_bench.tracking.relocate import relocate, sqlite_path

    db = sqlite_path(uri)
    if db is None or not db.exists():
        return
    with sqlite_setup_lock(uri):
        moves, n = relocate(db)
    if n:
        warn("relocated", f"the store {db.resolve().parent} was moved or copied from "
                          f"{', '.join(str(o) for o in moves)}; {n} artifact location(s) now point to it")
