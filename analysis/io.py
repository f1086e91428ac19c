"""Reading and writing the game tables: an export directory (Parquet) or the tables
downloaded from the runs of an MLflow experiment, into a validated ``AnalysisData``.

Analysis reads files only: the command layer downloads MLflow artifacts
(``impostor_bench.tracking.tables``) and hands the local directories to
:func:`load_run_tables`.  Validation is :mod:`impostor_bench.analysis.validate`.
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path
from typing import AbstractSet, Mapping, Optional, Sequence

import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.moves import moves_from_players, validate_moves
from impostor_bench.analysis.validate import FIX_EXPORT, MODEL_COLUMNS, validate_tables
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.input_files import MAX_SIDE_FILE_BYTES, MAX_TABLE_BYTES, read_bytes, regular_file
from impostor_bench.core.records import GAMES_FILE, MODELS_FILE, MOVES_FILE, PLAYERS_FILE

__all__ = [
    "GAMES_FILE",
    "PLAYERS_FILE",
    "MODELS_FILE",
    "MOVES_FILE",
    "MODEL_COLUMNS",
    "load_tables",
    "load_run_tables",
    "validate_tables",
    "write_tables",
    "sha256_file",
]


def sha256_file(path: Path) -> str:
    """The file's SHA-256, reading at most its checked size (``regular_file``: no FIFO, no device)."""
    size = regular_file(path, str(path), MAX_TABLE_BYTES, FIX_EXPORT)
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        left = size
        while left > 0:
            block = fh.read(min(1 << 20, left))
            if not block:
                break
            h.update(block)
            left -= len(block)
    return h.hexdigest()


# --------------------------------------------------------------------------- reading


# Text columns that are unique per row stay plain strings; every other text column is read
# dictionary-encoded (a categorical): at 10x the paper (3.6 M player rows) plain strings
# take ~1.8 GB, categoricals a few hundred MB (benchmarks/scale_bench.py).
_UNIQUE_TEXT = {GAMES_FILE: ("game_id",)}


def sorted_categories(df: pd.DataFrame) -> pd.DataFrame:
    """Categorical columns get their categories in sorted order (in place), so that sorting and
    grouping by them give the order plain strings give; returns ``df``."""
    for c in df.columns:
        s = df[c]
        if isinstance(s.dtype, pd.CategoricalDtype) and not s.cat.categories.is_monotonic_increasing:
            df[c] = s.cat.reorder_categories(s.cat.categories.sort_values())
    return df


def compact_text(df: pd.DataFrame, keep: Sequence[str] = ()) -> pd.DataFrame:
    """Text columns (strings or objects holding only strings and nulls) except ``keep`` as categoricals
    with sorted categories (in place); returns ``df``.  For tables not read by ``_read_parquet``."""
    for c in df.columns:
        s = df[c]
        if c in keep or isinstance(s.dtype, pd.CategoricalDtype):
            continue
        if pd.api.types.is_string_dtype(s.dtype) and pd.api.types.infer_dtype(s, skipna=True) in ("string", "empty"):
            if s.notna().any():
                df[c] = s.astype("category")
    return sorted_categories(df)


def _read_parquet(path: Path, shown: str, dictionary: bool = True) -> pd.DataFrame:
    """The file as a DataFrame; with ``dictionary`` its text columns (but ``_UNIQUE_TEXT``) as categoricals."""
    # a regular file within the cap, checked before pyarrow opens it (a FIFO would block it)
    regular_file(path, shown, MAX_TABLE_BYTES,
                 f"point --parquet at an export directory holding {GAMES_FILE} and {PLAYERS_FILE} ({FIX_EXPORT})")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        text = None
        if dictionary:
            unique = _UNIQUE_TEXT.get(path.name, ())
            text = [f.name for f in pq.read_schema(path) if f.name not in unique
                    and (pa.types.is_string(f.type) or pa.types.is_large_string(f.type))]
        df = pq.read_table(path, read_dictionary=text).to_pandas()
    except Exception as exc:  # noqa: BLE001 - any reader failure means a bad file
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ImpostorError(
            f"{shown}: not a readable Parquet file ({reason}); fix: the file is corrupt or not "
            f"Parquet, {FIX_EXPORT}"
        ) from exc
    return sorted_categories(df)


