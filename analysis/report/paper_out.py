"""The ``paper/`` folder of a report bundle: the paper's tables and figures from this bundle.

    paper/table01.tex ... table12.tex   Tables 1-12 in the paper's layout (impostor_bench.analysis.report.paper_tables)
    paper/fig1.pdf ... fig3.pdf         Figures 1-3 (vector copies of the bundle's figures)
    paper/paper.tex                     \\input's all of them (article, booktabs, graphicx)
    paper/paper.pdf                     compiled by pdflatex when it is installed (else not there)
    paper/compare.csv, compare.txt      the paper's published numbers beside ours (impostor_bench.analysis.report.paper_values)

``write_paper`` returns what it did for the manifest (``paper``): the files, whether TeX was
found, where the PDF is or why there is none.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Optional

import pandas as pd

from impostor_bench.analysis.report.paper_latex import paper_table_latex
from impostor_bench.core.output_files import write_text
from impostor_bench.analysis.report.paper_tables import PaperTable, build_paper_tables
from impostor_bench.analysis.report.paper_values import compare, comparison_text
from impostor_bench.analysis.report.formatting import latex_escape

__all__ = ["write_paper", "FIGURE_FILES", "TEX_INSTALL"]

# Paper figure -> the bundle figure it is drawn from (impostor_bench.analysis.figures.FIGURES names).
FIGURE_FILES = {1: ("win_by_mode", "Impostor win rates by mode (%)."),
                2: ("win_by_difficulty", "Impostor win rates by difficulty (%)."),
                3: ("difficulty_validation", "Word-pair difficulty validation.")}
TEX_INSTALL = ("apt-get install --no-install-recommends texlive-latex-base texlive-latex-recommended "
               "(scripts/install.sh does it)")
PDFLATEX_TIMEOUT_S = 180


def _figure_tex(n: int, fig_dir: Path, paper: Path, drawn: dict[str, str]) -> tuple[str, Optional[str]]:
    """Figure ``n``'s float; its caption is the one the figure was drawn with (``drawn``: stem ->
    caption, from the manifest), so it names the intervals actually drawn."""
    name, title = FIGURE_FILES[n]
    caption = drawn.get(name) or title
    src = fig_dir / f"{name}.pdf"
    head = ["\\begin{figure}[htbp]", "\\centering"]
    if src.is_file():
        shutil.copyfile(src, paper / f"fig{n}.pdf")
        body = [f"\\includegraphics[width=0.92\\linewidth]{{fig{n}.pdf}}"]
        missing = None
    else:
        missing = f"figure {name} was not drawn (see the report's notes)"
        body = [f"\\fbox{{\\parbox{{0.8\\linewidth}}{{\\centering Figure {n} not drawn: "
                f"{latex_escape(missing)}.}}}}"]
    return "\n".join(head + body + [f"\\caption{{{latex_escape(caption)}}}", f"\\label{{fig:paper-{n}}}",
                                    "\\end{figure}"]) + "\n", missing


def _paper_tex(manifest: dict, tables: list, n_figs: int) -> str:
    d = manifest.get("data", {})
    src = manifest.get("source") or {}
    where = src.get("parquet") or src.get("experiment") or "in-memory data"
    cfg = manifest.get("config") or {}
    lines = [
        "\\documentclass[10pt]{article}",
        "\\usepackage[margin=2cm]{geometry}",
        "\\usepackage{booktabs}",
        "\\usepackage{graphicx}",
        "\\setcounter{totalnumber}{4}\\setcounter{topnumber}{3}\\renewcommand{\\topfraction}{0.9}",
        "\\renewcommand{\\textfraction}{0.05}\\renewcommand{\\floatpagefraction}{0.8}",
        "\\title{The Impostor Game: the paper's tables and figures from this bundle}",
        f"\\author{{impostor report, {latex_escape(manifest.get('created_utc', ''))}}}",
        "\\date{}",
        "\\begin{document}",
        "\\maketitle",
        (f"Source: \\texttt{{{latex_escape(where)}}}. {int(d.get('games') or 0):,} games in "
         f"{int(d.get('experiments') or 0):,} experiments, {len(d.get('models') or [])} models. Settings: seed "
         f"{latex_escape(cfg.get('seed'))}, {latex_escape(cfg.get('bootstrap'))} bootstrap with "
         f"{int(cfg.get('bootstrap_reps') or 0):,} replicates, {int(cfg.get('permutation_reps') or 0):,} "
         "permutation replicates. Each estimate carries one 95\\% interval [low, high]; the caption names its method "
         "briefly, \\texttt{report.md}'s ``About this report'' in full (from \\texttt{tables/inference.csv}). Full "
         "tables (every column, full precision) are in \\texttt{tables/*.csv}; "
         "\\texttt{paper/compare.csv} puts the paper's published numbers beside these."),
        "",
    ]
    # floats fill the pages; no forced page break, not even before the figures: a figure may fill the
    # space above a table too tall for the rest of its page (a \clearpage there left a page half blank)
    lines += [f"\\input{{{t.label}}}" for t in tables]
    lines += [f"\\input{{fig{n}}}" for n in range(1, n_figs + 1)]
    lines += ["\\end{document}", ""]
    return "\n".join(lines)


def compile_pdf(paper: Path, timeout: int = PDFLATEX_TIMEOUT_S) -> dict:
    """pdflatex paper.tex in ``paper`` (twice is not needed: no cross-references are printed)."""
    exe = shutil.which("pdflatex")
    if exe is None:
        return {"pdf": None, "tex": None, "why": f"TeX (pdflatex) is not installed; install it with {TEX_INSTALL}"}
    try:
        res = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=paper,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"pdf": None, "tex": exe, "why": f"pdflatex took more than {timeout} s (paper/paper.log)"}
    for aux in ("paper.aux", "paper.out"):
        (paper / aux).unlink(missing_ok=True)
    if res.returncode != 0 or not (paper / "paper.pdf").is_file():
        err = [ln for ln in res.stdout.splitlines() if ln.startswith("!")][:1]
        return {"pdf": None, "tex": exe,
                "why": f"pdflatex failed ({err[0] if err else 'exit ' + str(res.returncode)}); see paper/paper.log"}
    return {"pdf": "paper/paper.pdf", "tex": exe, "why": None}


def write_paper(out: Path, results: dict[str, pd.DataFrame], manifest: dict, fig_dir: Path,
                compile_tex: bool = True, tables: Optional[list[PaperTable]] = None) -> dict:
    """Write ``out/paper`` (``out`` is the bundle being written); returns the manifest's ``paper`` entry.
    ``tables``: the paper's tables as laid out already (``build_paper_tables``)."""
    paper = out / "paper"
    paper.mkdir(exist_ok=True)
    tables = build_paper_tables(results, manifest) if tables is None else tables
    for t in tables:
        write_text(paper / f"{t.label}.tex", paper_table_latex(t))
    figs_missing = {}
    drawn = {Path(f["file"]).stem: f.get("caption", "") for f in manifest.get("figures") or []}
    for n in FIGURE_FILES:
        tex, missing = _figure_tex(n, fig_dir, paper, drawn)
        (paper / f"fig{n}.tex").write_text(tex, encoding="utf-8")
        if missing:
            figs_missing[f"fig{n}"] = missing
    (paper / "paper.tex").write_text(_paper_tex(manifest, tables, len(FIGURE_FILES)), encoding="utf-8")
    cmp = compare(results, manifest.get("config") or {}, manifest=manifest)
    cmp.to_csv(paper / "compare.csv", index=False)
    (paper / "compare.txt").write_text(comparison_text(cmp, manifest), encoding="utf-8")
    built = compile_pdf(paper) if compile_tex else {"pdf": None, "tex": None, "why": "not compiled (asked not to)"}
    known = cmp["inside"].dropna()
    return {**built, "tables": [f"paper/{t.label}.tex" for t in tables],
            "tables_missing": {f"table{t.number:02d}": t.missing for t in tables if t.missing},
            "figures_missing": figs_missing,
            "compare": {"file": "paper/compare.csv", "numbers": int(len(cmp)), "with_interval": int(len(known)),
                        "inside": int(known.sum()),
                        "same_method": int(cmp["comparable"].astype(str).str.startswith("same").sum())}}
