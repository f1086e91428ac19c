"""The local store's files: its folder, database and artifacts names, and the lock that
serialises opening it.  Both ``store`` (which opens stores) and ``relocate`` (which re-points
a moved one) need them; keeping them here lets ``store`` import ``relocate`` one way."""

from __future__ import annotations

import contextlib
from typing import Iterator

STORE_DIR = "mlruns"
DB_FILE = "mlflow.db"
ARTIFACTS_DIR = "artifacts"


@contextlib.contextmanager
def sqlite_setup_lock(uri: str) -> Iterator[None]:
    """One process at a time opens a local SQLite store.

    Two sweep shards started together on one machine both found the new store
    empty and raced in MLflow's schema migration; one ran untracked ("Online
    migration expected to match one row", measured).  An advisory lock file next
    to the database serialises the opening; afterwards SQLite handles the writes.
    """
    try:
        import fcntl
    except ImportError:  # Windows: no flock; shards there should start one after the other
        yield
        return
    if not uri.startswith("sqlite:///"):
        yield
        return
    with open(uri.removeprefix("sqlite:///") + ".lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
