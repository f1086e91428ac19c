"""Appendix B.2 "Effect sizes": description length of impostors vs majority players.

Cohen's d = (mean_impostor - mean_majority) / pooled SD (n - 1 weighted), for the
length of the description in characters and in whitespace-separated words, over all
player rows with a description (invalid descriptions included, as logged).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import StatsUnavailable, prepared, table
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig


def cohens_d(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return np.nan
    sp = np.sqrt(((na - 1) * a.var(ddof=1) + (nb - 1) * b.var(ddof=1)) / (na + nb - 2))
    return float((a.mean() - b.mean()) / sp) if sp > 0 else np.nan


@table("description_effect", columns=["measure", "cohen_d", "mean_impostor", "mean_majority", "n_impostor",
                                      "n_majority"],
    title="Descriptions of the impostor vs the majority: effect sizes (Cohen's d) of description measures",
    section="beyond",
)
def description_effect(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data, need_players=True)
    if prep.description is None:
        raise StatsUnavailable("players table has no description column")
    assert prep.is_imp is not None  # need_players=True
    ok = prep.present & pd.notna(prep.description)
    # lengths of each distinct text once (str.split() per row built 3.6 M word lists at 10x the paper)
    codes, uniq = pd.factorize(prep.description[ok])
    texts = [str(t) for t in uniq]
    imp = prep.is_imp[ok]
    rows = []
    for name, vals in (("chars", np.array([len(t) for t in texts], float)[codes]),
                       ("words", np.array([len(t.split()) for t in texts], float)[codes])):
        a, b = vals[imp], vals[~imp]
        rows.append({"measure": name, "cohen_d": cohens_d(a, b), "mean_impostor": a.mean() if len(a) else np.nan,
                     "mean_majority": b.mean() if len(b) else np.nan, "n_impostor": len(a), "n_majority": len(b)})
    return pd.DataFrame(rows)
