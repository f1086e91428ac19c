"""paper/ in every bundle (Tables 1-12, Figures 1-3 in the paper's layout, paper.tex compiled
to paper.pdf where pdflatex is installed) and the paper's published numbers beside ours
(``impostor report --compare-paper``), through the command line on a simulated export."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.report import paper_out
from impostor_bench.analysis.report.paper_tables import PaperTable, short_method
from impostor_bench.analysis.report.paper_latex import paper_table_latex
from impostor_bench.analysis.report.paper_values import compare, load_paper_values



def _impostor(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-m", "impostor_bench.cli", *args], cwd=cwd, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("paper")
    _impostor("simulate", "--out", "sim", "--experiments", "40", "--games", "30", "--seed", "5", cwd=d)
    res = _impostor("report", "--parquet", "sim", "--out", "rep", "--bootstrap-reps", "200", "--permutation-reps",
                    "200", "--compare-paper", cwd=d)
    return d / "rep", res


@pytest.mark.slow
def test_paper_folder_has_every_table_and_figure(run):
    rep, _ = run
    paper = rep / "paper"
    tex = (paper / "paper.tex").read_text()
    for n in range(1, 13):
        assert (paper / f"table{n:02d}.tex").is_file() and f"\\input{{table{n:02d}}}" in tex
    for n in (1, 2, 3):
        assert (paper / f"fig{n}.pdf").read_bytes()[:5] == b"%PDF-" and f"\\input{{fig{n}}}" in tex
    t1 = (paper / "table01.tex").read_text()
    head = next(ln for ln in t1.splitlines() if ln.startswith("Model &"))
    head = re.sub(r"\\begin\{tabular\}\[b\]\{@\{\}c@\{\}\}(.*?)\\\\ (.*?)\\end\{tabular\}", r"\1 \2", head)  # stacked
    assert head == (r"Model & Imp Win (\%) & Maj Win (\%) & Det Acc (\%) & Centrality (rel.) & Reach (out-degree) & "
                    r"CoalEff (\%) \\")
    # one interval per estimate, rounded as the paper: "60.9 $\pm$ 5.8" where it is symmetric at that precision,
    # else "60.9 [50.1, 70.2]" (a logit interval is not); the caption names method and n
    headline = pd.read_csv(rep / "tables" / "headline.csv").set_index("model")
    row = next(ln for ln in t1.splitlines() if ln.startswith("gpt-4o &"))
    h = headline.loc["gpt-4o"]
    e, lo, hi = h["imp_win_pct"], h["imp_win_ci_low"], h["imp_win_ci_high"]  # the registry's interval
    want = (f"{e:.1f} $\\pm$ {hi - e:.1f}" if round(e - lo, 1) == round(hi - e, 1) else
            f"{e:.1f} [{lo:.1f}, {hi:.1f}]")
    assert row.split(" & ")[1] == want
    assert row.split(" & ")[4] == f"{h['centrality']:.3f}"
    assert "1,200 games in 40 experiments" in t1 and short_method(h["imp_win_ci_method"]) in t1
    t6 = (paper / "table06.tex").read_text()
    assert "(a) Easy" in t6 and "(d) Expert" in t6 and "randomisation replicates" in t6


def test_pdf_compiled_where_tex_is_installed_and_the_command_says_where(run):
    rep, res = run
    pdf = rep / "paper" / "paper.pdf"
    if shutil.which("pdflatex") is None:
        assert not pdf.exists()
        assert "TeX (pdflatex) is not installed; install it with apt-get install" in res.stderr
        pytest.skip("pdflatex not installed: the message is checked, the PDF is not")
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert f"paper: {pdf}" in res.stderr
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout
        assert "Imp Win" in text and "Table 12" in text and "Figure 3" in text  # headers stack in wide tables


def test_tex_missing_is_said_with_the_fix(tmp_path, monkeypatch):
    (tmp_path / "paper.tex").write_text("\\documentclass{article}\\begin{document}x\\end{document}")
    monkeypatch.setattr(paper_out.shutil, "which", lambda name: None)
    got = paper_out.compile_pdf(tmp_path)
    assert got["pdf"] is None and "apt-get install --no-install-recommends texlive-latex-base" in got["why"]


def test_table12_from_team_dynamics(run):
    rep, _ = run
    t12 = (rep / "paper" / "table12.tex").read_text()
    t11 = (rep / "paper" / "table11.tex").read_text()
    row12 = next(ln for ln in t12.splitlines() if ln.startswith("gpt-4o &"))
    row11 = next(ln for ln in t11.splitlines() if ln.startswith("gpt-4o &"))
    assert row12.split(" & ")[2] == row11.split(" & ")[2]  # Vote Coord.: one number, Table 11's, in both tables
    h = pd.read_csv(rep / "tables" / "coordination.csv").set_index("model").loc["gpt-4o"]
    assert row11.split(" & ")[2].startswith(f"{h['vote_coord_pct']:.1f}")
    assert "Strategy Align." in t12 and "table12\\_undefined.csv" in t12


def test_a_table_the_bundle_lacks_says_what_is_missing():
    t = PaperTable(12, "Team dynamics", "Team dynamics across models.", [], "team_dynamics: not computed: no teams")
    tex = paper_table_latex(t)
    assert "Table 12 (Team dynamics) is not shown: team\\_dynamics: not computed: no teams" in tex
    assert "\\begin{table}" not in tex and "tabular" not in tex  # one line, no empty float


def test_compare_paper_prints_each_shared_number_beside_ours(run):
    rep, res = run
    cmp = pd.read_csv(rep / "paper" / "compare.csv")
    out = res.stdout
    assert "What differs between the paper's study and this bundle" in out and "- Word pairs:" in out
    assert "Table 1 (paper: 95% binomial CIs, games independent): 54 numbers" in out and "Table 2/4 (paper:" in out
    assert "Section 3.3 (paper:" in out and "Table 12 (paper:" in out and "Table 9 (paper:" in out
    assert re.search(r"line 70 +Impostor win \(%\) +gpt-4o +69\.0 \[68\.1, 69\.9\] +\d+\.\d +\[\d+\.\d, \d+\.\d\] +"
                     r"(yes|NO) +estimate only", out)
    assert "Coalition efficiency (%)" in out and "majority w " not in out  # names are never cut
    assert max(len(line) for line in out.splitlines()[:8]) > 160  # the header is not cut at a fixed width
    head = pd.read_csv(rep / "tables" / "headline.csv").set_index("model")
    r = cmp[(cmp["paper_table"] == "Table 1") & (cmp["model"] == "gpt-4o") & (cmp["column"] == "imp_win_pct")].iloc[0]
    assert r["paper_value"] == 69.0 and np.isclose(r["estimate"], head.loc["gpt-4o", "imp_win_pct"])
    assert np.isclose(r["ci_low"], head.loc["gpt-4o", "imp_win_ci_low"])
    assert bool(r["inside"]) == (r["ci_low"] <= 69.0 <= r["ci_high"])
    itt = cmp[cmp["quantity"] == "Pooled mid - random ITT (pp)"].iloc[0]
    assert itt["paper_value"] == -1.11 and np.isfinite(itt["ci_low"])
    mode = cmp[cmp["quantity"] == "OR: cross play vs homogeneous"].iloc[0]
    ors = pd.read_csv(rep / "tables" / "odds_ratios.csv").set_index("comparison").loc["cross_play_vs_homogeneous"]
    assert np.isclose(mode["ci_low"], ors["ci_low"]) and mode["interval"] == ors["method"]  # the registry's interval
    assert out.rstrip().endswith(str(rep / "report.html"))


def test_compare_keeps_shared_models_only_and_matches_route_prefixes():
    paper = load_paper_values()
    method = "ratio of totals; CR1 by experiment, logit scale, t(G-1)"
    head = pd.DataFrame({"model": ["openai/gpt-4o", "bot/random"], "imp_win_pct": [69.5, 40.0],
                         "imp_win_ci_low": [68.0, 30.0], "imp_win_ci_high": [71.0, 50.0],
                         "imp_win_ci_method": [method, method], "maj_win_games_pct": [50.0, 50.0],
                         "maj_win_games_ci_low": [49.0, 49.0], "maj_win_games_ci_high": [51.0, 51.0],
                         "maj_win_games_ci_method": ["paper (B.2) percentile", "x"]})
    cmp = compare({"headline": head}, {}, paper)
    assert set(cmp["model"]) <= {"openai/gpt-4o", ""}
    imp = cmp[cmp["column"] == "imp_win_pct"].iloc[0]
    assert imp["model"] == "openai/gpt-4o" and bool(imp["inside"]) and imp["calibrated"] and imp["interval"] == method
    maj = cmp[cmp["column"] == "maj_win_games_pct"].iloc[0]  # 58.2 vs [49, 51]; a paper-reproduction method
    assert not bool(maj["inside"]) and not maj["calibrated"]
    assert cmp.loc[cmp["column"] == "det_acc_pct", "interval"].iloc[0] == "not in this bundle"
    mode = pd.DataFrame({"comparison": ["team_aware_vs_homogeneous"], "or": [0.8], "ci_low": [0.6], "ci_high": [0.95],
                         "p": [0.01], "method": ["logit, CR2 by experiment, t(Bell-McCaffrey df)"]})
    pinned = compare({"headline": head.assign(model=["openai/gpt-4o-2024-08-06", "anthropic/claude-sonnet-4-20250514"])},
                     {}, paper)  # dated snapshots (configs/models.yaml) match the paper's names
    assert set(pinned["model"]) == {"openai/gpt-4o-2024-08-06", "anthropic/claude-sonnet-4-20250514", ""}
    got = compare({"headline": head, "odds_ratios": mode}, {}, paper)
    r = got[got["quantity"] == "OR: team aware vs homogeneous"].iloc[0]  # paper 0.77 [0.72, 0.83]
    assert (r["ci_low"], r["ci_high"]) == (0.6, 0.95) and bool(r["inside"]) and r["interval"].startswith("logit, CR2")
    assert r["calibrated"]


@pytest.mark.slow
def test_compare_paper_alone_reads_the_existing_bundle_or_says_what_to_do(run, tmp_path):
    rep, _ = run
    got = _impostor("report", "--compare-paper", "--out", str(rep), cwd=tmp_path)  # no input: nothing recomputed
    assert "What differs between the paper's study and this bundle" in got.stdout
    assert got.stdout.strip() == (rep / "paper" / "compare.txt").read_text(encoding="utf-8").strip()
    bare = subprocess.run([sys.executable, "-m", "impostor_bench.cli", "report", "--compare-paper"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    lines = bare.stderr.strip().splitlines()
    assert bare.returncode != 0 and len(lines) == 1 and "usage:" not in bare.stderr  # one line, not argparse's
    assert "no report bundle at out/report" in lines[0] and "fix:" in lines[0]
