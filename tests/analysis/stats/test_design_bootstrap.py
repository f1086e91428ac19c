"""The design bootstrap (experiment-level wild bootstrap) against independent computations:
its variance is the sum of squared experiment residuals of a statsmodels fit of the same
additive logit; the ICC estimator recovers a known ICC; both bootstraps reach the tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from _synth_stats import fast_config
from impostor_bench.analysis.calibration import light_games, light_players, models_frame
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.design import build_design
from impostor_bench.analysis.stats import TABLES, StatsConfig
from impostor_bench.analysis.stats._base import prepared
from impostor_bench.analysis.stats.design_boot import irls_logit, fitted_win_prob, residual_icc
from impostor_bench.analysis.stats.resampling import replicate_totals


def _run(design, seed):
    ro, rw = (np.random.default_rng(s) for s in np.random.SeedSequence([seed, 0]).spawn(2))
    run = design.draw(ro, rw)
    return AnalysisData(games=light_games(design, run), players=light_players(design), models=models_frame(design))


@pytest.fixture(scope="module")
def clustered():
    design = build_design(189, 24, pair_effect_sd=0.8, experiment_effect_sd=0.5, position_effect_pp=0.0,
                          design_seed=3)
    return design, _run(design, 1)


def test_irls_matches_statsmodels_glm():
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(300), rng.normal(size=(300, 3)), rng.integers(0, 2, 300)])
    X = np.column_stack([X, X[:, 4]])  # a duplicated (collinear) column: fitted values still defined
    n = rng.integers(1, 30, 300).astype(float)
    wins = rng.binomial(n.astype(int), 1 / (1 + np.exp(-(X[:, :5] @ [0.2, 0.5, -0.3, 0.1, 0.4])))).astype(float)
    ref = sm.GLM(np.column_stack([wins, n - wins]), X[:, :5], family=sm.families.Binomial()).fit()
    np.testing.assert_allclose(irls_logit(wins, n, X), ref.predict(), atol=1e-8)


def test_design_se_is_the_sum_of_squared_experiment_residuals(clustered):
    """Var* of the overall rate = sum_e r_e^2 / N^2, r_e = sum (y - p) with p from statsmodels."""
    _, data = clustered
    cfg = fast_config(bootstrap_reps=20_000)
    b = TABLES["bootstrap"](data, cfg).set_index("quantity")
    g = data.games.assign(y=(data.games["winner"] == "impostor").astype(int))
    maj = data.players[data.players["role"] == "majority"]
    comp = pd.crosstab(maj["game_id"], maj["model"]).reindex(g["game_id"]).fillna(0)
    comp.columns = [f"maj_{i}" for i in range(comp.shape[1])]
    df = pd.concat([g.reset_index(drop=True), comp.reset_index(drop=True)], axis=1)
    formula = ("y ~ C(mode) + C(difficulty) + C(impostor_model) + C(impostor_seat) + C(impostor_speaking_position) + "
               + " + ".join(comp.columns[1:]))
    p = smf.glm(formula, df, family=sm.families.Binomial()).fit().predict()
    r = (df["y"] - p).groupby(df["experiment_id"]).sum()
    se = math.sqrt((r ** 2).sum()) / len(df)
    row = b.loc["overall_imp_win_rate"]
    assert row["bootstrap"] == "design" and row["ci_low"] == row["ci_low_design"]
    assert row["se_design"] == pytest.approx(se, rel=0.03)
    np.testing.assert_allclose(fitted_win_prob(data, prepared(data)), p, atol=1e-6)
    # with experiment effects the games are not independent: wider than the binomial SE
    R = row["estimate"]
    assert row["se_design"] > 1.1 * math.sqrt(R * (1 - R) / len(df))


def test_design_bootstrap_counts_are_fixed_and_centred(clustered):
    _, data = clustered
    prep = prepared(data)
    x = np.stack([prep.mode == m for m in np.unique(prep.mode)], 1).astype(float)
    wins, n = replicate_totals(data, prep, fast_config(bootstrap_reps=4000), x, "design")
    assert np.all(n == x.sum(0))
    np.testing.assert_allclose(wins.mean(0), (x * prep.y[:, None]).sum(0), rtol=0.01)


@pytest.mark.parametrize("sd", [0.0, 0.6])
def test_residual_icc_recovers_the_simulated_icc(sd):
    """True ICC = between-experiment variance of the win probability / mean Bernoulli variance,
    computed from the simulated design's probabilities (Gauss-Hermite over the experiment effect)."""
    design = build_design(378, 40, experiment_effect_sd=sd, position_effect_pp=0.0, pair_effect_sd=0.5,
                          design_seed=5)
    x, w = np.polynomial.hermite_e.hermegauss(40)
    w = w / w.sum()
    p_u = 1 / (1 + np.exp(-(design.eta[:, None] + sd * x[None, :])))  # (N, nodes)
    exp_mean = pd.DataFrame(p_u).groupby(design.ge).mean().to_numpy()  # (E, nodes)
    between = ((exp_mean - (exp_mean * w).sum(1, keepdims=True)) ** 2 * w).sum(1).mean()
    pbar = design.marginal_win_prob()
    truth = between / (pbar * (1 - pbar)).mean()
    est = np.mean([residual_icc(d, prepared(d))["icc"] for d in (_run(design, s) for s in range(4))])
    assert est == pytest.approx(truth, abs=0.006 + 0.2 * truth), (est, truth)


def test_both_bootstraps_in_tables_and_config_picks_the_main_columns(clustered):
    _, data = clustered
    for b in ("design", "paper"):
        cfg = fast_config(bootstrap=b)
        t = TABLES["bootstrap"](data, cfg)
        assert (t["bootstrap"] == b).all()
        np.testing.assert_array_equal(t["ci_low"], t[f"ci_low_{b}"])
        s = TABLES["speaking_itt"](data, cfg)  # its main CI inverts the randomisation test (issue 39);
        assert s[f"ci_high_{b}"].notna().any() and s[f"ci_low_{b}"].notna().any()  # both bootstraps beside it
        h = TABLES["headline"](data, cfg)
        assert (h["imp_win_ci_bootstrap"] == b).all() and (h["imp_win_ci_boot"] > 0).all()
    with pytest.raises(ValueError, match="StatsConfig.bootstrap"):
        StatsConfig(bootstrap="blocks")
