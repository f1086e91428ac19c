"""Which printed intervals are not real intervals: one rule for the pages, the paper tables,
the figures and "About this report".

An interval is flagged when it has zero width (every experiment behind it had the same value,
so the method had no variation to measure), when it leaves the parameter's range (a
percentage outside 0-100, a percentage-point difference outside +-100, an odds ratio at or
below 0), or when it does not contain its own estimate. A flagged interval is never drawn as
if it were real: the paper tables print the estimate with a mark and the caption says why,
the figures draw the point only, the pages add an ``interval_check`` column.
"""

from __future__ import annotations

import math
from typing import Optional

import pandas as pd

__all__ = ["interval_problem", "bounds_of", "interval_problems", "is_discrete", "ZERO_WIDTH", "OUT_OF_RANGE",
           "EXCLUDES_ESTIMATE"]

ZERO_WIDTH = "zero-width interval"
OUT_OF_RANGE = "interval outside the parameter's range"
EXCLUDES_ESTIMATE = "interval excludes its estimate"


def bounds_of(column: str, scale: float = 1.0) -> tuple[float, float]:
    """The parameter's range for an estimate column (``*_pct``: a share in %, 0-100; a relative
    change in % (``change*_pct``, e.g. ``learning``'s ``change_30_pct``): -100 (to zero) and up;
    ``*_pp``: +-100; odds ratios: above 0); ``scale`` divides it (the inference table holds
    percentages as shares)."""
    c = str(column).lower()
    if c.endswith("_pct") and c.startswith("change"):
        lo, hi = -100.0, math.inf
    elif c.endswith("_pct") or c in {"p_imp"}:
        lo, hi = (0.0, 100.0) if c != "p_imp" else (0.0, 1.0)
    elif c.endswith("_pp"):
        lo, hi = -100.0, 100.0
    elif c == "or" or c.startswith("or_") or c.endswith("_or"):
        lo, hi = 0.0, math.inf
    else:
        return -math.inf, math.inf
    return lo / scale, hi / scale


def is_discrete(column: Optional[str]) -> bool:
    """A rank (``rank``, ``imp_rank``, ...): an integer whose simultaneous interval is a set of
    ranks, so ``[k, k]`` is a real answer (every other model is significantly above or below),
    not a method without variation."""
    c = str(column or "").lower()
    return c == "rank" or c.endswith("_rank")


def _f(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def interval_problem(estimate, low, high, bounds: tuple[float, float] = (-math.inf, math.inf),
                     discrete: bool = False) -> Optional[str]:
    """Why ``[low, high]`` is not a real interval for ``estimate``, or None (also None where
    there is no interval).  ``discrete``: a rank's interval, where zero width is an answer."""
    e, lo, hi = _f(estimate), _f(low), _f(high)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    scale = max(abs(lo), abs(hi), 1e-12)
    if abs(hi - lo) <= 1e-9 * scale and not discrete:
        return ZERO_WIDTH
    b_lo, b_hi = bounds
    tol = 1e-9 * max(1.0, scale)
    if lo < b_lo - tol or hi > b_hi + tol or (b_lo == 0 and math.isinf(b_hi) and lo <= 0):
        return OUT_OF_RANGE
    if math.isfinite(e) and not (lo - tol <= e <= hi + tol):
        return EXCLUDES_ESTIMATE
    return None


def _spec_bounds() -> dict[str, tuple[float, float]]:
    """calibration key (``table:name``) -> the range of its estimate as the inference table holds it."""
    from impostor_bench.analysis.stats.inference import SPECS

    return {s.calibration: (bounds_of(s.estimate, s.scale) if s.bounds is None
                            else (s.bounds[0] / s.scale, s.bounds[1] / s.scale)) for s in SPECS}


def interval_problems(inference: Optional[pd.DataFrame]) -> pd.DataFrame:
    """The rows of the inference source (``tables/inference.csv``) whose interval is flagged,
    with the reason in ``interval_check`` (ranges from each row's registry entry)."""
    cols = ["table", "quantity", "estimate", "ci_low", "ci_high", "method", "interval_check"]
    if inference is None or not len(inference) or not {"ci_low", "ci_high"} <= set(inference.columns):
        return pd.DataFrame(columns=cols)
    from impostor_bench.analysis.stats.inference import SPECS

    ranges = _spec_bounds()
    ranks = {s.calibration for s in SPECS if is_discrete(s.estimate)}
    free = (-math.inf, math.inf)
    probs = [interval_problem(r.estimate, r.ci_low, r.ci_high, ranges.get(str(getattr(r, "calibration", "")), free),
                              discrete=str(getattr(r, "calibration", "")) in ranks)
             for r in inference.itertuples(index=False)]
    out = inference.assign(interval_check=probs)
    out = out[out["interval_check"].notna()]
    return out[[c for c in cols if c in out.columns]].reset_index(drop=True)
