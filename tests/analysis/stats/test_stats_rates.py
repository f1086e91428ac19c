"""Design-based rate intervals (impostor_bench.analysis.stats.rates): coverage under experiment clustering,
the parameter space, and the cases with no interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from impostor_bench.analysis.stats.rates import METHOD, METHOD_EXTREME, cluster_rate


def _clustered(rng, n_exp: int, games: int, base: float, sd: float):
    """Games of ``n_exp`` experiments, each with its own N(0, sd^2) logit effect."""
    u = rng.normal(0.0, sd, n_exp)
    g = np.repeat(np.arange(n_exp), games)
    p = 1 / (1 + np.exp(-(np.log(base / (1 - base)) + u[g])))
    return (rng.random(len(g)) < p).astype(float), g


def _truth(base: float, sd: float) -> float:
    """E[expit(logit(base) + u)], u ~ N(0, sd^2), by Gauss-Hermite."""
    x, w = np.polynomial.hermite_e.hermegauss(60)
    return float((w / w.sum() / (1 + np.exp(-(np.log(base / (1 - base)) + sd * x)))).sum())


@pytest.mark.parametrize("n_exp, games", [(12, 40), (40, 20)])
def test_coverage_holds_with_experiment_effects_where_wilson_does_not(n_exp, games):
    rng = np.random.default_rng(7)
    base, sd, reps = 0.45, 0.5, 400
    truth = _truth(base, sd)
    cover = wilson = 0
    for _ in range(reps):
        y, g = _clustered(rng, n_exp, games, base, sd)
        r = cluster_rate(y, np.ones_like(y), g)
        cover += r["ci_low"] <= truth <= r["ci_high"]
        lo, hi = proportion_confint(y.sum(), len(y), method="wilson")
        wilson += lo <= truth <= hi
    # 95% nominal; 400 runs: MC SE ~1.1 points
    assert cover / reps >= 0.92
    assert wilson / reps <= 0.85  # games treated as independent: the old Table 1 interval fails here


def test_interval_is_asymmetric_inside_the_unit_interval_for_rare_rates():
    rng = np.random.default_rng(3)
    y, g = _clustered(rng, 8, 30, 0.03, 0.8)
    r = cluster_rate(y, np.ones_like(y), g)
    assert r["method"] == METHOD
    assert 0 < r["ci_low"] < r["estimate"] < r["ci_high"] < 1
    assert r["estimate"] - r["ci_low"] < r["ci_high"] - r["estimate"]


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_a_rate_of_zero_or_one_gets_clopper_pearson_over_experiments(value):
    g = np.repeat(np.arange(5), 20)
    y = np.full(len(g), value)
    r = cluster_rate(y, np.ones_like(y), g)
    assert r["method"] == METHOD_EXTREME and r["n_clusters"] == 5
    lo, hi = proportion_confint(5 * value, 5, method="beta")
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((lo, hi))
    # wider than the games-as-trials bound (100 games): experiments, not games, are the units
    assert (r["ci_high"] - r["ci_low"]) > 0.4
    assert 1 - (0.025) ** (1 / 5) == pytest.approx(hi if value == 0 else 1 - lo)


def test_one_experiment_prints_no_interval():
    y = np.array([1.0, 0.0, 1.0, 1.0])
    r = cluster_rate(y, np.ones(4), np.zeros(4, int))
    assert r["estimate"] == 0.75 and np.isnan(r["ci_low"]) and np.isnan(r["ci_high"])
    assert r["method"].startswith("not computed")


def test_t_reference_widens_with_few_experiments():
    """Same totals spread over 3 vs 30 experiments: the t(G-1) quantile (4.30 vs 2.05) shows."""
    rng = np.random.default_rng(1)
    y, g = _clustered(rng, 30, 20, 0.5, 0.0)
    wide = cluster_rate(y, np.ones_like(y), g % 3)
    narrow = cluster_rate(y, np.ones_like(y), g)
    assert stats.t.ppf(0.975, 2) / stats.t.ppf(0.975, 29) > 2
    assert wide["n_clusters"] == 3 and narrow["n_clusters"] == 30
    assert (wide["ci_high"] - wide["ci_low"]) > (narrow["ci_high"] - narrow["ci_low"])


def test_equal_rates_in_every_experiment_print_no_zero_width_interval():
    """Every experiment at 2 of 4: the CR1 variance is 0; issue 39 found 0.50 [0.50, 0.50] printed."""
    g = np.repeat(np.arange(6), 4)
    y = np.tile([1.0, 0.0, 1.0, 0.0], 6)
    r = cluster_rate(y, np.ones_like(y), g)
    assert r["estimate"] == 0.5 and np.isnan(r["ci_low"]) and np.isnan(r["ci_high"])
    assert r["method"].startswith("not computed: every experiment has the same rate")
    y[0] = 0.0  # one experiment differs: a proper, non-degenerate interval
    r = cluster_rate(y, np.ones_like(y), g)
    assert r["method"] == METHOD and r["ci_high"] - r["ci_low"] > 0.05
