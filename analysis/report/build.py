"""The report bundle (docs/data-contract.md, section 2).

``build_report(data, out, cfg)`` computes every table of ``impostor_bench.analysis.stats.TABLES``
and writes::

    OUT/tables/NAME.csv   full precision
    OUT/tables/NAME.md    GitHub-flavoured Markdown table
    OUT/tables/NAME.tex   a table float to \\input (booktabs rules, caption, label tab:NAME)
    OUT/figures/*.png     300 dpi, with a vector .pdf and .svg of each
    OUT/paper/            Tables 1-12 and Figures 1-3 in the paper's layout, paper.tex (and paper.pdf
                          where pdflatex is installed), compare.csv: the paper's numbers beside ours
    OUT/report.md         tables, figures, notes
    OUT/report.html       self-contained rendering (figures embedded, also linked)
    OUT/manifest.json     inputs + sha256, package versions, settings, tables, notes, wall time

Everything is written into a temporary sibling directory and moved into place at
the end, so a failure leaves OUT as it was.  OUT may be missing, empty or a
previous bundle (replaced); anything else is refused.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional

import pandas as pd

from impostor_bench.analysis.report import bundle_dir
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.report.formatting import GENERATOR, latex_escape, to_latex, to_markdown
from impostor_bench.analysis.report.pages import MANIFEST, render_html, render_markdown
from impostor_bench.analysis.report.sections import table_title
from impostor_bench.analysis.stats import CONTRACT, contract_first, run_table
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.engine import compute_tables, one_blas_thread
from impostor_bench.analysis.stats.session import REGISTRY, Analysis, TableResult
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.output_files import write_file, write_text

if TYPE_CHECKING:
    from impostor_bench.analysis.data import Embedder

__all__ = ["build_report", "to_markdown", "to_latex", "latex_escape"]

_PACKAGES = ["impostor-bench", "pandas", "numpy", "scipy", "statsmodels", "networkx", "pingouin", "matplotlib",
             "pyarrow", "mlflow", "pydantic"]


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
    foreign = _foreign_files(out) if out.is_dir() else []
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise ImpostorError(
            f"--out {out}: the previous bundle holds {shown}, not written by the report (replacing the bundle "
            f"would delete it); fix: move it out of the folder, or choose a new --out directory"
        )


#: What a bundle written before ``bundle_files`` was recorded holds: these files and folders.
_BUNDLE_TOP = {"report.md", "report.html", MANIFEST, "tables", "figures", "paper"}


def _foreign_files(out: Path) -> list[str]:
    """The files of a previous bundle in ``out`` that the report did not write (a user's notes
    beside the tables): replacing the bundle would delete them, so the report refuses."""
    try:
        listed = json.loads((out / MANIFEST).read_text()).get("bundle_files")
    except Exception:  # noqa: BLE001 - not a bundle: _check_out has said so
        return []
    ours = set(listed) if isinstance(listed, list) else None
    found = []
    for p in sorted(out.rglob("*")):
        if p.is_dir() and not p.is_symlink():
            continue
        rel = p.relative_to(out).as_posix()
        if ours is not None and rel not in ours or ours is None and rel.split("/")[0] not in _BUNDLE_TOP:
            found.append(rel)
    return found


def _versions() -> dict[str, Optional[str]]:
    out: dict[str, Optional[str]] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_commit(root: Optional[Path] = None) -> Optional[str]:
    """The commit of the impostor-bench checkout the report was made with (None when it is not one:
    an installed copy, no git, a slow disk), so a bundle can be traced back to its code."""
    root = root or Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and len(sha) == 40 else None


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
        "rounds": _rounds_of(g),
    }


def _rounds_of(g: pd.DataFrame) -> dict:
    """The games' round settings (``max_rounds``; 1 = the paper's game): the comparison with the
    paper's one-round numbers says which games are longer. Empty where the column is absent."""
    if not len(g) or "max_rounds" not in g:
        return {}
    r = pd.to_numeric(g["max_rounds"], errors="coerce").fillna(1).astype(int)
    return {"max_rounds": sorted(map(int, r.unique())), "multi_round_games": int((r > 1).sum())}


def _word_pair_files(g: pd.DataFrame) -> list[dict]:
    """The word-pair file(s) the games were drawn from (exporter columns; absent in old exports)."""
    if not len(g) or "word_pairs_sha256" not in g:
        return []
    keys = pd.DataFrame({c: g[c].astype("string").fillna("") if c in g else "" for c in ("word_pairs_file",
                                                                                          "word_pairs_sha256")})
    counts = keys.groupby(["word_pairs_file", "word_pairs_sha256"], sort=True).size()
    return [{"file": f or None, "sha256": h or None, "games": int(n)} for (f, h), n in counts.items()]


