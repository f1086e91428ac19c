"""Cross-model correlations: exact permutation p-values for few models, one row per identical measure."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from _synth_stats import fast_config, shared_ballot
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.correlations import EXACT_MAX_N, correlate, permutation_p


def brute_force_p(x, y, corr) -> float:
    """Two-sided exact p by enumerating every pairing with itertools: P(|r*| >= |r|)."""
    obs = abs(corr(x, y))
    hits = total = 0
    for perm in itertools.permutations(y):
        total += 1
        hits += abs(corr(x, np.array(perm))) >= obs - 1e-12
    return hits / total


def spearman(a, b):
    return stats.spearmanr(a, b).statistic


def pearson(a, b):
    return stats.pearsonr(a, b).statistic


def test_perfect_rank_agreement_of_six_models_is_2_over_720():
    x = np.array([3.0, 1.0, 4.0, 1.5, 9.0, 2.6])
    p, method = permutation_p(x, 2 * x + 1, rank=True)
    assert (p, method) == (pytest.approx(2 / 720), "exact")
    # scipy's asymptotic p is 0 here: the reason for the exact test
    assert stats.spearmanr(x, 2 * x + 1).pvalue == 0.0
    r = correlate(x, -x ** 3)
    assert r["spearman_rho"] == pytest.approx(-1) and r["spearman_p"] == pytest.approx(2 / 720)


@pytest.mark.slow
@pytest.mark.parametrize("n, seed", [(6, 0), (7, 1), (7, 2)])
def test_exact_p_matches_itertools_enumeration(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = 0.6 * x + rng.normal(size=n)
    assert permutation_p(x, y, rank=True) == (pytest.approx(brute_force_p(x, y, spearman), abs=1e-12), "exact")
    assert permutation_p(x, y, rank=False)[0] == pytest.approx(brute_force_p(x, y, pearson), abs=1e-12)


def test_exact_p_with_tied_values_matches_enumeration():
    x = np.array([1.0, 2.0, 2.0, 3.0, 5.0, 5.0, 6.0])
    y = np.array([2.0, 1.0, 4.0, 4.0, 3.0, 7.0, 6.0])
    assert permutation_p(x, y, rank=True)[0] == pytest.approx(brute_force_p(x, y, spearman), abs=1e-12)


def test_exact_p_agrees_with_scipy_permutation_test_where_scipy_is_fast():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=6), rng.normal(size=6)
    res = stats.permutation_test((x, y), lambda a, b, axis=-1: np.abs(stats.pearsonr(a, b, axis=axis).statistic),
                                 permutation_type="pairings", vectorized=True, alternative="greater",
                                 n_resamples=np.inf)
    assert permutation_p(x, y, rank=False)[0] == pytest.approx(res.pvalue, abs=1e-12)


def test_more_models_than_exact_limit_use_seeded_monte_carlo():
    rng = np.random.default_rng(3)
    x = rng.normal(size=EXACT_MAX_N + 3)
    y = 0.5 * x + rng.normal(size=x.size)
    p, method = permutation_p(x, y, rank=True, reps=4_999, seed=7)
    assert method == "monte_carlo_4999"
    assert permutation_p(x, y, rank=True, reps=4_999, seed=7)[0] == p  # reproducible
    assert p == pytest.approx(stats.spearmanr(x, y).pvalue, abs=0.03)  # n = 12: close to asymptotic


def test_exact_p_is_calibrated_under_the_null():
    """Under independence an exact test rejects at most alpha (here: P(p <= 0.05) over 400 draws of 7 models)."""
    rng = np.random.default_rng(11)
    ps = np.array([permutation_p(rng.normal(size=7), rng.normal(size=7), rank=True)[0] for _ in range(400)])
    rate = float(np.mean(ps <= 0.05))
    assert rate <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / 400)  # 0.077
    assert rate >= 0.01


def test_proportional_measures_are_reported_once():
    data = shared_ballot()
    c = TABLES["correlations"](data, fast_config())
    h = TABLES["headline"](data, fast_config())
    # centrality = 2 x reach (and brokerage = reach) over models: one row for all three
    assert np.allclose(h["centrality"], 2 * h["reach"])
    coal = c[c["y"] == "coal_eff_pct"]
    assert list(coal["x"]) == ["centrality"]
    assert coal["x_equivalent"].iloc[0] == "reach, brokerage"
    assert not c.duplicated(subset=["y", "pearson_r", "spearman_rho"]).any()
    assert (c["p_method"] == "exact").all() and (c["n"] <= EXACT_MAX_N).all()
    # the kept row equals what each folded measure would give
    for x in ("reach", "centrality"):
        r = correlate(h[x], h["coal_eff_pct"])
        assert r["spearman_rho"] == pytest.approx(coal["spearman_rho"].iloc[0])
        assert r["pearson_r"] == pytest.approx(coal["pearson_r"].iloc[0])
    # no p-value or interval by default (models share games; issue 26): only with paper_methods
    assert coal["spearman_p"].isna().all() and coal["pearson_ci_low"].isna().all()
    assert coal["inference"].str.startswith("not computed").all()
    paper = TABLES["correlations"](shared_ballot(), fast_config(paper_methods=True))
    pc = paper[paper["y"] == "coal_eff_pct"]
    assert pc["spearman_p"].iloc[0] == pytest.approx(correlate(h["centrality"], h["coal_eff_pct"])["spearman_p"])
    assert pc["inference"].str.startswith("paper").all()
    assert any("reported once" in n for n in data.notes)


def test_measures_that_differ_are_not_folded():
    data = shared_ballot()
    c = TABLES["correlations"](data, fast_config())
    det = c[c["x"] == "det_acc_pct"]
    assert set(det["y"]) == {"imp_win_pct", "maj_win_pct", "maj_win_games_pct"}
    assert det["x_equivalent"].isna().all()
