"""analysis/paper_data/paper_values.csv against the paper's text: each published number is the
number printed in the paper's table row, under the column it claims (the row's ``column`` mapped
to the paper's header), with its sign; every table 1-12 is covered."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.analysis.report.paper_values import PAPER_METHODS, PAPER_VALUES, comparable

PAPER_TEXT = Path("/work/shared/seed/000_bbe86ea630e89cb0.txt")

# (paper table, our column) -> the header of the paper's column that prints it
HEADER = {
    ("Table 1", "imp_win_pct"): "Imp Win (%)", ("Table 1", "maj_win_games_pct"): "Maj Win (%)",
    ("Table 1", "det_acc_pct"): "Det Acc (%)", ("Table 1", "centrality"): "Centrality (rel.)",
    ("Table 1", "reach"): "Reach (out-degree)", ("Table 1", "coal_eff_pct"): "CoalEff (%)",
    ("Table 2/4", "or"): "OR", ("Table 2/4", "p"): "p",
    ("Table 3", "chi2"): "chi2", ("Table 3", "df"): "df", ("Table 3", "p"): "p", ("Table 3", "cramers_v"): "V",
    ("Table 5", "or_per_10pp"): "OR", ("Table 5", "q"): "q",
    ("Table 6", "mid_rand_pp"): "Mid-Rand (pp)", ("Table 6", "n"): "n", ("Table 6", "n_mid"): "n_mid",
    ("Table 6", "p"): "p",
    ("Table 7", "ties"): "Ties", ("Table 7", "k2"): "k=2", ("Table 7", "k3"): "k=3", ("Table 7", "k4"): "k=4",
    ("Table 7", "impostor_in_tie_pct"): "Impostor-in-tie",
    **{(t, c): h for t in ("Table 8", "Table 9") for c, h in (("default", "Default"), ("sym_cand", "Sym-cand"),
                                                              ("sym_side", "Sym-side"), ("delta_cand", "Delta (cand)"),
                                                              ("delta_side", "Delta (side)"), ("ties", "Ties"))},
    ("Table 10", "or_per_10x"): "OR per 10×", ("Table 10", "p"): "p",
    ("Table 11", "brokerage"): "Brokerage", ("Table 11", "vote_coord_pct"): "VoteCoord (%)",
    ("Table 11", "self_decl_pct"): "SelfDecl (%)", ("Table 11", "guess_succ_pct"): "GuessSucc (%)",
    ("Table 12", "coord_rate_pct"): "Coord. Rate", ("Table 12", "vote_coord_pct"): "Vote Coord.",
    ("Table 12", "implicit_coord_pct"): "Implicit Coord.", ("Table 12", "collab_success_pct"): "Collab. Success",
    ("Table 12", "strategy_align_pct"): "Strategy Align.", ("Table 12", "lsm_seen_pct"): "Linguistic Mirror",
    ("Table 12", "vocab_jaccard_seen"): "Vocab Conv.", ("Table 12", "trust_form_pct"): "Trust Form.",
    ("Table 12", "betrayal_pct"): "Betrayal Rate", ("Table 12", "trust_recovery_pct"): "Trust Recovery",
    ("Table 12", "vulnerability_index"): "Vulnerability Index", ("Table 12", "resilience_factor"): "Resilience Factor",
    ("Table 12", "coord_gap_paper_pp"): "Coord. Gap", ("Table 12", "alignment_gap_pp"): "Alignment Gap",
}


def _clean(s: str) -> str:
    """A header or cell of the paper's text without its LaTeX."""
    s = s.replace("$", "").replace("\\boldsymbol{p}", "p").replace("\\overline{p}", "p").replace("\\chi^2", "chi2")
    s = s.replace("n_{mid}", "n_mid").replace("\\Delta", "Delta").replace("Δ", "Delta").replace("{ m cand}", "cand")
    return re.sub(r"\s+", " ", s.replace("Delta(", "Delta (")).strip()


def _header(lines: list[str], at: int) -> list[str]:
    for k in range(at - 1, max(at - 40, 0), -1):
        cells = lines[k - 1].split("\t")
        if len(cells) > 1 and _clean(cells[0]) in ("Model", "Mode", "Test", "Comparison"):
            return [_clean(c) for c in cells]
    raise AssertionError(f"no header above line {at}")


