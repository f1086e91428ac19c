"""Appendix C.1 / D.1: game balance b = 1 - |2 p_imp - 1| by mode (plus an ALL row).

p_imp is the impostor win rate of the mode under the default rule. Its interval is the
design-based one of ``impostor_bench.analysis.stats.rates.rate_columns`` (experiments as clusters,
composition-adjusted by the design logit where it can be fitted, else CR1; a Wilson interval
would treat games as independent and covers 77%);
the CI of b is the image of that interval under b(p) (b is not monotone: when the
interval contains 1/2 the upper limit is 1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import ALL, MODES, ordered_levels, prepared, table
from impostor_bench.analysis.stats._marginal import design_index
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.rates import rate_columns
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig


def balance_index(p) -> np.ndarray:
    return 1 - np.abs(2 * np.asarray(p, float) - 1)


@table("balance",
    title="Game balance by mode (Appendix C.1 / D.1)",
    section="design",
    inference=(
        infer("p_imp", ("mode",), "p_imp", ("p_imp_ci_low", "p_imp_ci_high"), method="ci_method"),
    ),
)
def balance(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data)
    X = design_index(prep)
    ones = np.ones(prep.n)
    by_mode = rate_columns("p", prep.y, ones, prep.exp_code, prep.mode, config.alpha, X, config.min_resid_clusters)
    overall = rate_columns("p", prep.y, ones, prep.exp_code, np.full(prep.n, ALL, object), config.alpha, X,
                           config.min_resid_clusters)
    rates = pd.concat([by_mode, overall])
    rows = []
    for m in ordered_levels(prep.mode, MODES) + [ALL]:
        sel = np.ones(prep.n, bool) if m == ALL else prep.mode == m
        w, n = int(prep.y[sel].sum()), int(sel.sum())
        r = rates.loc[m]
        lo, hi = r["p_ci_low"] / 100, r["p_ci_high"] / 100
        b_lo = min(balance_index(lo), balance_index(hi))
        b_hi = 1.0 if lo <= 0.5 <= hi else max(balance_index(lo), balance_index(hi))
        rows.append({"mode": m, "p_imp": w / n, "balance": float(balance_index(w / n)), "n": n,
                     "p_imp_ci_low": lo, "p_imp_ci_high": hi, "balance_ci_low": float(b_lo),
                     "balance_ci_high": float(b_hi), "n_exp": int(r["p_n_exp"]), "ci_method": r["p_ci_method"]})
    return pd.DataFrame(rows)
