"""Appendix M's numbers outside Table 12 (``appendix_m``) against independent computations on
scripted team games with planted behaviour and on simulated multi-round games."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _synth_stats import fast_config
from _synth_team import make_team_games
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import TABLES, Analysis
from impostor_bench.analysis.stats.appendix_m import UNDEFINED


@pytest.fixture(scope="module")
def team():
    data = Analysis(make_team_games(seed=3), fast_config())
    return data, TABLES["appendix_m"](data, fast_config())


def _one(t: pd.DataFrame, item: str, **keys) -> pd.Series:
    sel = t["item"] == item
    for k, v in keys.items():
        sel &= t[k].astype(str) == v
    assert sel.sum() == 1, (item, keys)
    return t[sel].iloc[0]


def test_cross_model_correlations_are_pearson_over_the_models_with_n(team):
    data, t = team
    td = TABLES["team_dynamics"](data, fast_config()).set_index("model")
    h = TABLES["headline"](data, fast_config()).set_index("model")
    row = _one(t, "corr_betrayal_capability")
    # two scripted models: too few points for a correlation; the row says so and prints none
    assert row["n"] == 2 and np.isnan(row["estimate"]) and "needs >= 3 models" in row["reason"]
    assert len(td) == len(h) == 2


def test_description_words_by_model_and_mode(team):
    data, t = team
    p, g = data.data.players, data.data.games
    words = p.merge(g[["game_id", "mode"]], on="game_id")
    words["n"] = words["description"].str.split().str.len()
    for (model, mode), grp in words.groupby(["model", "mode"]):
        if mode not in ("homogeneous", "team_aware"):
            continue
        row = _one(t, "description_words", model=model, mode=mode)
        assert row["estimate"] == pytest.approx(grp["n"].mean()) and row["n"] == len(grp)
    # planted: loyal opens its team_aware descriptions with a four-word coordination phrase
    assert (_one(t, "description_words", model="loyal", mode="team_aware")["estimate"]
            > _one(t, "description_words", model="loyal", mode="homogeneous")["estimate"] + 2)


def test_pooled_teammate_alignment_by_mode_against_a_loop(team):
    data, t = team
    p, g = data.data.players, data.data.games.set_index("game_id")
    for mode, item in (("team_aware", "coord_attempt_success"), ("team_blind", "implicit_coord_pooled")):
        hits = []
        for _gid, r in p[p["game_id"].map(g["mode"]) == mode].groupby("game_id"):
            r = r.set_index("seat")
            for a in range(4):
                for b in range(a + 1, 4):
                    if r.at[a, "team"] == r.at[b, "team"] and pd.notna(r.at[a, "vote"]) and pd.notna(r.at[b, "vote"]):
                        hits.append(r.at[a, "vote"] == r.at[b, "vote"])
        row = _one(t, item)
        assert row["estimate"] == pytest.approx(100 * np.mean(hits)) and row["n"] == len(hits)
        assert row["ci_low"] < row["estimate"] < row["ci_high"] and row["method"]
    # planted: loyal teams copy always in team_aware, half the time in team_blind
    assert _one(t, "coord_attempt_success")["estimate"] > _one(t, "implicit_coord_pooled")["estimate"]


def test_table5_summary_is_the_median_and_count_of_its_cells(team):
    data, t = team
    o = TABLES["opponent_baseline"](data, fast_config())
    o = o[o["difficulty"].astype(str) != "ALL"]  # the model x difficulty cells (the paper's 36)
    fitted = o[np.isfinite(pd.to_numeric(o["or_per_10pp"], errors="coerce"))]
    med, sig = _one(t, "median_or_table5"), _one(t, "significant_cells_table5")
    if len(fitted):
        assert med["estimate"] == pytest.approx(np.median(fitted["or_per_10pp"].astype(float)))
        assert sig["estimate"] == (fitted["q"].astype(float) < 0.05).sum() and sig["n"] == len(fitted)
    else:
        assert np.isnan(med["estimate"]) and "no fitted cell" in med["reason"]


def test_undefined_numbers_are_rows_with_a_reason_and_one_round_data_say_why(team):
    _, t = team
    for item, *_ in UNDEFINED:
        row = _one(t, item)
        assert np.isnan(row["estimate"]) and len(row["reason"]) > 30
    assert "more than one round" in _one(t, "revision_ratio")["reason"]
    assert "judge labels" in _one(t, "convergence_eff", model="loyal")["reason"]


def test_revision_ratio_on_multi_round_games_against_the_moves():
    from impostor_bench.analysis.sim.rounds import simulate_rounds

    g, p, mv, m = simulate_rounds(40, 12, 3, seed=5)
    data = Analysis(AnalysisData(g, p, m, moves=mv), fast_config())
    row = _one(TABLES["appendix_m"](data, fast_config()), "revision_ratio")
    mode = g.set_index("game_id")["mode"]
    cur = mv[mv["vote"].notna()].set_index(["game_id", "round", "seat"])["vote"].astype(float)
    present = set(zip(mv["game_id"], mv["round"], mv["seat"]))
    rates = {}
    for md in ("team_aware", "homogeneous"):
        n = changed = 0
        for (gid, rnd, seat), v in cur.items():
            if mode[gid] != md or (gid, rnd + 1, seat) not in cur.index:
                continue
            if (gid, rnd + 1, int(v)) not in present:
                continue  # the earlier target is out: no revision to count
            n += 1
            changed += cur[(gid, rnd + 1, seat)] != v
        rates[md] = changed / n
    assert row["estimate"] == pytest.approx(rates["team_aware"] / rates["homogeneous"])
