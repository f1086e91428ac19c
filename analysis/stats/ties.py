"""Tables 7-9 (Appendices E-I): top-of-ballot ties and symmetric tie-breakers.

Recomputed from the logged valid ballots in players.parquet (never from the
tie_k / p_imp_* extras):
* counts_c = number of valid ballots naming seat c (a self-vote is no vote: the parser records it
  as ``self_vote`` without a seat, as the engine counts it);
* a game is *affected* only if no player self-declared and there is no conviction
  (>= 2 valid ballots by non-impostor seats naming the impostor);
* top-of-ballot tie: the largest count (> 0) is shared by k >= 2 seats; k in {2, 3, 4}.
  (Strict plurality, impostor votes > all other votes, cannot co-occur with a tie.)
Expected impostor win per game:
* default      = the logged winner (ties go to the impostor under A.1);
* Sym-candidate = 1 - 1/k if the impostor is among the k tied seats, else 1 (tie games);
* Sym-side      = 1/2 (tie games);
non-tie games keep the logged outcome under every policy. Rates are means over
games in %, deltas in pp relative to default.

The tables are defined on one-round games (Appendix F). A multi-round game's players rows hold
its first round, while its logged winner is the whole game's (docs/data-contract.md); mixing the
two would let a symmetric rule "raise" the impostor's win. So every policy of such a game,
Default included, is its first round decided by the one-round rules (A.1 order: a
self-declaration decides as logged, since it ends the game in round 1; else a conviction or a
strict plurality is a majority win, anything else an impostor win): the same ballots under three
rules, as on one-round games.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import ALL, DIFFICULTIES, MODES, N_SEATS, note, ordered_levels, prepared, table
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig


def game_ties(prep) -> pd.DataFrame:
    """Per-game tie structure and expected impostor win under the three policies."""
    v = prep.vote
    valid = ~np.isnan(v)
    counts = np.stack([(valid & (v == c)).sum(1) for c in range(N_SEATS)], axis=1)
    imp_col = prep.imp_seat[:, None]
    seats = np.arange(N_SEATS)[None, :]
    on_imp_nonimp = (valid & (v == imp_col) & (seats != imp_col)).sum(1)
    conviction = on_imp_nonimp >= 2
    any_decl = prep.self_decl.any(1)
    top = counts.max(1)
    tied = (counts == top[:, None]) & (top[:, None] > 0)
    k_raw = tied.sum(1)
    tie = (k_raw >= 2) & ~conviction & ~any_decl
    k = np.where(tie, k_raw, 0)
    imp_in = tie & tied[np.arange(prep.n), prep.imp_seat]
    y = prep.y.astype(float)
    multi = first_round_only(prep)
    if multi.any():
        on_imp = (valid & (v == imp_col)).sum(1)
        majority_round1 = conviction | (on_imp > valid.sum(1) - on_imp)
        y = np.where(multi & ~any_decl, np.where(majority_round1, 0.0, 1.0), y)
    p_cand = np.where(tie, np.where(imp_in, 1 - 1 / np.maximum(k, 1), 1.0), y)
    p_side = np.where(tie, 0.5, y)
    return pd.DataFrame({
        "mode": prep.mode, "difficulty": prep.difficulty, "tie": tie, "k": k, "impostor_in_tie": imp_in,
        "p_default": y, "p_sym_cand": p_cand, "p_sym_side": p_side,
        "conviction": conviction, "self_declared": any_decl, "first_round_only": multi,
    })


def first_round_only(prep) -> np.ndarray:
    """(N,) bool: games of more than one round (``max_rounds`` > 1, else ``rounds_played`` > 1),
    whose one-round tables use the first round only."""
    g = prep.games
    for col in ("max_rounds", "rounds_played"):
        if col in g.columns:
            return (pd.to_numeric(g[col], errors="coerce").fillna(1) > 1).to_numpy()
    return np.zeros(prep.n, bool)


def _ties_frame(data):
    prep = prepared(data, need_players=True)
    t = game_ties(prep)
    bad = int((t["tie"] & (t["p_default"] == 0) & ~t["first_round_only"]).sum())
    multi = int(t["first_round_only"].sum())
    if multi:
        note(data, f"ties (Tables 7-9): {multi:,} multi-round games enter by their first round only, every policy "
                   "(Default included) decided by the one-round rules on the first-round ballots; their final "
                   "winners are in the round tables")
    if bad:
        note(data, f"ties: {bad} games have a top-of-ballot tie in the logged ballots but a majority win "
                   "logged; their default outcome is kept as logged")
    return t


def _mode_order(values):
    return ordered_levels(values, MODES)


@table("tie_sizes",
    title="Tie-size distribution by mode (Table 7)",
    section="paper",
)
def tie_sizes(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    t = _ties_frame(data)
    rows = []
    for mode in _mode_order(t["mode"]) + [ALL]:
        s = t if mode == ALL else t[t["mode"] == mode]
        s = s[s["tie"]]
        n = len(s)
        rows.append({"mode": mode, "ties": n, "k2": int((s["k"] == 2).sum()), "k3": int((s["k"] == 3).sum()),
                     "k4": int((s["k"] == 4).sum()),
                     "impostor_in_tie_pct": 100 * s["impostor_in_tie"].mean() if n else np.nan,
                     "games": int((t["mode"] == mode).sum()) if mode != ALL else len(t),
                     "tie_rate_pct": 100 * n / max(len(t) if mode == ALL else int((t["mode"] == mode).sum()), 1),
                     "first_round_only": int((t if mode == ALL else t[t["mode"] == mode])["first_round_only"].sum())})
    return pd.DataFrame(rows)


def _policy_row(s: pd.DataFrame) -> dict:
    d, c, sd = (100 * s[col].mean() for col in ("p_default", "p_sym_cand", "p_sym_side"))
    return {"default": d, "sym_cand": c, "sym_side": sd, "delta_cand": c - d, "delta_side": sd - d,
            "ties": int(s["tie"].sum()), "games": len(s), "first_round_only": int(s["first_round_only"].sum())}


@table("tiebreak_mode",
    title="Symmetric tie-breakers by mode (Table 8)",
    section="paper",
    figures={"tiebreak_deltas": "robustness"},
)
def tiebreak_mode(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    t = _ties_frame(data)
    rows = [{"mode": m, **_policy_row(t[t["mode"] == m])} for m in _mode_order(t["mode"])]
    rows.append({"mode": ALL, **_policy_row(t)})
    return pd.DataFrame(rows)


@table("tiebreak_mode_difficulty",
    title="Symmetric tie-breakers by mode and difficulty (Table 9)",
    section="paper",
)
def tiebreak_mode_difficulty(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    t = _ties_frame(data)
    rows = []
    for d in ordered_levels(t["difficulty"], DIFFICULTIES):
        for m in _mode_order(t["mode"]):
            s = t[(t["mode"] == m) & (t["difficulty"] == d)]
            if len(s):
                rows.append({"mode": m, "difficulty": d, **_policy_row(s)})
    return pd.DataFrame(rows)
