"""``impostor sync``: log Inspect logs to MLflow after the fact (idempotent).

Each eval maps to the run tagged with its run key (eval-set id + task id), so
a run the hooks already wrote is updated, not duplicated, and a log that is
already fully synced is skipped.  Of several logs of one task (eval-set
retries) only the best one is synced: status ``success`` first, then the newest.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from impostor_bench.core.errors import ImpostorError
from impostor_bench.export import find_logs, is_impostor_task, read_log
from impostor_bench.sweep.config import MANIFEST
from impostor_bench.tracking.logrun import TAG, Context, find_run, finish_run, open_run, run_key
from impostor_bench.tracking.store import (
    TrackingAuthError,
    TrackingUnavailable,
    ensure_experiment,
    experiment_name,
    get_client,
    refused_or,
    shown_uri,
)


@dataclass
class SyncReport:
    synced: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    experiment: str = ""
    uri: str = ""


def _manifest_for(log_path: Path, root: Path) -> Optional[dict]:
    d = log_path.parent
    while True:
        mf = d / MANIFEST
        if mf.exists():
            try:
                return json.loads(mf.read_text())
            except ValueError:
                return None
        if d == root or d.parent == d or root not in d.parents:
            return None
        d = d.parent


def _rank(header: Any, path: str) -> tuple:
    status = {"success": 3, "error": 1, "cancelled": 1, "started": 0}.get(header.status, 0)
    return (status, str(header.stats.completed_at or header.stats.started_at or header.eval.created or ""), path)


PREFETCH_AT = 20  # logs: from here on, one paged search for the experiment's runs beats one search per log
PAGE = 1000  # runs per page of that search


def _runs_by_key(client: Any, exp_id: str) -> dict[str, Any]:
    """Every experiment run of the MLflow experiment by run key, the earliest of a key kept (as
    ``find_run``): a shard's end syncs hundreds of logs, and one search per log cost minutes
    against a busy server."""
    out: dict[str, Any] = {}
    token = None
    while True:
        page = client.search_runs([exp_id], filter_string=f"tags.`{TAG}kind` = 'experiment'", max_results=PAGE,
                                  order_by=["attributes.start_time ASC"], page_token=token)
        for run in page:
            out.setdefault(run.data.tags.get(f"{TAG}run_key", ""), run)
        token = page.token
        if not token:
            return out


def sync(path: str | Path, experiment: Optional[str] = None, tracking_uri: Optional[str] = None,
         force: bool = False) -> SyncReport:
    from inspect_ai.log import read_eval_log

    root = Path(path).resolve()
    logs = find_logs(path)
    if not logs:
        raise ImpostorError(f"{path}: holds no Inspect logs of the impostor task; fix: pass a sweep --log-dir, "
                            f"an `inspect eval --log-dir`, or one .eval file")
    best: dict[str, tuple[tuple, str, Any]] = {}
    superseded = []
    for lp in logs:
        try:
            h = read_eval_log(lp, header_only=True)
        except Exception as exc:  # noqa: BLE001 - reported, the others still sync
            print(f"impostor sync: skipped unreadable log {lp} ({str(exc).splitlines()[0][:200]})", file=sys.stderr)
            continue
        if not is_impostor_task(h.eval.task):
            continue
        key = run_key(h.eval)
        r = _rank(h, lp)
        if key in best:
            superseded.append(min(best[key], (r, lp, h))[1])
        if key not in best or r > best[key][0]:
            best[key] = (r, lp, h)
    try:
        client, uri = get_client(tracking_uri)
    except TrackingAuthError:
        raise  # its line already says what to set
    except TrackingUnavailable as exc:
        raise ImpostorError(f"{exc}; fix: start the tracking server or point MLFLOW_TRACKING_URI at a running one, "
                            f"then re-run impostor sync") from None
    report = SyncReport(superseded=sorted(superseded), uri=shown_uri(uri))
    exp_ids: dict[str, str] = {}
    known: dict[str, dict[str, Any]] = {}  # experiment id -> runs by key (many logs only)
    parents: dict[str, str] = {}
    for key, (_, lp, h) in sorted(best.items(), key=lambda kv: kv[1][1]):
        mf = _manifest_for(Path(lp), root if root.is_dir() else root.parent)
        ctx = Context()
        name = experiment_name(experiment)
        if mf is not None:
            name = experiment or (mf.get("tracking_experiment") or mf.get("name") or name)
            ctx = Context(experiment=name, sweep_id=mf.get("sweep_id"), sweep_name=mf.get("name"), shard=mf.get("shard"))
        try:
            if name not in exp_ids:
                exp_ids[name] = ensure_experiment(client, name, uri)
            exp_id = exp_ids[name]
            report.experiment = name
            if len(best) >= PREFETCH_AT and exp_id not in known:
                known[exp_id] = _runs_by_key(client, exp_id)
            existing = known[exp_id].get(key) if exp_id in known else find_run(client, exp_id, key)
            if (existing is not None and not force and existing.data.tags.get(f"{TAG}tables_logged") == "1"
                    and existing.data.tags.get(f"{TAG}eval_id") == h.eval.eval_id
                    and existing.data.tags.get(f"{TAG}log_status") == str(h.status)
                    and existing.info.status in ("FINISHED", "FAILED")):
                report.up_to_date.append(lp)
                continue
            if ctx.sweep_id:
                pk = f"{name}/{ctx.sweep_id}"
                if pk not in parents:
                    from impostor_bench.tracking.sweeprun import ensure_sweep_run, find_sweep_run

                    run = find_sweep_run(client, exp_id, ctx.sweep_id)
                    if run is not None:
                        parents[pk] = run.info.run_id
                    else:
                        parents[pk] = ensure_sweep_run(client, exp_id, ctx.sweep_id, ctx.sweep_name or name,
                                                       {"sweep": ctx.sweep_name, "config_hash": (mf or {}).get("config_hash")})
                        client.set_terminated(parents[pk], status="FINISHED")
                ctx.parent_run_id = parents[pk]
            log = read_log(lp)
            run_id, created = open_run(client, exp_id, log.eval, ctx, source="sync")
            finish_run(client, run_id, log, ctx, created=created)
            report.synced.append(lp)
        except ImpostorError:
            raise
        except Exception as exc:  # noqa: BLE001
            refused_or(exc, uri, ImpostorError(
                f"{lp}: could not be logged to MLflow at {shown_uri(uri)} ({str(exc).splitlines()[0][:300]}); "
                f"fix: check the tracking server, then re-run impostor sync (it is idempotent)"))
    return report
