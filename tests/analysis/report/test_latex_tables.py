"""LaTeX tables ready to \\input: the source of every .tex of a report bundle is checked everywhere
(balanced braces and environments, escaped specials, booktabs rules, caption and label, readable
headers, "[low, high]" cells, missing values as an en dash); pdflatex compiles one where installed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.report.formatting import readable_header, to_latex

_ESCAPED = re.compile(r"\\[{}_%&#$]")


def _check_source(tex: str) -> None:
    body = [ln for ln in tex.splitlines() if not ln.startswith("%")]
    plain = _ESCAPED.sub("", tex.replace(r"\\", ""))
    depth = 0
    for ch in plain:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, "a } closes nothing"
    assert depth == 0, "unbalanced braces"
    for env in ("table", "tabular"):
        assert tex.count(rf"\begin{{{env}}}") == tex.count(rf"\end{{{env}}}") == 1
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert body.count(rule) == 1, rule
    assert r"\hline" not in tex
    assert re.search(r"\\caption\{.+\}", tex) and re.search(r"\\label\{tab:[A-Za-z0-9:-]+\}", tex)
    ncols = len(re.search(r"\\begin\{tabular\}\{([lrc]+)\}", tex).group(1))
    rows = body[body.index(r"\toprule") + 1: body.index(r"\bottomrule")]
    for row in (r for r in rows if r != r"\midrule"):
        assert row.endswith(r" \\"), row
        cells = row[: -3]
        for special in "_%#$":
            assert re.search(rf"(?<!\\){re.escape(special)}", cells.replace("$-$", "").replace("$\\pm$", "")) is None, \
                (special, row)
        if not cells.startswith(r"\multicolumn"):
            assert len(re.findall(r"(?<!\\)&", cells)) == ncols - 1, row
        assert not re.search(r"(?:^|& )\[", cells), "a cell starting with [ reads as \\\\[..] after a row end"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("latex")
    for args in (["simulate", "--out", "sim", "--experiments", "8", "--games", "20", "--seed", "5"],
                 ["report", "--parquet", "sim", "--out", "rep", "--no-figures", "--bootstrap-reps", "20",
                  "--permutation-reps", "20"]):
        out = subprocess.run([sys.executable, "-m", "impostor_bench.cli", *args], cwd=d, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
    return d / "rep"


@pytest.mark.slow
def test_every_bundle_table_is_clean_latex(bundle):
    files = sorted((bundle / "tables").glob("*.tex"))
    assert len(files) >= 16
    for f in files:
        try:
            _check_source(f.read_text(encoding="utf-8"))
        except AssertionError as exc:
            raise AssertionError(f"{f.name}: {exc}") from None


def test_headline_and_odds_ratios_read_like_the_paper(bundle):
    head = (bundle / "tables" / "headline.tex").read_text()
    assert r"\caption{Headline results per model (paper Table 1)}" in head
    assert r"Impostor win (\%)" in head and r"Impostor win 95\% CI" in head
    assert r"$\pm$" not in head  # the interval is printed; a half-width beside it read as a second interval
    odds = (bundle / "tables" / "odds_ratios.tex").read_text()
    assert r"95\% CI" in odds and re.search(r"\{\}\[\d+\.\d+, \d+\.\d+\]", odds)


def test_specials_missing_values_and_negative_numbers():
    df = pd.DataFrame({"model_name": ["a_b%", "c&d#1"], "estimate": [-0.5, np.nan], "ci_low": [-1.0, np.nan],
                       "ci_high": [0.25, 1.0], "p_holm": [0.01, 0.2]})
    tex = to_latex(df, "odd_name", "Caption with 50% & #1 and `code`")
    _check_source(tex)
    assert r"a\_b\%" in tex and r"c\&d\#1" in tex
    assert r"\caption{Caption with 50\% \& \#1 and code}" in tex and r"\label{tab:odd-name}" in tex
    assert r"$-$0.50 & {}[$-$1.00, 0.25]" in tex
    assert "-- & --" in tex  # missing estimate and a CI missing one end
    assert "Model name & Estimate & 95\\% CI & p (Holm)" in tex


def test_readable_headers():
    assert readable_header("imp_win_pct") == "Impostor win (%)"
    assert readable_header("det_acc_ci") == "Detection accuracy CI"
    assert readable_header("or") == "OR" and readable_header("p_bh") == "p (BH)"


def test_a_table_compiles_with_pdflatex(bundle, tmp_path):
    latex = shutil.which("pdflatex")
    if latex is None:
        pytest.skip("pdflatex not installed")
    doc = "\n".join([r"\documentclass{article}", r"\usepackage[T1]{fontenc}", r"\usepackage{booktabs}",
                     r"\begin{document}", r"\input{" + (bundle / "tables" / "headline.tex").as_posix() + "}",
                     r"\input{" + (bundle / "tables" / "odds_ratios.tex").as_posix() + "}", r"\end{document}"])
    (tmp_path / "t.tex").write_text(doc)
    res = subprocess.run([latex, "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout[-2000:]
