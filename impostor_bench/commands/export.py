"""``impostor export``: write games.parquet, players.parquet, moves.parquet and models.csv from MLflow runs or Inspect logs.

    impostor export --logs DIR --out OUT          # straight from Inspect logs
    impostor export --experiment NAME --out OUT   # from the tables/ artifacts of MLflow runs

Rows are validated with impostor_bench.core.records.  Only finished games are exported;
errored or never-run games, and MLflow runs whose games were never logged
(unfinished: a sweep still running, or killed before it logged them), are listed
(and written to OUT/errors.csv).  A game present in several logs (eval-set
retries) is exported once.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from impostor_bench.core.errors import ImpostorError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("export", help="export the game tables (Parquet) from MLflow or Inspect logs",
                              description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--logs", metavar="DIR", help="Inspect log directory (recursive) or one .eval file")
    src.add_argument("--experiment", metavar="NAME", help="MLflow experiment name")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--force", action="store_true", help="replace the tables of an earlier export in --out")
    p.add_argument("--tracking-uri", help="with --experiment; default MLFLOW_TRACKING_URI, else sqlite:///mlruns/mlflow.db")
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    from impostor_bench.export import tables_from_logs, write_tables
    from impostor_bench.outdir import dir_problem

    if dir_problem(args.out):  # before reading every log
        raise ImpostorError(f"--out {args.out!r} {dir_problem(args.out)}; fix: give a folder you can write to")
    held = earlier_export(args.out)
    if held and not args.force:  # an export of 54 games was silently replaced by one of 5
        raise ImpostorError(f"--out {args.out!r} already holds an export ({', '.join(held)}); fix: choose a new "
                            f"folder, or add --force to replace it")
    if args.logs:
        tables = tables_from_logs(args.logs)
        where = f"{len(tables.logs)} log(s) in {args.logs}"
    else:
        tables, where = tables_from_mlflow(args.experiment, args.tracking_uri)
    if tables.n_games == 0:
        left = [f"{n} {what}" for n, what in ((len(tables.errors), "errored"), (len(tables.missing), "missing"),
                                              (len(tables.unfinished), "experiment run(s) unfinished")) if n]
        raise ImpostorError(f"{where}: no finished games to export" + (f" ({', '.join(left)})" if left else "")
                            + "; fix: run or resume the sweep first"
                            + (" (or log its Inspect logs with `impostor sync LOG_DIR`)" if tables.unfinished else ""))
    written = write_tables(tables, args.out)
    print(f"exported {tables.n_games:,} games ({len(tables.players):,} player rows) from {where} to {args.out}")
    if tables.duplicates:
        print(f"  {tables.duplicates} duplicate game record(s) (retry logs, or runs holding the same games) "
              f"merged: one copy of each game kept")
    for line in tables.problems_text():
        print(f"  {line}", file=sys.stderr)
    for p in written:
        print(f"  wrote {p}")
    return 0


def earlier_export(out: str) -> list[str]:
    """The table files an earlier export left in ``out`` (those ``write_tables`` would replace)."""
    from pathlib import Path

    from impostor_bench.export import ERRORS_FILE, GAMES_FILE, MODELS_FILE, MOVES_FILE, PLAYERS_FILE

    from impostor_bench.core.output_files import present

    d = Path(out).expanduser()
    return [f for f in (GAMES_FILE, PLAYERS_FILE, MOVES_FILE, MODELS_FILE, ERRORS_FILE) if present(d / f)]


def _unfinished_reason(run_id: str, status: str) -> str:
    """Why a run has no tables, in words that do not call it an error: nothing failed, it was not logged."""
    if status == "RUNNING":
        why = "is RUNNING and has not logged its games: its sweep is still playing or logging it, or was killed first"
    else:
        why = f"ended {status} before it logged its games (its sweep was interrupted)"
    return f"MLflow run {run_id} {why}; fix: resume the sweep (same command) or `impostor sync LOG_DIR`"


def tables_from_mlflow(experiment: str, tracking_uri: Optional[str] = None) -> tuple[Any, str]:
    """The merged tables of the experiment runs of an MLflow experiment, and where they came from."""
    import pandas as pd

    from impostor_bench.export import (ERRORS_FILE, GAMES_FILE, MOVES_FILE, PLAYERS_FILE, GameError, Tables, merge_tables,
                                 validate_frames)
    from impostor_bench.tracking.logrun import TAG
    from impostor_bench.tracking.tables import downloaded_tables

    parts, unfinished = [], []
    with downloaded_tables(experiment, tracking_uri, kind="experiment",
                           unreachable_fix="start the server, or export from the logs with --logs DIR") as exp:
        keep, copies_left_out = exp.copies()  # a game in several runs counts once (as in `impostor report`)
        for rt in exp.runs:
            rid, run, local = rt.run_id, rt.run, rt.directory
            label = run.data.tags.get(f"{TAG}experiment_id", rid)
            # A run's tables count once it says so (the ``tables_logged`` tag, written last); a run
            # killed mid-logging may hold some table files already, possibly not all of them.
            logged = run.data.tags.get(f"{TAG}tables_logged") == "1" or run.info.status == "FINISHED"
            if local is None or not logged:
                unfinished.append(GameError(f"{label}/*", label, "", _unfinished_reason(rid, run.info.status), rid))
                continue
            games, players = validate_frames(pd.read_parquet(local / GAMES_FILE), pd.read_parquet(local / PLAYERS_FILE),
                                             f"MLflow run {rid}")
            left: dict[str, list] = {"errored": [], "missing": [], "unfinished": []}
            if (local / ERRORS_FILE).exists():
                for row in pd.read_csv(local / ERRORS_FILE, dtype=str, keep_default_na=False).to_dict("records"):
                    kind = row["kind"] if row["kind"] in left else "errored"
                    reason = row["reason"] if kind == row["kind"] else f"{row['kind']}: {row['reason']}"
                    left[kind].append(GameError(row["game_id"], row["experiment_id"], row["sample_id"], reason, rid))
            moves = pd.read_parquet(local / MOVES_FILE) if (local / MOVES_FILE).exists() else None  # older runs: none
            mine = keep.get(rid)
            if mine is not None:  # games another run holds too: that run's copy counts
                games, players = games[games["game_id"].isin(mine)], players[players["game_id"].isin(mine)]
                moves = moves[moves["game_id"].isin(mine)] if moves is not None else None
            parts.append(Tables(games, players, left["errored"], left["missing"], unfinished=left["unfinished"],
                                moves=moves))
    merged = merge_tables(parts) if parts else Tables(pd.DataFrame(), pd.DataFrame())
    merged.unfinished = merged.unfinished + unfinished
    merged.duplicates += copies_left_out
    return merged, exp.description
