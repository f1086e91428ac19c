"""Intervals of the experiment-level wild bootstrap (``analysis/stats/_wild.py``): no zero-width
interval and none outside the parameter space (issue 39)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._wild import Est, Wild


class _Fixed(Wild):
    """A Wild over a fixed set of experiments without a data session (multipliers drawn here)."""

    def __init__(self, n_exp: int, models, reps: int = 400, seed: int = 0):
        self.models = list(models)
        self.index = {m: i for i, m in enumerate(self.models)}
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
