"""Table 5: within-model x within-difficulty opponent-baseline logits.

Opponent detection baseline of a game g (experiment e, difficulty d): the mean over
its three majority seats of the detection accuracy of the seat's model at difficulty
d, estimated leave-experiment-out, i.e. from the valid majority-seat ballots of that
model at d in every experiment except e:

    acc_{m,d,-e} = (correct_{m,d} - correct_{m,d,e}) / (valid_{m,d} - valid_{m,d,e}).

A game is dropped when a majority seat's model has no valid ballots at d outside e.

* ``scope = cell``: within each (impostor model, difficulty) cell, logit P[impostor win] =
  a + b * baseline (baseline as a proportion) + mode fixed effects;
* ``scope = model`` (difficulty ``ALL``): per impostor model, pooled over difficulties with
  difficulty and mode fixed effects: about four times the experiments of a cell, so it
  holds its level where a cell has too few.
Inference: ``_regress.experiment_logit`` (CR2 by experiment, t with Bell-McCaffrey df); a fit with fewer than
``StatsConfig.min_resid_clusters`` clusters beyond its parameters, a degenerate SE or
separation is not computed (issue 26: with ``min_clusters = 3`` and the normal, 65% of cells
rejected a true null and an SE of 1e-13 printed OR 3551.57 [3551.57, 3551.57], p = 0).
``StatsConfig.paper_methods`` restores the paper's per-cell cluster-robust Wald (normal,
>= 3 clusters). OR per +10 pp = exp(0.1 b); q = BH-FDR over all fitted rows (both scopes).
Rows that cannot be fitted have NaN estimates, q and ``significant_bh`` and a note.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from impostor_bench.analysis.stats._base import (DIFFICULTIES, MODES, StatsUnavailable, design_codes, note,
                                  ordered_levels, prepared, table)
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats._base import ALL
from impostor_bench.analysis.stats._regress import fit_columns, inference_fit, with_intercept
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig


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


def _drop_flat(data, prep, sel: np.ndarray, factor: np.ndarray, label: str, what: str) -> np.ndarray:
    """Games of levels whose outcome is constant carry no information on the slope once the
    level's fixed effect is in (its ML estimate diverges); drop them, the limit of the
    unconditional fit (as conditional logit does)."""
    levels = pd.Series(prep.y[sel]).groupby(factor[sel]).agg(["min", "max"])
    flat = levels.index[levels["min"] == levels["max"]]
    if len(flat) and len(flat) < len(levels):
        note(data, f"opponent_baseline: {what}: {label}(s) {', '.join(map(str, flat))} with a constant outcome "
                   "dropped (no information once their fixed effects are in)")
        sel = sel & ~np.isin(factor, list(flat))
    return sel


def _fit_row(data, prep, base, sel, config, what: str, fes) -> dict:
    if sel.sum() < config.min_cell_games:
        raise StatsUnavailable(f"{int(sel.sum())} games (< {config.min_cell_games})")
    x = base[sel]
    if np.ptp(x) < 1e-12:
        raise StatsUnavailable("opponent baseline does not vary")
    blocks = [(x, ["baseline"])]
    for vals, pref, tag in fes:
        lv = ordered_levels(vals[sel], pref)
        if len(lv) > 1:
            mat, nm = design_codes(vals[sel], levels=lv)
            blocks.append((mat, [f"{tag}:{n}" for n in nm]))
    X, names = with_intercept(*blocks)
    fit = inference_fit(prep.y[sel], X, names, prep.exp_code[sel], what, config, paper="cluster",
                        terms=["baseline"])
    w = fit.wald("baseline", config.alpha, scale=0.1)
    return {"or_per_10pp": w["or"], "ci_low": w["ci_low"], "ci_high": w["ci_high"], "p": w["p"],
            "coef": w["coef"] / 0.1, "se": w["se"] / 0.1, **fit_columns(fit),
            "baseline_mean": float(x.mean()), "baseline_sd": float(x.std())}


@table("opponent_baseline",
    title="Opponent-baseline regressions within model x difficulty (Table 5)",
    section="paper",
    inference=(
        infer("or_per_10pp", ("model", "difficulty"), "or_per_10pp", ("ci_low", "ci_high"), "p",
          family="opponent_baseline"),
    ),
)
def opponent_baseline(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data, need_players=True)
    base = opponent_baseline_per_game(prep)
    lost = int(np.isnan(base).sum())
    if lost:
        note(data, f"opponent_baseline: {lost} games dropped (a majority model has no valid ballots at that "
                   "difficulty outside the game's own experiment)")
    rows = []
    diffs = ordered_levels(prep.difficulty, DIFFICULTIES)
    for model in ordered_levels(prep.imp_model, ()):
        scopes = [("cell", d, (prep.imp_model == model) & (prep.difficulty == d), [(prep.mode, MODES, "mode")])
                  for d in diffs]
        if not config.paper_methods:
            scopes.append(("model", ALL, prep.imp_model == model,
                           [(prep.difficulty, DIFFICULTIES, "difficulty"), (prep.mode, MODES, "mode")]))
        for scope, d, sel, fes in scopes:
            what = f"{model}/{d}"
            sel = _drop_flat(data, prep, sel & np.isfinite(base), prep.mode, "mode", what)
            if scope == "model":
                sel = _drop_flat(data, prep, sel, prep.difficulty, "difficulty", what)
            row = {"model": model, "difficulty": d, "scope": scope, "n": int(sel.sum())}
            try:
                rows.append({**row, **_fit_row(data, prep, base, sel, config, what, fes)})
            except StatsUnavailable as e:
                note(data, f"opponent_baseline: {scope} {what} not fitted: {e}")
                rows.append({**row, "or_per_10pp": np.nan, "p": np.nan, "method": f"not computed: {e}"})
    out = pd.DataFrame(rows)
    if len(out) == 0:
        return out
    out["q"] = np.nan
    ok = out["p"].notna().to_numpy()  # one family: cells and pooled rows (conservative: more tests)
    if ok.any():
        out.loc[ok, "q"] = multipletests(out.loc[ok, "p"].to_numpy(float), alpha=config.alpha, method="fdr_bh")[1]
    # A row that could not be fitted has no test: NA, not False ("tested, not significant").
    out["significant_bh"] = pd.array([pd.NA if np.isnan(q) else bool(q < config.alpha) for q in out["q"]],
                                     dtype="boolean")
    return out
