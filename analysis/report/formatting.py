"""Display formatting of the statistics tables: Markdown, LaTeX ``tabular`` and HTML.

The CSV files keep full precision; these renderings round by column (p-values,
magnitudes), so report.md, report.html and the .tex fragments read the same.
"""

from __future__ import annotations

import html
import math
import re
from typing import Callable, Optional

import numpy as np
import pandas as pd

__all__ = ["GENERATOR", "to_markdown", "to_latex", "latex_escape", "html_table", "flag_intervals", "readable_header",
           "readable_seats", "display_cells", "ci_partner"]

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
    decimals: Optional[int] = 2  # None = scientific (_float_decimals)
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
        return readable_seats(str(v))

    return fmt


_SEAT_CONTRAST = re.compile(r"\bseat([0-3])_vs_seat([0-3])\b")


def readable_seats(text: str) -> str:
    """A seat contrast of the tables (``seat1_vs_seat0``, 0-based seats, docs/data-contract.md)
    as people read seats everywhere else: ``Player 2 vs Player 1``."""
    return _SEAT_CONTRAST.sub(lambda m: f"Player {int(m[1]) + 1} vs Player {int(m[2]) + 1}", text)


UNDEFINED_SHARE = 0.10  # more replicates undefined than this flags the interval


def _registry_pairs(name: Optional[str]) -> dict[tuple[str, str], str]:
    """(low, high) -> estimate column of the intervals the inference registry lists for table ``name``."""
    try:
        from impostor_bench.analysis.stats.inference import SPECS
    except ImportError:  # pragma: no cover - the stats layer ships with the report
        return {}
    return {s.ci: s.estimate for s in SPECS if s.table == name and s.ci}


def _estimate_of(low: str, cols: list[str]) -> Optional[str]:
    """The estimate column of an interval pair the registry does not list, from its prefix
    (``imp_win_ci_low`` -> ``imp_win_pct``; a bare ``ci_low`` -> ``estimate`` / ``or``), else none."""
    prefix = low[: -len("ci_low")].rstrip("_")
    for c in ((f"{prefix}_pct", f"{prefix}_pp", prefix) if prefix else ("estimate", "or")):
        if c in cols:
            return c
    return None


def flag_intervals(df: pd.DataFrame, name: Optional[str] = None, column: str = "interval_check") -> pd.DataFrame:
    """A display copy with a warning column (second, so it is never cut off) where an interval is
    not a real one (:func:`impostor_bench.analysis.report.interval_check.interval_problem`: zero
    width, outside the parameter's range, not containing its estimate), for every ``*ci_low`` /
    ``*ci_high`` pair, or built on a bootstrap with many undefined replicates (``n_undefined / reps``).
    ``name`` is the bundle table (its registry entry names each pair's estimate). Unchanged when
    no row is flagged (the CSV never gets the column)."""
    from impostor_bench.analysis.report.interval_check import bounds_of, interval_problem, is_discrete

    if df.empty:
        return df
    cols = [str(c) for c in df.columns]
    listed = _registry_pairs(name)
    # the printed intervals: the registry's, and any "*ci_low"/"*ci_high" pair (not the other
    # bootstrap's "ci_low_design"-style columns the pages leave to the CSV)
    pairs = [(c, hi) for c in cols if (hi := ci_partner(c, cols)) is not None
             and ((c, hi) in listed or c.endswith("ci_low"))]
    flags = pd.Series("", index=df.index, dtype=object)
    for lo_col, hi_col in pairs:
        est_col = listed.get((lo_col, hi_col)) or _estimate_of(lo_col, cols)
        est_col = est_col if est_col in cols else None
        bounds = bounds_of(est_col) if est_col else (-math.inf, math.inf)
        label = est_col or lo_col.split("ci_low")[0].rstrip("_")
        for i, (lo, hi, est) in enumerate(zip(df[lo_col], df[hi_col], df[est_col] if est_col else [np.nan] * len(df))):
            why = interval_problem(est, lo, hi, bounds, discrete=is_discrete(est_col))
            if why:
                text = f"{label}: {why}" if len(pairs) > 1 and label else why
                k = df.index[i]
                flags[k] = f"{flags[k]}; {text}" if flags[k] else f"⚠ {text}"
    if {"n_undefined", "reps"} <= set(df.columns):
        und = pd.to_numeric(df["n_undefined"], errors="coerce")
        reps = pd.to_numeric(df["reps"], errors="coerce")
        many = (reps > 0) & (und / reps > UNDEFINED_SHARE)
        text = und.fillna(0).astype(int).astype(str) + "/" + reps.fillna(0).astype(int).astype(str) \
            + " replicates undefined"
        flags[many] = np.where(flags[many] != "", flags[many] + "; " + text[many], "⚠ " + text[many])
    if not (flags != "").any():
        return df
    out = df.copy()
    out.insert(1, column, flags)
    return out


