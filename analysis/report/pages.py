"""The two pages of a report bundle, report.md and report.html, rendered from the manifest,
the computed tables and the drawn figures (the bundle's writing is :mod:`impostor_bench.analysis.report.build`)."""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Optional

import pandas as pd

from impostor_bench.analysis.report.formatting import GENERATOR, flag_intervals, html_table, to_markdown
from impostor_bench.analysis.report.planted import planted_text
from impostor_bench.analysis.report.sections import (PAPER_FIGURES, display_table, figure_section, paper_table_html,
                                                     paper_table_md, section_of, sections, sections_shown, table_title)

__all__ = ["MD_MAX_ROWS", "MANIFEST", "render_markdown", "render_html"]

MANIFEST = "manifest.json"
MD_MAX_ROWS = 60  # rows shown per table in report.md / report.html (the files hold all)



def __getattr__(name: str):
    """``TABLE_TITLES``: every declared table's title (``@table(..., title=...)``), read when asked for."""
    if name == "TABLE_TITLES":
        from impostor_bench.analysis.stats import declarations

        return {n: d.title for n, d in declarations().items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    ] + ([planted_text(src["simulated"])] if src.get("simulated") else [])


def _methods_lines(results: dict[str, pd.DataFrame]) -> list[str]:
    """The methods behind the printed intervals and p-values, read from the inference source
    (``tables/inference.csv``, one row per printed interval or p-value), grouped by method."""
    inf = results.get("inference")
    if inf is None or not len(inf) or "method" not in inf.columns:
        return ["Intervals and p-values: none printed (tables/inference.csv is empty)."]
    m = inf.assign(method=inf["method"].astype(str))
    skipped = m["method"].str.startswith("not computed") | m["method"].str.contains("; p not computed", regex=False)
    parts = []
    for method, grp in m[~skipped].groupby("method", sort=False):
        tabs = list(dict.fromkeys(grp["table"].astype(str)))
        parts.append(f"{method} ({len(grp)}: {', '.join(tabs)})")
    out = [f"Intervals and p-values, by the method that computed them (from tables/inference.csv, {len(m)} rows; "
           f"count and tables in brackets): " + "; ".join(parts) + "."]
    if skipped.any():
        tabs = list(dict.fromkeys(m.loc[skipped, "table"].astype(str)))
        out.append(f"Not computed ({int(skipped.sum())} rows, each with its reason in the method column): "
                   f"{', '.join(tabs)}.")
    return out


def _check_line(results: dict[str, pd.DataFrame]) -> str:
    """What the interval check found (:mod:`impostor_bench.analysis.report.interval_check`)."""
    from impostor_bench.analysis.report.interval_check import interval_problems

    inf = results.get("inference")
    probs = interval_problems(inf)
    n_int = int((inf[["ci_low", "ci_high"]].notna().all(axis=1)).sum()) if inf is not None and len(inf) else 0
    if not len(probs):
        return (f"Interval check: none of the {n_int} printed intervals has zero width, leaves its parameter's range "
                "or excludes its estimate.")
    kinds = probs["interval_check"].value_counts()
    return (f"Interval check: {len(probs)} of {n_int} intervals are not real intervals ("
            + ", ".join(f"{k}: {v}" for k, v in kinds.items())
            + f"; in {', '.join(dict.fromkeys(probs['table'].astype(str)))}). The pages flag them in an "
            "`interval_check` column; the paper's tables print the estimate alone, marked, and the figures the "
            "point alone.")


def _about_lines(m: dict, results: Optional[dict[str, pd.DataFrame]] = None) -> list[str]:
    """Settings and the meaning of the intervals (generated from the methods actually used):
    after the results, with the caveats."""
    results = results or {}
    cfg = m.get("config") or {}
    return [
        "Word pairs: " + _word_pairs_text((m["data"].get("word_pairs")) or []),
        f"Settings: seed {m['seed']}, bootstrap reps {m['bootstrap_reps']}, permutation reps {m['permutation_reps']}, "
        f"alpha {m['alpha']}, bootstrap of the `ci_low`/`ci_high` columns of `bootstrap` and `speaking_itt`: "
        f"{cfg.get('bootstrap', 'design')}"
        + (", paper methods (game-level tests, for reproduction only)" if cfg.get("paper_methods") else "")
        + ". Percentages are 0-100; `*_ci` columns are 95% CI half-widths.",
        *_methods_lines(results),
        _check_line(results),
        "docs/analysis.md gives each method's simulated size and coverage (benchmarks/calibration.csv).",
        f"Provenance: git commit {m.get('git_commit') or 'unknown'}; see {MANIFEST}.",
    ]


def no_statistic(name: str, results: dict[str, pd.DataFrame]) -> bool:
    """Whether table ``name`` has rows but not one estimate: every estimate column the inference
    registry lists for it is absent or empty (e.g. ``correlations`` with fewer than four models).
    Such a table is not drawn; "Not shown" names it."""
    from impostor_bench.analysis.stats.inference import specs

    df = results.get(name)
    ests = {s.estimate for s in specs() if s.table == name}
    if df is None or not len(df) or not ests:
        return False
    return all(c not in df.columns or pd.to_numeric(df[c], errors="coerce").isna().all() for c in ests)


