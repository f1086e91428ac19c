"""Which interval the paper output and the comparison print for an estimate: one per estimate.

The lead's inference registry (``impostor_bench.analysis.stats.inference.SPECS``, ``tables/inference.csv``)
says, for every table that prints inference, which columns hold the interval and which
column (or label) names its method; it is used first, and a row's method decides whether it
counts as calibrated (``inference.is_calibrated``). An estimate it does not list would go in
``INTERVALS`` below with its method and ``calibrated=False``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd

__all__ = ["Interval", "INTERVALS", "interval_for", "lookup"]


@dataclass(frozen=True)
class Interval:
    low: str
    high: Optional[str] = None  # None: ``low`` is a half-width column
    method: str = ""
    calibrated: bool = False
    source: Optional[str] = None  # another bundle table holding the interval
    source_key: Optional[str] = None  # e.g. "quantity={comparison}_or" formatted with the row
    registry: bool = False  # from impostor_bench.analysis.stats.inference.SPECS

    @property
    def kind(self) -> str:
        return "half" if self.high is None else "bounds"



# Estimates the inference registry does not list; the registry wins where it does. Table 12's
# Trust Recovery is rounds_trust's recovery rate of the same model, so it prints that table's
# (calibrated, registered) interval and method rather than a second registration of one number.
INTERVALS: dict[tuple[str, str], Interval] = {
    ("team_dynamics", "trust_recovery_pct"): Interval("recovery_ci_low", "recovery_ci_high", "recovery_ci_method",
                                                      source="rounds_trust", source_key="model={model}"),
    # Appendix M's pooled rates: the experiment-clustered rate interval, not in the calibration matrix
    ("appendix_m", "estimate"): Interval("ci_low", "ci_high", "method", calibrated=False),
}


def _registry(table: str, column: str) -> Optional[Interval]:
    try:
        from impostor_bench.analysis.stats.inference import SPECS
    except ImportError:  # an older stats layer without the registry
        return None
    for s in SPECS:
        if s.table == table and s.estimate == column and s.ci:
            return Interval(s.ci[0], s.ci[1], s.method, registry=True)
    return None


def interval_for(table: str, column: str, row: Optional[pd.Series] = None) -> Optional[Interval]:
    """The interval spec of ``table.column``: the registry's, else the local list's."""
    return _registry(table, column) or INTERVALS.get((table, column))


def _method(spec: Interval, src: pd.Series) -> tuple[str, bool]:
    """The method in words (the row's method column, else the spec's label) and whether it is
    calibrated: the registry's rule for its entries and for the bootstrap's mode ORs, else the spec's."""
    m = str(src[spec.method]) if spec.method in src.index else spec.method
    if spec.registry or spec.source:
        from impostor_bench.analysis.stats.inference import is_calibrated

        return m, bool(is_calibrated(m))
    return m, spec.calibrated


def _select(df: pd.DataFrame, match: str, cache: Optional[dict] = None) -> pd.DataFrame:
    """The rows of ``df`` matching "col=value;..." (as text). ``cache``: a dict kept by a caller that looks
    up many cells of unchanging frames, holding each column's text (made once, not per cell)."""
    sel = np.ones(len(df), bool)
    for part in filter(None, str(match).split(";")):
        col, _, val = part.partition("=")
        if col not in df.columns:
            return df.iloc[0:0]
        key = (id(df), col)
        text = cache.get(key) if cache is not None else None
        if text is None or text[0] is not df:
            text = (df, df[col].astype(str).to_numpy())
            if cache is not None:
                cache[key] = text
        sel &= text[1] == val
    return df[sel]


def lookup(results: dict[str, pd.DataFrame], table: str, match: str, column: str,
           settings: Optional[dict] = None, cache: Optional[dict] = None) -> dict:
    """Our estimate of ``table.column`` at the row ``match`` ("col=value;...") with its one
    interval: ``{estimate, low, high, method, calibrated}`` (NaN where absent). ``cache``: see ``_select``
    (the paper's tables and the comparison look up hundreds of cells of the same frames)."""
    out = {"estimate": np.nan, "low": np.nan, "high": np.nan, "method": "", "calibrated": False}
    df = results.get(table)
    if df is None or column not in getattr(df, "columns", []):
        return out
    rows = _select(df, match, cache)
    if len(rows) != 1:
        return out
    row = rows.iloc[0]
    estimate = _num(row[column])
    out["estimate"] = estimate
    spec = interval_for(table, column, row)
    if spec is None:
        return out
    src = row
    if spec.source:
        assert spec.source_key is not None, f"interval of {table}.{column}: a source table needs a source_key"
        key = spec.source_key.format(**{k: row[k] for k in row.index if isinstance(k, str)})
        srows = _select(results.get(spec.source, pd.DataFrame()), key, cache)
        if len(srows) != 1:
            return out
        src = srows.iloc[0]
    if spec.low not in src.index or (spec.high and spec.high not in src.index):
        return out
    if spec.kind == "half":
        half = _num(src[spec.low])
        out["low"], out["high"] = estimate - half, estimate + half
    else:
        out["low"], out["high"] = _num(src[spec.low]), _num(src[spec.high])
    out["method"], out["calibrated"] = _method(spec, src)
    return out


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return np.nan
