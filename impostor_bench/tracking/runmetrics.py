"""The MLflow metrics of one finished eval of the impostor task: scores, game counts, outcomes,
tokens by role and time (``logrun.finish_run`` logs them).  Read off the Inspect log and its
contract tables only, so what a run reports is what the log holds."""

from __future__ import annotations

import math
import re
from typing import Any

from impostor_bench.core.records import WIN_CONDITIONS
from impostor_bench.export import Tables, role_models


def _usage_dict(u: Any) -> dict[str, float]:
    return {"input": float(u.input_tokens or 0), "output": float(u.output_tokens or 0), "total": float(u.total_tokens or 0)}


def role_tokens(log: Any) -> dict[str, dict[str, float]]:
    """Tokens per game role (role usage where Inspect tracked it, else the role's model usage)."""
    stats = log.stats
    model_usage = {m: _usage_dict(u) for m, u in (stats.model_usage or {}).items()}
    role_usage = {r: _usage_dict(u) for r, u in (getattr(stats, "role_usage", None) or {}).items()}
    rm = role_models(log.eval)
    out: dict[str, dict[str, float]] = {}
    for role, model in rm.items():
        if role in role_usage:
            out[role] = role_usage[role]
            continue
        base = dict(model_usage.get(model, {"input": 0.0, "output": 0.0, "total": 0.0}))
        for other, omodel in rm.items():
            if other != role and omodel == model and other in role_usage:
                for k in base:
                    base[k] -= role_usage[other][k]
        out[role] = base
    return out


# What MLflow accepts in a metric name (its _VALID_PARAM_AND_METRIC_NAMES); a task metric named
# after a model (``invalid_ballot_rate/<model>``) may hold others, such as the "@" of
# Vertex-style names (``claude@20240620``), which made MLflow refuse the whole batch.
_METRIC_UNSAFE = re.compile(r"[^/\w.\- :]")


def eval_metrics(log: Any, tables: Tables) -> dict[str, float]:
    """The MLflow metrics of an eval, keys made safe for MLflow (``_METRIC_UNSAFE`` -> ``_``)."""
    return {_METRIC_UNSAFE.sub("_", k): v for k, v in _eval_metrics(log, tables).items()}


def _eval_metrics(log: Any, tables: Tables) -> dict[str, float]:
    m: dict[str, float] = {}
    if log.results:
        for es in log.results.scores or []:
            for name, metric in es.metrics.items():
                if isinstance(metric.value, (int, float)) and not math.isnan(float(metric.value)):
                    key = name if name != "stderr" else "impostor_win_rate_stderr"
                    m[key if es.name == "impostor_winner" else f"{es.name}/{key}"] = float(metric.value)
    g, p = tables.games, tables.players
    scheduled = len(log.eval.dataset.sample_ids or []) or (log.eval.dataset.samples or 0)
    m["games_scheduled"] = float(scheduled)
    m["games_completed"] = float(len(g))
    m["games_errored"] = float(len(tables.errors))
    m["games_missing"] = float(len(tables.missing))
    m["wins/impostor"] = float((g["winner"] == "impostor").sum()) if len(g) else 0.0
    m["wins/majority"] = float((g["winner"] == "majority").sum()) if len(g) else 0.0
    conds = set(WIN_CONDITIONS) | set(g["win_condition"]) if len(g) else set(WIN_CONDITIONS)
    for c in sorted(conds):
        m[f"win_condition/{c}"] = float((g["win_condition"] == c).sum()) if len(g) else 0.0
    m["invalid_ballots"] = float(g["n_invalid_ballots"].sum()) if len(g) else 0.0
    m["invalid_descriptions"] = float(g["n_invalid_descriptions"].sum()) if len(g) else 0.0
    m["self_declarations"] = float(p["self_declared"].sum()) if len(p) else 0.0
    m["ties"] = float((g["tie_k"] > 0).sum()) if len(g) else 0.0
    tot = {"input": 0.0, "output": 0.0, "total": 0.0}
    for role, u in role_tokens(log).items():
        for k, v in u.items():
            m[f"tokens/{role}/{k}"] = v
    for u in (log.stats.model_usage or {}).values():
        for k, v in _usage_dict(u).items():
            tot[k] += v
    for k, v in tot.items():
        m[f"tokens/total/{k}"] = v
    from datetime import datetime

    times = [s.total_time for s in (log.samples or []) if s.total_time is not None]
    try:
        t0 = datetime.fromisoformat(str(log.stats.started_at))
        t1 = datetime.fromisoformat(str(log.stats.completed_at))
        # Inspect stamps whole seconds: a sub-second eval would read 0, but it lasted at
        # least as long as its longest game (games run concurrently).
        m["wall_time_s"] = max((t1 - t0).total_seconds(), max(times, default=0.0))
    except (TypeError, ValueError):
        pass
    if times:
        m["game_time_s/mean"] = float(sum(times) / len(times))
        m["game_time_s/sum"] = float(sum(times))
    return m