def _layout(m: dict, results: dict[str, pd.DataFrame]) -> tuple[dict[str, list[dict]], list[str]]:
    """(section id -> the tables it shows, in order; empty table names). Tables without rows, or
    whose every estimate is empty (``no_statistic``), are not drawn; tables the Results section
    shows in the paper's layout are not drawn again."""
    shown = [t for t in m["tables"] if t["rows"] > 0 and section_of(t["name"]) is not None
             and not no_statistic(t["name"], results)]
    layout = sections()
    order = {n: i for _, _, names in layout for i, n in enumerate(names)}
    by: dict[str, list[dict]] = {sid: [] for sid, _, _ in layout}
    for t in sorted(shown, key=lambda t: order.get(t["name"], len(order))):
        sid = section_of(t["name"])
        if sid is not None:  # always: `shown` holds only tables with a section
            by[sid].append(t)
    return by, [t["name"] for t in m["tables"] if t["rows"] == 0 or no_statistic(t["name"], results)]


def _figures_by_section(figs: list[dict]) -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = {sid: [] for sid, _, _ in sections()}
    for f in sorted(figs, key=lambda f: PAPER_FIGURES.get(Path(f["file"]).stem, 9)):
        by[figure_section(Path(f["file"]).stem)].append(f)
    return by


def _fig_title(f: dict) -> str:
    n = PAPER_FIGURES.get(Path(f["file"]).stem)
    return f"Figure {n}: {f['title']}" if n else f["title"]


def _not_shown_lines(m: dict, empty: list[str]) -> list[str]:
    out = []
    rows = {t["name"]: t["rows"] for t in m["tables"]}
    blank = [n for n in empty if not rows.get(n)]
    unestimated = [n for n in empty if rows.get(n)]
    if blank:
        out.append(f"Empty tables ({len(blank)}, reasons in the notes): {', '.join(blank)}.")
    if unestimated:
        out.append(f"Tables with every estimate empty ({len(unestimated)}; their rows are in the CSV, reasons in "
                   f"the notes): {', '.join(unestimated)}.")
    if m.get("figures_not_drawn"):
        out.append(f"Figures not drawn ({len(m['figures_not_drawn'])}, reasons in the notes): "
                   f"{', '.join(m['figures_not_drawn'])}.")
    return out


def _title(name: str) -> str:
    return table_title(name)


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


def _paper_tables(m: dict, results: dict[str, pd.DataFrame], built: Optional[list] = None) -> list:
    """The paper's tables: ``built`` where the caller laid them out already (the bundle lays them out once
    for the paper and both pages: a second and third time took seconds of the report)."""
    from impostor_bench.analysis.report.paper_tables import build_paper_tables

    return build_paper_tables(results, m) if built is None else built


def _estimand(name: str, results: dict[str, pd.DataFrame]) -> str:
    """The table caption's estimand sentence (``inference.estimand_sentence``, from tables/inference.csv)."""
    from impostor_bench.analysis.stats.inference import estimand_sentence

    return estimand_sentence(results.get("inference"), [name]).strip()


NOTES_SHOWN = 3  # a table's note column left to the CSV is printed below it when it holds this few texts


def _left_notes(name: str, results: dict[str, pd.DataFrame], left: list[str]) -> list[str]:
    """The distinct texts of a ``note`` column the page left to the CSV (a weak instrument, an
    exploratory fit): a warning belongs beside its numbers. More than ``NOTES_SHOWN`` stay in the CSV."""
    df = results[name]
    if "note" not in df.columns or not any(c == "Note" or c.startswith("Note ") for c in left):
        return []
    texts = list(dict.fromkeys(str(x) for x in df["note"].dropna() if str(x).strip()))
    return texts if len(texts) <= NOTES_SHOWN else []


def _md_table(name: str, t: dict, results: dict[str, pd.DataFrame]) -> list[str]:
    shown, left = display_table(flag_intervals(results[name].head(MD_MAX_ROWS), name))
    more = f" {len(results[name]) - MD_MAX_ROWS} more rows in the CSV." if len(results[name]) > MD_MAX_ROWS else ""
    cols = f" Columns only in the CSV: {', '.join(left)}." if left else ""
    est = _estimand(name, results)
    notes = _left_notes(name, results, left)
    return [f"### {name}: {_title(name)}", "", to_markdown(shown),
            *([f"Note: {'; '.join(notes)}.", ""] if notes else []), *([f"_{est}_", ""] if est else []),
            f"Files: [csv](tables/{name}.csv) · [md](tables/{name}.md) · [tex](tables/{name}.tex) "
            f"({t['rows']} rows, {t['seconds']:.1f} s).{more}{cols}", ""]


