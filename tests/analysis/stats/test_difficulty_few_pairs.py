"""Difficulty terms of ``cluster_robust`` with few word pairs (``_regress.two_way_logit``): the two-way
sandwich V_exp + V_pair - V_game is not positive semi-definite in general, so it is clipped (negative
eigenvalues set to zero, Cameron, Gelbach & Miller 2011) rather than refused, and a tier's contrast
takes its t df from the experiments and pairs of the two tiers it compares, not from all of them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from _synth_stats import fast_config
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.effects import SimModel
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats._regress import psd_clipped

DEMO_MODELS = tuple(SimModel(f"m{i}", "maker", "family", float(10 ** (1 + i / 2)), det=0.5 + 0.1 * i, self_decl=0.2)
                    for i in range(3))
NULL = dict(seat_or=1.0, mode_or=1.0, difficulty_or=1.0, size_or_per_10x=1.0, opponent_or_per_10pp=1.0,
            position_effect_pp=0.0, pair_effect_sd=1.0, experiment_effect_sd=0.5)


def test_clipping_sets_negative_eigenvalues_to_zero_and_leaves_a_psd_matrix_alone():
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))
    indefinite = q @ np.diag([3.0, 1.0, -0.5]) @ q.T
    np.testing.assert_allclose(psd_clipped(indefinite), q @ np.diag([3.0, 1.0, 0.0]) @ q.T, atol=1e-12)
    psd = q @ np.diag([3.0, 1.0, 0.2]) @ q.T
    assert psd_clipped(psd) is psd


def _difficulty_rows(games, players, models):
    t = TABLES["cluster_robust"](AnalysisData(games=games, players=players, models=models), fast_config(strict=False))
    return t[t["term"].str.startswith("difficulty:")]


def test_difficulty_terms_are_computed_at_demo_size_with_the_df_of_the_two_tiers():
    """Three models, 36 experiments of 8 games (the demo's size): before, the covariance was refused as
    "not positive definite" in 4 of these 6 studies; the df were those of all 32 pairs."""
    for rep in range(6):
        g, pl, md = simulate_games(36, 8, design_seed=900 + rep, seed=rep, models=DEMO_MODELS, pair_effect_sd=1.0,
                                   experiment_effect_sd=0.5)
        d = _difficulty_rows(g, pl, md)
        assert len(d) == 3 and d["p"].notna().all() and (d["ci_low"] < d["or"]).all() and (d["or"] < d["ci_high"]).all()
        ref = "easy"
        for _, r in d.iterrows():
            two = g[g["difficulty"].isin([ref, r["term"].split(":", 1)[1]])]
            expected = min(two["experiment_id"].nunique(), two["pair_id"].nunique()) - 1
            assert r["df"] == expected < min(g["experiment_id"].nunique(), g["pair_id"].nunique()) - 1
            assert "two tiers" in r["method"]


@pytest.mark.slow
def test_difficulty_terms_hold_their_size_with_fifteen_pairs_a_tier():
    """Global null, 120 experiments of 15 games (15 word pairs a tier, strong pair effects, redrawn for
    every study: the estimand is over a population of pairs): every study gives the three terms, and they
    reject at most at the 99.5% binomial limit of 5% (measured: 5.0% of 180 at 60 studies)."""
    reps, p, computed = 60, [], 0
    models = tuple(SimModel(f"m{i}", "maker", "family", 10.0, det=0.6, self_decl=0.3) for i in range(9))
    for rep in range(reps):
        g, pl, md = simulate_games(120, 15, design_seed=700 + rep, seed=rep, models=models, **NULL)
        d = _difficulty_rows(g, pl, md)
        computed += int(len(d) == 3 and d["p"].notna().all())
        p += list(d["p"].dropna())
    assert computed == reps
    limit = stats.binom.ppf(0.995, len(p), 0.05) / len(p)
    assert (np.array(p) < 0.05).mean() <= limit


def test_a_joint_test_over_a_singular_clipped_covariance_is_refused_with_its_reason():
    """Clipping can leave the tested block singular; solving with it raised LinAlgError and took the
    whole chi2 table (and the report) down on a 24 x 40 study. The joint test is refused instead."""
    from impostor_bench.analysis.stats._base import StatsUnavailable
    from impostor_bench.analysis.stats._regress import Fit

    cov = np.diag([0.04, 0.09, 0.0])  # the third term's direction clipped to zero
    fit = Fit(names=["const", "a", "b"], coef=np.array([0.1, 0.3, -0.2]), se=np.sqrt(np.diag(cov)), n=100,
              n_clusters=10, df=np.full(3, 9.0), cov=cov)
    with pytest.raises(StatsUnavailable, match="singular"):
        fit.joint(["a", "b"])
    j = fit.joint(["a"])  # a non-singular block is tested as before: F = (b/se)^2 on (1, G-1)
    assert j["stat"] == pytest.approx(0.3 ** 2 / 0.09) and j["p"] == pytest.approx(stats.f.sf(1.0, 1, 9))


def test_the_chi2_table_survives_a_study_whose_two_way_covariance_clips_to_singular():
    g, pl, md = simulate_games(24, 40, design_seed=3, seed=3)
    t = TABLES["chi2"](AnalysisData(games=g, players=pl, models=md), fast_config(strict=True))
    assert {"model_x_outcome", "mode_x_outcome", "difficulty_x_outcome"} <= set(t["test"])
    assert t["p_method"].notna().all()


def _cr2_by_formula(X, y, coef, groups):
    """B (sum_j X_j' W_j^1/2 A_j W_j^-1/2 e_j)(...)' B with A_j = (I - H_jj)^-1/2 (pseudo-inverse where
    singular), H_jj = W_j^1/2 X_j B X_j' W_j^1/2: Bell & McCaffrey's CR2, one cluster at a time."""
    p = 1 / (1 + np.exp(-X @ coef))
    w = p * (1 - p)
    B = np.linalg.inv(X.T @ (X * w[:, None]))
    meat = np.zeros((X.shape[1], X.shape[1]))
    for g in np.unique(groups):
        r = groups == g
        sw = np.sqrt(w[r])
        H = sw[:, None] * (X[r] @ B @ X[r].T) * sw[None, :]
        lam, U = np.linalg.eigh(np.eye(int(r.sum())) - H)
        A = U @ np.diag(np.where(lam > 1e-8, 1 / np.sqrt(np.clip(lam, 1e-8, None)), 0.0)) @ U.T
        u = (X[r] * sw[:, None]).T @ A @ ((y[r] - p[r]) / sw)
        meat += np.outer(u, u)
    return B @ meat @ B


def test_the_cr2_two_way_covariance_is_the_sum_of_three_leverage_corrected_sandwiches():
    """cov_type="CR2": CR2 by experiment + CR2 by pair - HC2 by game, negative eigenvalues clipped,
    against the formula written out cluster by cluster; wider than the CR1 sum on 12 experiments."""
    from impostor_bench.analysis.stats._regress import METHOD_TWO_WAY_CR2, two_way_logit, with_intercept

    rng = np.random.default_rng(3)
    e = np.repeat(np.arange(12), 10)
    pr = np.tile(np.arange(10), 12)
    eta = -0.2 + 0.3 * (pr % 2) + rng.normal(0, 0.5, 12)[e] + rng.normal(0, 0.8, 10)[pr]
    y = (rng.random(len(e)) < 1 / (1 + np.exp(-eta))).astype(float)
    X, names = with_intercept(((pr % 2 == 1)[:, None].astype(float), ["tier"]), (rng.normal(size=(len(e), 1)), ["z"]))
    fit = two_way_logit(y, X, names, e, pr, "test", min_resid_clusters=1, cov_type="CR2")
    expected = psd_clipped(_cr2_by_formula(X, y, fit.coef, e) + _cr2_by_formula(X, y, fit.coef, pr)
                           - _cr2_by_formula(X, y, fit.coef, np.arange(len(y))))
    np.testing.assert_allclose(fit.cov, expected, rtol=1e-8, atol=1e-12)
    assert fit.method == METHOD_TWO_WAY_CR2
    cr1 = two_way_logit(y, X, names, e, pr, "test", min_resid_clusters=1)
    assert np.all(fit.se[1:] > cr1.se[1:]) and "CR1 each" in cr1.method


def test_above_the_cr2_cluster_limit_the_two_way_fit_stays_cr1(monkeypatch):
    from impostor_bench.analysis.stats import _regress

    rng = np.random.default_rng(4)
    e, pr = np.repeat(np.arange(30), 8), np.tile(np.arange(8), 30)
    y = (rng.random(len(e)) < 0.45).astype(float)
    X, names = _regress.with_intercept(((pr % 2 == 1)[:, None].astype(float), ["tier"]))
    monkeypatch.setattr(_regress, "CR2_MAX_CLUSTERS", 20)
    fit = _regress.two_way_logit(y, X, names, e, pr, "test", min_resid_clusters=1, cov_type="CR2")
    cr1 = _regress.two_way_logit(y, X, names, e, pr, "test", min_resid_clusters=1)
    assert fit.method == cr1.method and np.array_equal(fit.cov, cr1.cov)


@pytest.mark.slow
def test_difficulty_terms_hold_their_size_at_demo_size_with_cr2_and_detect_a_planted_tier():
    """The demo's design (3 models, 36 x 8, four tiers of 8 pairs, the expert tier 6 experiments), global
    null with fresh pairs each study: CR1 sandwiches rejected 6.1% of 6,000 p-values (the expert
    tier 6.8%); with CR2 sandwiches the rate stays under the 99.5% binomial limit of 5%. A planted
    expert-vs-easy OR of 6 (pair effects SD 0.5) is found in most studies (32 of 40 when measured; an
    OR of 3 with pair SD 1, 27%: eight pairs a tier carry little information)."""
    p = []
    for rep in range(150):
        g, pl, md = simulate_games(36, 8, design_seed=5_000 + rep, seed=5_000 + rep, models=DEMO_MODELS, **NULL)
        d = _difficulty_rows(g, pl, md)
        assert len(d) == 3 and d["method"].str.contains("CR2 each").all()
        p += list(d["p"])
    limit = stats.binom.ppf(0.995, len(p), 0.05) / len(p)
    assert (np.array(p) < 0.05).mean() <= limit
    planted = {**NULL, "pair_effect_sd": 0.5,
               "difficulty_or": {"easy": 1 / np.sqrt(6), "medium": 1.0, "hard": 1.0, "expert": np.sqrt(6)}}
    found = 0
    for rep in range(30):
        g, pl, md = simulate_games(36, 8, design_seed=6_000 + rep, seed=6_000 + rep, models=DEMO_MODELS, **planted)
        d = _difficulty_rows(g, pl, md).set_index("term")
        found += int(d.loc["difficulty:expert", "p"] < 0.05 and d.loc["difficulty:expert", "or"] > 1)
    assert found >= 18, found
