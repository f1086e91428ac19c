"""The analysis as a notebook calls it (``impostor_bench.analysis``): a table and its notes in three lines,
the same table and notes the session gives, the tables' notes in the order asked."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.session import Analysis

FAST = StatsConfig(seed=3, bootstrap_reps=60, permutation_reps=60)


def test_a_table_and_its_notes_in_three_lines(sim_export, tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    for p in sim_export.iterdir():
        if p.name != "models.csv":  # without models.csv, scaling cannot be computed: a note says so
            (export / p.name).write_bytes(p.read_bytes())
    from impostor_bench.analysis import analyse, load  # the three lines of docs/analysis.md
    a = analyse(load(export), FAST, tables=["headline", "scaling"])
    headline, notes = a.table("headline"), a.notes

    alone = Analysis(load(export), FAST)
    pd.testing.assert_frame_equal(headline, alone.table("headline"))
    assert len(headline) > 0 and len(a.table("scaling")) == 0
    scaling = a.result("scaling")
    assert scaling.error is None and any("models.csv" in n for n in scaling.notes)
    loader = a.data.notes
    assert notes == list(dict.fromkeys([*loader, *a.result("headline").notes, *scaling.notes]))  # in the order asked
    alone.table("scaling")
    assert notes == alone.notes


def test_analyse_takes_a_folder_and_names_an_unknown_table(sim_export):
    from impostor_bench.analysis import analyse

    a = analyse(str(sim_export), FAST, tables=[])
    assert a.computed() == {} and len(a.table("balance")) > 0  # computed when asked
    with pytest.raises(KeyError, match="no analysis table 'no_such'"):
        analyse(sim_export, FAST, tables=["balance", "no_such"])


def test_the_public_names_are_few_and_importing_them_is_cheap():
    import impostor_bench.analysis as pkg

    assert set(pkg.__all__) == {"Analysis", "AnalysisData", "StatsConfig", "TableResult", "analyse", "build_report",
                                "load", "simulate"}
    assert all(getattr(pkg, n) is not None for n in pkg.__all__)
    code = ("import sys, impostor_bench.analysis.moves; "
            "print('impostor_bench.analysis.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"  # a submodule does not load every table
