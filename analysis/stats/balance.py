"""Appendix C.1 / D.1: game balance b = 1 - |2 p_imp - 1| by mode (plus an ALL row).

p_imp is the impostor win rate of the mode under the default rule. The CI of b is the
image of the 95% Wilson interval of p_imp under b(p) (b is not monotone: when the
interval contains 1/2 the upper limit is 1).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats._base import ALL, MODES, ordered_levels, prepared, table, wilson


def balance_index(p) -> np.ndarray:
    return 1 - np.abs(2 * np.asarray(p, float) - 1)


@table("balance")
def balance(data, config) -> pd.DataFrame:
    prep = prepared(data)
    rows = []
    for m in ordered_levels(prep.mode, MODES) + [ALL]:
        sel = np.ones(prep.n, bool) if m == ALL else prep.mode == m
        w, n = int(prep.y[sel].sum()), int(sel.sum())
        lo, hi = (float(a[0]) for a in wilson([w], [n], config.alpha))
        b_lo = min(balance_index(lo), balance_index(hi))
        b_hi = 1.0 if lo <= 0.5 <= hi else max(balance_index(lo), balance_index(hi))
        rows.append({"mode": m, "p_imp": w / n, "balance": float(balance_index(w / n)), "n": n,
                     "p_imp_ci_low": lo, "p_imp_ci_high": hi, "balance_ci_low": float(b_lo),
                     "balance_ci_high": float(b_hi)})
    return pd.DataFrame(rows)
