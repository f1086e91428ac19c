"""Where a reading command's games come from: an export folder (``--parquet DIR``) or the runs of
an MLflow experiment (``--experiment NAME [--tracking-uri URI]``). Shared by ``impostor report``
and ``impostor compare`` so both take the same inputs and refuse the same mistakes the same way.

The command layer gathers what ``analysis`` must not import itself: the tables of an MLflow
experiment are downloaded by ``impostor_bench.tracking.tables`` and handed to analysis.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from impostor_bench.core.errors import ImpostorError

__all__ = ["add_source_args", "check_source_args", "load_from_mlflow", "read_experiment"]


def add_source_args(p: Any, *, required: bool) -> None:
    """``--parquet DIR | --experiment NAME`` (one of them; neither only where ``required`` is False),
    and ``--tracking-uri URI`` for the experiment's store."""
    src = p.add_mutually_exclusive_group(required=required)
    src.add_argument("--parquet", metavar="DIR", help="export directory with games.parquet, players.parquet[, models.csv]")
    src.add_argument("--experiment", metavar="NAME", help="MLflow experiment whose runs hold tables/*.parquet artifacts")
    p.add_argument("--tracking-uri", metavar="URI",
                   help="MLflow tracking URI of --experiment (default: MLFLOW_TRACKING_URI, else mlruns/ in the current folder, "
                        "else the project checkout's mlruns/ when it holds the experiment)")


def check_source_args(args: Any) -> None:
    if args.tracking_uri and not args.experiment:
        raise ImpostorError("--tracking-uri: only used with --experiment; fix: drop it or pass --experiment NAME")


def load_from_mlflow(experiment: str, tracking_uri: Optional[str] = None) -> Any:
    """The ``AnalysisData`` of every run of an MLflow experiment that logged ``tables/`` (sweep
    parents, which have none, are skipped with a note; earlier report runs hold no games)."""
    from impostor_bench.analysis.io import load_run_tables
    from impostor_bench.tracking.logrun import TABLES_DIR, TAG
    from impostor_bench.tracking.reportrun import REPORT_KIND
    from impostor_bench.tracking.tables import downloaded_tables

    with downloaded_tables(experiment, tracking_uri) as exp:
        runs = [r for r in exp.runs if r.run.data.tags.get(f"{TAG}kind") != REPORT_KIND]
        exp.runs = runs
        keep, left_out = exp.copies()  # a game in several runs counts once (as in `impostor export`)
        return load_run_tables([(r.run_id, r.directory) for r in runs], experiment, exp.where, TABLES_DIR,
                               keep=keep, copies_left_out=left_out)


def read_experiment(experiment: str, tracking_uri: Optional[str] = None,
                    progress: Callable[[str], None] = lambda _: None) -> tuple[Any, dict]:
    """``(AnalysisData, source)`` of ``--experiment``; refuses, before any output, a store that is
    not there (MLflow would create an empty one: a reading command never writes)."""
    from impostor_bench.tracking.store import reading_uri, shown_uri
    from impostor_bench.tracking.store import tracking_uri as resolved_uri
    from impostor_bench.tracking.tables import require_store

    tracking_uri, where = reading_uri(experiment, tracking_uri)
    if where:
        progress(where)
    require_store(experiment, tracking_uri)
    progress(f"reading MLflow experiment '{experiment}'")
    data = load_from_mlflow(experiment, tracking_uri)
    return data, {"kind": "mlflow", "experiment": experiment, "tracking_uri": shown_uri(resolved_uri(tracking_uri))}
