"""The two pages of a report bundle, report.md and report.html, rendered from the manifest,
the computed tables and the drawn figures (the bundle's writing is :mod:`impostor_bench.analysis.report.build`)."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Optional

import pandas as pd

from impostor_bench.analysis.report.formatting import GENERATOR, flag_intervals, html_table, to_markdown
from impostor_bench.analysis.report.sections import (FIGURE_SECTION, PAPER_FIGURES, SECTIONS, display_table, paper_table_html,
                                     paper_table_md, section_of, sections_shown)

__all__ = ["TABLE_TITLES", "MD_MAX_ROWS", "MANIFEST", "render_markdown", "render_html"]

MANIFEST = "manifest.json"
MD_MAX_ROWS = 60  # rows shown per table in report.md / report.html (the files hold all)

TABLE_TITLES: dict[str, str] = {
    "headline": "Headline results per model (paper Table 1)",
    "rounds_survival": "Longer games: the impostor's survival by round and mode (Kaplan-Meier, % not voted out)",
    "rounds_votes": "Longer games: majority ballots naming the impostor, by model and round",
    "rounds_trust": "Longer games: betrayal, trust recovery, resilience and strategy revision by model (Appendix M)",
    "rounds_commit": "Longer games: team commitment by round (share of uncommitted teams that commit)",
    "rounds_recovery": ("Longer games: after a betrayal, immediate forgiveness, graduated rehabilitation or permanent "
                        "severance (M.4), % of betrayals with a later round"),
    "equation1": ("Equation (1) of B.3 as written: position (and size) odds ratios with FE_experiment and "
                  "FE_word_pair, CR1 by experiment and by word pair"),
    "learning": "M.8 learning coefficient per mode: log-odds change per game of the schedule, and the change by game 30",
    "phenotypes": "M.7 team phenotypes: k-means (k = 4) of the models' standardised Table 12 profiles",
    "phenotype_fit": "M.7: silhouette of k = 2..5 groups of the models' profiles (are four phenotypes supported?)",
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
    "team_dynamics": ("Team dynamics per model (paper Table 12): the paper's 14 columns first (an empty one's cause "
                      "is in table12_undefined; Strategy Align. needs judge labels, Trust Recovery multi-round games), then baselines (`*_cross_*`: cross-team pairs of "
                      "the same games), per pair kind (mm = majority-majority, im = impostor-majority), M.6 failure "
                      "modes (`fail_*`, % of team failures) and `*_ci_low`/`*_ci_high` from the design bootstrap "
                      "(experiment level)"),
    "table12_undefined": "Table 12 / Appendix M columns with empty cells, the models concerned and the cause that holds for these data",
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
    "win_model_mode_difficulty": ("Impostor win (%) by model x mode x difficulty (Appendix D), with rows over all "
                                  "modes and over all models; 95% interval with experiments as the units"),
    "detection_by_difficulty": ("Detection accuracy (%) by majority model and difficulty (model ALL = pooled); 95% "
                                "interval with experiments as the units"),
    "negative_control_position": ("Negative control (iv) of B.3: majority self-declaration (%) by speaking position, "
                                  "expected near zero and equal across positions"),
    "positive_control": ("Positive control (v) of B.3: semantic distance of the word pairs by difficulty (cosine, "
                         "t interval over pairs) beside detection accuracy; both should fall from easy to expert"),
    "ratings": ("Skill ratings: impostor and detection skill per model (log-odds, sum to zero per role) from a "
                "logistic model of every game, CIs from the bootstrap named in `bootstrap` (docs/analysis.md)"),
}


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


def _layout(m: dict, results: dict[str, pd.DataFrame]) -> tuple[dict[str, list[dict]], list[str]]:
    """(section id -> the tables it shows, in order; empty table names). Tables without rows are
    not drawn; tables the Results section shows in the paper's layout are not drawn again."""
    shown = [t for t in m["tables"] if t["rows"] > 0 and section_of(t["name"]) is not None]
    order = {n: i for _, _, names in SECTIONS for i, n in enumerate(names)}
    by: dict[str, list[dict]] = {sid: [] for sid, _, _ in SECTIONS}
    for t in sorted(shown, key=lambda t: order.get(t["name"], len(order))):
        sid = section_of(t["name"])
        if sid is not None:  # always: `shown` holds only tables with a section
            by[sid].append(t)
    return by, [t["name"] for t in m["tables"] if t["rows"] == 0]


def _figures_by_section(figs: list[dict]) -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = {sid: [] for sid, _, _ in SECTIONS}
    for f in sorted(figs, key=lambda f: PAPER_FIGURES.get(Path(f["file"]).stem, 9)):
        stem = Path(f["file"]).stem
        by["results" if stem in PAPER_FIGURES else FIGURE_SECTION.get(stem, "beyond")].append(f)
    return by


