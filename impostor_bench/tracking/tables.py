"""Download the ``tables/`` artifacts of every run of an MLflow experiment.

The one MLflow table download: ``impostor export --experiment`` and
``impostor report --experiment`` both read the runs through
:func:`downloaded_tables` and differ only in what they do with the files.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.records import GAMES_FILE, PLAYERS_FILE
from impostor_bench.tracking.logrun import TABLES_DIR, TAG
from impostor_bench.tracking.relocate import local_path, map_uri, sqlite_path, store_moves
from impostor_bench.tracking.store import TrackingAuthError, TrackingUnavailable, get_client, shown_uri
from impostor_bench.tracking.store import tracking_uri as resolve_uri

__all__ = ["RunTables", "ExperimentTables", "downloaded_tables", "require_store"]


@dataclass
class RunTables:
    """One run and the local copy of its ``tables/`` artifacts (``None``: the run logged no games/players)."""

    run: Any  # mlflow.entities.Run
    directory: Optional[Path]

    @property
    def run_id(self) -> str:
        return self.run.info.run_id


@dataclass
class ExperimentTables:
    """The runs of one MLflow experiment, their tables downloaded to a temporary directory."""

    name: str
    where: str  # the tracking URI without credentials, for messages
    runs: list[RunTables]

    @property
    def description(self) -> str:
        return f"{len(self.runs)} run(s) of MLflow experiment '{self.name}' at {self.where}"

    def copies(self) -> tuple[dict[str, Optional[frozenset[str]]], int]:
        """Which games each run's tables count for, and how many copies were left out.

        A game held by more than one run (a sweep launched twice at once, an experiment logged
        again) counts once, from the first run holding it in this order: finished runs first, then
        the one that ended last.  ``impostor export`` and ``impostor report`` both read the runs
        through this rule, so they agree on the games.  ``None``: every game of the run counts.
        """
        import pyarrow.parquet as pq

        def order(rt: RunTables) -> tuple:
            info = rt.run.info
            return (info.status != "FINISHED", -(info.end_time or 0), -(info.start_time or 0), rt.run_id)

        seen: set[str] = set()
        keep: dict[str, Optional[frozenset[str]]] = {}
        left_out = 0
        for rt in sorted((r for r in self.runs if r.directory is not None), key=order):
            assert rt.directory is not None
            ids = [str(g) for g in pq.read_table(rt.directory / GAMES_FILE, columns=["game_id"]).column(0).to_pylist()]
            mine = [g for g in ids if g not in seen]
            left_out += len(ids) - len(mine)
            keep[rt.run_id] = None if len(mine) == len(ids) else frozenset(mine)
            seen.update(mine)
        return keep, left_out


def _local_store(uri: str) -> Optional[Path]:
    """The file or folder a local tracking URI names (None for a server)."""
    if uri.startswith("sqlite:///"):
        return Path(uri.removeprefix("sqlite:///"))
    if uri.startswith("file://"):
        return Path(uri.removeprefix("file://"))
    return None if "://" in uri else Path(uri)


def require_store(experiment: str, tracking_uri: Optional[str] = None) -> None:
    """Reading commands never write: MLflow creates an empty local store on first open, so a
    read from a folder without one would leave ``mlruns/mlflow.db`` behind.  Refuse first."""
    uri = resolve_uri(tracking_uri)
    path = _local_store(uri)
    if path is not None and not path.exists():
        raise ImpostorError(f"MLflow experiment '{experiment}' not found: no tracking store at {path} "
                            f"(tracking URI {shown_uri(uri)}); fix: run from the folder that holds mlruns/, "
                            "or pass --tracking-uri (or set MLFLOW_TRACKING_URI) to the store the sweep wrote")


def _open_client(tracking_uri: Optional[str], unreachable_fix: str) -> tuple[Any, str]:
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    try:
        return get_client(tracking_uri)
    except TrackingAuthError:
        raise  # its line already says what to set
    except TrackingUnavailable as exc:
        raise ImpostorError(f"{exc}; fix: {unreachable_fix}") from None


def _experiment(client: Any, name: str, where: str) -> Any:
    try:
        exp = client.get_experiment_by_name(name)
    except Exception as exc:  # noqa: BLE001
        raise ImpostorError(f"MLflow at {where}: cannot be read ({exc}); fix: check --tracking-uri") from exc
    if exp is None:
        try:
            known = [e.name for e in client.search_experiments(max_results=50)]
        except Exception:  # noqa: BLE001
            known = []
        raise ImpostorError(f"MLflow experiment '{name}' not found at {where}"
                            + (f" (there: {', '.join(known)})" if known else "")
                            + "; fix: check --experiment and --tracking-uri")
    if getattr(exp, "lifecycle_stage", "active") == "deleted":  # its runs are deleted too: "0 runs" misleads
        raise ImpostorError(f"MLflow experiment '{name}' at {where} is deleted; fix: restore it (`mlflow "
                            f"experiments restore --experiment-id {exp.experiment_id}`, with MLFLOW_TRACKING_URI "
                            f"set to it) or export from its Inspect logs with --logs DIR")
    return exp


def _runs(client: Any, experiment_id: str, kind: Optional[str]) -> list[Any]:
    where = f"tags.`{TAG}kind` = '{kind}'" if kind else ""
    runs, token = [], None
    while True:
        page = client.search_runs([experiment_id], filter_string=where, max_results=1000, page_token=token)
        runs += list(page)
        token = page.token
        if not token:
            return runs


DOWNLOAD_THREADS = 8  # runs downloaded at once: one at a time took ~0.8 s a run from a loaded server (756 runs ~10 min)


def _download(client: Any, run_id: str, tmp: Path, moved: Optional[Path] = None) -> Optional[Path]:
    """The run's ``tables/`` folder (one listing and one request per file), None without games and players;
    ``moved``: where the folder is in a local store that was moved or copied (read in place)."""
    if moved is not None:
        return moved if (moved / GAMES_FILE).is_file() and (moved / PLAYERS_FILE).is_file() else None
    try:
        local = Path(client.download_artifacts(run_id, TABLES_DIR, str(tmp / run_id)))
    except Exception:  # noqa: BLE001 - no artifact directory, or a failed download of one that exists
        try:
            names = {Path(a.path).name for a in client.list_artifacts(run_id, TABLES_DIR)}
        except Exception:  # noqa: BLE001
            names = set()
        if GAMES_FILE in names and PLAYERS_FILE in names:
            raise
        return None
    if not (local / GAMES_FILE).is_file() or not (local / PLAYERS_FILE).is_file():
        return None
    return local


def _moved_tables(run: Any, moves: dict[Path, Path]) -> Optional[Path]:
    """The run's tables folder in a moved local store (``impostor_bench.tracking.relocate``), else None."""
    uri = run.info.artifact_uri or ""
    mapped = map_uri(uri, moves) if moves else uri
    path = local_path(mapped)
    return None if mapped == uri or path is None else path / TABLES_DIR


