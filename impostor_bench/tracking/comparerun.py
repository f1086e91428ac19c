"""``impostor compare --log-run``: a head-to-head as an MLflow run of its own (tag
``impostor.kind=compare``), so comparisons sit beside the experiments in the runs table:
params ``model_a``/``model_b``, metrics ``<metric>.<diff_pp|ci_low|ci_high|p|n_pairs|more_games>``
(rounded to 0.1 pp for display; the exact values are in the logged table ``compare.json``).
Runs of this kind hold no ``tables/``: export and report skip them like report runs."""

from __future__ import annotations

import math
import time
from typing import Any, Optional

from impostor_bench.tracking.logrun import TAG

COMPARE_KIND = "compare"
DEFAULT_EXPERIMENT = "impostor-compare"
_ROUND = {"diff_pp": 1, "ci_low": 1, "ci_high": 1, "rate_a_pct": 1, "rate_b_pct": 1, "p": 4}


def compare_metrics(table: Any) -> dict[str, float]:
    """``<metric>.<column>`` of every finite number of the comparison table, display-rounded."""
    out = {}
    for row in table.to_dict("records"):
        for col in ("rate_a_pct", "rate_b_pct", "diff_pp", "ci_low", "ci_high", "p", "n_pairs", "more_games"):
            v = row.get(col)
            if v is not None and isinstance(v, (int, float)) and math.isfinite(v):
                out[f"{row['metric']}.{col}"] = round(float(v), _ROUND[col]) if col in _ROUND else float(v)
    return out


def log_compare_run(table: Any, experiment: Optional[str], source: str, client: Any = None,
                    tracking_uri: Optional[str] = None) -> str:
    """Log ``table`` (``analysis.stats.paired.head_to_head``) as a FINISHED run; returns a line saying where."""
    from mlflow.entities import Metric, Param

    from impostor_bench.tracking.store import ensure_experiment, get_client, shown_uri

    uri = None
    if client is None:
        client, uri = get_client(tracking_uri)
    name = experiment or DEFAULT_EXPERIMENT
    exp_id = ensure_experiment(client, name, uri or client.tracking_uri)
    a, b = str(table["model_a"].iloc[0]), str(table["model_b"].iloc[0])
    run = client.create_run(exp_id, run_name=f"compare {a} vs {b}",
                            tags={f"{TAG}kind": COMPARE_KIND, f"{TAG}compare_source": source})
    now = int(time.time() * 1000)
    client.log_batch(run.info.run_id, metrics=[Metric(k, v, now, 0) for k, v in compare_metrics(table).items()],
                     params=[Param("model_a", a), Param("model_b", b), Param("source", source[:6000])])
    client.log_table(run.info.run_id, table, "compare.json")
    client.set_terminated(run.info.run_id, status="FINISHED")
    return f"MLflow: run {run.info.run_id} in experiment '{name}' at {shown_uri(uri or client.tracking_uri)}"