def release_reader_memory() -> None:
    """Hand the memory Arrow's allocator kept after reading back to the system.

    Arrow's default pool (mimalloc or jemalloc) keeps the pages of freed read buffers for
    reuse; after ``to_pandas`` nothing else in the report allocates through it, so on the
    90,720-game export ~100 MB of resident memory would stay held for the whole report
    (benchmarks/RESULTS.md)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _read_models(path: Path, shown: str) -> pd.DataFrame:
    raw = read_bytes(path, shown, MAX_SIDE_FILE_BYTES, f"write it as a CSV file with the header {','.join(MODEL_COLUMNS)}")
    try:
        df = pd.read_csv(io.BytesIO(raw), dtype={"model": str, "provider": str, "family": str, "route": str,
                                      "params_source": str, "params_note": str, "alias": str})
    except Exception as exc:  # noqa: BLE001
        raise ImpostorError(
            f"{shown}: not a readable CSV file ({exc}); fix: write it as CSV with the header "
            f"{','.join(MODEL_COLUMNS)}"
        ) from exc
    return df


def load_tables(directory: str | Path) -> AnalysisData:
    """Read ``games.parquet``, ``players.parquet``, optional ``models.csv`` and ``moves.parquet``
    (multi-round games; without it ``impostor_bench.analysis.moves.moves_of`` derives one-round moves) from ``directory``."""
    d = Path(directory)
    if not d.is_dir():
        raise ImpostorError(
            f"{d}: not a directory; fix: pass --parquet the export directory holding {GAMES_FILE} and {PLAYERS_FILE}"
        )
    gpath, ppath, mpath = d / GAMES_FILE, d / PLAYERS_FILE, d / MODELS_FILE
    games = _read_parquet(gpath, str(gpath))
    players = _read_parquet(ppath, str(ppath))
    models = _read_models(mpath, str(mpath)) if os.path.lexists(mpath) else None
    data = validate_tables(games, players, models, games_name=str(gpath), players_name=str(ppath),
                           models_name=str(mpath), copy=False)
    vpath = d / MOVES_FILE
    if os.path.lexists(vpath):
        data.moves = validate_moves(_read_parquet(vpath, str(vpath)), str(vpath))
    data.sources = [  # type: ignore[attr-defined]
        {"path": str(p.resolve()), "sha256": sha256_file(p), "bytes": p.stat().st_size}
        for p in (gpath, ppath, mpath, vpath) if os.path.lexists(p)
    ]
    release_reader_memory()
    return data


def write_tables(directory: str | Path, games: pd.DataFrame, players: pd.DataFrame,
                 models: Optional[pd.DataFrame] = None, moves: Optional[pd.DataFrame] = None) -> list[Path]:
    """Write an export directory (games.parquet, players.parquet, models.csv, moves.parquet when given)."""
    from impostor_bench.core.output_files import write_file

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    paths = [write_file(d / GAMES_FILE, lambda p: games.to_parquet(p, index=False)),
             write_file(d / PLAYERS_FILE, lambda p: players.to_parquet(p, index=False))]
    if models is not None:
        paths.append(write_file(d / MODELS_FILE, lambda p: models.to_csv(p, index=False)))
    if moves is not None:
        paths.append(write_file(d / MOVES_FILE, lambda p: moves.to_parquet(p, index=False)))
    return paths


# --------------------------------------------------------------------------- tables of MLflow runs


def _read_run(run_id: str, local: Path, tables_dir: str, parts: dict[str, list], sources: list[dict]) -> None:
    """Read one run's downloaded tables into ``parts`` (games get the run id as ``mlflow_run_id``)."""
    for fname in (GAMES_FILE, PLAYERS_FILE, MODELS_FILE, MOVES_FILE):
        p = local / fname
        if not os.path.lexists(p):
            continue
        shown = f"run {run_id} artifact {tables_dir}/{fname}"
        sources.append({"path": f"mlflow:{run_id}/{tables_dir}/{fname}", "sha256": sha256_file(p),
                        "bytes": p.stat().st_size})
        if fname == GAMES_FILE:
            df = _read_parquet(p, shown, dictionary=False)  # categoricals after the concat (one dictionary)
            df["mlflow_run_id"] = run_id
            parts[fname].append(df)
        elif fname in (PLAYERS_FILE, MOVES_FILE):
            parts[fname].append(_read_parquet(p, shown, dictionary=False))
        else:
            parts[fname].append(_read_models(p, shown))


