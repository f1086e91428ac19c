"""Issue 39 A.5: each inference table's caption in the report states its estimand, read from the
``inference`` table's estimand column (``inference.estimand_of`` of each row's method: one definition)."""

from __future__ import annotations

from html import escape as html_escape

import pandas as pd

from _synth_stats import fast_config
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.report.pages import _html_table, _md_table
from impostor_bench.analysis.report.paper_tables import build_paper_tables
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats.inference import (ESTIMAND_DESIGN, ESTIMAND_PAIRS, estimand_of, estimand_sentence,
                                                     inference_rows)
from impostor_bench.analysis.stats.session import Analysis


def test_the_sentence_lists_the_estimands_of_the_printed_rows_only():
    inf = pd.DataFrame({"table": ["a", "a", "a", "b"],
                        "method": ["logit, CR2 by experiment", "logit, two-way by experiment and word pair",
                                   "not computed: too few experiments", "logit, CR2 by experiment"]})
    inf["estimand"] = inf["method"].map(estimand_of)
    both = estimand_sentence(inf, ["a"])
    assert ESTIMAND_DESIGN in both and ESTIMAND_PAIRS in both and "(1 rows)" in both and "not computed" not in both
    assert estimand_sentence(inf, ["b"]) == f" Estimand of the intervals and p-values: {ESTIMAND_DESIGN}."
    assert estimand_sentence(inf, ["c"]) == "" and estimand_sentence(None, ["a"]) == ""


def test_report_captions_state_the_estimand_of_the_inference_table():
    g, pl, models = simulate_games(24, 10, seed=2, design_seed=2)
    cfg = fast_config()
    with Analysis(AnalysisData(games=g, players=pl, models=models), cfg).batch() as data:
        from impostor_bench.analysis.stats import TABLES

        results = {t: TABLES[t](data, cfg) for t in ("headline", "cluster_robust")}
        results["inference"] = inference_rows(data, cfg, ["headline", "cluster_robust"])
    inf = results["inference"]
    for name in ("headline", "cluster_robust"):
        printed = set(inf.loc[(inf["table"] == name) & inf["calibrated"], "estimand"])
        assert printed, name
        md = "\n".join(_md_table(name, {"rows": len(results[name]), "seconds": 0.0}, results))
        html = "\n".join(_html_table(name, {"rows": len(results[name]), "seconds": 0.0}, results))
        for e in printed:
            assert e in md and html_escape(e) in html, (name, e)
    t1 = next(t for t in build_paper_tables(results, {"data": {"games": len(g), "experiments": 24}}) if t.number == 1)
    assert t1.caption.endswith(estimand_sentence(inf, ["headline"])) and ESTIMAND_DESIGN in t1.caption
