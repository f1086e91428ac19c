"""The pieces every paper table is laid out with: the table and its context, the paper's number
formats, and the panels by difficulty (Tables 5, 6 and 9) built one way.

``impostor_bench.analysis.report.paper_tables`` builds Tables 1-12 from these; ``impostor_bench.analysis.report.paper_latex``
writes them as LaTeX floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.intervals import lookup
from impostor_bench.core.modes import MODE_LABEL

DIFFS = [("easy", "Easy"), ("medium", "Medium"), ("hard", "Hard"), ("expert", "Expert")]
MODES = list(MODE_LABEL.items())  # (mode, label) in the core's order
DASH = "--"

#: One panel of a paper table: (title, header, rows of cells).
Panel = tuple[str, list[str], list[list[str]]]


@dataclass
class PaperTable:
    number: int
    title: str
    caption: str
    panels: list[Panel] = field(default_factory=list)
    missing: Optional[str] = None  # what the bundle lacks (the table is a placeholder)

    @property
    def label(self) -> str:
        return f"table{self.number:02d}"


@dataclass
class Context:
    results: dict[str, pd.DataFrame]
    settings: dict
    games: int
    experiments: int
    notes: list[str]

    def reason(self, *tables: str) -> str:
        """Why a table is empty, from the notes (``NAME: not computed: why``), else 'no rows'."""
        for t in tables:
            for n in self.notes:
                if n.startswith(f"{t}: ") or n.startswith(f"Table {t} failed"):
                    return n
        return f"bundle table{'s' if len(tables) > 1 else ''} {', '.join(tables)} ha{'ve' if len(tables) > 1 else 's'} no rows"

    def n_text(self) -> str:
        return f"{self.games:,} games in {self.experiments:,} experiments"


# --------------------------------------------------------------------------- number formats


def _finite(v) -> Optional[float]:
    """``v`` as a finite float, else None (printed as the paper's dash)."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def num(v, d: int = 2, sign: bool = False) -> str:
    x = _finite(v)
    if x is None:
        return DASH
    return f"{x:+.{d}f}" if sign else f"{x:.{d}f}"


def pm(est, lo, hi, d: int = 1) -> str:
    """"est ± half-width" (the paper's Table 1 style); the half-width of [lo, hi]."""
    e = num(est, d)
    if e == DASH:
        return DASH
    h = (float(hi) - float(lo)) / 2 if np.isfinite(lo) and np.isfinite(hi) else np.nan
    return e if not np.isfinite(h) else f"{e} ± {h:.{d}f}"


def bracket(lo, hi, d: int = 2, sign: bool = False) -> str:
    a, b = num(lo, d, sign), num(hi, d, sign)
    return DASH if DASH in (a, b) else f"[{a}, {b}]"


def sci_p(p, floor: float = 1e-300) -> str:
    """p as the paper prints it in Tables 2-4: "< 10^-300", "6.82 × 10^-9", "0.418"."""
    x = _finite(p)
    if x is None:
        return DASH
    if x < floor:
        return "< 10^-300"
    if x >= 0.01:
        return f"{x:.3f}"
    m, e = f"{x:.2e}".split("e")
    return f"{m} × 10^{int(e)}"


def q_short(q) -> str:
    """Table 5's q: "1.5e-06" below 0.01, else 3 decimals."""
    x = _finite(q)
    if x is None:
        return DASH
    return f"{x:.1e}" if x < 0.01 else f"{x:.3f}"


# --------------------------------------------------------------------------- reading the bundle's tables


def rows_of(df: Optional[pd.DataFrame]) -> pd.DataFrame:
    return df if df is not None else pd.DataFrame()


def interval(ctx: Context, table: str, match: str, column: str) -> dict:
    """The estimate, interval and method of one cell (``impostor_bench.analysis.intervals.lookup``)."""
    return lookup(ctx.results, table, match, column, ctx.settings)


def models_by_win(ctx: Context) -> list[str]:
    """Models in Table 1's order: by impostor win rate, best first (as Figures 1-2 order them)."""
    h = rows_of(ctx.results.get("headline"))
    if not len(h):
        return []
    return list(h.sort_values("imp_win_pct", ascending=False)["model"].astype(str))


def methods_text(ms, most: int = 2) -> str:
    """The distinct methods of a column's rows, the first ``most`` in words (per-row reasons, e.g.
    "not computed: ...", can be many: the CSV's method column has each row's)."""
    ms = [str(m) for m in dict.fromkeys(ms) if m and str(m) != "nan"]
    if not ms:
        return "no interval"
    fitted = [m for m in ms if not m.startswith("not ")] or ms
    extra = len(ms) - min(len(fitted), most)
    return "; ".join(fitted[:most]) + (f"; {extra} more (per row in the CSV's method column)" if extra > 0 else "")


def at_difficulty(t: pd.DataFrame, difficulty: str) -> pd.DataFrame:
    """The rows of ``t`` at one difficulty (``t`` itself when it is empty)."""
    return t[t["difficulty"].astype(str) == difficulty] if len(t) else t


def difficulty_panels(head: list[str], rows_at: Callable[[str], list[list[str]]]) -> list[Panel]:
    """One panel per difficulty with rows, titled "(a) Easy" ... "(d) Expert" by the difficulty's place."""
    panels = []
    for i, (d, dl) in enumerate(DIFFS):
        rows = rows_at(d)
        if rows:
            panels.append((f"({'abcd'[i]}) {dl}", head, rows))
    return panels
