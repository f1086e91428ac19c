"""A report bundle as an MLflow run of its own, in the experiment it was computed from.

``impostor report --experiment X --log-run`` adds one run (tag ``impostor.kind=report``)
to experiment X, so the MLflow UI compares models (and reports over time) where the games
are: the ratings as metrics per role and model (``rating_impostor.<model>``,
``rating_majority.<model>``, or ``rating_net.<model>`` when only homogeneous games rate the
models; ``rating_<role>_ci_low.<model>``, ``_ci_high``, ``_rank`` beside them), the
ratings and cost tables through ``log_table`` (shown as tables in the run's artifacts),
the ratings figure, and the pages, CSV tables and PNG figures of the bundle under
``report/``. Model names are sanitised for metric keys (``metric_key``); the tables keep
them as they are. Runs of this kind hold no ``tables/`` and are skipped by export and
report. Everything is read from the bundle's files, so ``analysis`` knows nothing of MLflow.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from impostor_bench.tracking.logrun import TAG

REPORT_KIND = "report"
ARTIFACT_DIR = "report"
LOGGED_TABLES = ("ratings", "cost")  # shown as tables in the MLflow UI (mlflow.log_table)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def metric_key(prefix: str, model: str) -> str:
    """``prefix.<model>`` with every character MLflow or its UI's grouping would trip on
    (``/``, ``:``, ``@``, spaces, ...) replaced by ``_``."""
    return f"{prefix}.{_UNSAFE.sub('_', str(model))}"


def rating_metrics(ratings: Any) -> dict[str, float]:
    """The metrics of a ``ratings`` table (``model, role, skill, ci_low, ci_high, rank``):
    ``rating_<role>.<model>`` = skill and ``rating_<role>_<ci_low|ci_high|rank>.<model>``;
    NaN values are left out; a model whose key another model already has gets ``_2``, ``_3``, ..."""
    import math

    keys: dict[str, str] = {}
    for model in dict.fromkeys(map(str, ratings["model"])):
        base = metric_key("", model)[1:]
        key, n = base, 1
        while key in keys.values():
            n += 1
            key = f"{base}_{n}"
        keys[model] = key
    out: dict[str, float] = {}
    for row in ratings.itertuples(index=False):
        role, key = str(row.role), keys[str(row.model)]
        for col, name in (("skill", f"rating_{role}"), ("ci_low", f"rating_{role}_ci_low"),
                          ("ci_high", f"rating_{role}_ci_high"), ("rank", f"rating_{role}_rank")):
            value = getattr(row, col, None)
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                out[f"{name}.{key}"] = float(value)
    return out


def _read_csv(path: Path) -> Any:
    import pandas as pd

    try:
        return pd.read_csv(path)
    except (FileNotFoundError, pd.errors.EmptyDataError):
        return None


def log_report_run(client: Any, experiment_id: str, bundle: str | Path, manifest: dict) -> str:
    """Log the bundle at ``bundle`` (written by ``impostor_bench.analysis.report.build_report``, whose
    ``manifest`` it is) as a new FINISHED run in ``experiment_id``; returns its id."""
    import shutil
    import tempfile
    import time

    from mlflow.entities import Metric, Param, RunTag

    bundle = Path(bundle)
    src = manifest.get("source") or {}
    data = manifest.get("data") or {}
    created = manifest.get("created_utc", "")
    tags = {f"{TAG}kind": REPORT_KIND, f"{TAG}report_of": str(src.get("experiment", "")),
            "mlflow.runName": f"report {created}".strip(),
            "mlflow.note.content": (f"Report on {data.get('games', '?')} games of {data.get('experiments', '?')} "
                                    f"experiments (`impostor report`): ratings per model and role as metrics "
                                    f"`rating_<role>.<model>`, tables and figures under `{ARTIFACT_DIR}/`.")}
    run = client.create_run(experiment_id, run_name=tags["mlflow.runName"], tags=tags)
    run_id = run.info.run_id
    try:
        params = {"source_experiment": src.get("experiment"), "tracking_uri": src.get("tracking_uri"),
                  "git_commit": manifest.get("git_commit"), "seed": manifest.get("seed"),
                  "bootstrap": (manifest.get("config") or {}).get("bootstrap"),
                  "bootstrap_reps": manifest.get("bootstrap_reps"), "alpha": manifest.get("alpha"),
                  "n_games": data.get("games"), "n_experiments": data.get("experiments"),
                  "models": json.dumps(data.get("models") or [])}
        now = int(time.time() * 1000)
        ratings = _read_csv(bundle / "tables" / "ratings.csv")
        metrics = rating_metrics(ratings) if ratings is not None else {}
        if data.get("impostor_win_pct") is not None:
            metrics["impostor_win_pct"] = float(data["impostor_win_pct"])
        ms = [Metric(k, v, now, 0) for k, v in metrics.items()]
        ps = [Param(k, str(v)[:6000]) for k, v in params.items() if v is not None]
        for i in range(0, max(len(ms), 1), 1000):  # MLflow's limit per batch
            client.log_batch(run_id, metrics=ms[i:i + 1000], params=ps if i == 0 else [],
                             tags=[RunTag(f"{TAG}report_notes", str(len(manifest.get("notes") or [])))] if i == 0 else [])
        for name in LOGGED_TABLES:
            frame = _read_csv(bundle / "tables" / f"{name}.csv")
            if frame is not None and len(frame):
                client.log_table(run_id, frame, f"{ARTIFACT_DIR}/{name}.json")
        with tempfile.TemporaryDirectory() as tmp:  # one upload: the pages, CSV tables, PNG figures, paper PDF
            for rel in ["report.html", "report.md", "manifest.json",
                        *(f"{sub}/{f.name}" for sub, pattern in (("tables", "*.csv"), ("figures", "*.png"),
                                                                 ("paper", "paper.pdf"), ("paper", "compare.csv"))
                          for f in sorted((bundle / sub).glob(pattern)))]:
                if (bundle / rel).is_file():
                    (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(bundle / rel, Path(tmp) / rel)
            client.log_artifacts(run_id, tmp, ARTIFACT_DIR)
    except BaseException:
        client.set_terminated(run_id, status="FAILED")
        raise
    client.set_terminated(run_id, status="FINISHED")
    return run_id
