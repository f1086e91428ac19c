"""``impostor sync LOG_DIR_OR_FILE``: log Inspect logs of the impostor task to MLflow (idempotent)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("sync", help="log Inspect logs to MLflow later (skips what is already synced)",
                              description=__doc__.splitlines()[0])
    p.add_argument("path", metavar="LOG_DIR_OR_FILE", help="a sweep --log-dir, an inspect log dir, or one .eval file")
    p.add_argument("--experiment", help="MLflow experiment (default: the sweep's, else IMPOSTOR_MLFLOW_EXPERIMENT, "
                                        "MLFLOW_EXPERIMENT_NAME or 'impostor')")
    p.add_argument("--tracking-uri", help="default: MLFLOW_TRACKING_URI, else sqlite:///mlruns/mlflow.db")
    p.add_argument("--force", action="store_true", help="re-log runs that are already up to date")
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    from impostor_bench.tracking.sync import sync

    r = sync(args.path, experiment=args.experiment, tracking_uri=args.tracking_uri, force=args.force)
    print(f"MLflow {r.uri}, experiment '{r.experiment}': synced {len(r.synced)} eval(s), "
          f"{len(r.up_to_date)} already up to date, {len(r.superseded)} superseded retry log(s) skipped")
    for lp in r.synced:
        print(f"  synced {lp}")
    return 0
