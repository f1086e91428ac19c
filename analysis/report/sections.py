"""What the report pages show where: the sections of report.md / report.html and the
display form of a table (readable headers, one interval per cell, no more columns than
fit a screen; the CSV and Parquet keep every column).

Sections: Results (the paper's Tables 1-12 in its layout, Figures 1-3), Robustness
(Appendix B), Design checks (balance, randomisation, negative and positive controls),
Beyond the paper (ratings, cost, ...), Notes.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Optional

import pandas as pd

from impostor_bench.analysis.report.formatting import readable_header

if TYPE_CHECKING:  # the builders import the stats package; these pages only render their tables
    from impostor_bench.analysis.report.paper_tables import PaperTable

__all__ = ["SECTION_TITLES", "sections", "sections_shown", "PAPER_FIGURES", "section_of", "figure_section", "table_title",
           "display_table", "paper_table_html", "paper_table_md", "MAX_COLUMNS"]

MAX_COLUMNS = 8  # a wider table shows its first columns; the rest are in the CSV

# The sections of the pages in order, (id, title). Which tables each shows, and where a table's figures go,
# is the table's declaration (``@table(..., section=..., figures=...)``, impostor_bench.analysis.stats.declaration);
# section "paper" = the Results section in the paper's layout.
SECTION_TITLES: tuple[tuple[str, str], ...] = (
    ("results", "Results"),
    ("robustness", "Robustness (Appendix B)"),
    ("design", "Design checks"),
    ("rounds", "Longer games"),
    ("beyond", "Beyond the paper"),
)
# Sections drawn only when one of their tables has rows (the round tables are empty for one-round games).
ONLY_WITH_TABLES = ("rounds",)
PAPER_FIGURES = {"win_by_mode": 1, "win_by_difficulty": 2, "difficulty_validation": 3}


def _declared() -> dict:
    """Every registered table's declaration (read at each call: a table registered later counts)."""
    from impostor_bench.analysis.stats import declarations

    return declarations()


def sections() -> list[tuple[str, str, tuple[str, ...]]]:
    """(id, title, its tables in the bundle's order) of every section of the pages."""
    decl = _declared()
    return [(sid, title, tuple(n for n, d in decl.items() if d.section == sid)) for sid, title in SECTION_TITLES]


def sections_shown(by: dict) -> list[tuple[str, str, tuple[str, ...]]]:
    """``sections()`` less those of ``ONLY_WITH_TABLES`` that have nothing to show in ``by`` (id -> tables)."""
    return [s for s in sections() if s[0] not in ONLY_WITH_TABLES or by.get(s[0])]


def section_of(name: str) -> Optional[str]:
    """The section a bundle table is shown in (None: shown in Results in the paper's layout; an
    undeclared table, e.g. one a caller passed to ``build_report``, goes to "beyond")."""
    d = _declared().get(name)
    if d is None:
        return "beyond"
    return None if d.section == "paper" else d.section


def figure_section(stem: str) -> str:
    """The section a figure is drawn in: Results for the paper's figures, else its table's declaration."""
    if stem in PAPER_FIGURES:
        return "results"
    return next((d.figures[stem] for d in _declared().values() if stem in d.figures), "beyond")


def table_title(name: str) -> str:
    """The declared title of a bundle table (its name, spelled out, for an undeclared one)."""
    d = _declared().get(name)
    return d.title if d is not None else name.replace("_", " ")