def _numbers(cell: str) -> list[float]:
    """The numbers a cell prints: "69.0±0.9" -> [69.0, 0.9]; "6.82 × 10^{-9}" -> [6.82e-9]; signs kept."""
    c = _clean(cell).replace("\\pm", "±").replace("\\times", "×").replace(" ", "")
    m = re.fullmatch(r"([\d.]+)×10\^\{(-?\d+)\}", c)
    if m:
        return [float(m[1]) * 10 ** int(m[2])]
    return [float(x) for x in re.findall(r"[-+]?\d+(?:\.\d+)?(?:e-?\d+)?", c.replace("−", "-"))]


@pytest.mark.skipif(not PAPER_TEXT.is_file(), reason="the paper's text is not in this checkout")
def test_every_table_number_is_the_cell_under_its_column_with_its_sign():
    lines = PAPER_TEXT.read_text(encoding="utf-8").splitlines()
    paper = pd.read_csv(PAPER_VALUES, dtype={"paper_value": str})
    checked = 0
    for r in paper.itertuples():
        text = lines[r.line - 1]
        value = float(r.paper_value)
        if "\t" not in text or not str(r.paper_table).startswith("Table"):  # a number in the running text
            shown = f"{abs(value):.3f}".rstrip("0").rstrip(".")
            assert shown in text.replace("+", ""), (r.paper_table, r.quantity, r.line)
            if value < 0:
                assert re.search(r"[-−—]\s*" + re.escape(shown), text), (r.quantity, "sign", r.line)
            continue
        head = _header(lines, r.line)
        want = HEADER[(r.paper_table, r.column)]
        assert want in head, (r.paper_table, r.column, head)
        cell = text.split("\t")[head.index(want)]
        got = _numbers(cell)
        assert got, (r.quantity, cell)
        tol = 0.5 * 10 ** -max(len(str(r.paper_value).split(".")[-1]) if "." in str(r.paper_value) else 0, 0)
        assert abs(got[0] - value) <= max(tol, abs(value) * 5e-3), (r.paper_table, r.quantity, r.line, cell, value)
        assert (got[0] < 0) == (value < 0), (r.quantity, "sign", cell)
        if "±" in _clean(cell).replace("\\pm", "±"):  # Table 1's printed ± half-width is the paper interval
            assert abs((r.paper_ci_high - r.paper_ci_low) / 2 - got[1]) < 0.051, (r.quantity, cell)
        checked += 1
    assert checked > 500
    covered = {t for t in paper["paper_table"] if str(t).startswith("Table")}
    assert {"Table 1", "Table 2/4", "Table 3", "Table 5", "Table 6", "Table 7", "Table 8", "Table 9", "Table 10",
            "Table 11", "Table 12"} <= covered
    assert covered <= set(PAPER_METHODS)  # every table says how the paper computed it


def test_the_check_itself_catches_a_wrong_column_value_and_sign():
    """The parser the test relies on reads what a cell prints (so a swapped column or a lost sign fails)."""
    assert _numbers("$38.0 \\pm 0.9$") == [38.0, 0.9]
    assert _numbers("$6.82 \\times 10^{-9}$") == pytest.approx([6.82e-9])
    assert _numbers("-1.3") == [-1.3] and _numbers("+30.7%") == [30.7]
    head = ["Mode", "Default", "Sym-cand", "Sym-side", "Delta (cand)", "Delta (side)", "Ties"]
    row = "team-aware\t26.9\t25.6\t24.4\t-1.3\t-2.5\t376".split("\t")
    assert _numbers(row[head.index(HEADER[("Table 9", "delta_side")])]) == [-2.5]
    assert _numbers(row[head.index(HEADER[("Table 9", "sym_side")])]) != [-2.5]


def test_comparable_says_which_numbers_share_the_papers_method():
    assert comparable("Table 1", True, True, "ratio of totals; CR1 by experiment, logit scale, t(G-1)").startswith(
        "estimate only")  # paper: binomial, games independent
    assert comparable("Table 1", True, True, "paper (games independent) Wilson").startswith("same method kind")
    assert comparable("Table 10", True, True, "logit, CR2 by experiment, t(Bell-McCaffrey df)").startswith("same")
    assert comparable("Table 8", True, False, "").startswith("same method (exact")
    assert comparable("Table 12", True, True, "design bootstrap (wild by experiment)").startswith("estimate only")
    assert comparable("Table 5", False, False, "") == "not in this bundle"
