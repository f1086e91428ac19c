"""The ``moves`` table of multi-round games: reading, checking and, for exports of
one-round games written without it, deriving it from ``players``.

``impostor_bench.core.records.MoveRow`` defines the columns; the checks here follow its fields
(required columns present; whole numbers within the field's bounds; booleans; the role) and
raise one-line errors that name the file, the column and the fix, like the other tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np
import pandas as pd

from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.records import MOVE_COLUMNS, MOVES_FILE, MoveRow

if TYPE_CHECKING:
    from impostor_bench.analysis.data import AnalysisData
    from impostor_bench.analysis.stats.session import Analysis

__all__ = ["MOVES_FILE", "validate_moves", "moves_from_players", "moves_of"]

FIX = "re-export the tables with `impostor export` (docs/data-contract.md, moves.parquet)"


def _bounds(field) -> tuple[Optional[int], Optional[int]]:
    lo = hi = None
    for m in field.metadata:
        lo = getattr(m, "ge", lo) if getattr(m, "ge", None) is not None else lo
        hi = getattr(m, "le", hi) if getattr(m, "le", None) is not None else hi
    return lo, hi


def _kind(field) -> str:
    text = str(field.annotation)
    for kind in ("bool", "int", "float"):
        if kind in text:
            return kind
    return "str"


def validate_moves(moves: pd.DataFrame, name: str = MOVES_FILE) -> pd.DataFrame:
    """``moves`` with its MoveRow columns typed (a copy); ImpostorError naming file and column on a problem."""
    fields = MoveRow.model_fields
    missing = [c for c, f in fields.items() if f.is_required() and c not in moves.columns]
    if missing:
        raise ImpostorError(f"{name}: column '{missing[0]}' is missing"
                            + (f" (also {', '.join(missing[1:4])})" if len(missing) > 1 else "") + f"; fix: {FIX}")
    m = moves.copy()
    for c, f in fields.items():
        if c not in m.columns:
            m[c] = f.default
            continue
        kind, s = _kind(f), m[c]
        nullable = not f.is_required() and f.default is None
        if not nullable and s.isna().any():
            rows = np.flatnonzero(s.isna().to_numpy())[:3].tolist()
            raise ImpostorError(f"{name}: column '{c}': {int(s.isna().sum())} missing value(s) (rows {rows}); fix: {FIX}")
        if kind in ("int", "float"):
            num = pd.to_numeric(s, errors="coerce")
            bad = s.notna().to_numpy() & (num.isna().to_numpy() | ((num % 1 != 0).to_numpy() if kind == "int" else False))
            lo, hi = _bounds(f)
            bad |= num.notna().to_numpy() & (((num < lo).to_numpy() if lo is not None else False)
                                             | ((num > hi).to_numpy() if hi is not None else False))
            if bad.any():
                ex = s[bad].head(3).tolist()
                span = "" if lo is None and hi is None else f" in {lo if lo is not None else '-inf'}..{hi if hi is not None else 'inf'}"
                raise ImpostorError(f"{name}: column '{c}': {int(bad.sum())} value(s) not {'whole numbers' if kind == 'int' else 'numbers'}"
                                    f"{span} (e.g. {ex}); fix: {FIX}")
            m[c] = num.astype("Int64") if kind == "int" and nullable else (num.astype(np.int64) if kind == "int" else num)
        elif kind == "bool":
            ok = s.isna() | s.isin([True, False])
            if not ok.all():
                raise ImpostorError(f"{name}: column '{c}': {int((~ok).sum())} value(s) not true/false "
                                    f"(e.g. {s[~ok].head(3).tolist()}); fix: {FIX}")
            m[c] = s.astype(bool)
    bad_role = ~m["role"].astype(object).isin(["impostor", "majority"])
    if bad_role.any():
        raise ImpostorError(f"{name}: column 'role': {int(bad_role.sum())} value(s) not impostor/majority "
                            f"(e.g. {m['role'][bad_role].head(3).tolist()}); fix: {FIX}")
    dup = m.duplicated(["game_id", "round", "seat"])
    if dup.any():
        raise ImpostorError(f"{name}: columns 'game_id', 'round', 'seat': {int(dup.sum())} repeated row(s) "
                            f"(e.g. {m['game_id'][dup].head(2).tolist()}); fix: one row per game, round and seat")
    return m[MOVE_COLUMNS + [c for c in m.columns if c not in MOVE_COLUMNS]].reset_index(drop=True)


def moves_from_players(players: pd.DataFrame) -> pd.DataFrame:
    """The moves of one-round games: round 1, the four seats' ``players`` values."""
    p = players
    out = pd.DataFrame({c: (p[c] if c in p.columns else MoveRow.model_fields[c].default) for c in MOVE_COLUMNS
                        if c not in ("round", "eliminated", "note")})
    out.insert(MOVE_COLUMNS.index("round"), "round", 1)
    out["eliminated"] = False
    out["note"] = None
    return out[MOVE_COLUMNS].reset_index(drop=True)


def moves_of(data: "AnalysisData | Analysis") -> pd.DataFrame:
    """``data.moves`` when the export has it, else derived from ``players`` (one-round exports);
    the derivation is kept in the analysis session (``Analysis.memo``), never on the input."""
    from impostor_bench.analysis.stats.session import Analysis

    session = Analysis.of(data)
    got = session.moves
    if got is not None:
        return got
    return session.memo(("moves_from_players",), lambda: moves_from_players(session.players))
