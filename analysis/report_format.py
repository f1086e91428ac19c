"""Display formatting of the statistics tables: Markdown, LaTeX ``tabular`` and HTML.

The CSV files keep full precision; these renderings round by column (p-values,
magnitudes), so report.md, report.html and the .tex fragments read the same.
"""

from __future__ import annotations

import html
import math
from typing import Callable, Optional

import numpy as np
import pandas as pd

__all__ = ["GENERATOR", "to_markdown", "to_latex", "latex_escape", "html_table", "flag_intervals"]

GENERATOR = "impostor report"
_P_COLUMNS = {"p", "q", "spearman_p", "p_bh", "p_bonferroni", "p_holm", "p_value", "pvalue"}


def _is_p_column(col: str) -> bool:
    c = str(col).lower()
    return c in _P_COLUMNS or c.startswith("p_")


def _float_decimals(values: np.ndarray) -> Optional[int]:
    """Decimals for a float column from its typical magnitude; None = scientific."""
    v = np.abs(values[np.isfinite(values) & (values != 0)])
    if v.size == 0:
        return 2
    m = float(np.median(v))
    if m >= 100:
        return 1
    if m >= 0.5:
        return 2
    if m >= 0.01:
        return 3
    return None


def _formatter(col: str, s: pd.Series) -> Callable[[object], str]:
    """A per-column display formatter (csv keeps full precision)."""
    is_p = _is_p_column(col)
    decimals = 2
    integral = False
    if pd.api.types.is_float_dtype(s):
        vals = s.to_numpy(dtype=float, na_value=np.nan)
        fin = vals[np.isfinite(vals)]
        integral = fin.size > 0 and bool(np.all(fin == np.round(fin))) and bool(np.all(np.abs(fin) < 1e12))
        decimals = _float_decimals(vals)

    def fmt(v) -> str:
        if v is None or v is pd.NA or v is pd.NaT:
            return ""
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "no"
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        if isinstance(v, (float, np.floating)):
            x = float(v)
            if math.isnan(x):
                return ""
            if math.isinf(x):
                return "inf" if x > 0 else "-inf"
            if is_p:
                return "0" if x == 0 else (f"{x:.2e}" if x < 1e-4 else f"{x:.4f}")
            if integral:
                return str(int(x))
            if decimals is None:
                return "0" if x == 0 else f"{x:.2e}"
            return f"{x:.{decimals}f}"
        return str(v)

    return fmt


UNDEFINED_SHARE = 0.10  # more replicates undefined than this flags the interval


def flag_intervals(df: pd.DataFrame, column: str = "interval_check") -> pd.DataFrame:
    """A display copy with a warning column right after ``ci_high`` where an interval is degenerate:
    zero width (``ci_low == ci_high``), or built on a bootstrap with many undefined replicates
    (``n_undefined / reps``).  Unchanged when no row is flagged (the CSV never gets it)."""
    if not {"ci_low", "ci_high"} <= set(df.columns) or df.empty:
        return df
    lo = pd.to_numeric(df["ci_low"], errors="coerce")
    hi = pd.to_numeric(df["ci_high"], errors="coerce")
    flags = pd.Series("", index=df.index, dtype=object)
    zero = np.isfinite(lo) & np.isfinite(hi) & np.isclose(lo, hi, rtol=1e-9, atol=1e-12)
    flags[zero] = "⚠ zero-width interval"
    if {"n_undefined", "reps"} <= set(df.columns):
        und = pd.to_numeric(df["n_undefined"], errors="coerce")
        reps = pd.to_numeric(df["reps"], errors="coerce")
        many = (reps > 0) & (und / reps > UNDEFINED_SHARE)
        text = "⚠ " + und.fillna(0).astype(int).astype(str) + "/" + reps.fillna(0).astype(int).astype(str) \
            + " replicates undefined"
        flags[many] = np.where(flags[many] != "", flags[many] + "; " + text[many].str[2:], text[many])
    if not (flags != "").any():
        return df
    out = df.copy()
    out.insert(list(out.columns).index("ci_high") + 1, column, flags)
    return out


def _display(df: pd.DataFrame) -> tuple[list[str], list[list[str]], list[bool]]:
    cols = [str(c) for c in df.columns]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    fmts = [_formatter(c, df[c]) for c in df.columns]
    rows = [[f(v) for f, v in zip(fmts, rec)] for rec in df.itertuples(index=False, name=None)]
    return cols, rows, numeric


def to_markdown(df: pd.DataFrame, max_rows: Optional[int] = None) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned; ``|`` escaped)."""
    shown = df if max_rows is None else df.head(max_rows)
    cols, rows, numeric = _display(shown)
    esc = lambda s: s.replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = ["| " + " | ".join(esc(c) for c in cols) + " |",
             "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(esc(x) for x in r) + " |" for r in rows]
    if not cols:
        return "_(empty table)_\n"
    if not rows:
        lines.append("| " + " | ".join("" for _ in cols) + " |")
    text = "\n".join(lines) + "\n"
    if max_rows is not None and len(df) > max_rows:
        text += f"\n_… {len(df) - max_rows} more rows in the CSV._\n"
    return text


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in str(text))


def to_latex(df: pd.DataFrame, name: str = "") -> str:
    """A ``tabular`` fragment that compiles with plain LaTeX (``\\hline`` rules, no packages)."""
    cols, rows, numeric = _display(df)
    spec = "".join("r" if n else "l" for n in numeric) or "l"
    out = []
    if name:
        out.append(f"% {latex_escape(name)}: generated by {GENERATOR}")
    out.append(f"\\begin{{tabular}}{{{spec}}}")
    out.append("\\hline")
    out.append(" & ".join(latex_escape(c) for c in cols) + r" \\")
    out.append("\\hline")
    for r in rows:
        out.append(" & ".join(latex_escape(x) for x in r) + r" \\")
    out.append("\\hline")
    out.append("\\end{tabular}")
    return "\n".join(out) + "\n"


def html_table(df: pd.DataFrame, max_rows: Optional[int] = None) -> str:
    shown = df if max_rows is None else df.head(max_rows)
    cols, rows, numeric = _display(shown)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = []
    for r in rows:
        tds = "".join(f'<td class="{"num" if n else "txt"}">{html.escape(x)}</td>' for x, n in zip(r, numeric))
        body.append(f"<tr>{tds}</tr>")
    if not rows:
        body.append(f'<tr><td colspan="{max(len(cols), 1)}" class="empty">no rows</td></tr>')
    more = ""
    if max_rows is not None and len(df) > max_rows:
        more = f'<p class="more">… {len(df) - max_rows} more rows in the CSV.</p>'
    return f'<div class="tbl"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>{more}'
