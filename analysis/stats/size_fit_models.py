"""The ``size_fit_models`` table: every size fit's models, used or left out, and why.

It reads the fits that ran (``odds_ratios``, ``scaling``), which themselves select their games
through :mod:`impostor_bench.analysis.stats.sizes`; living apart from ``sizes`` keeps that one way round.
"""

from __future__ import annotations

import pandas as pd

from impostor_bench.analysis.stats._base import table
from impostor_bench.analysis.stats.odds import odds_ratios
from impostor_bench.analysis.stats.scaling import scaling
from impostor_bench.analysis.stats.sizes import COLUMNS, size_view


@table("size_fit_models", columns=COLUMNS,
    title="Models each size fit used and left out, and why (Tables 2 and 10)",
    section="robustness",
)
def size_fit_models(data, config) -> pd.DataFrame:
    """Every size fit's models: used or left out, and why (companion of odds_ratios and scaling)."""
    view = size_view(data, config)
    ran = set(odds_ratios(data, config).get("comparison", pd.Series(dtype=object)))
    ran |= set(scaling(data, config).get("fit", pd.Series(dtype=object)))
    rows = []
    for f in view.fits.values():
        for r in f.rows:
            r = dict(r)
            if r["used"] and f.name not in ran:
                r["used"], r["reason"] = False, "fit not computed (see notes)"
            rows.append(r)
    return pd.DataFrame(rows, columns=COLUMNS)
