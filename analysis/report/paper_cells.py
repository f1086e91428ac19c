"""The pieces every paper table is laid out with: the table and its context, the paper's number
formats, and the panels by difficulty (Tables 5, 6 and 9) built one way.

``impostor_bench.analysis.report.paper_tables`` builds Tables 1-12 from these; ``impostor_bench.analysis.report.paper_latex``
writes them as LaTeX floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import pandas as pd

from impostor_bench.analysis.intervals import lookup
from impostor_bench.analysis.report.interval_check import ZERO_WIDTH, bounds_of, interval_problem
from impostor_bench.core.modes import MODE_LABEL

DIFFS = [("easy", "Easy"), ("medium", "Medium"), ("hard", "Hard"), ("expert", "Expert")]
MODES = list(MODE_LABEL.items())  # (mode, label) in the core's order
DASH = "--"
FLAG = "†"  # an estimate whose interval is flagged (interval_check) and not printed
NOT_COMPUTED = "interval not computed (reason in the CSV's method column)"

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
    #: reasons of the intervals left out of the table being built (interval_check), for its caption
    flagged: list[str] = field(default_factory=list)
    #: the effects ``impostor simulate`` planted ((table, match or "*", column) -> value; empty: real data)
    planted: dict = field(default_factory=dict)

    def flag_caption(self) -> str:
        """The caption's sentence on the intervals not printed (and the flags cleared for the next table)."""
        if not self.flagged:
            return ""
        counts = {k: self.flagged.count(k) for k in dict.fromkeys(self.flagged)}
        self.flagged.clear()
        return (f" {FLAG} = estimate printed without an interval ("
                + "; ".join(f"{k}: {v}" for k, v in counts.items())
                + ("; a zero width means every experiment behind it had the same value" if ZERO_WIDTH in counts
                   else "") + ").")

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
    """"est ± half-width" (the paper's Table 1 style) where the interval is symmetric at the
    printed precision, else "est [lo, hi]" (a logit or bootstrap interval is not symmetric)."""
    e = num(est, d)
    if e == DASH:
        return DASH
    a, b = _finite(lo), _finite(hi)
    if a is None or b is None:
        return e
    x = float(est)
    below, above = round(x - a, d), round(b - x, d)
    if below == above:
        return f"{e} ± {above:.{d}f}"
    return f"{e} [{num(a, d)}, {num(b, d)}]"


def shown(ctx: "Context", g: dict, d: int = 1) -> str:
    """One cell from :func:`interval`'s dict: "est ± h" / "est [lo, hi]", or "est†" where the
    interval is flagged (the reason goes to the table's caption through ``ctx.flagged``)."""
    if num(g["estimate"], d) == DASH:
        return DASH
    why = g.get("problem")
    if not why and g.get("method") and (_finite(g["low"]) is None or _finite(g["high"]) is None):
        why = NOT_COMPUTED  # the registry lists an interval here, but this row has none
    if why:
        ctx.flagged.append(why)
        return num(g["estimate"], d) + FLAG
    return pm(g["estimate"], g["low"], g["high"], d)


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
    """The estimate, interval and method of one cell (``impostor_bench.analysis.intervals.lookup``), and
    ``problem``: why the interval is not a real one (``interval_check``), or None."""
    g = lookup(ctx.results, table, match, column, ctx.settings)
    g["problem"] = interval_problem(g["estimate"], g["low"], g["high"], bounds_of(column))
    return g


def models_by_win(ctx: Context) -> list[str]:
    """Models in Table 1's order: by impostor win rate, best first (as Figures 1-2 order them)."""
    h = rows_of(ctx.results.get("headline"))
    if not len(h):
        return []
    return list(h.sort_values("imp_win_pct", ascending=False)["model"].astype(str))


def methods_text(ms, most: int = 2) -> str:
    """The distinct methods of the rows that printed a number, the first ``most`` in words (rows
    "not computed: ..." print none, so they name no method here: each reason is in the CSV's method
    column and the table says where it left a cell out)."""
    ms = [str(m) for m in dict.fromkeys(ms) if m and str(m) != "nan"]
    if not ms:
        return "no interval"
    fitted = [m for m in ms if not m.startswith("not ")]
    if not fitted:
        return "not computed; each row's reason is in the CSV's method column"
    extra = len(fitted) - most
    return "; ".join(fitted[:most]) + (f"; {extra} more (per row in the CSV's method column)" if extra > 0 else "")


def at_difficulty(t: pd.DataFrame, difficulty: str) -> pd.DataFrame:
    """The rows of ``t`` at one difficulty (``t`` itself when it is empty)."""
    return t[t["difficulty"].astype(str) == difficulty] if len(t) else t


def difficulty_panels(head: list[str], rows_at: Callable[[str], list[list[str]]]) -> list[Panel]:
    """One panel per difficulty with rows, lettered (a), (b), ... in order (a difficulty without
    rows has no panel, and the letters do not skip)."""
    panels: list[Panel] = []
    for d, dl in DIFFS:
        rows = rows_at(d)
        if rows:
            panels.append((f"({'abcd'[len(panels)]}) {dl}", head, rows))
    return panels