# --------------------------------------------------------------------------- main entry


def _write_table(name: str, df: pd.DataFrame, table_dir: Path) -> None:
    base = table_dir / name
    write_file(base.with_suffix(".csv"), lambda p: df.to_csv(p, index=False))
    write_text(base.with_suffix(".md"), to_markdown(df))
    write_text(base.with_suffix(".tex"), to_latex(df, name, table_title(name)))


def _compute_tables(tables: Mapping[str, Callable], analysis: Analysis, cfg, table_dir: Path,
                    progress: Callable[[str], None], jobs: int = 1, remember: bool = False
                    ) -> tuple[dict[str, pd.DataFrame], list[dict]]:
    """Every table computed (the registered ones by the engine, ``jobs`` > 1: in a process pool), then
    taken in the report's order, which puts their notes in the session in that order, and written
    (csv/md/tex); returns the frames and their manifest entries."""
    from impostor_bench.analysis.stats import share_intermediates

    names = contract_first(tables)
    registered = [n for n in names if REGISTRY.get(n) is tables[n]]
    compute_tables(analysis, registered, jobs, progress, remember=remember, warm=share_intermediates)
    results: dict[str, pd.DataFrame] = {}
    table_info: list[dict] = []
    for name in names:
        r = analysis.result(name, cfg) if name in registered else _own_table(name, tables[name], analysis, cfg)
        df = r.frame.copy()
        lead = CONTRACT.get(name)
        ok = lead is None or list(df.columns[: len(lead)]) == lead
        if lead is not None and not ok:
            analysis.note(f"Table {name}: leading columns {list(df.columns[: len(lead)])} differ from the "
                          f"contract {lead}.")
        results[name] = df
        _write_table(name, df, table_dir)
        table_info.append({"name": name, "rows": int(len(df)), "columns": [str(c) for c in df.columns],
                           "contract_columns_ok": ok, "seconds": round(r.seconds, 3),
                           "files": [f"tables/{name}.{ext}" for ext in ("csv", "md", "tex")]})
    return results, table_info


def _own_table(name: str, fn: Callable, analysis: Analysis, cfg) -> TableResult:
    """A caller's own table function (not the registered ``name``), through the tables' one error wrapper
    (its columns as it gives them: the contract check above names a difference)."""
    return analysis.run(name, lambda a, c: run_table(name, fn, a, c, lead=False), cfg)


def _manifest(analysis: Analysis, cfg, source: Optional[dict], inputs: list[dict], table_info: list[dict],
              missing: list[str], figs: list[dict], errors: list[str]) -> dict:
    notes = list(dict.fromkeys(analysis.notes))
    settings = _settings(cfg)
    return {
        "generator": GENERATOR,
        "schema_version": 1,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": source or {},
        "git_commit": git_commit(),
        "tracking_uri": (source or {}).get("tracking_uri"),  # set when read from MLflow (no credentials)
        "command_line": list(sys.argv),
        "inputs": inputs,
        "packages": _versions(),
        "platform": {"system": platform.system(), "machine": platform.machine(), "cpus": os.cpu_count()},
        "seed": settings.get("seed"),
        "bootstrap_reps": settings.get("bootstrap_reps"),
        "permutation_reps": settings.get("permutation_reps"),
        "alpha": settings.get("alpha"),
        "config": settings,
        "data": _data_summary(analysis.data),
        "tables": table_info,
        "missing_tables": missing,
        "figures": [{"file": f"figures/{f['file']}", "title": f["title"], "caption": f.get("caption", "")}
                    for f in figs],
        "notes": notes,
        "errors": errors,
    }


