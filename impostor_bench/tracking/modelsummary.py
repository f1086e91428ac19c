"""One MLflow row per model: its impostor win, majority win and detection pooled over every
game of a sweep, whatever the mode.

An experiment run of a team mode holds games with either model as the impostor, so grouping
experiment runs by ``impostor.impostor_model`` gives pair-valued groups whose values are means
of run rates. Here each model gets a run of its own (tag ``impostor.kind=model_summary``, one
per model and sweep, updated when the sweep runs again), with the rates pooled over games by
the scorer's own definition (``impostor_bench.scorers.winner.rates_by_model`` over all the
sweep's games) and rounded for display (``_pct``: 0.1 pp; the counts beside them), and the
view ``impostor-by-model`` of the runs table shows those runs side by side.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from impostor_bench.tracking.logrun import TAG

SUMMARY_KIND = "model_summary"
#: Above this many games the sweep's end does not read every game back for the summary runs
#: (~60 ms a game on a loaded 2-core machine); ``impostor report --log-run`` has the per-model view.
MAX_GAMES = 5000
VIEW = "impostor-by-model"


def _slim(score: Any) -> Any:
    """A sample's score with only what ``rates_by_model`` reads (a sweep's games held at once)."""
    from inspect_ai.scorer import SampleScore, Score

    md = score.metadata or {}
    g = md.get("game") or {}
    players = [{k: p.get(k) for k in ("model", "role", "vote", "ballot_class")} for p in md.get("players", [])]
    return SampleScore(score=Score(value=score.value, metadata={
        "game": {"winner": g.get("winner"), "impostor_seat": g.get("impostor_seat")} if g else None,
        "players": players}))


def pooled_rates(log_dir: str | Path, rates_metric: Callable[[], Any]) -> dict[str, dict[str, float]]:
    """model -> pooled rates and counts over the games of every finished experiment under ``log_dir``
    (a retried experiment's failed attempt is left out: its games are in the attempt that finished).

    ``rates_metric`` is the scorer's ``rates_by_model`` (``impostor_bench.scorers.winner``), handed
    in by the command line: the package below the task layer does not import it."""
    from inspect_ai.log import read_eval_log, read_eval_log_samples

    from impostor_bench.export import find_logs, is_impostor_task

    scores = []
    seen: set[str] = set()  # a game in two logs (a sweep launched twice) is pooled once
    for lp in find_logs(log_dir):
        try:
            head = read_eval_log(lp, header_only=True)
        except Exception:  # noqa: BLE001 - the summary reports unreadable logs
            continue
        if not is_impostor_task(head.eval.task) or head.status != "success":
            continue
        # the samples themselves: their summaries drop the players from the score's metadata (> 1 kB)
        for sample in read_eval_log_samples(lp, all_samples_required=False):
            s = (sample.scores or {}).get("impostor_winner")
            if s is not None and not sample.error:
                game = s.metadata.get("game") if isinstance(s.metadata, dict) else None
                gid = game.get("game_id") if isinstance(game, dict) else None
                if gid is not None and gid in seen:
                    continue
                if gid is not None:
                    seen.add(gid)
                scores.append(_slim(s))
    flat = rates_metric()(scores) if scores else {}
    out: dict[str, dict[str, float]] = {}
    assert isinstance(flat, dict)  # the metric returns {name/model: number}
    for key, value in flat.items():
        name, model = key.split("/", 1)
        out.setdefault(model, {})[name] = float(value)  # type: ignore[arg-type]
    return out


def summary_metrics(rates: dict[str, float]) -> dict[str, float]:
    """The run's metrics: percentages rounded to 0.1 (what the table shows) and the counts."""
    m = {"impostor_games": rates.get("impostor_games", 0.0), "majority_seats": rates.get("majority_seats", 0.0)}
    for src, dst in (("impostor_win_rate", "impostor_win_pct"), ("majority_win_rate", "majority_win_pct"),
                     ("detection_accuracy", "detection_pct")):
        if src in rates:
            m[dst] = round(100 * rates[src], 1)
    return m


def log_model_summaries(client: Any, experiment_id: str, sweep_id: str, log_dir: str | Path,
                        rates_metric: Callable[[], Any]) -> int:
    """Create or update one run per model of the sweep; returns how many."""
    from mlflow.entities import Metric

    rates = pooled_rates(log_dir, rates_metric)
    now = int(time.time() * 1000)
    for model, r in sorted(rates.items()):
        found = client.search_runs([experiment_id], filter_string=(
            f"tags.`{TAG}kind` = '{SUMMARY_KIND}' and tags.`{TAG}model` = '{model}' and tags.`{TAG}sweep_id` = '{sweep_id}'"),
            max_results=1)
        if found:
            run_id = found[0].info.run_id
        else:
            run_id = client.create_run(experiment_id, run_name=f"model {model}", tags={
                f"{TAG}kind": SUMMARY_KIND, f"{TAG}model": model, f"{TAG}sweep_id": sweep_id,
                "mlflow.note.content": (f"{model} pooled over every game of sweep {sweep_id} (all modes): impostor win "
                                        f"over its impostor games, majority win over its majority seats, detection over "
                                        f"its legal majority ballots; percentages rounded to 0.1.")}).info.run_id
        client.log_batch(run_id, metrics=[Metric(k, v, now, 0) for k, v in summary_metrics(r).items()])
        client.set_terminated(run_id, status="FINISHED")
    return len(rates)