def _download_all(client: Any, runs: list[Any], tmp: Path, moves: Optional[dict[Path, Path]] = None) -> list[RunTables]:
    """Every run's tables, ``DOWNLOAD_THREADS`` runs at a time (HTTP round trips, not CPU), in run order."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=DOWNLOAD_THREADS) as pool:
        dirs = list(pool.map(lambda r: _download(client, r.info.run_id, tmp, _moved_tables(r, moves or {})), runs))
    return [RunTables(r, d) for r, d in zip(runs, dirs)]


@contextmanager
def downloaded_tables(experiment: str, tracking_uri: Optional[str] = None, *, kind: Optional[str] = None,
                      unreachable_fix: str = "start the server or check --tracking-uri") -> Iterator[ExperimentTables]:
    """The runs of ``experiment`` (only those tagged ``impostor.kind=<kind>`` when given) with their
    ``tables/`` downloaded; the files live until the ``with`` block ends.  Raises ImpostorError when
    the store cannot be opened or the experiment does not exist (never creating a local store)."""
    require_store(experiment, tracking_uri)
    client, uri = _open_client(tracking_uri, unreachable_fix)
    where = shown_uri(uri)
    exp = _experiment(client, experiment, where)
    runs = _runs(client, exp.experiment_id, kind)
    db = sqlite_path(uri)
    moves = store_moves(db) if db is not None else {}  # a moved or copied mlruns/: read where it is now
    with tempfile.TemporaryDirectory(prefix="impostor-tables-") as tmp:
        yield ExperimentTables(experiment, where, _download_all(client, runs, Path(tmp), moves))
