"""Judge labels in the analysis: Table 12's Strategy Align. from the players columns
the judge pass fills (``judge_strategy``, ``judge_model``: ``impostor_bench.core.judging.LABEL_COLUMNS``;
``impostor annotate``), and the agreement of a judge
with the hand-coded sample (Cohen's kappa, statsmodels).

Strategy Align. (Table 12 "share of rounds with consistent plan"; M.3, M.5): of the
majority-majority (``mm``) teams of team-mode games whose two members both have a strategy
label other than ``none``, the share where the two labels are equal -- the judge's reading of
"the teammates followed the same plan". It is taken on the teams Collab. Success is taken on
(``team_ballots.team_outcomes``: ``mm`` teams), so Alignment Gap = Strategy Align. - Collab.
Success is a difference of two rates over the same units (M.5 "alignment minus collaboration
success"). Intervals: the experiment-level design bootstrap of the other Table 12 columns.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import note
from impostor_bench.analysis.stats.team_ballots import team_games

NO_LABELS = ("no judge labels in the players table (column judge_strategy empty): run `impostor annotate "
             "--experiment NAME --judge MODEL` (or `inspect score --scorer impostor_bench/strategy_judge`) and "
             "export again")


def has_labels(players: Optional[pd.DataFrame]) -> bool:
    return players is not None and "judge_strategy" in players.columns and players["judge_strategy"].notna().any()


def judges_of(players: pd.DataFrame) -> list[str]:
    """The judge model(s) behind the labels, for the report's note."""
    if "judge_model" not in players.columns:
        return []
    return sorted(str(j) for j in players["judge_model"].dropna().unique())


def strategy_teams(data, prep) -> pd.DataFrame:
    """One row per ``mm`` team with both members labelled (not ``none``): model, mode, exp, ``aligned``."""
    players = data.players
    cols = ["model", "mode", "exp", "aligned"]
    gi = team_games(prep)
    if not has_labels(players) or len(gi) == 0:
        return pd.DataFrame(columns=cols)
    gid = prep.games["game_id"].astype(object).to_numpy()
    lab = players.set_index(["game_id", "seat"])["judge_strategy"]
    lab = lab[~lab.index.duplicated()]
    idx = pd.MultiIndex.from_arrays([np.repeat(gid[gi], 4), np.tile(np.arange(4), len(gi))])
    strat = lab.reindex(idx).to_numpy(object).reshape(len(gi), 4)
    t, imp = prep.team[gi], prep.imp_seat[gi]
    rows = []
    r = np.arange(len(gi))
    for team in ("A", "B"):
        members = np.argsort(np.where(t == team, 0, 1), axis=1, kind="stable")[:, :2]
        a, b = members[:, 0], members[:, 1]
        sa, sb = strat[r, a], strat[r, b]
        ok = (a != imp) & (b != imp) & pd.notna(sa) & pd.notna(sb) & (sa != "none") & (sb != "none")
        rows.append(pd.DataFrame({"model": prep.model[gi, a][ok], "mode": prep.mode[gi][ok],
                                  "exp": prep.exp_code[gi][ok], "aligned": (sa[ok] == sb[ok]).astype(float)}))
    return pd.concat(rows, ignore_index=True)[cols]


def strategy_measures(data, prep, w, collab) -> dict:
    """Strategy Align. and Alignment Gap (Wild estimates) when judge labels exist, else {}."""
    if not has_labels(data.players):
        return {}
    teams = strategy_teams(data, prep)
    if len(teams) == 0:
        note(data, "team_dynamics: judge labels present but no majority-majority team has both members labelled")
        return {}
    note(data, f"team_dynamics: Strategy Align. and Alignment Gap from judge labels by {', '.join(judges_of(data.players))}")
    out = {"strategy_align_pct": w.mean(teams, "aligned", 100)}
    if collab is not None:
        out["alignment_gap_pp"] = w.diff(out["strategy_align_pct"], collab)
    return out


def judge_agreement(hand: pd.DataFrame, judged: pd.DataFrame) -> pd.DataFrame:
    """Cohen's kappa of a judge against hand codes, per label (strategy, trust, coord_intent):
    ``hand`` and ``judged`` have columns ``game``, ``seat`` and the three labels; rows pair up on
    (game, seat). statsmodels' ``cohens_kappa`` (its asymptotic 95% interval, clipped to [-1, 1])."""
    from statsmodels.stats.inter_rater import cohens_kappa

    m = hand.merge(judged, on=["game", "seat"], suffixes=("_hand", "_judge"))
    rows = []
    for lab in ("strategy", "trust", "coord_intent"):
        x, y = m[f"{lab}_hand"].astype(str), m[f"{lab}_judge"].astype(str)
        cats = sorted(set(x) | set(y))
        table = pd.crosstab(pd.Categorical(x, cats), pd.Categorical(y, cats), dropna=False).to_numpy()
        if len(cats) < 2:
            kappa, lo, hi = np.nan, np.nan, np.nan
        else:
            k = cohens_kappa(table)
            kappa, lo, hi = float(k.kappa), max(-1.0, float(k.kappa_low)), min(1.0, float(k.kappa_upp))
        rows.append({"label": lab, "n": len(m), "agreement_pct": 100 * float((x == y).mean()) if len(m) else np.nan,
                     "kappa": kappa, "kappa_ci_low": lo, "kappa_ci_high": hi})
    return pd.DataFrame(rows)


__all__ = ["NO_LABELS", "has_labels", "judges_of", "strategy_teams", "strategy_measures",
           "judge_agreement"]
