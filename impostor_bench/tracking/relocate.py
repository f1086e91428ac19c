"""A local store (``mlruns/``) that was moved or copied keeps working.

MLflow's SQL store records every artifact location as an absolute URI
(``file:///old/place/mlruns/artifacts/<experiment>/<run>/artifacts``; a relative one is
made absolute when the experiment is created), and has no command to re-point them
(mlflow/mlflow#3144, #8226).  So after ``cp -r mlruns elsewhere`` the copy's runs
still name the old folder: gone when the original was deleted, or, worse, the original's
when it was not (new runs of the copy would write into it).

The project's stores keep their artifacts beside the database (``<store>/artifacts/<experiment
slug>``, ``impostor_bench.tracking.store.ensure_experiment``), so where they were is read off the
experiments' locations and where they are now is the database's folder:

* readers (``impostor export/report --experiment``) map a run's artifact URI to the store's
  folder without writing (:func:`store_moves`, :func:`map_uri`);
* writers (hooks, sweeps, sync) and ``impostor relocate`` rewrite the stored URIs once
  (:func:`relocate`), after which ``mlflow ui`` on the moved store lists the artifacts.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Optional
from urllib.parse import unquote, urlsplit

from impostor_bench.tracking.store_files import ARTIFACTS_DIR

#: Where MLflow's SQL schema keeps artifact URIs (table, column, optional filter on a key column).
URI_COLUMNS = (
    ("experiments", "artifact_location", None),
    ("runs", "artifact_uri", None),
    ("trace_tags", "value", "key = 'mlflow.artifactLocation'"),
    ("logged_models", "artifact_location", None),
    ("model_versions", "storage_location", None),
    ("model_versions", "source", None),
)


def sqlite_path(uri: str) -> Optional[Path]:
    """The database file of a ``sqlite:///`` tracking URI (None for any other store)."""
    return Path(uri.removeprefix("sqlite:///")) if uri.startswith("sqlite:///") else None


def local_path(location: str) -> Optional[Path]:
    """The local folder an artifact location names (a ``file:`` URI or a plain path), else None."""
    if location.startswith("file:"):
        return Path(unquote(urlsplit(location).path))
    return Path(location) if location.startswith("/") else None


def store_moves(db: Path) -> dict[Path, Path]:
    """{old store folder: the database's folder} when the store at ``db`` was moved or copied there
    (read-only).  An experiment is evidence of a move when its artifacts were laid out by this
    project (``<old>/artifacts/<slug>``), ``<old>`` is not the database's folder, and the same
    ``artifacts/<slug>`` exists beside the database."""
    here = db.resolve().parent
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:
            locations = [row[0] for row in con.execute("SELECT artifact_location FROM experiments") if row[0]]
        finally:
            con.close()
    except sqlite3.DatabaseError:  # no store there, or not (yet) an MLflow store
        return {}
    moves: dict[Path, Path] = {}
    for location in locations:
        path = local_path(location)
        if path is None or path.parent.name != ARTIFACTS_DIR:
            continue
        old = path.parent.parent
        if old != here and (here / ARTIFACTS_DIR / path.name).is_dir():
            moves[old] = here
    return moves


def map_uri(location: str, moves: dict[Path, Path]) -> str:
    """``location`` with a moved store folder replaced by where the store is now (unchanged otherwise)."""
    path = local_path(location)
    if path is None:
        return location
    for old, new in moves.items():
        if path == old or old in path.parents:
            moved = new / path.relative_to(old)
            return moved.as_uri() if location.startswith("file:") else moved.as_posix()
    return location


def relocate(db: Path) -> tuple[dict[Path, Path], int]:
    """Rewrite the artifact URIs of a moved store to its current folder, in one transaction:
    (the moves, values rewritten); ({}, 0) when nothing was moved.  Idempotent."""
    moves = store_moves(db)
    if not moves:
        return {}, 0
    con = sqlite3.connect(str(db), timeout=60)
    n = 0
    try:
        with con:
            tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            for table, column, where in URI_COLUMNS:
                if table not in tables or column not in {r[1] for r in con.execute(f"PRAGMA table_info('{table}')")}:
                    continue
                rows = con.execute(f"SELECT rowid, {column} FROM {table}" + (f" WHERE {where}" if where else ""))
                for rowid, value in rows.fetchall():
                    new = map_uri(value, moves) if isinstance(value, str) else value
                    if new != value:
                        con.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (new, rowid))
                        n += 1
    finally:
        con.close()
    return moves, n
