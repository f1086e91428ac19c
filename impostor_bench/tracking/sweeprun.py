"""The parent MLflow run of a sweep (found again by ``impostor.sweep_id`` so shards and resumptions share it)."""

from __future__ import annotations

import json
from typing import Any, Optional

from impostor_bench.tracking.logrun import TAG, log_params
from impostor_bench.tracking.runnote import NOTE_TAG, sweep_note

SWEEP_KIND = "sweep"


def find_sweep_run(client: Any, experiment_id: str, sweep_id: str) -> Any | None:
    runs = client.search_runs(
        [experiment_id],
        filter_string=f"tags.`{TAG}kind` = '{SWEEP_KIND}' and tags.`{TAG}sweep_id` = '{sweep_id}'",
        max_results=5, order_by=["attributes.start_time ASC"])
    return runs[0] if runs else None


def ensure_sweep_run(client: Any, experiment_id: str, sweep_id: str, name: str, params: dict[str, Any],
                     config_text: Optional[str] = None, tags: Optional[dict[str, str]] = None) -> str:
    run = find_sweep_run(client, experiment_id, sweep_id)
    all_tags = {f"{TAG}kind": SWEEP_KIND, f"{TAG}sweep_id": sweep_id, f"{TAG}sweep": name, **(tags or {})}
    if run is None:
        run = client.create_run(experiment_id, run_name=f"sweep {name}", tags={"mlflow.runName": f"sweep {name}", **all_tags})
        old: dict[str, str] = {}
    else:
        old = dict(run.data.params)
        client.update_run(run.info.run_id, status="RUNNING")
        for k, v in all_tags.items():
            client.set_tag(run.info.run_id, k, v)
    run_id = run.info.run_id
    clean = {k: (json.dumps(v) if isinstance(v, (list, dict)) else str(v))[:500] for k, v in params.items()}
    log_params(client, run_id, clean, old)
    if config_text is not None:
        client.log_text(run_id, config_text, "config/sweep.yaml")
    return run_id


def finish_sweep_run(client: Any, run_id: str, metrics: dict[str, float], ok: Optional[bool]) -> None:
    import time

    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    ms = [Metric(k, float(v), now, 0) for k, v in metrics.items()]
    for i in range(0, len(ms), 500):
        client.log_batch(run_id, metrics=ms[i:i + 500])
    client.set_tag(run_id, NOTE_TAG, sweep_note(metrics))
    if ok is None:
        client.set_terminated(run_id, status="KILLED")
    else:
        client.set_terminated(run_id, status="FINISHED" if ok else "FAILED")
