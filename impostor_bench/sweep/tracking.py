"""A sweep's MLflow side: the parent run at its start (or untracked, with the reason), and at
its end every experiment's run brought up to date with its Inspect log, waiting a bounded time
for a tracking server that is restarting.  ``run.run_sweep`` calls both around eval_set."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Optional

from impostor_bench.sweep.config import GAME_FIELDS, config_hash
from impostor_bench.sweep.plan import Plan


#: The sweep run's params beside its ``GAME_FIELDS`` (the grid and every shared ``GameOptions`` field).
SWEEP_RUN_PARAMS = ("sweep", "config_hash", "experiments_total", "games_total")


def start_tracking(pl: Plan, log_dir: Path) -> tuple[Any, Any]:
    """(tracking context for the hooks, MlflowClient or None when untracked)."""
    from impostor_bench.tracking.logrun import Context
    from impostor_bench.tracking.store import (
        TrackingAuthError,
        TrackingUnavailable,
        ensure_experiment,
        experiment_name,
        get_client,
        runs_view,
        shown_uri,
        tracking_disabled,
        warn,
    )

    cfg = pl.config
    name = experiment_name(cfg.tracking.experiment or cfg.name)
    shard = f"{pl.shard[0]}/{pl.shard[1]}"
    base = dict(experiment=name, tracking_uri=cfg.tracking.tracking_uri, sweep_id=pl.sweep_id, sweep_name=cfg.name,
                shard=shard, sweep_config=json.loads(cfg.model_dump_json()))
    if not cfg.tracking.enabled or tracking_disabled():
        return Context(disabled=True, **base), None
    try:
        from impostor_bench.tracking.sweeprun import ensure_sweep_run
        from impostor_bench.tracking.store import auth_error, tracking_uri

        client, uri = get_client(cfg.tracking.tracking_uri)
        exp_id = ensure_experiment(client, name, uri)
        params = {"sweep": cfg.name, "config_hash": config_hash(cfg, pl.path), "experiments_total": pl.all_experiments,
                  "games_total": pl.all_experiments * cfg.games_per_experiment}
        params |= {k: getattr(cfg, k) for k in GAME_FIELDS}  # the grid and every shared game option
        from impostor_bench.tracking.redact import redact_text, secret_values

        parent = ensure_sweep_run(client, exp_id, pl.sweep_id, cfg.name, params,
                                  config_text=redact_text(pl.path.read_text(), secret_values()),
                                  tags={"impostor.config_file": str(pl.path)})
        client.set_tag(parent, f"impostor.log_dir.shard_{pl.shard[0]}_of_{pl.shard[1]}", str(log_dir.resolve()))
        print(f"MLflow: experiment '{name}' at {shown_uri(uri)} (sweep run {parent})", file=sys.stderr)
        server = uri.startswith(("http://", "https://"))
        ui = shown_uri(uri) if server else "http://127.0.0.1:5000"
        print(f"  runs table: {runs_view(client, exp_id, ui)}"
              + ("" if server else f"\n    (start the UI: LITELLM_LOCAL_MODEL_COST_MAP=True mlflow ui --backend-store-uri "
                                   f"{shown_uri(uri)})"), file=sys.stderr)
        # one row per model, its rates pooled over the sweep's games (written at the sweep's end): the
        # by-impostor-model grouping has pair-valued groups in team modes
        print(f"  by model (pooled over games, at the end): {runs_view(client, exp_id, ui, 'impostor-by-model')}",
              file=sys.stderr)
        base["tracking_uri"] = uri
        return Context(parent_run_id=parent, **base), client
    except TrackingAuthError:
        raise  # a login to fix, not an outage: refused before any game is played (one line, exit 2)
    except TrackingUnavailable as exc:
        warn("sweep-start", f"{exc}; the sweep runs untracked and its Inspect logs are written to {log_dir}; "
             f"when MLflow is back run: impostor sync {log_dir}")
        return Context(disabled=True, **base), None
    except Exception as exc:  # e.g. HTTP 403 creating the sweep run (a user without EDIT): a login to fix
        refused = auth_error(exc, tracking_uri(cfg.tracking.tracking_uri))
        if refused is None:
            raise
        raise refused from None


WAIT_ENV = "IMPOSTOR_MLFLOW_WAIT_S"  # how long a tracked sweep waits at its end for an unreachable server
WAIT_DEFAULT_S = 600.0
WAIT_MAX_S = 7 * 24 * 3600.0  # a week: past it a person runs ``impostor sync`` instead


def wait_seconds() -> float:
    """``IMPOSTOR_MLFLOW_WAIT_S`` as seconds (default 600); a value that is not a finite
    number in [0, a week] is refused with one line (``nan`` waited forever)."""
    import math
    import os

    from impostor_bench.core.errors import ImpostorError

    raw = os.environ.get(WAIT_ENV)
    if raw is None or not raw.strip():
        return WAIT_DEFAULT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= WAIT_MAX_S):
        raise ImpostorError(f"environment variable {WAIT_ENV}={raw[:40]!r} is not a number of seconds in "
                            f"[0, {WAIT_MAX_S:.0f}]; fix: set it to e.g. 600, or unset it")
    return value


def complete_unfinished_runs(ld: Path, ctx: Any, wait_s: Optional[float] = None, poll_s: float = 15.0) -> None:
    """Bring every experiment's MLflow run up to date with its Inspect log.

    An experiment killed while its run was being logged is complete in its Inspect log, so
    the resumed eval_set skips it and no hook fires again; ``sync`` (idempotent: finished
    runs are left alone) completes such runs so none stays silently partial.  A shard that
    ends while the tracking server is down (a restart) waits for it, up to ``wait_s``
    (``IMPOSTOR_MLFLOW_WAIT_S``, default 600 s), so its runs reach the server without a
    manual ``impostor sync``.
    """

    from impostor_bench.tracking.store import TrackingAuthError
    from impostor_bench.tracking.sync import sync

    if wait_s is None:
        wait_s = wait_seconds()
    deadline = time.monotonic() + wait_s
    told = False
    while True:
        try:
            report = sync(ld, experiment=ctx.experiment, tracking_uri=ctx.tracking_uri)
            break
        except TrackingAuthError as exc:  # waiting would not mend a refused login
            print(f"impostor tracking: {exc}; then run: impostor sync {ld}", file=sys.stderr)
            return
        except Exception as exc:  # noqa: BLE001 - the games are safe in the logs; say how to finish
            left = deadline - time.monotonic()
            if left <= 0:
                print(f"impostor tracking: could not check the MLflow runs ({str(exc)[:200]}); run: impostor sync {ld}",
                      file=sys.stderr)
                return
            if not told:
                told = True
                print(f"impostor tracking: could not check the MLflow runs ({str(exc)[:200]}); waiting up to "
                      f"{wait_s:.0f}s for the tracking server ({WAIT_ENV}; Ctrl-C stops, then run: impostor sync {ld})",
                      file=sys.stderr, flush=True)
            time.sleep(min(poll_s, left))
    if report.synced:
        print(f"MLflow: completed {len(report.synced)} run(s) left unfinished by an earlier interruption",
              file=sys.stderr)
