"""The report bundle (shared/data-contract.md, section 2).

``build_report(data, out, cfg)`` computes every table of ``analysis.stats.TABLES``
and writes::

    OUT/tables/NAME.csv   full precision
    OUT/tables/NAME.md    GitHub-flavoured Markdown table
    OUT/tables/NAME.tex   a \\begin{tabular}...\\end{tabular} fragment (no packages needed)
    OUT/figures/*.png
    OUT/report.md         tables, figures, notes
    OUT/report.html       self-contained rendering (figures embedded, also linked)
    OUT/manifest.json     inputs + sha256, package versions, settings, tables, notes, wall time

Everything is written into a temporary sibling directory and moved into place at
the end, so a failure leaves OUT as it was.  OUT may be missing, empty or a
previous bundle (replaced); anything else is refused.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import html
import json
import math
import os
import platform
import shutil
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Callable, Mapping, Optional

import numpy as np
import pandas as pd

from analysis import bundle_dir
from analysis.data import AnalysisData
from impostor.core.errors import ImpostorError

from analysis.stats._base import CONTRACT  # noqa: E402

__all__ = ["CONTRACT_COLUMNS", "TABLE_TITLES", "build_report", "to_markdown", "to_latex", "latex_escape"]

GENERATOR = "impostor report"
MANIFEST = "manifest.json"

# Leading columns of every required table (shared/data-contract.md, section 2): one definition.
CONTRACT_COLUMNS: dict[str, list[str]] = CONTRACT

TABLE_TITLES: dict[str, str] = {
    "headline": "Headline results per model (paper Table 1)",
    "odds_ratios": "Key effects: odds ratios with Wald CIs (Tables 2 and 4)",
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
    "bootstrap": ("Experiment-level bootstrap (Appendix B.2): `ci_low`/`ci_high` from the bootstrap named in "
                  "`bootstrap`; `ci_*_design` = design bootstrap, `ci_*_paper` = the paper's block bootstrap"),
    "permutation": "Permutation tests (Appendix B.2)",
    "multiple_comparisons": "Multiple-comparison corrections (Appendix B)",
    "invalid_outputs": "Invalid outputs per model by class: descriptions and ballots (docs/rules.md)",
}

MD_MAX_ROWS = 60  # rows shown per table in report.md / report.html (the files hold all)
_P_COLUMNS = {"p", "q", "spearman_p", "p_bh", "p_bonferroni", "p_holm", "p_value", "pvalue"}
_PACKAGES = ["impostor-bench", "pandas", "numpy", "scipy", "statsmodels", "networkx", "pingouin", "matplotlib",
             "pyarrow", "mlflow", "pydantic"]


# --------------------------------------------------------------------------- formatting


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


def _html_table(df: pd.DataFrame, max_rows: Optional[int] = None) -> str:
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


# --------------------------------------------------------------------------- bundle helpers


def _is_bundle(path: Path) -> bool:
    try:
        return json.loads((path / MANIFEST).read_text()).get("generator") == GENERATOR
    except Exception:  # noqa: BLE001
        return False


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ImpostorError(f"--out {out}: exists and is not a directory; fix: choose a directory path for the report")
    if out.is_dir() and any(out.iterdir()) and not _is_bundle(out):
        raise ImpostorError(
            f"--out {out}: directory is not empty and is not a previous report bundle (no {MANIFEST} from "
            f"{GENERATOR}); fix: choose a new or empty --out directory"
        )


def _versions() -> dict[str, Optional[str]]:
    out: dict[str, Optional[str]] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _data_summary(data: AnalysisData) -> dict:
    g = data.games
    return {
        "games": int(len(g)),
        "player_rows": int(len(data.players)),
        "experiments": int(g["experiment_id"].nunique()) if "experiment_id" in g else None,
        "models": sorted(map(str, data.players["model"].unique())) if len(data.players) else [],
        "modes": sorted(map(str, g["mode"].unique())) if len(g) else [],
        "difficulties": sorted(map(str, g["difficulty"].unique())) if len(g) else [],
        "impostor_win_pct": float(100 * (g["winner"] == "impostor").mean()) if len(g) else None,
        "models_csv": data.models is not None,
        "word_pairs": _word_pair_files(g),
    }


def _word_pair_files(g: pd.DataFrame) -> list[dict]:
    """The word-pair file(s) the games were drawn from (exporter columns; absent in old exports)."""
    if not len(g) or "word_pairs_sha256" not in g:
        return []
    keys = pd.DataFrame({c: g[c].astype("string").fillna("") if c in g else "" for c in ("word_pairs_file",
                                                                                          "word_pairs_sha256")})
    counts = keys.groupby(["word_pairs_file", "word_pairs_sha256"], sort=True).size()
    return [{"file": f or None, "sha256": h or None, "games": int(n)} for (f, h), n in counts.items()]


def _load_stats():
    try:
        from analysis.stats import TABLES, StatsConfig  # type: ignore
    except ImportError as exc:
        raise ImpostorError(
            f"analysis.stats is not available ({exc}); fix: install the full impostor-bench package"
        ) from exc
    return TABLES, StatsConfig


def _ordered(names) -> list[str]:
    names = list(names)
    return [n for n in CONTRACT_COLUMNS if n in names] + [n for n in names if n not in CONTRACT_COLUMNS]


# --------------------------------------------------------------------------- main entry


def build_report(
    data: AnalysisData,
    out: str | Path,
    cfg=None,
    *,
    tables: Optional[Mapping[str, Callable]] = None,
    inputs: Optional[list[dict]] = None,
    source: Optional[dict] = None,
    progress: Callable[[str], None] = lambda s: None,
    figures: bool = True,
) -> dict:
    """Compute every table and write the bundle atomically into ``out``; returns the manifest.

    ``tables`` defaults to ``analysis.stats.TABLES`` and ``cfg`` to its
    ``StatsConfig()``.  ``inputs`` (path/sha256/bytes dicts) default to the
    sources recorded by the loader (``data.sources``).
    """
    t_start = time.perf_counter()
    out = Path(out).expanduser().absolute()
    for line in bundle_dir.recover(out):  # a kill in an earlier run: restore, clean up
        progress(line)
    _check_out(out)
    if tables is None or cfg is None:
        stats_tables, StatsConfig = _load_stats()
        tables = stats_tables if tables is None else tables
        cfg = StatsConfig() if cfg is None else cfg
    if inputs is None:
        inputs = list(getattr(data, "sources", []) or [])
    missing = [n for n in CONTRACT_COLUMNS if n not in tables]

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = bundle_dir.new_temp(out)
    try:
        (tmp / "tables").mkdir()
        (tmp / "figures").mkdir()
        results: dict[str, pd.DataFrame] = {}
        table_info = []
        errors = []
        names = _ordered(tables)
        for i, name in enumerate(names, 1):
            progress(f"[{i}/{len(names)}] table {name} ...")
            t0 = time.perf_counter()
            try:
                df = tables[name](data, cfg)
                if not isinstance(df, pd.DataFrame):
                    raise TypeError(f"returned {type(df).__name__}, not a DataFrame")
            except Exception as exc:  # noqa: BLE001 - one table must not sink the report
                if getattr(cfg, "strict", False):
                    raise
                msg = f"Table {name} failed: {type(exc).__name__}: {exc}"
                errors.append(msg)
                data.notes.append(msg)
                df = pd.DataFrame({c: pd.Series(dtype=object) for c in CONTRACT_COLUMNS.get(name, ["value"])})
            secs = time.perf_counter() - t0
            lead = CONTRACT_COLUMNS.get(name)
            ok = lead is None or list(df.columns[: len(lead)]) == lead
            if not ok:
                data.notes.append(f"Table {name}: leading columns {list(df.columns[: len(lead)])} differ from the "
                                  f"contract {lead}.")
            results[name] = df
            base = tmp / "tables" / name
            df.to_csv(base.with_suffix(".csv"), index=False)
            base.with_suffix(".md").write_text(to_markdown(df), encoding="utf-8")
            base.with_suffix(".tex").write_text(to_latex(df, name), encoding="utf-8")
            table_info.append({"name": name, "rows": int(len(df)), "columns": [str(c) for c in df.columns],
                               "contract_columns_ok": ok, "seconds": round(secs, 3),
                               "files": [f"tables/{name}.{ext}" for ext in ("csv", "md", "tex")]})
            progress(f"      {name}: {len(df)} rows in {secs:.1f} s")
        for name in missing:
            data.notes.append(f"Table {name} is required by the data contract but analysis.stats does not provide it.")

        figs: list[dict] = []
        if figures:
            figs = _figures(data, results, tmp / "figures", progress)

        notes = list(dict.fromkeys(data.notes))
        settings = _settings(cfg)
        manifest = {
            "generator": GENERATOR,
            "schema_version": 1,
            "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "source": source or {},
            "inputs": inputs,
            "packages": _versions(),
            "platform": {"system": platform.system(), "machine": platform.machine(), "cpus": os.cpu_count()},
            "seed": settings.get("seed"),
            "bootstrap_reps": settings.get("bootstrap_reps"),
            "permutation_reps": settings.get("permutation_reps"),
            "alpha": settings.get("alpha"),
            "config": settings,
            "data": _data_summary(data),
            "tables": table_info,
            "missing_tables": missing,
            "figures": [{"file": f"figures/{f['file']}", "title": f["title"]} for f in figs],
            "notes": notes,
            "errors": errors,
        }
        progress("writing report.md, report.html, manifest.json")
        (tmp / "report.md").write_text(_report_md(manifest, results, figs), encoding="utf-8")
        (tmp / "report.html").write_text(_report_html(manifest, results, figs, tmp / "figures"), encoding="utf-8")
        manifest["wall_seconds"] = round(time.perf_counter() - t_start, 3)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str), encoding="utf-8")
        bundle_dir.swap_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _settings(cfg) -> dict:
    if dataclasses.is_dataclass(cfg):
        return {k: v for k, v in dataclasses.asdict(cfg).items()}
    return {k: getattr(cfg, k) for k in ("seed", "bootstrap_reps", "permutation_reps", "alpha") if hasattr(cfg, k)}


def _figures(data, results, fig_dir: Path, progress) -> list[dict]:
    from analysis.figures import make_figures

    return make_figures(data, results, fig_dir, data.notes, progress=lambda s: progress(s))


# --------------------------------------------------------------------------- report.md / .html


def _intro_lines(m: dict) -> list[str]:
    d = m["data"]
    src = m.get("source") or {}
    where = src.get("parquet") or (f"MLflow experiment '{src.get('experiment')}'" if src.get("experiment") else "in-memory data")
    imp = d.get("impostor_win_pct")
    return [
        f"Source: {where}. Generated {m['created_utc']} by `{GENERATOR}` (impostor-bench {m['packages'].get('impostor-bench')}).",
        f"Data: {d['games']:,} games in {d['experiments']:,} experiments; {len(d['models'])} models; "
        f"modes {', '.join(d['modes'])}; difficulties {', '.join(d['difficulties'])}"
        + (f"; overall impostor win {imp:.1f}%." if imp is not None else "."),
        "Word pairs: " + _word_pairs_text(d.get("word_pairs") or []),
        f"Settings: seed {m['seed']}, bootstrap reps {m['bootstrap_reps']}, permutation reps {m['permutation_reps']}, "
        f"alpha {m['alpha']}. Percentages are 0-100; `*_ci` columns are 95% CI half-widths.",
        f"Intervals: bootstrap CIs (`ci_low`/`ci_high` of `bootstrap`, `speaking_itt`; headline `imp_win_ci_boot`) "
        f"use the {(m.get('config') or {}).get('bootstrap', 'design')} bootstrap (design = experiment-level wild "
        "bootstrap, the default; paper = experiments resampled within mode x difficulty, Appendix B.2); both "
        "are in the `*_design`/`*_paper` columns. Headline `*_ci` are Wilson (games independent); odds ratios "
        "are Wald (games independent); docs/analysis.md gives each one's simulated coverage.",
    ]


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


def _report_md(m: dict, results: dict[str, pd.DataFrame], figs: list[dict]) -> str:
    out = ["# The Impostor Game: analysis report", ""]
    out += [f"- {line}" for line in _intro_lines(m)]
    out += ["", "## Notes and caveats", ""]
    for head, items in _group_notes(m["notes"]):
        out.append(f"- {head}" + (f" ({len(items)} notes):" if items else ""))
        out += [f"  - {it}" for it in items]
    if not m["notes"]:
        out.append("- none")
    out += ["", "## Figures", ""]
    for f in figs:
        out += [f"### {f['title']}", "", f"![{f['title']}](figures/{f['file']})", "", f"_{f['caption']}_", ""]
    if not figs:
        out += ["_No figures were drawn (see notes)._", ""]
    out += ["## Tables", ""]
    for t in m["tables"]:
        name = t["name"]
        out += [f"### {name}: {TABLE_TITLES.get(name, name.replace('_', ' '))}", ""]
        out += [to_markdown(results[name], MD_MAX_ROWS)]
        out += [f"Files: [csv](tables/{name}.csv) · [md](tables/{name}.md) · [tex](tables/{name}.tex) "
                f"({t['rows']} rows, {t['seconds']:.1f} s)", ""]
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


def _report_html(m: dict, results: dict[str, pd.DataFrame], figs: list[dict], fig_dir: Path) -> str:
    e = html.escape
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Impostor Game report</title>"
             f"<style>{_CSS}</style></head><body>", "<h1>The Impostor Game: analysis report</h1>", "<ul>"]
    parts += [f"<li>{e(line).replace('`', '')}</li>" for line in _intro_lines(m)]
    parts.append("</ul><nav><h2>Contents</h2><ul><li><a href=\"#notes\">Notes and caveats</a></li>")
    parts += [f"<li><a href=\"#fig-{e(f['file'])}\">Figure: {e(f['title'])}</a></li>" for f in figs]
    parts += [f"<li><a href=\"#tbl-{e(t['name'])}\">Table {e(t['name'])}</a></li>" for t in m["tables"]]
    parts.append("</ul></nav><h2 id=\"notes\">Notes and caveats</h2><ul class=\"notes\">")
    for head, items in _group_notes(m["notes"]):
        if items:
            sub = "".join(f"<li>{e(it)}</li>" for it in items)
            parts.append(f"<li><details><summary>{e(head)} ({len(items)} notes)</summary><ul>{sub}</ul></details></li>")
        else:
            parts.append(f"<li>{e(head)}</li>")
    if not m["notes"]:
        parts.append("<li>none</li>")
    parts.append("</ul><h2>Figures</h2>")
    for f in figs:
        data = base64.b64encode((fig_dir / f["file"]).read_bytes()).decode("ascii")
        parts.append(
            f"<figure id=\"fig-{e(f['file'])}\"><h3>{e(f['title'])}</h3><a href=\"figures/{e(f['file'])}\">"
            f"<img alt=\"{e(f['title'])}\" src=\"data:image/png;base64,{data}\"></a>"
            f"<figcaption>{e(f['caption'])} (<a href=\"figures/{e(f['file'])}\">figures/{e(f['file'])}</a>)</figcaption></figure>"
        )
    if not figs:
        parts.append("<p><em>No figures were drawn (see notes).</em></p>")
    parts.append("<h2>Tables</h2>")
    for t in m["tables"]:
        name = t["name"]
        parts.append(f"<h3 id=\"tbl-{e(name)}\">{e(name)}: {e(TABLE_TITLES.get(name, name.replace('_', ' ')))}</h3>")
        parts.append(_html_table(results[name], MD_MAX_ROWS))
        parts.append(f"<p class=\"files\">Files: <a href=\"tables/{e(name)}.csv\">csv</a> · "
                     f"<a href=\"tables/{e(name)}.md\">md</a> · <a href=\"tables/{e(name)}.tex\">tex</a> "
                     f"({t['rows']} rows, {t['seconds']:.1f} s)</p>")
    parts.append(f"<p class=\"files\">Manifest: <a href=\"{MANIFEST}\">{MANIFEST}</a></p></body></html>")
    return "\n".join(parts)
