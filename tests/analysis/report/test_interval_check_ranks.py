"""A rank's simultaneous interval [k, k] is an answer (every other model significantly above or
below), not a method without variation: the zero-width flag applies to continuous estimates only."""

from __future__ import annotations

import pandas as pd

from impostor_bench.analysis.report.formatting import flag_intervals
from impostor_bench.analysis.report.interval_check import ZERO_WIDTH, interval_problem, interval_problems, is_discrete


def test_a_settled_rank_is_not_flagged_a_settled_rate_is():
    assert is_discrete("imp_rank") and is_discrete("rank") and not is_discrete("imp_win_pct")
    assert interval_problem(2, 2, 2, discrete=True) is None
    assert interval_problem(40.0, 40.0, 40.0) == ZERO_WIDTH
    assert interval_problem(3, 1, 2, discrete=True) is not None  # a rank interval must still hold its rank


def test_condition_results_page_flags_only_the_zero_width_rate():
    df = pd.DataFrame({"factor": ["language"] * 2, "condition": ["en", "en"], "model": ["a", "b"],
                       "imp_win_pct": [50.0, 40.0], "imp_win_ci_low": [40.0, 40.0], "imp_win_ci_high": [60.0, 40.0],
                       "imp_rank": [1, 2], "imp_rank_low": [1, 2], "imp_rank_high": [1, 2]})
    flagged = flag_intervals(df, "condition_results")
    assert "interval_check" in flagged.columns
    marks = flagged["interval_check"].tolist()
    assert marks[0] == "" and ZERO_WIDTH in marks[1] and "rank" not in marks[1]


def test_inference_rows_of_ranks_are_not_flagged():
    inf = pd.DataFrame({"table": ["condition_results"] * 2, "quantity": ["imp_rank", "imp_win_pct"],
                        "estimate": [1.0, 0.4], "ci_low": [1.0, 0.4], "ci_high": [1.0, 0.4],
                        "method": ["m", "m"],
                        "calibration": ["condition_results:imp_rank", "condition_results:imp_win_pct"]})
    got = interval_problems(inf)
    assert got["quantity"].tolist() == ["imp_win_pct"]