def display_cells(df: pd.DataFrame) -> tuple[list[str], list[list[str]], list[bool]]:
    cols = [str(c) for c in df.columns]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    fmts = [_formatter(c, df[c]) for c in df.columns]
    rows = [[f(v) for f, v in zip(fmts, rec)] for rec in df.itertuples(index=False, name=None)]
    return cols, rows, numeric


def to_markdown(df: pd.DataFrame, max_rows: Optional[int] = None) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned; ``|`` escaped)."""
    shown = df if max_rows is None else df.head(max_rows)
    cols, rows, numeric = display_cells(shown)
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


def latex_escape(text: object) -> str:
    """``str(text)`` with the LaTeX specials escaped (any value: the manifest's settings are numbers too)."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in str(text))


# Words for the tokens of snake_case column names (LaTeX headers); whole names first.
_HEADER_NAMES = {
    "or": "OR", "p": "p", "q": "q", "n": "n", "df": "df", "chi2": "Chi-squared", "or_per_10x": "OR per 10x params",
    "or_per_10pp": "OR per +10 pp", "mid_rand_pp": "Middle - random (pp)", "p_bh": "p (BH)",
    "p_bonferroni": "p (Bonferroni)", "p_holm": "p (Holm)", "n_imp_games": "Games as impostor",
    "n_maj_seats": "Majority seats", "cramers_v": "Cramer's V", "evalue": "E-value", "p_imp": "P(impostor win)",
    "sym_cand": "Sym-candidate", "sym_side": "Sym-side", "delta_cand": "Change, sym-candidate (pp)",
    "delta_side": "Change, sym-side (pp)", "impostor_in_tie_pct": "Impostor in tie (%)", "k2": "k = 2", "k3": "k = 3",
    "k4": "k = 4", "spearman_rho": "Spearman rho", "pearson_r": "Pearson r",
}
_HEADER_TOKENS = {
    "pct": "(%)", "pp": "(pp)", "ci": "CI", "imp": "impostor", "maj": "majority", "det": "detection",
    "acc": "accuracy", "coal": "coalition", "eff": "efficiency", "coord": "coordination", "decl": "declaration",
    "succ": "success", "n": "n", "or": "OR", "usd": "(USD)", "sd": "SD", "se": "SE", "glm": "GLM", "itt": "ITT",
}


def readable_header(col: str) -> str:
    """A column name in words for a paper table (``imp_win_pct`` -> ``Impostor win (%)``)."""
    c = str(col)
    if c in _HEADER_NAMES:
        return _HEADER_NAMES[c]
    words = " ".join(_HEADER_TOKENS.get(t, t) for t in c.split("_") if t)
    return words[:1].upper() + words[1:] if words else c


def ci_partner(col: str, cols: list[str]) -> Optional[str]:
    """``ci_high`` of a ``ci_low`` column with the same prefix and suffix, if the table has it."""
    if "ci_low" not in col:
        return None
    partner = col.replace("ci_low", "ci_high", 1)
    return partner if partner in cols else None


def _latex_cell(text: str, numeric: bool) -> str:
    if text == "":
        return "--"  # an en dash: missing
    if numeric and text.startswith("-"):
        return "$-$" + latex_escape(text[1:])
    return latex_escape(text)


def _latex_columns(df: pd.DataFrame) -> tuple[list[str], list[list[str]], list[str]]:
    """Headers, LaTeX cells and alignments: ``ci_low``/``ci_high`` merged into "[low, high]",
    ``X_pct`` with its half-width ``X_ci`` into "estimate ± CI" where no ``X_ci_low``/``X_ci_high``
    interval is printed, missing as an en dash."""
    cols, rows, numeric = display_cells(df)
    heads, cells, align, used = [], [], [], set()
    for i, c in enumerate(cols):
        if c in used:
            continue
        hi = ci_partner(c, cols)
        half = c[: -len("_pct")] + "_ci" if c.endswith("_pct") else None
        if half is not None and {half + "_low", half + "_high"} <= set(cols):
            used.add(half)  # its interval is printed: no half-width beside it (one interval per estimate)
            half = None
        if hi is not None:
            j = cols.index(hi)
            used.add(hi)
            heads.append(latex_escape(readable_header(c.replace("ci_low", "ci", 1))).replace("CI", "95\\% CI", 1))
            fmt = _formatter(c, pd.concat([df.iloc[:, i], df.iloc[:, j]], ignore_index=True))  # both ends alike
            pairs = [(fmt(lo), fmt(up)) for lo, up in zip(df.iloc[:, i], df.iloc[:, j])]
            cells.append(["--" if lo == "" or up == "" else
                          "{}[" + _latex_cell(lo, True) + ", " + _latex_cell(up, True) + "]" for lo, up in pairs])
            align.append("c")
        elif half is not None and half in cols:
            j = cols.index(half)
            used.add(half)
            heads.append(latex_escape(readable_header(c)))
            cells.append(["--" if r[i] == "" else _latex_cell(r[i], True)
                          + ("" if r[j] == "" else " $\\pm$ " + _latex_cell(r[j], True)) for r in rows])
            align.append("r")
        else:
            heads.append(latex_escape(readable_header(c)))
            cells.append([_latex_cell(r[i], numeric[i]) for r in rows])
            align.append("r" if numeric[i] else "l")
    return heads, [list(r) for r in zip(*cells)] if rows else [], align


def to_latex(df: pd.DataFrame, name: str = "", caption: Optional[str] = None) -> str:
    """A ``table`` float ready to ``\\input`` (needs ``\\usepackage{booktabs}``): caption, label
    ``tab:NAME``, booktabs rules, readable headers, "[low, high]" and "estimate ± CI" cells,
    missing values as an en dash.  The CSV keeps the column names and full precision."""
    heads, rows, align = _latex_columns(df)
    label = re.sub(r"[^A-Za-z0-9:-]+", "-", name or "table").strip("-") or "table"
    title = (caption or (name.replace("_", " ") if name else "Table")).replace("`", "")
    out = [f"% {latex_escape(name or 'table')}: generated by {GENERATOR}; needs \\usepackage{{booktabs}}",
           "\\begin{table}[htbp]", "\\centering", f"\\caption{{{latex_escape(title)}}}", f"\\label{{tab:{label}}}",
           f"\\begin{{tabular}}{{{''.join(align) or 'l'}}}", "\\toprule",
           " & ".join(heads) + r" \\", "\\midrule"]
    out += [" & ".join(r) + r" \\" for r in rows]
    if not rows:
        out.append(f"\\multicolumn{{{max(len(heads), 1)}}}{{c}}{{(no rows)}}" + r" \\")
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(out) + "\n"


def html_table(df: pd.DataFrame, max_rows: Optional[int] = None) -> str:
    shown = df if max_rows is None else df.head(max_rows)
    cols, rows, numeric = display_cells(shown)
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
