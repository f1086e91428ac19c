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
