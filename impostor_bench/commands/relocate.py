"""``impostor relocate [STORE]``: point a moved or copied local MLflow store (``mlruns/``) at its own
artifacts, so ``mlflow ui`` on it lists them (export and report read a moved store without it)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from impostor_bench.core.errors import ImpostorError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("relocate", help="re-point a moved or copied mlruns/ at its own artifacts "
                                               "(for mlflow ui; docs/tracking.md 'Moving a store')",
                              description=__doc__.splitlines()[0])
    p.add_argument("store", nargs="?", default="mlruns",
                   help="the store's folder or its mlflow.db (default: mlruns, the default store)")
    p.add_argument("--dry-run", action="store_true", help="say what would be re-pointed; change nothing")
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    from impostor_bench.tracking.relocate import relocate, store_moves
    from impostor_bench.tracking.store_files import DB_FILE, sqlite_setup_lock

    db = Path(args.store)
    db = db if db.is_file() or db.suffix == ".db" else db / DB_FILE
    if not db.is_file():
        raise ImpostorError(f"no MLflow store at {db}; fix: pass the folder that holds {DB_FILE} (e.g. mlruns)")
    if args.dry_run:
        moves, n = store_moves(db), None
    else:
        with sqlite_setup_lock(f"sqlite:///{db}"):
            moves, n = relocate(db)
    if not moves:
        print(f"{db}: artifact locations already point at {db.resolve().parent}; nothing to do")
        return 0
    for old, new in moves.items():
        print(f"{db}: artifacts recorded under {old} -> {new}")
    print(f"{n} artifact location(s) re-pointed" if n is not None else "dry run: nothing changed")
    return 0
