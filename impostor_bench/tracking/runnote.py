"""The one-line description of a run that MLflow shows in its runs table and run page
(the ``mlflow.note.content`` tag), from the metrics the run already logs."""

from __future__ import annotations

import math
import re
from typing import Any, Mapping, Optional

#: MLflow's run description (``mlflow.utils.mlflow_tags.MLFLOW_RUN_NOTE``; spelled out so that
#: importing the hooks does not import MLflow).
NOTE_TAG = "mlflow.note.content"


def _pct(value: Optional[float]) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{100 * value:.0f}%"


def _games(done: float, planned: float) -> str:
    done_i, planned_i = int(done), int(planned)
    word = "game" if planned_i == 1 else "games"
    return f"{done_i:,} {word}" if done_i == planned_i else f"{done_i:,} of {planned_i:,} {word}"


def experiment_note(metrics: Mapping[str, float], task_args: Mapping[str, Any], models: Mapping[str, str]) -> str:
    """E.g. ``120 games, impostor won 41%, detection 63% · cross_play, easy · impostor bot/random vs majority
    bot/embedding``; win rate under the default rule, detection over the majority's legal ballots (the scorer's
    metrics); mode and difficulty from the task's arguments (the task's defaults when left out)."""
    mode, difficulty = task_args.get("mode", "homogeneous"), task_args.get("difficulty", "easy")
    who = (next(iter(models.values())) if len(models) == 1
           else " vs ".join(f"{role} {m}" for role, m in models.items()))
    games = _games(metrics.get("games_completed", 0.0), metrics.get("games_scheduled", 0.0))
    head = (f"{games}, impostor won {_pct(metrics.get('impostor_win_rate'))}, "
            f"detection {_pct(metrics.get('detection_accuracy'))}")
    errored = int(metrics.get("games_errored", 0.0))
    if errored:
        head += f", {errored} errored"
    return f"{head} · {mode}, {difficulty} · {who}"


def sweep_note(metrics: Mapping[str, float]) -> str:
    """E.g. ``12 of 12 experiments, 96 games, impostor won 41%`` for a sweep's parent run; a shard's
    numbers (``shard_I_of_N/...``, shards share the run) as ``shard I/N: ...`` (the last shard to end)."""
    shard = next((k.split("/", 1)[0] for k in metrics if re.match(r"shard_\d+_of_\d+/", k)), None)
    if shard is not None:
        own = {k.split("/", 1)[1]: v for k, v in metrics.items() if k.startswith(shard + "/")}
        i, n = re.findall(r"\d+", shard)
        return f"shard {i}/{n}: {sweep_note(own)}"
    games = metrics.get("games_completed", 0.0)
    rate = metrics["wins/impostor"] / games if games and "wins/impostor" in metrics else None
    return (f"{int(metrics.get('experiments_completed', 0))} of {int(metrics.get('experiments_planned', 0))} "
            f"experiments, {_games(games, metrics.get('games_planned', 0.0))}, impostor won {_pct(rate)}")
