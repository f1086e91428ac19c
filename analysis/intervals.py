"""Which interval the paper output and the comparison print for an estimate: one per estimate,
the calibrated one where the bundle carries it (docs/analysis.md, "Calibration").

Each entry maps (bundle table, estimate column) to the interval's columns and its method in
words. ``kind`` is ``"bounds"`` (low/high columns) or ``"half"`` (a half-width column, in the
estimate's units). ``calibrated`` says whether simulation showed ~95% coverage under the
paper-sized design with experiment effects. Where the estimate has another interval source
in another table (the mode ORs' design bootstrap lives in ``bootstrap``), ``source`` names it.
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

    @property
    def kind(self) -> str:
        return "half" if self.high is None else "bounds"


_BOOT = "experiment-level {bootstrap} bootstrap, {reps:,} replicates"
_WILSON = "Wilson score (games independent; too narrow when games of an experiment are correlated)"
_WALD_CR = "Wald, cluster-robust by experiment"

INTERVALS: dict[tuple[str, str], Interval] = {
    ("headline", "imp_win_pct"): Interval("imp_win_ci_low_boot", "imp_win_ci_high_boot", _BOOT, True),
    ("headline", "maj_win_pct"): Interval("maj_win_ci", None, _WILSON),
    ("headline", "det_acc_pct"): Interval("det_acc_ci", None, _WILSON),
    ("odds_ratios", "or"): Interval("ci_low", "ci_high", "Wald (games independent)"),
    ("odds_ratios", "or:mode"): Interval("ci_low", "ci_high", _BOOT, True, source="bootstrap",
                                         source_key="quantity={comparison}_or"),
    ("opponent_baseline", "or_per_10pp"): Interval("ci_low", "ci_high", _WALD_CR),
    ("speaking_itt", "mid_rand_pp"): Interval("ci_low", "ci_high", _BOOT, True),
    ("scaling", "or_per_10x"): Interval("ci_low", "ci_high", _WALD_CR),
    ("coordination", "vote_coord_pct"): Interval("vote_coord_ci", None, _WILSON),
    ("correlations", "pearson_r"): Interval("pearson_ci_low", "pearson_ci_high", "Fisher z, across models"),
    ("bootstrap", "estimate"): Interval("ci_low", "ci_high", _BOOT, True),
    ("win_model_mode_difficulty", "imp_win_pct"): Interval("ci_low", "ci_high", _BOOT, True),
    ("detection_by_difficulty", "det_acc_pct"): Interval("ci_low", "ci_high", _BOOT, True),
}


def interval_for(table: str, column: str, row: Optional[pd.Series] = None) -> Optional[Interval]:
    """The interval spec of ``table.column`` (mode rows of ``odds_ratios`` take the bootstrap's)."""
    if table == "odds_ratios" and column == "or" and row is not None \
            and str(row.get("comparison", "")).endswith("_vs_homogeneous"):
        return INTERVALS[("odds_ratios", "or:mode")]
    return INTERVALS.get((table, column))


def _select(df: pd.DataFrame, match: str) -> pd.DataFrame:
    sel = np.ones(len(df), bool)
    for part in filter(None, str(match).split(";")):
        col, _, val = part.partition("=")
        if col not in df.columns:
            return df.iloc[0:0]
        sel &= df[col].astype(str).to_numpy() == val
    return df[sel]


def lookup(results: dict[str, pd.DataFrame], table: str, match: str, column: str,
           settings: Optional[dict] = None) -> dict:
    """Our estimate of ``table.column`` at the row ``match`` ("col=value;...") with its one
    interval: ``{estimate, low, high, method, calibrated}`` (NaN where absent)."""
    out = {"estimate": np.nan, "low": np.nan, "high": np.nan, "method": "", "calibrated": False}
    df = results.get(table)
    if df is None or column not in getattr(df, "columns", []):
        return out
    rows = _select(df, match)
    if len(rows) != 1:
        return out
    row = rows.iloc[0]
    out["estimate"] = _num(row[column])
    spec = interval_for(table, column, row)
    if spec is None:
        return out
    src = row
    if spec.source:
        key = spec.source_key.format(**{k: row[k] for k in row.index if isinstance(k, str)})
        srows = _select(results.get(spec.source, pd.DataFrame()), key)
        if len(srows) != 1:
            return out
        src = srows.iloc[0]
    if spec.low not in src.index or (spec.high and spec.high not in src.index):
        return out
    if spec.kind == "half":
        half = _num(src[spec.low])
        out["low"], out["high"] = out["estimate"] - half, out["estimate"] + half
    else:
        out["low"], out["high"] = _num(src[spec.low]), _num(src[spec.high])
    settings = settings or {}
    out["method"] = spec.method.format(bootstrap=settings.get("bootstrap", "design"),
                                       reps=int(settings.get("bootstrap_reps") or 0))
    out["calibrated"] = spec.calibrated
    return out


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return np.nan
