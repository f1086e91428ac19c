"""A paired head-to-head of two models on the word pairs both played (``impostor compare A B``).

Every model of a sweep plays the same word pairs, so a pair is the natural unit of a paired
comparison: for each pair both models played (as the impostor, for the win rate; in majority
seats with a valid ballot, for detection), the difference of their rates on that pair. The
pair's own difficulty cancels in the difference; what is left varies between pairs, and the
mean difference gets the paired t interval over pairs, ``mean +- t(J-1) s / sqrt(J)``
(games of one pair are not independent: the pair is the unit, never the game).
``tests/analysis/test_paired_compare.py`` checks its coverage and size under a null with
shared pair effects.

"How many more games would resolve it": the pairs J* at which a true difference equal to
the one observed would be detected with ``power`` (two-sided ``alpha``),
``J* = ((z(1-alpha/2) + z(power)) s / |d|)^2``; the pairs more, times the games per pair
in which either model played now.  ``n_a``/``n_b`` count impostor games (win rate) or valid
majority ballots (detection) on the shared pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["PairedDifference", "paired_difference", "pair_rates", "head_to_head", "COLUMNS"]

COLUMNS = ["metric", "model_a", "model_b", "rate_a_pct", "rate_b_pct", "diff_pp", "ci_low", "ci_high", "p",
           "n_pairs", "n_a", "n_b", "verdict", "more_pairs", "more_games"]


@dataclass(frozen=True)
class PairedDifference:
    """Mean over pairs of (rate A - rate B), in proportions, with its paired t interval."""

    diff: float
    ci_low: float
    ci_high: float
    p: float
    n_pairs: int
    sd: float  # SD of the pair-level differences (ddof 1)

    def pairs_needed(self, alpha: float = 0.05, power: float = 0.8) -> Optional[int]:
        """Pairs at which a true difference of ``diff`` is detected with ``power``; None for a
        difference of 0 (no finite design resolves it)."""
        if not self.diff or not np.isfinite(self.sd):
            return None
        z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
        return max(2, math.ceil((z * self.sd / abs(self.diff)) ** 2))


def paired_difference(a: np.ndarray, b: np.ndarray, alpha: float = 0.05) -> PairedDifference:
    """The paired t interval of mean(a - b) over the units (rows) of ``a`` and ``b``."""
    d = np.asarray(a, float) - np.asarray(b, float)
    j = len(d)
    if j < 2:
        return PairedDifference(float(d.mean()) if j else float("nan"), float("nan"), float("nan"), float("nan"), j,
                                float("nan"))
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    se = sd / math.sqrt(j)
    if se == 0:
        return PairedDifference(mean, mean, mean, 1.0 if mean == 0 else 0.0, j, sd)
    half = stats.t.ppf(1 - alpha / 2, j - 1) * se
    p = float(2 * stats.t.sf(abs(mean) / se, j - 1))
    return PairedDifference(mean, mean - half, mean + half, p, j, sd)


def pair_rates(games: pd.DataFrame, players: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per (model, pair_id): impostor wins / impostor games, and correct / valid majority ballots."""
    g = games[["game_id", "pair_id", "impostor_model", "impostor_seat", "winner"]]
    imp = (g.assign(win=(g["winner"] == "impostor").astype(float))
           .groupby(["impostor_model", "pair_id"])["win"].agg(["sum", "count"])
           .rename_axis(["model", "pair_id"]))
    maj = players.loc[(players["role"] == "majority") & players["vote"].notna(), ["game_id", "model", "vote"]]
    maj = maj.merge(g[["game_id", "pair_id", "impostor_seat"]], on="game_id")
    maj = maj.assign(hit=(maj["vote"].astype(int) == maj["impostor_seat"].astype(int)).astype(float))
    det = maj.groupby(["model", "pair_id"])["hit"].agg(["sum", "count"])
    return {"impostor_win": imp, "detection": det}


def _verdict(d: PairedDifference, a: str, b: str) -> str:
    if d.n_pairs < 2 or not np.isfinite(d.ci_low):
        return "not enough shared pairs (need 2 or more)"
    if d.ci_low > 0:
        return f"{a} higher"
    if d.ci_high < 0:
        return f"{b} higher"
    return "unresolved (the interval holds 0)"


def head_to_head(games: pd.DataFrame, players: pd.DataFrame, a: str, b: str, alpha: float = 0.05,
                 power: float = 0.8) -> pd.DataFrame:
    """One row per metric (impostor win, detection): the paired difference A - B over the pairs
    both played, in percentage points, and the games more it would take to resolve an
    unresolved one (``more_games``: 0 when resolved, NaN when no finite number would)."""
    rows = []
    in_game = players.loc[players["model"].isin([a, b]), "game_id"].unique()
    for metric, table in pair_rates(games, players).items():
        ta = table.loc[a] if a in table.index.get_level_values(0) else table.iloc[0:0].droplevel(0)
        tb = table.loc[b] if b in table.index.get_level_values(0) else table.iloc[0:0].droplevel(0)
        shared = ta.index.intersection(tb.index)
        ta, tb = ta.loc[shared], tb.loc[shared]
        d = paired_difference((ta["sum"] / ta["count"]).to_numpy(), (tb["sum"] / tb["count"]).to_numpy(), alpha)
        verdict = _verdict(d, a, b)
        more_pairs: float = float("nan")
        if verdict.startswith("unresolved"):
            need = d.pairs_needed(alpha, power)
            more_pairs = float("nan") if need is None else float(max(0, need - d.n_pairs))
        elif d.n_pairs >= 2:
            more_pairs = 0.0
        per_pair = (games["game_id"].isin(in_game) & games["pair_id"].isin(shared)).sum() / max(len(shared), 1)
        rows.append({
            "metric": metric, "model_a": a, "model_b": b,
            "rate_a_pct": 100 * float(ta["sum"].sum() / ta["count"].sum()) if len(ta) else float("nan"),
            "rate_b_pct": 100 * float(tb["sum"].sum() / tb["count"].sum()) if len(tb) else float("nan"),
            "diff_pp": 100 * d.diff, "ci_low": 100 * d.ci_low, "ci_high": 100 * d.ci_high, "p": d.p,
            "n_pairs": d.n_pairs, "n_a": int(ta["count"].sum()), "n_b": int(tb["count"].sum()), "verdict": verdict,
            "more_pairs": more_pairs, "more_games": float(math.ceil(more_pairs * per_pair)) if np.isfinite(more_pairs) else float("nan"),
        })
    return pd.DataFrame(rows, columns=COLUMNS)
