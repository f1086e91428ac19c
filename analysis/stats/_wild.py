"""Experiment-level intervals for means over any unit (pairs, ballots, descriptions).

The design bootstrap's multipliers (:func:`impostor_bench.analysis.stats.design_boot.multipliers`, one
Rademacher draw per experiment and replicate) perturb each experiment's sum of residuals
about the group mean: ``mean* = mean + sum_e xi_e r_e / n`` with
``r_e = sum_{i in e} (x_i - mean)``. Experiments are the independent units, whatever the
unit of the mean; every column of a table uses the same draw, so differences and ratios
of columns get their intervals from the replicate arrays (:meth:`Wild.diff`, :meth:`Wild.ratio`).

Interval (issue 26): ``estimate +- t(G-1) sqrt(G/(G-1)) SD*`` with G the experiments behind
the estimate (for a difference or ratio, the fewer of its two parts'), not the percentile of
the replicates: a model's mean in one team mode rests on ~5 experiments at 120 x 40, where
the percentile of 2^5 sign patterns covered 74-87% in the calibration matrix. NaN below two
experiments, and NaN (not a zero-width interval) when the replicates do not vary: every
experiment's residual is 0, e.g. a rate of 0 or 100% in every experiment, so there is nothing
to estimate the SD from (issue 39). A mean's interval stays in the range of its values, a
difference's in the range of differences (a teammate premium within [-100, 100] pp).
"""

from __future__ import annotations

import warnings

from typing import NamedTuple

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats.design_boot import multipliers, t_halfwidth


class Est(NamedTuple):
    """Estimates (G,), replicates (R, G) and experiments behind each estimate (G,)."""

    est: np.ndarray
    reps: np.ndarray
    n_exp: np.ndarray
    low_bound: float = -np.inf  # the range of the unit values: a mean's interval stays inside it
    high_bound: float = np.inf


class Wild:
    """Means per model with replicate arrays; ``models`` fixes the row order."""

    def __init__(self, data, prep, config, models):
        self.models = list(models)
        self.index = {m: i for i, m in enumerate(self.models)}
        self.M = multipliers(data, prep, config)
        self.E = len(prep.exp_names)
        self.alpha = config.alpha

    def mean(self, df: pd.DataFrame, col: str, scale: float = 1.0):
        """(estimate (G,), replicates (R, G)) of ``scale * mean(col)`` per model; NaN rows dropped.

        Residuals are taken about the model's mean within its mode (column ``mode``): the mode
        mix of a model's units is fixed by the design, not sampled (as in ``design_boot``)."""
        G = len(self.models)
        if len(df) == 0:
            return Est(np.full(G, np.nan), np.full((self.M.shape[0], G), np.nan, np.float32), np.zeros(G))  # no units
        x = pd.to_numeric(df[col], errors="coerce").to_numpy(float) * scale
        g = df["model"].map(self.index).to_numpy(float)
        ok = np.isfinite(x) & np.isfinite(g)
        x, g, e = x[ok], g[ok].astype(np.int64), df["exp"].to_numpy(np.int64)[ok]
        n = np.bincount(g, minlength=G).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.bincount(g, weights=x, minlength=G) / n
        strata = pd.factorize(df["mode"].astype(object).fillna("").to_numpy()[ok])[0] if "mode" in df else np.zeros(len(x), np.int64)
        cell = g * (int(strata.max()) + 1 if len(strata) else 1) + strata
        cmean = np.bincount(cell, weights=x) / np.maximum(np.bincount(cell), 1)
        r = np.bincount(e * G + g, weights=x - cmean[cell], minlength=self.E * G).reshape(self.E, G)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = est[None, :] + (self.M @ r.astype(np.float32)) / n[None, :]
        if len(x):  # a mean stays within the range of its values (a rate within 0-100)
            reps = np.clip(reps, x.min(), x.max())
        n_exp = (np.bincount(e * G + g, minlength=self.E * G).reshape(self.E, G) > 0).sum(0)
        lo_b, hi_b = (float(x.min()), float(x.max())) if len(x) else (-np.inf, np.inf)
        return Est(est, reps.astype(np.float32), n_exp.astype(float), lo_b, hi_b)

    @staticmethod
    def diff(a, b):
        """Difference of two means; its interval stays inside the range of differences of their values
        (a difference of two percentages within [-100, 100]; issue 39)."""
        return Est(a[0] - b[0], a[1] - b[1], np.minimum(a[2], b[2]), a.low_bound - b.high_bound,
                   a.high_bound - b.low_bound)

    @staticmethod
    def ratio(a, b):
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.where(b[0] != 0, a[0] / np.where(b[0] != 0, b[0], 1), np.nan)  # 0 betrayals: undefined
            return Est(est, np.where(b[1] != 0, a[1] / np.where(b[1] != 0, b[1], 1), np.nan), np.minimum(a[2], b[2]))

    def frame(self, cols: dict) -> pd.DataFrame:
        """Estimates with ``<col>_ci_low``/``<col>_ci_high`` (t(G-1) interval, module docstring)."""
        out = pd.DataFrame(index=pd.Index(self.models, name="model"))
        for name, (est, reps, n_exp, lo_b, hi_b) in cols.items():
            with warnings.catch_warnings():  # a model without units has all-NaN replicates
                warnings.simplefilter("ignore", RuntimeWarning)
                lo, hi = t_interval(est, reps, n_exp, self.alpha)
            lo, hi = np.clip(lo, lo_b, hi_b), np.clip(hi, lo_b, hi_b)
            # no between-experiment variation behind the estimate (every replicate equal): no interval,
            # not a zero-width one (issue 39: 0.50 [0.50, 0.50] was printed as if exact)
            undefined = ~np.isfinite(est) | ~(hi - lo > 1e-9 * np.maximum(1.0, np.abs(est)))
            out[name] = est
            out[f"{name}_ci_low"] = np.where(undefined, np.nan, lo)
            out[f"{name}_ci_high"] = np.where(undefined, np.nan, hi)
        return out


def t_interval(est, reps, n_exp, alpha: float):
    """``est +- t(G-1) sqrt(G/(G-1)) SD*`` per column; NaN where G < 2."""
    est = np.asarray(est, float)
    half = t_halfwidth(np.nanstd(np.asarray(reps, float), axis=0, ddof=1), n_exp, alpha)
    return est - half, est + half