def __getattr__(name: str):
    """``SECTIONS``, ``IN_RESULTS`` and ``FIGURE_SECTION``, read from the declarations when asked for."""
    if name == "SECTIONS":
        return sections()
    if name == "IN_RESULTS":
        return tuple(n for n, d in _declared().items() if d.section == "paper")
    if name == "FIGURE_SECTION":
        return {f: sid for d in _declared().values() for f, sid in d.figures.items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_DROP = re.compile(r"(_design|_paper|^se_|^n_undefined_|_ci_bootstrap$|^bootstrap$|_asymptotic$|_or_as_rr$)")


def display_table(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The page form of a bundle table: ``ci_low``/``ci_high`` pairs merged into one "95% interval"
    cell, the other bootstrap's columns and duplicates left to the CSV, readable headers, at most
    ``MAX_COLUMNS`` columns. Returns (display frame of strings, columns left out)."""
    from impostor_bench.analysis.report.formatting import ci_partner, display_cells  # one formatting of numbers

    cols, rows, _numeric = display_cells(df)
    values = {c: [r[i] for r in rows] for i, c in enumerate(cols)}
    shown, used, left = {}, set(), []
    for c in cols:
        if c in used:
            continue
        if _DROP.search(c):
            left.append(c)
            continue
        hi = ci_partner(c, cols)
        if hi is not None:
            used.add(hi)
            half = c.replace("ci_low", "ci", 1)
            if half.endswith("_ci") and half in cols:  # its half-width beside the interval: one interval per cell
                used.add(half)
                left.append(half)
            name = readable_header(c.replace("ci_low", "ci", 1)).replace("CI", "95% interval", 1)
            shown[name] = ["" if not a or not b else f"[{a}, {b}]" for a, b in zip(values[c], values[hi])]
        else:
            shown[readable_header(c)] = values[c]
    for name in [n for n, v in shown.items() if v and all(x == "" for x in v)]:
        del shown[name]  # a column with no value in any row is not drawn: it is named instead
        left.append(f"{name} (empty in every row)")
    names = list(shown)
    if len(names) > MAX_COLUMNS:
        left += names[MAX_COLUMNS:]
        names = names[:MAX_COLUMNS]
    return pd.DataFrame({n: shown[n] for n in names}, columns=names), left


def _cell(s: str) -> str:
    """A cell's text as HTML; the paper's "6.82 × 10^-9" with a true superscript."""
    return re.sub(r"10\^(-?\d+)", r"10<sup>\1</sup>", html.escape(str(s)))


def paper_table_html(t: PaperTable) -> str:
    """A paper table as HTML: its caption, a table per panel (bold rows where the paper bolds)."""
    parts = [f"<div class=\"paper\" id=\"table{t.number:02d}\"><h3>Table {t.number}: {html.escape(t.title)}</h3>",
             f"<p class=\"caption\"><strong>Not shown:</strong> {html.escape(t.missing)}</p>" if t.missing else
             f"<p class=\"caption\">{html.escape(t.caption)}</p>"]
    for title, head, rows in ([] if t.missing else t.panels):
        if title:
            parts.append(f"<p class=\"panel\">{html.escape(title)}</p>")
        body = []
        for r in rows:
            bold = len(r) > len(head)
            tds = "".join(f"<td class=\"{'txt' if i == 0 else 'num'}\">"
                          + (f"<b>{_cell(c)}</b>" if bold else _cell(c)) + "</td>" for i, c in enumerate(r[:len(head)]))
            body.append(f"<tr>{tds}</tr>")
        parts.append("<div class=\"tbl\"><table><thead><tr>" + "".join(f"<th>{_cell(h)}</th>" for h in head)
                     + "</tr></thead><tbody>" + "".join(body) + "</tbody></table></div>")
    parts.append(f"<p class=\"files\">LaTeX: <a href=\"paper/{t.label}.tex\">paper/{t.label}.tex</a></p></div>")
    return "\n".join(parts)


def paper_table_md(t: PaperTable) -> list[str]:
    out = [f"### Table {t.number}: {t.title}", "",
           f"**Not shown:** {t.missing}" if t.missing else f"_{t.caption}_", ""]
    for title, head, rows in ([] if t.missing else t.panels):
        if title:
            out += [f"**{title}**", ""]
        esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
        out += ["| " + " | ".join(esc(h) for h in head) + " |", "|:---|" + "---:|" * (len(head) - 1)]
        out += ["| " + " | ".join((f"**{esc(c)}**" if len(r) > len(head) else esc(c)) for c in r[:len(head)]) + " |"
                for r in rows]
        out.append("")
    out += [f"LaTeX: [paper/{t.label}.tex](paper/{t.label}.tex)", ""]
    return out
