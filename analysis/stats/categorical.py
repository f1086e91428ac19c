"""Table 3: chi-squared tests of independence with Cramér's V.

The unit is the game (N = games), as the paper's V values imply (chi2 / V^2 = N):
* model_x_outcome       impostor model x impostor win
* mode_x_outcome        mode x impostor win
* difficulty_x_outcome  difficulty x impostor win
* seat_x_outcome        impostor seat index x impostor win
* selfdecl_x_model      impostor self-declared x impostor model
Pearson's chi2 without Yates' continuity correction (scipy ``correction=False``);
levels with no observations are dropped first.

Cramér's V = sqrt(chi2 / (N * m)), m = min(r - 1, c - 1). Magnitude follows Cohen
(1988) with thresholds scaled by the degrees of freedom m: small / medium / large at
0.1 / 0.3 / 0.5 divided by sqrt(m) (m = 1: 0.10/0.30/0.50; m = 2: 0.07/0.21/0.35;
m = 3: 0.06/0.17/0.29); below "small" is "negligible".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.stats._base import note, prepared, table


def cramers_v(chi2: float, n: int, shape: tuple[int, int]) -> float:
    m = min(shape[0] - 1, shape[1] - 1)
    return float(np.sqrt(chi2 / (n * m))) if n > 0 and m > 0 else np.nan


def magnitude(v: float, shape: tuple[int, int]) -> str:
    m = min(shape[0] - 1, shape[1] - 1)
    if not np.isfinite(v) or m < 1:
        return ""
    small, medium, large = (t / np.sqrt(m) for t in (0.1, 0.3, 0.5))
    if v >= large:
        return "large"
    if v >= medium:
        return "medium"
    if v >= small:
        return "small"
    return "negligible"


def chi2_test(a, b) -> dict:
    ct = pd.crosstab(pd.Series(a, dtype=object), pd.Series(b, dtype=object))
    ct = ct.loc[ct.sum(axis=1) > 0, ct.sum(axis=0) > 0]
    if ct.shape[0] < 2 or ct.shape[1] < 2:
        return {"chi2": np.nan, "df": np.nan, "p": np.nan, "cramers_v": np.nan, "magnitude": "",
                "n": int(ct.to_numpy().sum()), "levels": ct.shape[0]}
    chi2, p, dof, _ = stats.chi2_contingency(ct.to_numpy(), correction=False)
    n = int(ct.to_numpy().sum())
    v = cramers_v(chi2, n, ct.shape)
    return {"chi2": float(chi2), "df": int(dof), "p": float(p), "cramers_v": v,
            "magnitude": magnitude(v, ct.shape), "n": n, "levels": ct.shape[0]}


@table("chi2")
def chi2(data, config) -> pd.DataFrame:
    prep = prepared(data)
    y = np.where(prep.y == 1, "impostor", "majority")
    rows = [
        ("model_x_outcome", prep.imp_model, y),
        ("mode_x_outcome", prep.mode, y),
        ("difficulty_x_outcome", prep.difficulty, y),
        ("seat_x_outcome", prep.imp_seat, y),
    ]
    if prep.has_players:
        sd = prep.self_decl[np.arange(prep.n), prep.imp_seat]
        present = prep.present[np.arange(prep.n), prep.imp_seat]
        rows.append(("selfdecl_x_model", sd[present], prep.imp_model[present]))
    out = []
    for name, a, b in rows:
        r = chi2_test(a, b)
        if not np.isfinite(r["chi2"]):
            note(data, f"chi2: {name} has fewer than two levels on a side; left empty")
        out.append({"test": name, **r})
    return pd.DataFrame(out)
