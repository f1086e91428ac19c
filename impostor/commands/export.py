"""``impostor export``: write games.parquet, players.parquet and models.csv from MLflow runs or Inspect logs.

    impostor export --logs DIR --out OUT          # straight from Inspect logs
    impostor export --experiment NAME --out OUT   # from the tables/ artifacts of MLflow runs

Rows are validated with impostor.core.records.  Only finished games are exported;
errored or never-run games are listed (and written to OUT/errors.csv).  A game
present in several logs (eval-set retries) is exported once.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from impostor.core.errors import ImpostorError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("export", help="export the game tables (Parquet) from MLflow or Inspect logs",
                              description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--logs", metavar="DIR", help="Inspect log directory (recursive) or one .eval file")
    src.add_argument("--experiment", metavar="NAME", help="MLflow experiment name")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--tracking-uri", help="with --experiment; default MLFLOW_TRACKING_URI, else sqlite:///mlruns/mlflow.db")
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    from impostor.export import tables_from_logs, write_tables

    if args.logs:
        tables = tables_from_logs(args.logs)
        where = f"{len(tables.logs)} log(s) in {args.logs}"
    else:
        tables, where = tables_from_mlflow(args.experiment, args.tracking_uri)
    if tables.n_games == 0:
        raise ImpostorError(f"{where}: no finished games to export"
                            + (f" ({len(tables.errors)} errored, {len(tables.missing)} missing)" if tables.errors or tables.missing else "")
                            + "; fix: run or resume the sweep first")
    written = write_tables(tables, args.out)
    print(f"exported {tables.n_games:,} games ({len(tables.players):,} player rows) from {where} to {args.out}")
    if tables.duplicates:
        print(f"  {tables.duplicates} duplicate game record(s) (retry logs) merged, the completed copy kept")
    for line in tables.problems_text():
        print(f"  {line}", file=sys.stderr)
    for p in written:
        print(f"  wrote {p}")
    return 0


def tables_from_mlflow(experiment: str, tracking_uri: Optional[str] = None) -> tuple[Any, str]:
    import pandas as pd

    from impostor.export import (
        ERRORS_FILE,
        GAMES_FILE,
        PLAYERS_FILE,
        GameError,
        Tables,
        merge_tables,
        validate_frames,
    )
    from impostor.tracking.logrun import TABLES_DIR, TAG
    from impostor.tracking.store import TrackingUnavailable, get_client, shown_uri

    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    try:
        client, uri = get_client(tracking_uri)
    except TrackingUnavailable as exc:
        raise ImpostorError(f"{exc}; fix: start the server, or export from the logs with --logs DIR") from None
    try:
        exp = client.get_experiment_by_name(experiment)
    except Exception as exc:  # noqa: BLE001
        raise ImpostorError(f"MLflow at {shown_uri(uri)}: cannot be read ({exc}); fix: check --tracking-uri") from exc
    if exp is None:
        names = [e.name for e in client.search_experiments(max_results=50)]
        raise ImpostorError(f"MLflow experiment '{experiment}' not found at {shown_uri(uri)}"
                            + (f" (there: {', '.join(names)})" if names else "") + "; fix: check --experiment / --tracking-uri")
    runs, token = [], None
    while True:
        page = client.search_runs([exp.experiment_id], filter_string=f"tags.`{TAG}kind` = 'experiment'",
                                  max_results=1000, page_token=token)
        runs += list(page)
        token = page.token
        if not token:
            break
    parts, untabled = [], []
    with tempfile.TemporaryDirectory(prefix="impostor-export-") as tmp:
        for run in runs:
            rid = run.info.run_id
            label = run.data.tags.get(f"{TAG}experiment_id", rid)
            names = {Path(a.path).name for a in client.list_artifacts(rid, TABLES_DIR)}
            if GAMES_FILE not in names or PLAYERS_FILE not in names:
                untabled.append(GameError(f"{label}/*", label, "", f"MLflow run {rid} ({run.info.status}) has no "
                                          f"tables yet: its games are not exported (resume the sweep or impostor sync)", rid))
                continue
            local = Path(client.download_artifacts(rid, TABLES_DIR, str(Path(tmp) / rid)))
            games, players = validate_frames(pd.read_parquet(local / GAMES_FILE), pd.read_parquet(local / PLAYERS_FILE),
                                             f"MLflow run {rid}")
            errors = []
            if (local / ERRORS_FILE).exists():
                for row in pd.read_csv(local / ERRORS_FILE, dtype=str, keep_default_na=False).to_dict("records"):
                    errors.append(GameError(row["game_id"], row["experiment_id"], row["sample_id"],
                                            f"{row['kind']}: {row['reason']}", rid))
            parts.append(Tables(games, players, errors))
    merged = merge_tables(parts) if parts else Tables(pd.DataFrame(), pd.DataFrame())
    merged.errors = merged.errors + untabled
    return merged, f"{len(runs)} run(s) of MLflow experiment '{experiment}' at {shown_uri(uri)}"
