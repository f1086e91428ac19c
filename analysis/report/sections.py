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
from typing import Optional

import pandas as pd

from impostor_bench.analysis.report.paper_cells import PaperTable
from impostor_bench.analysis.report.formatting import readable_header

__all__ = ["SECTIONS", "sections_shown", "FIGURE_SECTION", "PAPER_FIGURES", "section_of", "display_table", "paper_table_html",
           "paper_table_md", "MAX_COLUMNS"]

MAX_COLUMNS = 8  # a wider table shows its first columns; the rest are in the CSV

# (id, title, bundle tables in order). Tables not named here go to "Beyond the paper".
SECTIONS: list[tuple[str, str, tuple[str, ...]]] = [
    ("results", "Results", ("win_model_mode_difficulty",)),
    ("robustness", "Robustness (Appendix B)",
     ("bootstrap", "permutation", "cluster_robust", "sensitivity", "multiple_comparisons", "evalues",
      "speaking_randomization", "speaking_glm", "equation1", "learning", "correlations", "size_fit_models",
      "inference")),
    ("design", "Design checks",
     ("balance", "negative_controls", "negative_control_position", "positive_control", "detection_by_difficulty",
      "invalid_outputs")),
    ("rounds", "Longer games", ("rounds_survival", "rounds_votes", "rounds_trust", "rounds_commit",
                                "rounds_recovery")),
    ("beyond", "Beyond the paper", ("ratings", "cost")),
]
# Sections drawn only when one of their tables has rows (the round tables are empty for one-round games).
ONLY_WITH_TABLES = ("rounds",)


def sections_shown(by: dict) -> list[tuple[str, str, tuple[str, ...]]]:
    """``SECTIONS`` less those of ``ONLY_WITH_TABLES`` that have nothing to show in ``by`` (id -> tables)."""
    return [s for s in SECTIONS if s[0] not in ONLY_WITH_TABLES or by.get(s[0])]
# Bundle tables the Results section shows in the paper's layout (their full form is in tables/).
IN_RESULTS = ("headline", "odds_ratios", "chi2", "opponent_baseline", "speaking_itt", "tie_sizes", "tiebreak_mode",
              "tiebreak_mode_difficulty", "scaling", "coordination", "team_dynamics", "win_by_model_mode",
              "win_by_model_difficulty")
PAPER_FIGURES = {"win_by_mode": 1, "win_by_difficulty": 2, "difficulty_validation": 3}
FIGURE_SECTION = {"odds_ratios_forest": "robustness", "tiebreak_deltas": "robustness",
                  "vote_network_example": "design", "ratings": "beyond", "cost": "beyond"}


def section_of(name: str) -> Optional[str]:
    """The section a bundle table is shown in (None: shown in Results in the paper's layout)."""
    if name in IN_RESULTS:
        return None
    for sid, _, names in SECTIONS:
        if name in names:
            return sid
    return "beyond"


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
            name = readable_header(c.replace("ci_low", "ci", 1)).replace("CI", "95% interval", 1)
            shown[name] = ["" if not a or not b else f"[{a}, {b}]" for a, b in zip(values[c], values[hi])]
        else:
            shown[readable_header(c)] = values[c]
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
             f"<p class=\"caption\">{html.escape(t.caption)}"
             + (f" <strong>Not computed from this bundle:</strong> {html.escape(t.missing)}" if t.missing else "")
             + "</p>"]
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
    out = [f"### Table {t.number}: {t.title}", "", f"_{t.caption}_"
           + (f" **Not computed from this bundle:** {t.missing}" if t.missing else ""), ""]
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