def _paper_line(m: dict) -> str:
    p = m.get("paper") or {}
    c = p.get("compare") or {}
    pdf = "[paper/paper.pdf](paper/paper.pdf)" if p.get("pdf") else f"no paper.pdf ({p.get('why')})"
    return (f"The paper's tables and figures: {pdf}, [paper/paper.tex](paper/paper.tex). The paper's published numbers "
            f"beside ours ([paper/compare.txt](paper/compare.txt), [csv](paper/compare.csv); "
            f"`impostor report --compare-paper`): {c.get('numbers', 0)} numbers, {c.get('same_method', 0)} computed "
            f"by the paper's kind of method; the file first says what differs (models, word pairs, schedule, "
            f"methods), so it is not a replication test.")


def _contents(by: dict, figs_by: dict, tables: list) -> list[tuple[str, str, str]]:
    """(anchor, title, what) of each section, for the contents list."""
    out = [("results", "Results", f"Tables 1-{len(tables)}, Figures 1-3 in the paper's layout"
                                  + (", Appendix D win table" if by["results"] else ""))]
    for sid, title, _ in sections_shown(by)[1:]:
        what = [t["name"] for t in by[sid]] + [f"{Path(f['file']).stem} (figure)" for f in figs_by[sid]]
        out.append((sid, title, ", ".join(what) or "nothing to show"))
    return out + [("notes", "Notes and caveats", "what could not be computed and why"),
                  ("about", "About this report", "settings, intervals, provenance")]


def render_markdown(m: dict, results: dict[str, pd.DataFrame], figs: list[dict],
                    paper_tables: Optional[list] = None) -> str:
    """Contents, then Results (the paper's tables and figures), Robustness, Design checks,
    Beyond the paper, what was not shown, notes, settings (``paper_tables``: as laid out already)."""
    by, empty = _layout(m, results)
    figs_by = _figures_by_section(figs)
    tables = _paper_tables(m, results, paper_tables)
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
    out += ["", "## About this report", ""] + [f"- {line}" for line in _about_lines(m, results)] + [""]
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
    shown, left = display_table(flag_intervals(results[name].head(MD_MAX_ROWS), name))
    more = f" {len(results[name]) - MD_MAX_ROWS} more rows in the CSV." if len(results[name]) > MD_MAX_ROWS else ""
    cols = f" Columns only in the CSV: {', '.join(left)}." if left else ""
    est = _estimand(name, results)
    notes = _left_notes(name, results, left)
    return [f"<h3 id=\"tbl-{e(name)}\">{e(name)}: {_code_spans(_title(name))}</h3>", html_table(shown),
            *([f"<p class=\"caption\"><strong>Note:</strong> {e('; '.join(notes))}.</p>"] if notes else []),
            *([f"<p class=\"caption\">{e(est)}</p>"] if est else []),
            f"<p class=\"files\">Files: <a href=\"tables/{e(name)}.csv\">csv</a> · "
            f"<a href=\"tables/{e(name)}.md\">md</a> · <a href=\"tables/{e(name)}.tex\">tex</a> "
            f"({t['rows']} rows, {t['seconds']:.1f} s).{e(more + cols)}</p>"]


def _code_spans(text: str) -> str:
    """Escaped text with its Markdown code spans (`name`) as ``<code>`` (a heading showed the backticks)."""
    import re

    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _html_figure(f: dict, fig_dir: Path) -> str:
    e = html.escape
    data = base64.b64encode((fig_dir / f["file"]).read_bytes()).decode("ascii")
    return (f"<figure id=\"fig-{e(f['file'])}\"><h3>{_code_spans(_fig_title(f))}</h3><a href=\"figures/{e(f['file'])}\">"
            f"<img alt=\"{e(f['title'])}\" src=\"data:image/png;base64,{data}\"></a>"
            f"<figcaption>{e(f['caption'])} (<a href=\"figures/{e(f['file'])}\">figures/{e(f['file'])}</a>)"
            "</figcaption></figure>")


def _md_links(text: str) -> str:
    """The few Markdown links and code spans of the intro lines as HTML."""
    import re

    text = html.escape(text).replace("`", "")
    return re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r'<a href="\2">\1</a>', text)


def render_html(m: dict, results: dict[str, pd.DataFrame], figs: list[dict], fig_dir: Path,
                paper_tables: Optional[list] = None) -> str:
    """The same order as report.md; the first screen is the contents list and Table 1; notes and
    settings collapsed (``<details>``) at the end (``paper_tables``: as laid out already)."""
    e = html.escape
    by, empty = _layout(m, results)
    figs_by = _figures_by_section(figs)
    tables = _paper_tables(m, results, paper_tables)
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
                 "provenance</summary><ul>" + "".join(f"<li>{e(x).replace('`', '')}</li>" for x in _about_lines(m, results))
                 + "</ul></details>")
    parts.append(f"<p class=\"files\">Manifest: <a href=\"{MANIFEST}\">{MANIFEST}</a></p></body></html>")
    return "\n".join(parts)
