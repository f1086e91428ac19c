"""One seat numbering where people read the report: the tables keep 0-based seat contrasts
(``seat1_vs_seat0``, docs/data-contract.md), the report's tables and the forest plot say
"Player 2 vs Player 1" like the prompts, ``inspect view`` and the traces (issue 29)."""

from __future__ import annotations

import pandas as pd

from impostor_bench.analysis.figures.rates import _pretty_comparison
from impostor_bench.analysis.report.formatting import html_table, to_markdown


def test_report_tables_name_seat_contrasts_as_players():
    df = pd.DataFrame({"comparison": ["seat1_vs_seat0", "seat3_vs_seat0", "team_aware_vs_homogeneous"],
                       "or": [0.8, 1.25, 1.1]})
    md = to_markdown(df)
    assert "Player 2 vs Player 1" in md and "Player 4 vs Player 1" in md
    assert "seat1_vs_seat0" not in md and "team_aware_vs_homogeneous" in md
    assert "Player 2 vs Player 1" in html_table(df)
    assert list(df["comparison"])[0] == "seat1_vs_seat0"  # the data itself is untouched


def test_forest_plot_labels_players():
    assert _pretty_comparison("seat2_vs_seat0") == "Player 3 vs Player 1"


def test_paper_tables_2_and_4_name_seats_as_players():
    from impostor_bench.analysis.report.paper_tables import build_paper_tables

    df = pd.DataFrame({"comparison": ["seat1_vs_seat0", "seat3_vs_seat0"], "or": [0.8, 1.25], "ci_low": [0.6, 1.0],
                       "ci_high": [1.0, 1.5], "p": [0.05, 0.04], "method": ["logit, CR2 by experiment"] * 2})
    tables = build_paper_tables({"odds_ratios": df}, {})
    for t in (tables[1], tables[3]):
        assert [r[0] for r in t.panels[0][2]] == ["Player 2 vs Player 1", "Player 4 vs Player 1"], t.number
        assert "Seat" not in " ".join(r[0] for r in t.panels[0][2])
    assert "prints these rows again as Table 4" in tables[1].caption and "prints them twice" in tables[3].caption
