"""Which games a table is defined for: the paper's four-player, one-impostor game, or any group size.

A table declares it (``@table(..., groups="any")``; the default ``"paper"``): most of the report's
tables follow the paper's analyses, written for four seats and one impostor (seat arrays of four,
one impostor per game).  Such a table given an export that also holds games of other group sizes
(``-T players``/``-T impostors``) is computed on the paper's games alone, with one note saying so;
the per-condition tables (``persistence``) compare group sizes.

Plain pandas over the tables; the session of the restricted games is built once per session.
"""

from __future__ import annotations

import functools
from typing import Callable, Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.core.group import PAPER_IMPOSTORS, PAPER_PLAYERS

#: The values of a table's ``groups`` declaration.
GROUPS = ("paper", "any")
PAPER_GROUP_NOTE = "defined for the four-player, one-impostor game"


def paper_mask(games: pd.DataFrame) -> np.ndarray:
    """(G,) bool: the games of four players with one impostor (older exports: all of them)."""
    mask = np.ones(len(games), bool)
    for col, paper in (("n_players", PAPER_PLAYERS), ("n_impostors", PAPER_IMPOSTORS)):
        if col in games.columns:
            mask &= pd.to_numeric(games[col], errors="coerce").fillna(paper).to_numpy() == paper
    return mask


def _paper_view(analysis: Analysis) -> tuple[Optional[Analysis], int, int]:
    """(a session of the paper's games, or None when there are none; games kept; games left out)."""
    mask = paper_mask(analysis.games)
    kept = int(mask.sum())
    if kept == 0:
        return None, 0, len(mask)
    games = analysis.games.loc[mask].reset_index(drop=True)
    ids = pd.Index(games["game_id"].astype(object))
    players = analysis.players
    players = players.loc[ids.get_indexer(players["game_id"].astype(object)) >= 0].reset_index(drop=True)
    moves = analysis.moves
    if moves is not None:
        moves = moves.loc[ids.get_indexer(moves["game_id"].astype(object)) >= 0].reset_index(drop=True)
    data = AnalysisData(games=games, players=players, models=analysis.models, notes=[],
                        embedder=analysis.embedder, moves=moves)
    return Analysis(data, analysis.config), kept, len(mask) - kept


def for_groups(name: str, groups: str, fn: Callable[[Analysis, StatsConfig], pd.DataFrame]
               ) -> Callable[[Analysis, StatsConfig], pd.DataFrame]:
    """``fn`` as table ``name`` declared for ``groups``: a ``"paper"`` table on data with other group
    sizes is computed on the paper's games (in a session of their own, built once) with one note."""
    if groups not in GROUPS:
        raise ValueError(f"@table({name!r}): groups={groups!r}; use one of {', '.join(GROUPS)}")
    if groups == "any":
        return fn

    @functools.wraps(fn)
    def compute(analysis: Analysis, config: StatsConfig) -> pd.DataFrame:
        if paper_mask(analysis.games).all():
            return fn(analysis, config)
        view, kept, left = analysis.memo(("paper-group view",), lambda: _paper_view(analysis))
        if view is None:  # what a StatsUnavailable would say (not imported: _base imports this module)
            analysis.note(f"{name}: not computed: {PAPER_GROUP_NOTE}; these data hold no such game ({left} of "
                          f"other sizes)")
            return None  # type: ignore[return-value]  # run_table: an empty table
        analysis.note(f"{name}: {PAPER_GROUP_NOTE}: computed on its {kept:,} games, {left:,} game(s) of other "
                      f"group sizes left out")
        got = view.result(name, config)
        for msg in got.notes:
            analysis.note(msg)
        for err in got.errors:
            analysis.error(err)
        return got.frame

    return compute
