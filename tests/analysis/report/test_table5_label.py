"""Table 5's caption and compare.txt's label say what its rows are: a cross-fitted baseline with
fold-crossed fixed effects, not the paper's leave-experiment-out estimator."""

from __future__ import annotations

import pandas as pd

from impostor_bench.analysis.report.paper_tables import build_paper_tables
from impostor_bench.analysis.report.paper_values import comparable

METHOD = "logit, CR2 by experiment, t(Bell-McCaffrey df)"


def test_table5_caption_names_the_cross_fitted_estimator():
    method = METHOD
    rows = pd.DataFrame({"model": ["m1", "m1"], "difficulty": ["easy", "ALL"], "scope": ["cell", "model"],
                         "or_per_10pp": [0.7, 0.8], "ci_low": [0.5, 0.6], "ci_high": [0.9, 1.0], "p": [0.01, 0.04],
                         "q": [0.02, 0.04], "method": [method, method]})
    t5 = {t.number: t for t in build_paper_tables({"opponent_baseline": rows}, {})}[5]
    assert "leave-experiment-out" not in t5.caption
    assert "cross-fitted" in t5.caption and "other of two folds" in t5.caption
    assert "not corrected" in t5.caption  # the baseline's measurement error: said, not hidden
    # and what it does: the slope is attenuated where accuracies rest on few experiments (0.6-0.75x the
    # pseudo-population truth at 120 x 40), so the caption may not say it showed none
    assert "biased toward OR 1" in t5.caption and "no attenuation" not in t5.caption
    assert method in t5.caption  # the rows' own method, as every caption names it


def test_compare_does_not_call_table5_the_papers_method_kind():
    label = comparable("Table 5", True, True, METHOD)
    assert label.startswith("estimate only (another estimator") and "cross-fitted" in label
    assert comparable("Table 5", True, False, "", column="n").startswith("same method (exact")


def test_simulated_table5_prints_no_planted_or_and_says_why():
    """The simulator's opponent OR is per 10 pp of the planted detection probabilities, not of the
    ballots' accuracy Table 5 regresses on: printing it as the planted value of every row misled (the
    estimand is the pseudo-population fit). Table 2 keeps its planted column."""
    rows = pd.DataFrame({"model": ["m1"], "difficulty": ["easy"], "scope": ["cell"], "or_per_10pp": [0.7],
                         "ci_low": [0.5], "ci_high": [0.9], "p": [0.01], "q": [0.02], "method": [METHOD]})
    odds = pd.DataFrame({"comparison": ["seat1_vs_seat0"], "or": [1.1], "ci_low": [0.9], "ci_high": [1.3],
                         "p": [0.3], "method": [METHOD]})
    manifest = {"source": {"simulated": {"opponent_or": "0.8", "seat_or": "1.12"}}}
    tables = {t.number: t for t in build_paper_tables({"opponent_baseline": rows, "odds_ratios": odds}, manifest)}
    head5 = [h for _, head, _ in tables[5].panels for h in head]
    assert "Planted OR" not in head5 and "0.80" not in str(tables[5].panels)
    assert "No planted column" in tables[5].caption and "detection accuracy the ballots show" in tables[5].caption
    assert "Planted OR" in tables[2].panels[0][1]
