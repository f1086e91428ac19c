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
    assert method in t5.caption  # the rows' own method, as every caption names it


def test_compare_does_not_call_table5_the_papers_method_kind():
    label = comparable("Table 5", True, True, METHOD)
    assert label.startswith("estimate only (another estimator") and "cross-fitted" in label
    assert comparable("Table 5", True, False, "", column="n").startswith("same method (exact")