def _fig_title(f: dict) -> str:
    n = PAPER_FIGURES.get(Path(f["file"]).stem)
    return f"Figure {n}: {f['title']}" if n else f["title"]


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


def _paper_tables(m: dict, results: dict[str, pd.DataFrame]) -> list:
    from impostor_bench.analysis.report.paper_tables import build_paper_tables

    return build_paper_tables(results, m)


def _md_table(name: str, t: dict, results: dict[str, pd.DataFrame]) -> list[str]:
    shown, left = display_table(flag_intervals(results[name]).head(MD_MAX_ROWS))
    more = f" {len(results[name]) - MD_MAX_ROWS} more rows in the CSV." if len(results[name]) > MD_MAX_ROWS else ""
    cols = f" Columns only in the CSV: {', '.join(left)}." if left else ""
    return [f"### {name}: {_title(name)}", "", to_markdown(shown),
            f"Files: [csv](tables/{name}.csv) · [md](tables/{name}.md) · [tex](tables/{name}.tex) "
            f"({t['rows']} rows, {t['seconds']:.1f} s).{more}{cols}", ""]


def _paper_line(m: dict) -> str:
    p = m.get("paper") or {}
    c = p.get("compare") or {}
    pdf = "[paper/paper.pdf](paper/paper.pdf)" if p.get("pdf") else f"no paper.pdf ({p.get('why')})"
    return (f"The paper's tables and figures: {pdf}, [paper/paper.tex](paper/paper.tex). Paper's published numbers "
            f"beside ours: {c.get('inside', 0)} of {c.get('with_interval', 0)} inside our 95% intervals "
            f"([paper/compare.csv](paper/compare.csv); `impostor report --compare-paper` prints it).")


def _contents(by: dict, figs_by: dict, tables: list) -> list[tuple[str, str, str]]:
    """(anchor, title, what) of each section, for the contents list."""
    out = [("results", "Results", f"Tables 1-{len(tables)}, Figures 1-3 in the paper's layout"
                                  + (", Appendix D win table" if by["results"] else ""))]
    for sid, title, _ in sections_shown(by)[1:]:
        what = [t["name"] for t in by[sid]] + [f"{Path(f['file']).stem} (figure)" for f in figs_by[sid]]
        out.append((sid, title, ", ".join(what) or "nothing to show"))
    return out + [("notes", "Notes and caveats", "what could not be computed and why"),
                  ("about", "About this report", "settings, intervals, provenance")]