def load_run_tables(runs: Sequence[tuple[str, Optional[Path]]], experiment: str, where: str,
                    tables_dir: str = "tables", keep: Optional[Mapping[str, Optional[AbstractSet[str]]]] = None,
                    copies_left_out: int = 0) -> AnalysisData:
    """Concatenate the tables of the runs of one MLflow experiment, downloaded by the caller.

    ``runs`` holds ``(run_id, local tables directory or None)``; runs without tables (sweep
    parents) are skipped with a note.  ``keep``: per run, the games it counts for when another
    run holds copies of some (the caller's rule, ``copies_left_out`` of them; absent or None: all).  ``where`` (the tracking URI) and ``tables_dir`` (the
    artifact directory) only name the files in messages and in ``data.sources``.
    """
    parts: dict[str, list] = {GAMES_FILE: [], PLAYERS_FILE: [], MODELS_FILE: [], MOVES_FILE: []}
    sources: list[dict] = []
    for run_id, local in runs:
        if local is not None:
            before = {name: len(frames) for name, frames in parts.items()}
            _read_run(run_id, local, tables_dir, parts, sources)
            mine = (keep or {}).get(run_id)
            if mine is not None:  # copies another run holds count from that run
                for name in (GAMES_FILE, PLAYERS_FILE, MOVES_FILE):
                    for i in range(before[name], len(parts[name])):
                        parts[name][i] = parts[name][i][parts[name][i]["game_id"].isin(mine)]
    if not parts[GAMES_FILE]:
        raise ImpostorError(
            f"MLflow experiment '{experiment}' at {where}: none of its {len(runs)} run(s) has "
            f"{tables_dir}/{GAMES_FILE} and {tables_dir}/{PLAYERS_FILE} artifacts; fix: log the tables "
            f"(`impostor sync`/the MLflow hook) or use `impostor export` and --parquet"
        )
    models = None
    if parts[MODELS_FILE]:
        models = pd.concat(parts[MODELS_FILE], ignore_index=True).drop_duplicates(subset=["model"], keep="first")
    games = compact_text(pd.concat(parts.pop(GAMES_FILE), ignore_index=True), keep=_UNIQUE_TEXT[GAMES_FILE])
    players = compact_text(pd.concat(parts.pop(PLAYERS_FILE), ignore_index=True))
    data = validate_tables(
        games, players, models, copy=False,
        games_name=f"MLflow '{experiment}' {tables_dir}/{GAMES_FILE}",
        players_name=f"MLflow '{experiment}' {tables_dir}/{PLAYERS_FILE}",
        models_name=f"MLflow '{experiment}' {tables_dir}/{MODELS_FILE}",
    )
    if parts[MOVES_FILE]:  # runs without one are one-round runs: their moves come from players
        have = pd.concat(parts[MOVES_FILE], ignore_index=True)
        rest = data.players[~data.players["game_id"].isin(set(have["game_id"].astype(object)))]
        data.moves = validate_moves(pd.concat([have, moves_from_players(rest)], ignore_index=True),
                                    f"MLflow '{experiment}' {tables_dir}/{MOVES_FILE}")
    if copies_left_out:
        data.notes.append(f"MLflow: {copies_left_out} copy(ies) of games held by more than one run (a sweep "
                          f"launched twice, or logged again) left out: each game counted once, as `impostor export` does.")
    skipped = sum(local is None for _, local in runs)
    if skipped:
        data.notes.append(f"MLflow: {skipped} run(s) without tables (e.g. sweep parents) were skipped.")
    data.sources = sources  # type: ignore[attr-defined]
    release_reader_memory()
    return data
