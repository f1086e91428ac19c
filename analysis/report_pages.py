"""The two pages of a report bundle, report.md and report.html, rendered from the manifest,
the computed tables and the drawn figures (the bundle's writing is :mod:`analysis.report`)."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Optional

import pandas as pd

from analysis.report_format import GENERATOR, flag_intervals, html_table, to_markdown

__all__ = ["TABLE_TITLES", "LEAD_TABLES", "MD_MAX_ROWS", "MANIFEST", "render_markdown", "render_html"]

MANIFEST = "manifest.json"
MD_MAX_ROWS = 60  # rows shown per table in report.md / report.html (the files hold all)

TABLE_TITLES: dict[str, str] = {
    "headline": "Headline results per model (paper Table 1)",
    "odds_ratios": "Key effects: odds ratios with cluster-robust CIs (Tables 2 and 4)",
    "evalues": "E-values for unmeasured confounding (Appendix B.3)",
    "chi2": "Chi-squared tests with Cramér's V (Table 3)",
    "balance": "Game balance by mode (Appendix C.1 / D.1)",
    "tie_sizes": "Tie-size distribution by mode (Table 7)",
    "tiebreak_mode": "Symmetric tie-breakers by mode (Table 8)",
    "tiebreak_mode_difficulty": "Symmetric tie-breakers by mode and difficulty (Table 9)",
    "speaking_itt": ("Speaking-order pseudo-arm ITT, middle vs random (Table 6); CI from the bootstrap named in "
                     "`bootstrap` (both in `ci_*_design`, `ci_*_paper`); p = randomisation p"),
    "opponent_baseline": "Opponent-baseline regressions within model x difficulty (Table 5)",
    "scaling": "Scaling with provider control and within-family slopes (Table 10)",
    "size_fit_models": "Models each size fit used and left out, and why (Tables 2 and 10)",
    "coordination": "Coordination and impostor behaviour (Table 11)",
    "correlations": "Cross-model correlations (Sections 3.2-3.3)",
    "team_dynamics": ("Team dynamics per model (paper Table 12): the paper's 14 columns first (empty = not definable "
                      "in one-round games, see table12_undefined), then baselines (`*_cross_*`: cross-team pairs of "
                      "the same games), per pair kind (mm = majority-majority, im = impostor-majority), M.6 failure "
                      "modes (`fail_*`, % of team failures) and `*_ci_low`/`*_ci_high` from the design bootstrap "
                      "(experiment level)"),
    "table12_undefined": "Table 12 / Appendix M metrics one-round games cannot define, and why",
    "team_ballots": ("Teammate vs cross-team vote alignment per model, team mode and pair kind (Table 12 Vote/Implicit "
                     "Coord. controls); CI of the teammate premium from the design bootstrap"),
    "team_language": ("Coordination, suspicion and hedging language per model and mode (Appendix M.8), from the "
                      "shipped lexicon (analysis/lexicon/language.json)"),
    "style_correlation": ("Teammates' style correlation (Appendix M.8): Pearson r of log description length within "
                          "teammate vs cross-team pairs, per mode; CI from the design bootstrap"),
    "style_metrics": ("Style-aware metrics (Appendix O.2): length, talk share, language rates per 100 words, impostor "
                      "win raw and reweighted to the pooled length distribution"),
    "style_adjusted": ("Mode and model effects on the impostor win without and with adjustment for description length "
                       "and hedging (Appendix O.2); CIs from the design bootstrap, ranks of the model terms"),
    "bootstrap": ("Experiment-level bootstrap (Appendix B.2): `ci_low`/`ci_high` from the bootstrap named in "
                  "`bootstrap`; `ci_*_design` = design bootstrap, `ci_*_paper` = the paper's block bootstrap"),
    "permutation": "Permutation tests (Appendix B.2)",
    "multiple_comparisons": "Multiple-comparison corrections (Appendix B)",
    "invalid_outputs": "Invalid outputs per model by class: descriptions and ballots (docs/rules.md)",
    "cost": ("Tokens and cost per seat and game, per model and role, and cost per impostor win / correct "
             "detection (USD; NaN where the price is unknown, never 0)"),
    "ratings": ("Skill ratings: impostor and detection skill per model (log-odds, sum to zero per role) from a "
                "logistic model of every game, CIs from the bootstrap named in `bootstrap` (docs/analysis.md)"),
}


# Shown first, in this order, when they have rows: the results a reader looks for.
LEAD_TABLES = ("headline", "odds_ratios", "ratings", "speaking_itt", "bootstrap")


def _intro_lines(m: dict) -> list[str]:
    """The two lines above the results: where the data came from and what it holds."""
    d = m["data"]
    src = m.get("source") or {}
    where = src.get("parquet") or (f"MLflow experiment '{src.get('experiment')}'" if src.get("experiment") else "in-memory data")
    imp = d.get("impostor_win_pct")
    return [
        f"Source: {where}. Generated {m['created_utc']} by `{GENERATOR}` (impostor-bench {m['packages'].get('impostor-bench')}).",
        f"Data: {d['games']:,} games in {d['experiments']:,} experiments; {len(d['models'])} models; "
        f"modes {', '.join(d['modes'])}; difficulties {', '.join(d['difficulties'])}"
        + (f"; overall impostor win {imp:.1f}%." if imp is not None else "."),
    ]


def _about_lines(m: dict) -> list[str]:
    """Settings and the meaning of the intervals: after the results, with the caveats."""
    return [
        "Word pairs: " + _word_pairs_text((m["data"].get("word_pairs")) or []),
        f"Settings: seed {m['seed']}, bootstrap reps {m['bootstrap_reps']}, permutation reps {m['permutation_reps']}, "
        f"alpha {m['alpha']}. Percentages are 0-100; `*_ci` columns are 95% CI half-widths.",
        f"Intervals: bootstrap CIs (`ci_low`/`ci_high` of `bootstrap`, `speaking_itt`; headline `imp_win_ci_boot`) "
        f"use the {(m.get('config') or {}).get('bootstrap', 'design')} bootstrap (design = experiment-level wild "
        "bootstrap, the default; paper = experiments resampled within mode x difficulty, Appendix B.2); both "
        "are in the `*_design`/`*_paper` columns. Headline `*_ci` are Wilson (games independent); odds ratios "
        "are Wald (games independent); docs/analysis.md gives each one's simulated coverage. "
        "`interval_check` flags a zero-width interval or one whose bootstrap had many undefined replicates.",
        f"Provenance: git commit {m.get('git_commit') or 'unknown'}; see {MANIFEST}.",
    ]


def _layout(m: dict) -> tuple[list[dict], list[dict], list[str]]:
    """(lead tables, other tables, empty table names) in report order; tables without rows are not drawn."""
    shown = [t for t in m["tables"] if t["rows"] > 0]
    lead = sorted((t for t in shown if t["name"] in LEAD_TABLES), key=lambda t: LEAD_TABLES.index(t["name"]))
    rest = [t for t in shown if t["name"] not in LEAD_TABLES]
    return lead, rest, [t["name"] for t in m["tables"] if t["rows"] == 0]


def _not_shown_lines(m: dict, empty: list[str]) -> list[str]:
    out = []
    if empty:
        out.append(f"Empty tables ({len(empty)}, reasons in the notes): {', '.join(empty)}.")
    if m.get("figures_not_drawn"):
        out.append(f"Figures not drawn ({len(m['figures_not_drawn'])}, reasons in the notes): "
                   f"{', '.join(m['figures_not_drawn'])}.")
    return out


def _title(name: str) -> str:
    return TABLE_TITLES.get(name, name.replace("_", " "))


def _word_pairs_text(files: list[dict]) -> str:
    if not files:
        return ("not recorded (the games table has no word_pairs_file/word_pairs_sha256: simulated data, or "
                "exported before these columns existed).")
    parts = [f"`{Path(f['file']).name if f.get('file') else '(name not recorded)'}` "
             f"(sha256 `{f.get('sha256') or 'not recorded'}`, {f['games']:,} games"
             + (f", {f['file']}" if f.get("file") else "") + ")" for f in files]
    return "; ".join(parts) + ("; several files: compare with care." if len(files) > 1 else ".")


def _group_notes(notes: list[str], min_group: int = 4) -> list[tuple[str, list[str]]]:
    """Notes in order; runs sharing a ``prefix:`` (>= min_group of them) are grouped under it."""
    def key(n: str) -> Optional[str]:
        head, sep, _ = n.partition(": ")
        return head if sep and " " not in head and len(head) <= 40 else None

    counts: dict[str, int] = {}
    for n in notes:
        k = key(n)
        if k:
            counts[k] = counts.get(k, 0) + 1
    out: list[tuple[str, list[str]]] = []
    seen: dict[str, int] = {}
    for n in notes:
        k = key(n)
        if k and counts[k] >= min_group:
            if k not in seen:
                seen[k] = len(out)
                out.append((k, []))
            out[seen[k]][1].append(n[len(k) + 2:])
        else:
            out.append((n, []))
    return out


def _md_table(name: str, t: dict, results: dict[str, pd.DataFrame]) -> list[str]:
    return [f"### {name}: {_title(name)}", "", to_markdown(flag_intervals(results[name]), MD_MAX_ROWS),
            f"Files: [csv](tables/{name}.csv) · [md](tables/{name}.md) · [tex](tables/{name}.tex) "
            f"({t['rows']} rows, {t['seconds']:.1f} s)", ""]


def render_markdown(m: dict, results: dict[str, pd.DataFrame], figs: list[dict]) -> str:
    """Results first (lead tables, figures, other tables), then what was not shown, notes, settings."""
    lead, rest, empty = _layout(m)
    out = ["# The Impostor Game: analysis report", ""]
    out += [f"- {line}" for line in _intro_lines(m)]
    out += ["", "## Results", ""]
    for t in lead:
        out += _md_table(t["name"], t, results)
    out += ["## Figures", ""]
    for f in figs:
        out += [f"### {f['title']}", "", f"![{f['title']}](figures/{f['file']})", "", f"_{f['caption']}_", ""]
    if not figs:
        out += ["_No figures were drawn (see notes)._", ""]
    out += ["## More tables", ""]
    for t in rest:
        out += _md_table(t["name"], t, results)
    not_shown = _not_shown_lines(m, empty)
    if not_shown:
        out += ["## Not shown", ""] + [f"- {line}" for line in not_shown] + [""]
    out += [f"## Notes and caveats ({len(m['notes'])})", ""]
    for head, items in _group_notes(m["notes"]):
        out.append(f"- {head}" + (f" ({len(items)} notes):" if items else ""))
        out += [f"  - {it}" for it in items]
    if not m["notes"]:
        out.append("- none")
    out += ["", "## About this report", ""] + [f"- {line}" for line in _about_lines(m)] + [""]
    return "\n".join(out)


_CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{border-bottom:2px solid #444;padding-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ccc}
h3{margin-top:1.6em}.tbl{overflow-x:auto}table{border-collapse:collapse;font-size:13px;margin:.5em 0}
th,td{border:1px solid #ddd;padding:3px 8px}th{background:#f2f2f2;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums}tr:nth-child(even) td{background:#fafafa}
td.empty{color:#888;font-style:italic}.more,.files{color:#555;font-size:13px}figure{margin:1em 0}
figure img{max-width:100%;border:1px solid #eee}figcaption{color:#444;font-size:13px}
ul.notes li{margin:.2em 0}nav ul{columns:2;font-size:14px}
"""


