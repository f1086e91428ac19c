"""The (game, seat) arrays of the prepared view: player rows scattered into (N, 4) arrays.

Kept apart from :mod:`impostor_bench.analysis.stats._base` (which calls it) so that each reads at
once; problems found go to ``notes``, which the caller adds to ``data.notes``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from impostor_bench.analysis.ballots import ballot_classes, invalid_ballot_mask
from impostor_bench.analysis.data import index_positions

__all__ = ["N_SEATS", "str_col", "player_slots", "attach_seat_arrays"]

N_SEATS = 4


def str_col(s: pd.Series) -> np.ndarray:
    return s.astype(object).where(s.notna(), None).to_numpy(dtype=object)


def player_slots(g: pd.DataFrame, p: pd.DataFrame, notes: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """Player rows that belong to a game and seat, once each, with their flat (game, seat) slot."""
    gi = index_positions(pd.Index(g["game_id"].astype(object)), p["game_id"])
    seat = pd.to_numeric(p["seat"], errors="coerce").to_numpy(dtype=float)
    ok = (gi >= 0) & np.isin(seat, [0, 1, 2, 3])
    if (~ok).any():
        notes.append(f"players: {int((~ok).sum())} rows without a matching game or with a bad seat ignored")
    gi, seat = gi[ok], seat[ok].astype(np.int64)
    p = p.loc[ok].reset_index(drop=True)
    flat = gi * N_SEATS + seat
    dup = pd.Series(flat).duplicated().to_numpy()
    if dup.any():
        notes.append(f"players: {int(dup.sum())} duplicated (game, seat) rows ignored")
        keep = ~dup
        p, flat = p.loc[keep].reset_index(drop=True), flat[keep]
    return p, flat


def attach_seat_arrays(prep: Any, p: pd.DataFrame, flat: np.ndarray, notes: list[str]) -> None:
    """Set ``prep``'s (game, seat) arrays from the player columns; the games table decides who the impostor is."""
    n = prep.n
    shape = (n, N_SEATS)

    def scatter(values, fill, dtype):
        arr = np.full(n * N_SEATS, fill, dtype=dtype)
        arr[flat] = values
        return arr.reshape(shape)

    present = scatter(True, False, bool)
    vote = pd.to_numeric(p["vote"], errors="coerce").to_numpy(dtype=float, copy=True)  # a float column gives a read-only view
    vote[~np.isin(vote, [0, 1, 2, 3])] = np.nan
    classes = ballot_classes(p)  # derived for exports without the column
    vote[invalid_ballot_mask(classes)] = np.nan  # an invalid ballot never counts, even if vote is filled
    prep.present = present
    prep.vote = scatter(vote, np.nan, float)
    prep.ballot_class = scatter(classes.to_numpy(dtype=object), "missing", object)
    prep.self_decl = scatter(p["self_declared"].astype(object).fillna(False).to_numpy(dtype=bool), False, bool)
    prep.is_imp = scatter((p["role"].astype(object) == "impostor").to_numpy(dtype=bool), False, bool)
    prep.model = scatter(str_col(p["model"]), None, object)
    prep.team = scatter(str_col(p["team"]) if "team" in p.columns else None, None, object)
    if "speaking_position" in p.columns:
        prep.speak_pos = scatter(pd.to_numeric(p["speaking_position"], errors="coerce").to_numpy(float),
                                 np.nan, float)
    if "word_guess" in p.columns:
        prep.word_guess = scatter(str_col(p["word_guess"]), None, object)
    if "description" in p.columns:
        prep.description = scatter(str_col(p["description"]), None, object)
    incomplete = int((~present.all(axis=1)).sum())
    if incomplete:
        notes.append(f"players: {incomplete} games lack some of their four player rows "
                   "(missing seats count as invalid ballots)")
    # role column vs impostor_seat: the games table is authoritative for who the impostor is
    role_seat = np.zeros(shape, bool)
    role_seat[np.arange(n), prep.imp_seat] = True
    mismatch = int(((prep.is_imp != role_seat) & present).any(axis=1).sum())
    if mismatch:
        notes.append(f"players: role disagrees with games.impostor_seat in {mismatch} games; "
                   "impostor_seat is used")
    prep.is_imp = role_seat
