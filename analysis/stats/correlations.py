"""Sections 3.2-3.3: cross-model correlations of the model-level headline metrics.

Pearson r and Spearman rho (pingouin.corr); Pearson's CI is the Fisher-z interval
(pingouin.compute_esci, unrounded; pingouin.corr rounds its CI to 2 decimals).
Extra columns: Pearson p, OLS slope / intercept of y on x (x, y in the table's units),
and the top-half minus bottom-half difference in mean y when models are split at the
median of x (3.2's "+8.6 pp"; the middle model of an odd count is left out).
With nine models these are descriptive only.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pingouin as pg

from analysis.stats._base import StatsUnavailable, note, table
from analysis.stats.coordination import coordination
from analysis.stats.headline import headline

PAIRS = [
    ("centrality", "coal_eff_pct"),
    ("reach", "coal_eff_pct"),
    ("brokerage", "coal_eff_pct"),
    ("det_acc_pct", "imp_win_pct"),
    ("det_acc_pct", "maj_win_pct"),
]


def correlate(x, y, alpha: float = 0.05) -> dict:
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = int(len(x))
    row = {"n": n}
    if n < 4 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return row
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pe = pg.corr(x, y, method="pearson")
        sp = pg.corr(x, y, method="spearman")
    r = float(pe["r"].iloc[0])
    lo, hi = pg.compute_esci(stat=r, nx=n, ny=n, eftype="r", confidence=1 - alpha, decimals=12)
    slope, intercept = np.polyfit(x, y, 1)
    order = np.argsort(x, kind="stable")
    h = n // 2
    top_bottom = float(y[order[n - h:]].mean() - y[order[:h]].mean())
    row.update({"pearson_r": r, "pearson_ci_low": float(lo), "pearson_ci_high": float(hi),
                "spearman_rho": float(sp["r"].iloc[0]), "spearman_p": float(sp["p_val"].iloc[0]),
                "pearson_p": float(pe["p_val"].iloc[0]), "ols_slope": float(slope),
                "ols_intercept": float(intercept), "top_minus_bottom_half": top_bottom})
    return row


@table("correlations")
def correlations(data, config) -> pd.DataFrame:
    h = headline(data, config)
    if len(h) == 0:
        raise StatsUnavailable("headline table is empty")
    c = coordination(data, config)
    if len(c):
        h = h.drop(columns=[x for x in ("brokerage",) if x in h.columns]).merge(
            c[["model", "brokerage"]], on="model", how="left")
    rows = []
    for x, y in PAIRS:
        if x not in h.columns or y not in h.columns:
            continue
        r = correlate(h[x], h[y], config.alpha)
        if "pearson_r" not in r:
            note(data, f"correlations: {x} vs {y} needs >= 4 models with varying values (have {r['n']})")
        rows.append({"x": x, "y": y, **r})
    return pd.DataFrame(rows)
