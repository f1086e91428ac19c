"""Table 5: within-model x within-difficulty opponent-baseline logits.

Opponent detection baseline of a game g (experiment e, difficulty d): the mean over
its three majority seats of the detection accuracy of the seat's model at difficulty
d, estimated leave-experiment-out, i.e. from the valid majority-seat ballots of that
model at d in every experiment except e:

    acc_{m,d,-e} = (correct_{m,d} - correct_{m,d,e}) / (valid_{m,d} - valid_{m,d,e}).

A game is dropped when a majority seat's model has no valid ballots at d outside e.
Within each (impostor model, difficulty) cell: logit P[impostor win] = a + b * baseline
(baseline as a proportion) + mode fixed effects, cluster-robust SEs by experiment_id;
OR per +10 pp = exp(0.1 b) with Wald CI; BH-FDR q across all fitted cells. Cells that
cannot be fitted (too few games or clusters, no baseline variation, a baseline collinear
with the mode effects, separation) have NaN estimates, q and ``significant_bh``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from analysis.stats._base import (DIFFICULTIES, MODES, StatsUnavailable, design_codes, note,
                                  ordered_levels, prepared, table)
from analysis.stats._regress import cluster_logit, with_intercept


def opponent_baseline_per_game(prep) -> np.ndarray:
    """(N,) leave-experiment-out opponent detection baseline (proportion), NaN if unavailable."""
    maj = prep.present & ~prep.is_imp
    valid = maj & ~np.isnan(prep.vote)
    correct = valid & (prep.vote == prep.imp_seat[:, None])
    gi, seat = np.nonzero(maj)
    df = pd.DataFrame({"gi": gi, "model": prep.model[gi, seat], "d": prep.difficulty[gi],
                       "e": prep.exp_code[gi], "valid": valid[gi, seat], "correct": correct[gi, seat]})
    by_mde = df.groupby(["model", "d", "e"], sort=False)[["valid", "correct"]].sum()
    by_md = by_mde.groupby(level=["model", "d"]).sum()
    key_mde = pd.MultiIndex.from_frame(df[["model", "d", "e"]])
    key_md = pd.MultiIndex.from_frame(df[["model", "d"]])
    tot = by_md.reindex(key_md).to_numpy(float)
    own = by_mde.reindex(key_mde).to_numpy(float)
    rest = tot - own
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(rest[:, 0] > 0, rest[:, 1] / rest[:, 0], np.nan)
    s = pd.DataFrame({"gi": gi, "acc": acc})
    g = s.groupby("gi")["acc"].agg(["mean", "count", "size"])
    out = np.full(prep.n, np.nan)
    ok = g["count"] == g["size"]  # every majority seat has a baseline
    out[g.index[ok].to_numpy()] = g.loc[ok, "mean"].to_numpy()
    return out


@table("opponent_baseline")
def opponent_baseline(data, config) -> pd.DataFrame:
    prep = prepared(data, need_players=True)
    base = opponent_baseline_per_game(prep)
    lost = int(np.isnan(base).sum())
    if lost:
        note(data, f"opponent_baseline: {lost} games dropped (a majority model has no valid ballots at that "
                   "difficulty outside the game's own experiment)")
    rows = []
    for model in ordered_levels(prep.imp_model, ()):
        for d in ordered_levels(prep.difficulty, DIFFICULTIES):
            sel = (prep.imp_model == model) & (prep.difficulty == d) & np.isfinite(base)
            # A mode whose games all end the same way carries no information on the slope once
            # its fixed effect is in (the ML estimate of that FE diverges); drop those games,
            # which is the limit of the unconditional fit (as conditional logit does).
            modes_in = pd.Series(prep.y[sel]).groupby(prep.mode[sel]).agg(["min", "max"])
            flat = modes_in.index[modes_in["min"] == modes_in["max"]]
            if len(flat) and len(flat) < len(modes_in):
                note(data, f"opponent_baseline: cell {model}/{d}: mode(s) {', '.join(map(str, flat))} with a "
                           "constant outcome dropped (no information once mode FEs are in)")
                sel &= ~np.isin(prep.mode, list(flat))
            row = {"model": model, "difficulty": d, "n": int(sel.sum())}
            try:
                if sel.sum() < config.min_cell_games:
                    raise StatsUnavailable(f"{int(sel.sum())} games (< {config.min_cell_games})")
                x = base[sel]
                if np.ptp(x) < 1e-12:
                    raise StatsUnavailable("opponent baseline does not vary")
                blocks = [(x, ["baseline"])]
                lv = ordered_levels(prep.mode[sel], MODES)
                if len(lv) > 1:
                    blocks.append(design_codes(prep.mode[sel], levels=lv))
                X, names = with_intercept(*blocks)
                fit = cluster_logit(prep.y[sel], X, names, prep.exp_code[sel], f"{model}/{d}",
                                    config.min_clusters)
                w = fit.wald("baseline", config.alpha, scale=0.1)
                rows.append({**row, "or_per_10pp": w["or"], "ci_low": w["ci_low"], "ci_high": w["ci_high"],
                             "p": w["p"], "coef": w["coef"] / 0.1, "se": w["se"] / 0.1,
                             "n_clusters": fit.n_clusters, "baseline_mean": float(x.mean()),
                             "baseline_sd": float(x.std())})
            except StatsUnavailable as e:
                note(data, f"opponent_baseline: cell {model}/{d} not fitted: {e}")
                rows.append({**row, "or_per_10pp": np.nan, "p": np.nan})
    out = pd.DataFrame(rows)
    if len(out) == 0:
        return out
    out["q"] = np.nan
    ok = out["p"].notna().to_numpy()
    if ok.any():
        out.loc[ok, "q"] = multipletests(out.loc[ok, "p"].to_numpy(float), alpha=config.alpha, method="fdr_bh")[1]
    # A cell that could not be fitted has no test: NA, not False ("tested, not significant").
    out["significant_bh"] = pd.array([pd.NA if np.isnan(q) else bool(q < config.alpha) for q in out["q"]],
                                     dtype="boolean")
    return out
