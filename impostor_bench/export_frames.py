"""The exported tables as typed DataFrames (games, players, moves: the contract's dtypes) and
the row-by-row re-validation of downloaded frames; split from ``impostor_bench.export`` (which reads
logs into records) so each stays one job."""

from __future__ import annotations

import math
from typing import Optional

import pandas as pd

from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.records import GAME_COLUMNS, MOVE_COLUMNS, PLAYER_COLUMNS, GameRow, PlayerRow


def games_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=GAME_COLUMNS)
    for col in ("game_index", "impostor_seat", "impostor_speaking_position", "seed", "tie_k", "n_valid_votes",
                "n_invalid_ballots", "n_invalid_descriptions", "votes_on_impostor", "rounds_played", "max_rounds"):
        df[col] = df[col].astype("int64")
    df["private_notes"] = df["private_notes"].astype(bool)
    for col in ("p_imp_default", "p_imp_sym_candidate", "p_imp_sym_side"):
        df[col] = df[col].astype("float64")
    df["impostor_in_tie"] = df["impostor_in_tie"].astype(bool)
    return df


def players_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=PLAYER_COLUMNS)
    for col in ("seat", "speaking_position", "description_attempts", "ballot_attempts"):
        df[col] = df[col].astype("int64")
    df["vote"] = pd.array([None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)
                           for v in df["vote"]], dtype="Int64")
    df["confidence"] = pd.to_numeric(df["confidence"], errors="coerce").astype("float64")
    for col in ("input_tokens", "output_tokens", "eliminated_round"):  # None = not recorded / not eliminated
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    df["cost_usd"] = pd.to_numeric(df["cost_usd"], errors="coerce").astype("float64")
    for col in ("description_valid", "self_declared", "ballot_valid"):
        df[col] = df[col].astype(bool)
    for col in ("judge_trust", "judge_coord_intent"):  # None until a judge labelled the game
        df[col] = df[col].astype("boolean")
    return df


def moves_frame(rows: list[dict]) -> pd.DataFrame:
    """moves.parquet (docs/data-contract.md): nullable integers where a value may be absent."""
    df = pd.DataFrame(rows, columns=MOVE_COLUMNS)
    for col in ("round", "seat", "speaking_position"):
        df[col] = df[col].astype("int64")
    for col in ("vote", "input_tokens", "output_tokens"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    df["confidence"] = pd.to_numeric(df["confidence"], errors="coerce").astype("float64")
    for col in ("description_valid", "self_declared", "eliminated"):
        df[col] = df[col].astype(bool)
    return df


def table_rows(df: pd.DataFrame, keys: Optional[list[str]] = None, nan_as_none: bool = False) -> list[dict]:
    """``df[keys].to_dict("records")`` (NA as None; NaN too with ``nan_as_none``) from each column's
    ``tolist()``: ``to_dict`` boxes cell by cell, most of the time of an export of 90,720 games."""
    keys = list(df.columns) if keys is None else keys
    cols = []
    for c in keys:
        values = df[c].tolist()
        if df[c].hasnans:
            values = [None if v is pd.NA or (nan_as_none and isinstance(v, float) and v != v) else v
                      for v in values]
        cols.append(values)
    return [dict(zip(keys, row)) for row in zip(*cols)]


def _records(df: pd.DataFrame, fields: frozenset[str]) -> list[dict]:
    """The rows of ``df`` as dicts of the schema's columns only, NaN and NA as None."""
    return table_rows(df, [c for c in df.columns if c in fields], nan_as_none=True)


_GAME_FIELDS, _PLAYER_FIELDS = frozenset(GAME_COLUMNS), frozenset(PLAYER_COLUMNS)


def validate_frames(games: pd.DataFrame, players: pd.DataFrame, shown: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Re-validate downloaded frames row by row with the record schema (the field sets are
    looked up once: per cell, ``Model.model_fields`` made this ~1 min of CPU for the paper's grid)."""
    grows, prows = [], []
    for i, row in enumerate(_records(games, _GAME_FIELDS)):
        try:
            grows.append(GameRow.model_validate(row).model_dump())
        except Exception as exc:  # noqa: BLE001
            raise ImpostorError(f"{shown} games.parquet row {i}: {str(exc).splitlines()[0:3]}; fix: re-sync the run") from exc
    for i, r in enumerate(_records(players, _PLAYER_FIELDS)):
        try:
            if r.get("vote") is not None:
                r["vote"] = int(r["vote"])
            prows.append(PlayerRow.model_validate(r).model_dump())
        except Exception as exc:  # noqa: BLE001
            raise ImpostorError(f"{shown} players.parquet row {i}: {str(exc).splitlines()[0:3]}; fix: re-sync the run") from exc
    return games_frame(grows), players_frame(prows)