def render_markdown(m: dict, results: dict[str, pd.DataFrame], figs: list[dict]) -> str:
    """Contents, then Results (the paper's tables and figures), Robustness, Design checks,
    Beyond the paper, what was not shown, notes, settings."""
    by, empty = _layout(m, results)
    figs_by = _figures_by_section(figs)
    tables = _paper_tables(m, results)
    out = ["# The Impostor Game: analysis report", ""]
    out += [f"- {line}" for line in _intro_lines(m)] + [f"- {_paper_line(m)}", "", "## Contents", ""]
    out += [f"- [{title}](#{a}): {what}" for a, title, what in _contents(by, figs_by, tables)] + [""]
    out += ["## Results", ""]
    for t in tables:
        out += paper_table_md(t)
    for sid, title, _ in sections_shown(by):
        if sid != "results":
            out += [f"## {title}", ""]
        for t in by[sid]:
            out += _md_table(t["name"], t, results)
        for f in figs_by[sid]:
            out += [f"### {_fig_title(f)}", "", f"![{f['title']}](figures/{f['file']})", "", f"_{f['caption']}_", ""]
        if sid == "results" and not figs:
            out += ["_No figures were drawn (see notes)._", ""]
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
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:1.2em auto;padding:0 1em;color:#222;line-height:1.4}
h1{border-bottom:2px solid #444;padding-bottom:.2em;margin:.2em 0 .4em;font-size:1.7em}h2{margin-top:2em;border-bottom:1px solid #ccc}
h3{margin:1.2em 0 .3em}.tbl{max-width:100%;overflow-x:auto}table{border-collapse:collapse;font-size:13px;margin:.3em 0}
th,td{border:1px solid #ddd;padding:2px 7px}th{background:#f2f2f2;position:sticky;top:0;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}tr:nth-child(even) td{background:#fafafa}
td.empty{color:#888;font-style:italic}.more,.files{color:#555;font-size:12px;margin:.2em 0}figure{margin:1em 0}
figure img{max-width:100%;border:1px solid #eee}figcaption,.caption{color:#444;font-size:13px;margin:.2em 0}
.panel{font-style:italic;margin:.6em 0 .1em;font-size:13px}ul.notes li{margin:.2em 0}
.intro{font-size:13px;color:#444;margin:.2em 0 .6em;padding-left:1.2em}
nav.toc{background:#f7f7f7;border:1px solid #ddd;padding:.3em 1em;font-size:14px}nav.toc ol{margin:.2em 0;columns:2}
nav.toc .what{color:#666;font-size:12px}
"""


def _html_table(name: str, t: dict, results: dict[str, pd.DataFrame]) -> list[str]:
    e = html.escape
    shown, left = display_table(flag_intervals(results[name]).head(MD_MAX_ROWS))
    more = f" {len(results[name]) - MD_MAX_ROWS} more rows in the CSV." if len(results[name]) > MD_MAX_ROWS else ""
    cols = f" Columns only in the CSV: {', '.join(left)}." if left else ""
    return [f"<h3 id=\"tbl-{e(name)}\">{e(name)}: {e(_title(name))}</h3>", html_table(shown),
            f"<p class=\"files\">Files: <a href=\"tables/{e(name)}.csv\">csv</a> · "
            f"<a href=\"tables/{e(name)}.md\">md</a> · <a href=\"tables/{e(name)}.tex\">tex</a> "
            f"({t['rows']} rows, {t['seconds']:.1f} s).{e(more + cols)}</p>"]


def _html_figure(f: dict, fig_dir: Path) -> str:
    e = html.escape
    data = base64.b64encode((fig_dir / f["file"]).read_bytes()).decode("ascii")
    return (f"<figure id=\"fig-{e(f['file'])}\"><h3>{e(_fig_title(f))}</h3><a href=\"figures/{e(f['file'])}\">"
            f"<img alt=\"{e(f['title'])}\" src=\"data:image/png;base64,{data}\"></a>"
            f"<figcaption>{e(f['caption'])} (<a href=\"figures/{e(f['file'])}\">figures/{e(f['file'])}</a>)"
            "</figcaption></figure>")


def _md_links(text: str) -> str:
    """The few Markdown links and code spans of the intro lines as HTML."""
    import re

    text = html.escape(text).replace("`", "")
    return re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r'<a href="\2">\1</a>', text)


def render_html(m: dict, results: dict[str, pd.DataFrame], figs: list[dict], fig_dir: Path) -> str:
    """The same order as report.md; the first screen is the contents list and Table 1; notes and
    settings collapsed (``<details>``) at the end."""
    e = html.escape
    by, empty = _layout(m, results)
    figs_by = _figures_by_section(figs)
    tables = _paper_tables(m, results)
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Impostor Game report</title>"
             f"<style>{_CSS}</style></head><body>", "<h1>The Impostor Game: analysis report</h1>",
             "<nav class=\"toc\"><strong>Contents</strong><ol>"]
    for a, title, what in _contents(by, figs_by, tables):
        sub = ""
        if a == "results":
            sub = "<br><span class=\"what\">" + " · ".join(
                f"<a href=\"#table{t.number:02d}\">T{t.number}</a>" for t in tables) + " · " + " · ".join(
                f"<a href=\"#fig-{e(f['file'])}\">F{PAPER_FIGURES[Path(f['file']).stem]}</a>" for f in figs_by["results"]) + "</span>"
        parts.append(f"<li><a href=\"#{a}\">{e(title)}</a> <span class=\"what\">{e(what)}</span>{sub}</li>")
    parts.append("</ol></nav><ul class=\"intro\">")
    parts += [f"<li>{_md_links(line)}</li>" for line in _intro_lines(m) + [_paper_line(m)]]
    parts.append("</ul><h2 id=\"results\">Results</h2>")
    for t in tables:
        parts.append(paper_table_html(t))
    for sid, title, _ in sections_shown(by):
        if sid != "results":
            parts.append(f"<h2 id=\"{sid}\">{e(title)}</h2>")
        for t in by[sid]:
            parts += _html_table(t["name"], t, results)
        parts += [_html_figure(f, fig_dir) for f in figs_by[sid]]
        if sid == "results":
            if not figs:
                parts.append("<p><em>No figures were drawn (see notes).</em></p>")
            full = [t for t in m["tables"] if t["rows"] > 0 and section_of(t["name"]) is None]
            parts.append("<p class=\"files\">Full tables behind the Results (every column, full precision): "
                         + " · ".join(f"<a href=\"tables/{e(t['name'])}.csv\">{e(t['name'])}.csv</a>" for t in full)
                         + "</p>")
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
    parts.append("</ul></details><h2 id=\"about\">About this report</h2><details><summary>Settings, intervals, "
                 "provenance</summary><ul>" + "".join(f"<li>{e(x).replace('`', '')}</li>" for x in _about_lines(m))
                 + "</ul></details>")
    parts.append(f"<p class=\"files\">Manifest: <a href=\"{MANIFEST}\">{MANIFEST}</a></p></body></html>")
    return "\n".join(parts)
