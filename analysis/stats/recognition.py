"""Table 5: within-model x within-difficulty opponent-baseline logits.

Opponent detection baseline of a game g (experiment e, difficulty d): the mean over
its three majority seats of the detection accuracy of the seat's model at difficulty
d, **cross-fitted**: the experiments are split once into two folds (at random
within each mode x difficulty stratum, seeded by ``config.seed``) and a game's baseline comes
from the valid majority-seat ballots of that model at d in the *other* fold:

    acc_{m,d,-f} = correct_{m,d, fold != f} / valid_{m,d, fold != f}.

Why not leave-experiment-out (the first version): ``(T - t_e) / (V - v_e)`` is a decreasing
function of experiment e's own detection count t_e, so an experiment whose majority detected
well (its impostor lost) got a low baseline: a positive slope under a true null (median OR
per 10 pp 1.98, 24% rejections on 30 null studies at 120 x 40). With a fixed split
the baseline of a game cannot depend on its own experiment's outcomes or shock; the word
pairs are the same in both folds (fixed under the estimand) and shift every model's
baseline at d alike, which the difficulty / cell terms absorb.
A game is dropped when a majority seat's model has no valid ballots at d in the other fold.

* ``scope = cell``: within each (impostor model, difficulty) cell, logit P[impostor win] =
  a + b * baseline (baseline as a proportion) + mode fixed effects;
* ``scope = model`` (difficulty ``ALL``): per impostor model, pooled over difficulties with
  difficulty and mode fixed effects: about four times the experiments of a cell, so it
  holds its level where a cell has too few.
Inference: ``_regress.experiment_logit`` (CR2 by experiment, t with Bell-McCaffrey df); a fit with fewer than
``StatsConfig.min_resid_clusters`` clusters beyond its parameters, a degenerate SE or
separation is not computed (with ``min_clusters = 3`` and the normal, 65% of cells
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
from impostor_bench.analysis.stats._separation import drop_flat_groups
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig


def experiment_folds(prep, seed: int) -> np.ndarray:
    """(E,) fold 0/1 of each experiment: a random half of every mode x difficulty stratum."""
    rng = np.random.default_rng([seed, 39])
    folds = np.zeros(len(prep.exp_names), np.int64)
    strata = pd.Series(np.arange(len(prep.exp_names))).groupby(
        [pd.Series(prep.exp_mode, dtype=object).to_numpy(), pd.Series(prep.exp_difficulty, dtype=object).to_numpy()],
        sort=True)
    for _, idx in strata.indices.items():
        folds[np.asarray(idx)[rng.permutation(len(idx))]] = np.arange(len(idx)) % 2
    return folds


def opponent_baseline_per_game(prep, seed: int = 0) -> np.ndarray:
    """(N,) cross-fitted opponent detection baseline (proportion), NaN if unavailable."""
    maj = prep.present & ~prep.is_imp
    valid = maj & ~np.isnan(prep.vote)
    correct = valid & (prep.vote == prep.imp_seat[:, None])
    gi, seat = np.nonzero(maj)
    fold = experiment_folds(prep, seed)[prep.exp_code[gi]]
    df = pd.DataFrame({"gi": gi, "model": prep.model[gi, seat], "d": prep.difficulty[gi],
                       "f": fold, "valid": valid[gi, seat], "correct": correct[gi, seat]})
    by_mdf = df.groupby(["model", "d", "f"], sort=False)[["valid", "correct"]].sum()
    other = pd.MultiIndex.from_arrays([df["model"], df["d"], 1 - df["f"]])
    rest = by_mdf.reindex(other).fillna(0).to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(rest[:, 0] > 0, rest[:, 1] / rest[:, 0], np.nan)
    s = pd.DataFrame({"gi": gi, "acc": acc})
    g = s.groupby("gi")["acc"].agg(["mean", "count", "size"])
    out = np.full(prep.n, np.nan)
    ok = g["count"] == g["size"]  # every majority seat has a baseline
    out[g.index[ok].to_numpy()] = g.loc[ok, "mean"].to_numpy()
    return out


def by_fold(values: np.ndarray, fold: np.ndarray, preferred) -> tuple[np.ndarray, list, str]:
    """A fixed-effect factor crossed with the fold, as ``_fit_row`` takes it: (values, preferred levels, tag).

    Why: fold A's mean detection shock lowers fold A's impostor win rate and raises fold B's
    baselines (and vice versa), so a comparison *between* folds has a positive slope under a true
    null (the cross-fitted baseline without fold effects: log-OR per 10 pp +0.12 on average).
    Within a fold, a game's baseline and outcome come from disjoint experiments."""
    lab = np.array([f"{v}|fold{f}" for v, f in zip(pd.Series(values, dtype=object), fold)], dtype=object)
    return lab, [f"{v}|fold{k}" for v in preferred for k in (0, 1)], "fe"


def _drop_flat(data, prep, sel: np.ndarray, factor: np.ndarray, label: str, what: str) -> np.ndarray:
    """Games of levels whose outcome is constant carry no information on the slope once the
    level's fixed effect is in (its ML estimate diverges); drop them, the limit of the
    unconditional fit (as conditional logit does). When every level is constant none is dropped:
    the fit then says the baseline or the outcome does not vary."""
    kept, dropped = drop_flat_groups(prep.y, {label: factor}, keep=sel)
    if not kept.any() or not dropped[label]:
        return sel
    note(data, f"opponent_baseline: {what}: {label}(s) {', '.join(map(str, sorted(dropped[label])))} with a constant "
               "outcome dropped (no information once their fixed effects are in)")
    return kept


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
    base = opponent_baseline_per_game(prep, config.seed)
    lost = int(np.isnan(base).sum())
    if lost:
        note(data, f"opponent_baseline: {lost} games dropped (a majority model has no valid ballots at that "
                   "difficulty in the other fold of experiments)")
    rows = []
    diffs = ordered_levels(prep.difficulty, DIFFICULTIES)
    fold = experiment_folds(prep, config.seed)[prep.exp_code]
    mode_f, diff_f = by_fold(prep.mode, fold, MODES), by_fold(prep.difficulty, fold, DIFFICULTIES)
    for model in ordered_levels(prep.imp_model, ()):
        scopes = [("cell", d, (prep.imp_model == model) & (prep.difficulty == d), [mode_f]) for d in diffs]
        if not config.paper_methods:  # difficulty x fold spans the folds; mode x fold would be collinear with it
            scopes.append(("model", ALL, prep.imp_model == model, [diff_f, (prep.mode, list(MODES), "mode")]))
        for scope, d, sel, fes in scopes:
            what = f"{model}/{d}"
            sel = _drop_flat(data, prep, sel & np.isfinite(base), mode_f[0] if scope == "cell" else prep.mode,
                             "mode", what)
            if scope == "model":
                sel = _drop_flat(data, prep, sel, diff_f[0], "difficulty", what)
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
