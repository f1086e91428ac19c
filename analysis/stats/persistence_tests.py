"""Do model rankings persist across conditions? The ``ranking_persistence`` table and its tests,
on each factor's rates and their influence (``persistence``: conditions, estimand, variance):

* Kendall's tau between a condition's ranking and the reference's, over the models rated in
  both, with a bias-corrected percentile interval (Efron's BC, mid-p for the discrete statistic)
  over the same Rademacher replicates as the ratings (``design_boot.multipliers``): a sample
  tau is biased towards 0 (noise only breaks agreement), which BC corrects to first order;
* a reversal test per pair: "the pair's order in this condition is the opposite of the
  reference's", an intersection-union test (both one-sided tests reject: p is the larger of the
  two), Holm-adjusted over the condition's pairs; ``p_reversal`` is the smallest adjusted p (the
  test that no pair is reversed), ``reversed`` lists the pairs it finds.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.stats._base import table
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.design_boot import multipliers
from impostor_bench.analysis.stats.persistence import (MEASURES, ConditionRates, condition_rates, contrast_se,
                                                       factors_or_skip, holm)
from impostor_bench.analysis.stats.session import Analysis

TAU_METHOD = "design bootstrap (wild by experiment), bias-corrected percentile (mid-p)"
REVERSAL_METHOD = "intersection-union t-tests per pair (method of the rates), Holm over the condition's pairs"


def kendall_tau(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-a of the rows of x against the rows of y ((R, M) each, or (M,)): the mean
    over pairs of sign agreement (equals scipy's tau-b where neither has ties)."""
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    i, j = np.triu_indices(x.shape[1], 1)
    return (np.sign(x[:, i] - x[:, j]) * np.sign(y[:, i] - y[:, j])).mean(1)


def bc_interval(est: float, reps: np.ndarray, alpha: float) -> tuple[float, float]:
    """Efron's bias-corrected percentile interval, with the mid-p share below ``est`` (tau is discrete)."""
    reps = reps[np.isfinite(reps)]
    if len(reps) < 10:
        return np.nan, np.nan
    share = float(np.mean(reps < est) + 0.5 * np.mean(reps == est))
    share = min(max(share, 0.5 / len(reps)), 1 - 0.5 / len(reps))
    z0 = stats.norm.ppf(share)
    za = stats.norm.ppf(1 - alpha / 2)
    lo_q, hi_q = stats.norm.cdf(2 * z0 - za), stats.norm.cdf(2 * z0 + za)
    return float(np.quantile(reps, lo_q)), float(np.quantile(reps, hi_q))


def reversals(cr: ConditionRates, m: str, level: int, alpha: float) -> tuple[float, list[str], int]:
    """(smallest Holm-adjusted p, reversed pairs, pairs tested) of a condition against the reference (level 0)."""
    th = cr.theta(m)
    both = [i for i in range(len(cr.models)) if np.isfinite(th[cr.cell(i, level)]) and np.isfinite(th[cr.cell(i, 0)])]
    ps, names = [], []
    for i, j in combinations(both, 2):
        one_sided = []
        for lv in (level, 0):
            d = np.zeros(th.shape[0])
            d[cr.cell(i, lv)], d[cr.cell(j, lv)] = 1.0, -1.0
            se, df = contrast_se(cr.IF[m], d)
            t = (th[cr.cell(i, lv)] - th[cr.cell(j, lv)]) / se if np.isfinite(se) and se > 0 else np.nan
            one_sided.append((stats.t.sf(t, df), stats.t.cdf(t, df)))  # P(i above j), P(i below j) one-sided p
        (c_up, c_down), (r_up, r_down) = one_sided
        p = min(max(c_up, r_down), max(c_down, r_up))  # i above j here and below in the reference, or the opposite
        if np.isfinite(p):
            ps.append(p)
            names.append(f"{cr.models[i]}~{cr.models[j]}")
    if not ps:
        return np.nan, [], 0
    rej, adj = holm(np.array(ps), alpha)
    return float(np.min(adj)), [nm.replace("~", " <> ") for nm, r in zip(names, rej) if r], len(ps)


@table("ranking_persistence",
       columns=["factor", "measure", "condition", "reference", "n_models", "kendall_tau", "tau_ci_low", "tau_ci_high",
                "n_reversed", "p_reversal", "reversed"],
       title=("Do model rankings persist? Kendall's tau between each condition's ranking and the reference "
              "condition's (design-bootstrap interval), and the pairs of models whose order reverses (Holm)"),
       section="robustness", groups="any",  # compares the group sizes a study holds
       inference=(
           infer("tau", ("factor", "measure", "condition"), "kendall_tau", ("tau_ci_low", "tau_ci_high"),
                 method="tau_method", bounds=(-1.0, 1.0)),
           infer("reversal", ("factor", "measure", "condition"), "n_reversed", p="p_reversal",
                 method="reversal_method"),
       ))
def ranking_persistence(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Rank correlation with the reference condition and reversed pairs (see the module docstring)."""
    prep, fac = factors_or_skip(data)
    W = multipliers(data, prep, config)
    rows = []
    for f, (lab, levels) in fac.items():
        cr = condition_rates(data, prep, f, lab, levels)
        for m in MEASURES:
            th = cr.theta(m)
            g = int(np.count_nonzero(np.abs(cr.IF[m]).sum(1)))
            reps = th[None, :] + np.sqrt(g / max(g - 1, 1)) * (W @ cr.IF[m].astype(np.float32))
            for li, lv in enumerate(levels[1:], start=1):
                both = [i for i in range(len(cr.models))
                        if np.isfinite(th[cr.cell(i, li)]) and np.isfinite(th[cr.cell(i, 0)])]
                here, ref = [cr.cell(i, li) for i in both], [cr.cell(i, 0) for i in both]
                row = {"factor": f, "measure": m, "condition": lv, "reference": levels[0], "n_models": len(both)}
                if len(both) >= 3:
                    tau = float(kendall_tau(th[here], th[ref])[0])
                    lo, hi = bc_interval(tau, kendall_tau(reps[:, here], reps[:, ref]), config.alpha)
                    row.update(kendall_tau=tau, tau_ci_low=lo, tau_ci_high=hi, tau_method=TAU_METHOD)
                else:
                    row.update(kendall_tau=np.nan, tau_ci_low=np.nan, tau_ci_high=np.nan,
                               tau_method=f"not computed: {len(both)} models rated in both conditions")
                p, rev, n_pairs = reversals(cr, m, li, config.alpha)
                row.update(n_reversed=len(rev), p_reversal=p, reversed="; ".join(rev), n_pairs=n_pairs,
                           reversal_method=REVERSAL_METHOD if n_pairs else "not computed: no pair rated in both")
                row["reps"] = config.bootstrap_reps
                rows.append(row)
    return pd.DataFrame(rows)