def _html_table(name: str, t: dict, results: dict[str, pd.DataFrame]) -> list[str]:
    e = html.escape
    return [f"<h3 id=\"tbl-{e(name)}\">{e(name)}: {e(_title(name))}</h3>",
            html_table(flag_intervals(results[name]), MD_MAX_ROWS),
            f"<p class=\"files\">Files: <a href=\"tables/{e(name)}.csv\">csv</a> · "
            f"<a href=\"tables/{e(name)}.md\">md</a> · <a href=\"tables/{e(name)}.tex\">tex</a> "
            f"({t['rows']} rows, {t['seconds']:.1f} s)</p>"]


def render_html(m: dict, results: dict[str, pd.DataFrame], figs: list[dict], fig_dir: Path) -> str:
    """The same order as report.md; notes and settings collapsed (``<details>``) at the end."""
    e = html.escape
    lead, rest, empty = _layout(m)
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Impostor Game report</title>"
             f"<style>{_CSS}</style></head><body>", "<h1>The Impostor Game: analysis report</h1>", "<ul>"]
    parts += [f"<li>{e(line).replace('`', '')}</li>" for line in _intro_lines(m)]
    parts.append("</ul><nav><details><summary>Contents</summary><ul>")
    parts += [f"<li><a href=\"#tbl-{e(t['name'])}\">Table {e(t['name'])}</a></li>" for t in lead]
    parts += [f"<li><a href=\"#fig-{e(f['file'])}\">Figure: {e(f['title'])}</a></li>" for f in figs]
    parts += [f"<li><a href=\"#tbl-{e(t['name'])}\">Table {e(t['name'])}</a></li>" for t in rest]
    parts.append("<li><a href=\"#notes\">Notes and caveats</a></li></ul></details></nav><h2>Results</h2>")
    for t in lead:
        parts += _html_table(t["name"], t, results)
    parts.append("<h2>Figures</h2>")
    for f in figs:
        data = base64.b64encode((fig_dir / f["file"]).read_bytes()).decode("ascii")
        parts.append(
            f"<figure id=\"fig-{e(f['file'])}\"><h3>{e(f['title'])}</h3><a href=\"figures/{e(f['file'])}\">"
            f"<img alt=\"{e(f['title'])}\" src=\"data:image/png;base64,{data}\"></a>"
            f"<figcaption>{e(f['caption'])} (<a href=\"figures/{e(f['file'])}\">figures/{e(f['file'])}</a>)</figcaption></figure>"
        )
    if not figs:
        parts.append("<p><em>No figures were drawn (see notes).</em></p>")
    parts.append("<h2>More tables</h2>")
    for t in rest:
        parts += _html_table(t["name"], t, results)
    not_shown = _not_shown_lines(m, empty)
    if not_shown:
        parts.append("<h2>Not shown</h2><ul>" + "".join(f"<li>{e(x)}</li>" for x in not_shown) + "</ul>")
    parts.append(f"<h2 id=\"notes\">Notes and caveats</h2><details><summary>{len(m['notes'])} notes</summary>"
                 "<ul class=\"notes\">")
    for head, items in _group_notes(m["notes"]):
        if items:
            sub = "".join(f"<li>{e(it)}</li>" for it in items)
            parts.append(f"<li><details><summary>{e(head)} ({len(items)} notes)</summary><ul>{sub}</ul></details></li>")
        else:
            parts.append(f"<li>{e(head)}</li>")
    if not m["notes"]:
        parts.append("<li>none</li>")
    parts.append("</ul></details><h2>About this report</h2><details><summary>Settings, intervals, provenance"
                 "</summary><ul>" + "".join(f"<li>{e(x).replace('`', '')}</li>" for x in _about_lines(m))
                 + "</ul></details>")
    parts.append(f"<p class=\"files\">Manifest: <a href=\"{MANIFEST}\">{MANIFEST}</a></p></body></html>")
    return "\n".join(parts)
