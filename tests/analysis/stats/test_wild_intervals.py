"""Intervals of the experiment-level wild bootstrap (``analysis/stats/_wild.py``): no zero-width
interval and none outside the parameter space (issue 39)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.stats._wild import FEW, FLAT, Est, Wild


class _Fixed(Wild):
    """A Wild over a fixed set of experiments without a data session (multipliers drawn here)."""

    def __init__(self, n_exp: int, models, reps: int = 400, seed: int = 0):
        self.models = list(models)
        self.index = pd.Index(self.models, dtype=object)
        self.M = (np.random.default_rng(seed).integers(0, 2, (reps, n_exp)) * 2 - 1).astype(np.float32)
        self.E = n_exp
        self.alpha = 0.05


def _units(values_by_exp, model="a"):
    rows = [{"model": model, "exp": e, "x": v} for e, vals in enumerate(values_by_exp) for v in vals]
    return pd.DataFrame(rows)


def test_no_variation_gives_no_interval_instead_of_zero_width():
    w = _Fixed(6, ["a"])
    flat = w.mean(_units([[100.0, 100.0]] * 6), "x")  # 100% in every experiment
    f = w.frame({"rate": flat})
    assert f.loc["a", "rate"] == 100.0
    assert np.isnan(f.loc["a", "rate_ci_low"]) and np.isnan(f.loc["a", "rate_ci_high"])
    varied = w.mean(_units([[100.0, 0.0]] + [[100.0, 100.0]] * 5), "x")
    f = w.frame({"rate": varied})
    assert f.loc["a", "rate_ci_low"] < f.loc["a", "rate"] <= f.loc["a", "rate_ci_high"] <= 100.0


def test_a_difference_of_percentages_stays_within_plus_minus_100():
    w = _Fixed(4, ["a"])  # four experiments: t(3) makes the raw interval wide
    a = w.mean(_units([[100.0, 100.0], [0.0, 100.0], [100.0, 0.0], [0.0, 0.0]]), "x")
    b = w.mean(_units([[0.0, 0.0], [100.0, 0.0], [0.0, 0.0], [100.0, 100.0]]), "x")
    d = Wild.diff(a, b)
    assert (d.low_bound, d.high_bound) == (-100.0, 100.0)
    f = w.frame({"premium": d})
    assert f.loc["a", "premium_ci_low"] >= -100.0 and f.loc["a", "premium_ci_high"] <= 100.0
    raw_half = 2 * (f.loc["a", "premium_ci_high"] - f.loc["a", "premium"])
    assert raw_half > 0
    assert isinstance(d, Est)


def test_design_fit_is_the_least_squares_fit_of_cell_tier_and_composition():
    from impostor_bench.analysis.stats._wild import design_fit

    rng = np.random.default_rng(3)
    cell, tier = rng.integers(0, 5, 400), rng.integers(0, 3, 400)
    comp = rng.integers(0, 3, (400, 2))
    x = rng.normal(size=400) + cell + 2.0 * tier + comp @ np.array([0.5, -1.0])
    X = np.column_stack([np.eye(5)[cell], np.eye(3)[tier][:, 1:], comp])  # independent: dense dummies, lstsq
    beta, *_ = np.linalg.lstsq(X, x, rcond=None)
    fit, lev = design_fit(x, cell, tier, comp)
    assert np.allclose(fit, X @ beta, atol=1e-8)
    H = X @ np.linalg.pinv(X.T @ X) @ X.T  # the unit-level hat matrix
    assert np.allclose(lev, np.diag(H), atol=1e-10) and abs(lev.sum() - 9) < 1e-8
    fit0, lev0 = design_fit(x, cell)
    assert np.allclose(fit0, pd.Series(x).groupby(cell).transform("mean"))
    assert np.allclose(lev0, 1 / pd.Series(x).groupby(cell).transform("size"))


def test_f_prior_recovers_a_known_prior_of_variances():
    from impostor_bench.analysis.stats._wild import fit_f_prior

    rng = np.random.default_rng(5)
    d0, k0, d = 12.0, 2.5, np.full(4000, 4.0)
    sigma2 = k0 * d0 / rng.chisquare(d0, len(d))  # scaled inverse chi2 prior (limma's model)
    k = sigma2 * rng.chisquare(d) / d
    k0_hat, d0_hat = fit_f_prior(k, d)
    assert abs(k0_hat / k0 - 1) < 0.08 and 8 < d0_hat < 18
    k_equal = 2.5 * rng.chisquare(d) / d  # no spread beyond the df: d0 large (inf in the limit), k0 the pooled value
    k0_eq, d0_eq = fit_f_prior(k_equal, d)
    assert d0_eq > 50 and abs(k0_eq / 2.5 - 1) < 0.05


def test_moderated_interval_covers_at_the_width_of_the_true_sd_with_five_experiments_a_cell():
    """Nine cells of five experiments each (a model in one team mode at 120 x 40), with experiment
    effects: the cell's own t(4) interval is ~1.4x the true SD's width; the moderated one ~1.0-1.1x and
    still covers."""
    from impostor_bench.analysis.stats._wild import moderated_halfwidth

    rng = np.random.default_rng(7)
    cells, per, units, sd_exp, sd_unit = 9, 5, 40, 0.5, 1.0
    true_sd = np.sqrt((sd_exp ** 2 * units + sd_unit ** 2) / units / per)  # of the mean of 200 units
    cover, own_cover, width, own_width = [], [], [], []
    for _ in range(400):
        x = rng.normal(0, sd_exp, (cells, per, 1)) + rng.normal(0, sd_unit, (cells, per, units))
        est = x.mean((1, 2))
        resid = x - est[:, None, None]
        r = resid.sum(2)  # (cells, per) experiment sums: the wild variance is sum r^2 / n^2
        n = per * units
        var_star = (r ** 2).sum(1) / n ** 2
        v0 = (resid ** 2).sum((1, 2)) / n ** 2
        half = moderated_halfwidth(var_star, v0, np.full(cells, per), 0.05)
        own = stats.t.ppf(0.975, per - 1) * np.sqrt(var_star * per / (per - 1))
        cover += list(np.abs(est) <= half)
        own_cover += list(np.abs(est) <= own)
        width += list(half / (1.959964 * true_sd))
        own_width += list(own / (1.959964 * true_sd))
    assert np.mean(cover) >= 0.93 and np.mean(own_cover) >= 0.93
    assert 0.9 <= np.median(width) <= 1.15 < np.median(own_width)


def test_moderation_falls_back_to_each_cells_own_df_when_design_effects_differ():
    from impostor_bench.analysis.stats._wild import moderated_halfwidth

    k = np.array([1.0, 30.0, 1.2, 25.0, 0.9, 40.0, 1.1, 35.0, 0.8])  # two kinds of cells, far apart
    v0, g = np.full(9, 1.0), np.full(9, 5.0)
    var_star = k * v0 * (g - 1) / g
    half = moderated_halfwidth(var_star, v0, g, 0.05)
    own = stats.t.ppf(0.975, 4) * np.sqrt(k)
    assert np.allclose(half, own, rtol=0.25)  # d0 small: near each cell's own interval
    pooled = stats.t.ppf(0.975, 36) * np.sqrt(np.exp(np.log(k).mean()))
    assert half[5] > 2.5 * pooled  # the k = 40 cell is not pulled to a common value


def test_each_interval_left_out_is_counted_with_its_reason():
    w = _Fixed(6, ["a", "b", "c"])
    rows = _units([[100.0, 100.0]] * 6, "a")  # no variation
    rows = pd.concat([rows, _units([[0.0, 100.0]] + [[]] * 5, "b"),  # one experiment
                      _units([[100.0, 0.0], [0.0, 0.0]] * 3, "c")], ignore_index=True)  # a proper interval
    f = w.frame({"rate": w.mean(rows, "x")})
    assert f["rate_ci_low"].isna().tolist() == [True, True, False]
    assert w.not_computed == {FEW: 1, FLAT: 1}


def test_a_relative_change_may_fall_to_minus_100_pct_without_being_flagged():
    """learning's change_30_pct is a relative change (-100% and up), not a share (0-100): the README demo's
    five learning intervals were flagged "outside the parameter's range" for running below 0."""
    from impostor_bench.analysis.report.interval_check import OUT_OF_RANGE, interval_problems

    inf = pd.DataFrame({"table": ["learning", "learning", "team_ballots"],
                        "quantity": ["change_30:team_aware", "change_30:homogeneous", "teammate_premium:a/team_blind/mm"],
                        "estimate": [-68.0, 150.0, 40.0], "ci_low": [-99.9, -98.6, -120.0],
                        "ci_high": [71.4, 230.9, 90.0], "method": ["m"] * 3,
                        "calibration": ["learning:change_30", "learning:change_30", "team_ballots:teammate_premium"]})
    probs = interval_problems(inf)
    assert probs["quantity"].tolist() == ["teammate_premium:a/team_blind/mm"]
    assert probs["interval_check"].tolist() == [OUT_OF_RANGE]
    bad = inf.iloc[[0]].assign(ci_low=-101.0)  # below -100% is still outside
    assert interval_problems(bad)["interval_check"].tolist() == [OUT_OF_RANGE]
