"""A printed number only where it is earned: no correlation outside [-1, 1], no estimate from a fit
that did not converge, relative changes judged on their own range, no interval of about 0-100% from
two experiments, and tables whose every estimate is empty left out with a line."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from _synth_stats import fast_config
from _synth_team import make_team_games
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.session import Analysis


def test_style_correlation_stays_in_range_and_says_when_lengths_do_not_vary():
    """Raw one-pass moments gave r = noise / noise where every description has one length (r = 1.0118
    printed with an interval that excluded it). Centred moments with a zero-variance guard: no r, a reason;
    and where lengths vary, r in [-1, 1] inside its own interval, equal to numpy's Pearson r."""
    data = make_team_games(seed=4)
    p = data.players.copy()
    g = data.games.set_index("game_id")
    rng = np.random.default_rng(0)
    mode = p["game_id"].map(g["mode"])
    words = np.where(mode == "team_aware", 7, rng.integers(3, 30, len(p)))
    p["description"] = [" ".join(["stone"] * int(k)) for k in words]
    out = TABLES["style_correlation"](AnalysisData(data.games, p), fast_config())
    assert len(out) and out["r"].dropna().between(-1, 1).all()
    flat = out[out["mode"] == "team_aware"]
    assert len(flat) and flat["r"].isna().all() and flat["note"].str.contains("does not vary").all()
    ok = out.dropna(subset=["r", "ci_low"])
    assert len(ok) and ((ok["ci_low"] <= ok["r"]) & (ok["r"] <= ok["ci_high"])).all()


def test_style_adjusted_prints_no_odds_ratio_for_a_separated_term():
    """A model whose impostors always win: its odds ratio has no finite estimate. The row gives the reason
    and no number (it printed one with an interval, counted as calibrated)."""
    data = make_team_games(experiments_per_cell=4, games=48, seed=3)
    g, p = data.games.copy(), data.players
    imp = p[p["role"] == "impostor"].set_index("game_id")["model"]
    g["winner"] = np.where(g["game_id"].map(imp) == "loyal", "impostor", g["winner"])
    session = Analysis(AnalysisData(g, p), fast_config())
    out = session.table("style_adjusted").set_index("term")
    row = out.loc["model=loyal"]
    assert pd.isna(row["or_raw"]) and pd.isna(row["ci_low_raw"]) and pd.isna(row["or_adj"]) and pd.isna(row["ci_low"])
    assert "separation" in row["note"] and "model=loyal" in row["note"]
    assert "raw OR not estimable" in row["note"]  # names the fit whose OR is missing
    inf = session.table("inference")
    assert not inf["quantity"].astype(str).str.contains("model=loyal").any()
    others = out.drop(index="model=loyal")
    assert others["or_adj"].notna().all()  # the converged terms keep their numbers


def test_a_relative_change_is_judged_on_its_own_range():
    """``learning``'s change_30_pct runs from -100 (to zero) up: -68 [-100, 71] is a real interval, not
    "outside the parameter's range" (every *_pct column was taken as 0-100); a share still is 0-100."""
    from impostor_bench.analysis.report.formatting import flag_intervals
    from impostor_bench.analysis.report.interval_check import bounds_of

    assert bounds_of("change_30_pct") == (-100.0, math.inf)
    assert bounds_of("imp_win_pct") == (0.0, 100.0)
    df = pd.DataFrame({"mode": ["cross_play"], "change_30_pct": [-68.0], "change_30_ci_low": [-99.9],
                       "change_30_ci_high": [71.0]})
    assert "interval_check" not in flag_intervals(df, "learning").columns


def test_two_experiments_give_no_interval_of_about_0_to_100():
    """A rate from two experiments: t(1) gave about [0, 100]; now no interval and the reason."""
    from impostor_bench.analysis.stats.rates import cluster_rate

    r = cluster_rate([3, 5], [8, 8], [0, 1])
    assert r["estimate"] == 0.5 and np.isnan(r["ci_low"]) and "two experiments" in r["method"]
    three = cluster_rate([3, 5, 4], [8, 8, 8], [0, 1, 2])
    assert 0 < three["ci_low"] < 0.5 < three["ci_high"] < 1


def test_a_table_whose_every_estimate_is_empty_is_left_out_with_a_line():
    """``correlations`` needs four models; with three its rows hold no estimate: not drawn, named once."""
    from impostor_bench.analysis.report.pages import _layout, _not_shown_lines, no_statistic

    results = {"correlations": pd.DataFrame({"x": ["det_acc_pct"], "y": ["imp_win_pct"], "n": [3]}),
               "headline": pd.DataFrame({"model": ["a"], "imp_win_pct": [40.0], "imp_win_ci_low": [30.0],
                                         "imp_win_ci_high": [50.0]})}
    m = {"tables": [{"name": "correlations", "rows": 1, "seconds": 0.0}, {"name": "headline", "rows": 1,
                                                                           "seconds": 0.0}]}
    assert no_statistic("correlations", results) and not no_statistic("headline", results)
    by, empty = _layout(m, results)
    assert "correlations" in empty and all(t["name"] != "correlations" for ts in by.values() for t in ts)
    lines = _not_shown_lines({**m, "figures_not_drawn": []}, empty)
    assert lines == ["Tables with every estimate empty (1; their rows are in the CSV, reasons in the notes): "
                     "correlations."]