def _fill_bundle(tmp: Path, analysis: Analysis, cfg, tables: Mapping[str, Callable], *, inputs: list[dict],
                 source: Optional[dict], progress: Callable[[str], None], figures: bool,
                 embedder: Optional[Embedder], t_start: float, compile_tex: bool = True, jobs: int = 1,
                 remember: bool = False) -> dict:
    """Write tables, figures, the two pages and the manifest into the temporary bundle ``tmp``."""
    missing = [n for n in CONTRACT if n not in tables]
    (tmp / "tables").mkdir()
    (tmp / "figures").mkdir()
    errors: list[str] = []
    with analysis.batch():  # one fingerprint of the frames for every table and figure
        results, table_info = _compute_tables(tables, analysis, cfg, tmp / "tables", progress, jobs, remember)
        analysis.drop_memos(keep=[("prepared",)])  # memory: the tables' intermediates are done
        for name in missing:
            analysis.note(f"Table {name} is required by the data contract but impostor_bench.analysis.stats does not provide it.")
        figs = _figures(analysis, results, tmp / "figures", progress, embedder, errors, jobs) if figures else []
    errors += [e for e in analysis.errors if e not in errors]  # the tables that failed
    manifest = _manifest(analysis, cfg, source, inputs, table_info, missing, figs, errors)
    if figures:
        from impostor_bench.analysis.figures import FIGURES

        drawn = {Path(f["file"]).stem for f in figs}
        manifest["figures_not_drawn"] = [name for name, _ in FIGURES if name not in drawn]
    progress("writing paper/ (Tables 1-12, Figures 1-3, paper.tex; pdflatex if installed)")
    from impostor_bench.analysis.report.paper_out import write_paper
    from impostor_bench.analysis.report.paper_tables import build_paper_tables

    paper_tables = build_paper_tables(results, manifest)  # once, for paper/ and both pages
    manifest["paper"] = write_paper(tmp, results, manifest, tmp / "figures", compile_tex=compile_tex,
                                    tables=paper_tables)
    progress("writing report.md, report.html, manifest.json")
    write_text(tmp / "report.md", render_markdown(manifest, results, figs, paper_tables))
    write_text(tmp / "report.html", render_html(manifest, results, figs, tmp / "figures", paper_tables))
    manifest["wall_seconds"] = round(time.perf_counter() - t_start, 3)
    # every file the bundle holds: a later report into the same folder deletes only these
    manifest["bundle_files"] = sorted({p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file()
                                       and p.name not in (bundle_dir.PID_FILE, bundle_dir.DONE_FILE)} | {MANIFEST})
    write_text(tmp / MANIFEST, json.dumps(manifest, indent=2, default=str))
    return manifest


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
    embedder: Optional[Embedder] = None,
    compile_tex: bool = True,
    after_table: Optional[Callable[[], None]] = None,
    jobs: int = 1,
    remember: bool = False,
) -> dict:
    """Compute every table and write the bundle atomically into ``out``; returns the manifest.

    The tables are computed in one session, ``Analysis(data, cfg)`` (its notes go into the
    manifest and pages; ``data.notes`` is not appended to). ``tables`` defaults to
    ``impostor_bench.analysis.stats.TABLES`` and ``cfg`` to ``StatsConfig()``.  ``inputs`` (path/sha256/bytes dicts) default to the
    sources recorded by the loader (``data.sources``).  ``embedder`` gives
    Fig. 3 its word vectors (the command layer loads them; without one the
    figure is skipped with a note).  ``compile_tex=False`` writes paper/paper.tex without
    running pdflatex. ``after_table`` is called after each table is computed (``Analysis.after_table``).
    ``jobs=2`` computes the tables and draws the figures in two processes (``stats.engine``; the same
    bundle); ``remember`` keeps each table's seconds and memory for the next run's order.
    """
    t_start = time.perf_counter()
    out = Path(out).expanduser().absolute()
    for line in bundle_dir.recover(out):  # a kill in an earlier run: restore, clean up
        progress(line)
    _check_out(out)
    if tables is None:
        from impostor_bench.analysis.stats import TABLES

        tables = TABLES
    cfg = StatsConfig() if cfg is None else cfg
    if inputs is None:
        inputs = list(getattr(data, "sources", []) or [])
    if embedder is not None and getattr(embedder, "model", None) is not None and data.embedder is None:
        data.embedder = embedder.model  # the semantic-distance table (positive_control) uses it too
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = bundle_dir.new_temp(out)
    try:
        analysis = Analysis(data, cfg)
        analysis.after_table = after_table
        with one_blas_thread():  # whatever ``jobs``: the same sums, so the same bundle
            manifest = _fill_bundle(tmp, analysis, cfg, tables, inputs=inputs, source=source, progress=progress,
                                    figures=figures, embedder=embedder, t_start=t_start, compile_tex=compile_tex,
                                    jobs=jobs, remember=remember)
        bundle_dir.swap_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _settings(cfg) -> dict:
    if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
        return {k: v for k, v in dataclasses.asdict(cfg).items()}
    return {k: getattr(cfg, k) for k in ("seed", "bootstrap_reps", "permutation_reps", "alpha") if hasattr(cfg, k)}


def _figures(analysis: Analysis, results, fig_dir: Path, progress, embedder: Optional[Embedder] = None,
             errors: Optional[list[str]] = None, jobs: int = 1) -> list[dict]:
    from impostor_bench.analysis.figures import make_figures

    return make_figures(analysis, results, fig_dir, analysis.notes, progress=lambda s: progress(s), embedder=embedder,
                        errors=errors, jobs=jobs, after_each=analysis.after_table)
