"""Coordination (Table 11), team dynamics (Table 12 subset) and correlations (3.2-3.3)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from _synth_stats import fast_config, shared_ballot
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.correlations import correlate


def _seats_by_game(data):
    by = defaultdict(list)
    for r in data.players.itertuples():
        by[r.game_id].append(r)
    return by


_LOOPS: dict = {}


def _pairs_by_loop(data):
    if id(data) in _LOOPS:
        return _LOOPS[id(data)]
    modes = dict(zip(data.games["game_id"], data.games["mode"]))
    out = defaultdict(lambda: defaultdict(lambda: [0, 0]))  # model -> mode -> [aligned, pairs]
    for gid, rows in _seats_by_game(data).items():
        teams = defaultdict(list)
        for r in rows:
            if isinstance(r.team, str):
                teams[r.team].append(r)
        for mates in teams.values():
            if len(mates) != 2 or any(pd.isna(m.vote) for m in mates):
                continue
            a, b = mates
            for model in {a.model, b.model}:
                out[model][modes[gid]][0] += int(a.vote == b.vote)
                out[model][modes[gid]][1] += 1
    _LOOPS[id(data)] = out
    return out


def _cross_by_loop(data, model):
    """Cross-team pairs (two teams of two, both ballots counted) with a seat of ``model``: [aligned, pairs]."""
    k = n = 0
    for rows in _seats_by_game(data).values():
        teams = [r.team for r in rows]
        if len(rows) != 4 or any(not isinstance(t, str) for t in teams) or sorted(teams) != ["A", "A", "B", "B"]:
            continue
        for i, a in enumerate(rows):
            for b in rows[i + 1:]:
                if a.team != b.team and model in (a.model, b.model) and not (pd.isna(a.vote) or pd.isna(b.vote)):
                    k, n = k + int(a.vote == b.vote), n + 1
    return k, n


def test_coordination_against_loops():
    data = shared_ballot()
    c = TABLES["coordination"](data, fast_config()).set_index("model")
    loops = _pairs_by_loop(data)
    imp = data.players[data.players["role"] == "impostor"].merge(
        data.games[["game_id", "majority_word", "win_condition"]], on="game_id")
    for model in c.index:
        k = sum(v[0] for v in loops[model].values())
        n = sum(v[1] for v in loops[model].values())
        assert c.loc[model, "vote_coord_pct"] == pytest.approx(100 * k / n)
        kc, nc = _cross_by_loop(data, model)
        assert c.loc[model, "vote_coord_cross_pct"] == pytest.approx(100 * kc / nc)
        mine = imp[imp["model"] == model]
        assert c.loc[model, "self_decl_pct"] == pytest.approx(100 * mine["self_declared"].mean())
        decl = mine[mine["self_declared"]]
        if len(decl):
            ok = [(w == mw) for w, mw in zip(decl["word_guess"], decl["majority_word"])]
            assert c.loc[model, "guess_succ_pct"] == pytest.approx(100 * np.mean(ok))
    # generated guess-success probabilities increase with the model index
    gs = c["guess_succ_pct"].dropna()
    assert gs.is_monotonic_increasing


def test_team_dynamics_vote_coordination_by_mode():
    """Table 12's per-mode teammate alignment against loops; Coord. Gap and vocab_conv are tested on
    planted data in test_stats_team_dynamics.py."""
    data = shared_ballot()
    t = TABLES["team_dynamics"](data, fast_config()).set_index("model")
    loops = _pairs_by_loop(data)
    for model in t.index:
        for mode in ("team_blind", "team_aware", "team_semi_aware"):
            k, n = loops[model][mode]
            assert t.loc[model, f"vote_coord_{mode}_pct"] == pytest.approx(100 * k / n)
        k = sum(v[0] for v in loops[model].values())
        n = sum(v[1] for v in loops[model].values())
        assert t.loc[model, "vote_coord_pct"] == pytest.approx(100 * k / n)
        # the M.8 comparison the old coord_gap_pp held, under its own name
        assert t.loc[model, "vote_coord_blind_minus_aware_pp"] == pytest.approx(
            t.loc[model, "vote_coord_team_blind_pct"] - t.loc[model, "vote_coord_team_aware_pct"])
        assert t.loc[model, "coord_gap_pp"] == pytest.approx(
            t.loc[model, "vote_coord_pct"] - t.loc[model, "implicit_coord_pp"])


def test_correlate_against_scipy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=9)
    y = 0.7 * x + rng.normal(size=9)
    r = correlate(x, y)
    pr = stats.pearsonr(x, y)
    ci = pr.confidence_interval(0.95)
    sp = stats.spearmanr(x, y)
    assert r["pearson_r"] == pytest.approx(pr.statistic)
    assert r["pearson_p"] == pytest.approx(pr.pvalue, rel=1e-6)
    assert (r["pearson_ci_low"], r["pearson_ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-6)
    assert r["spearman_rho"] == pytest.approx(sp.statistic)
    assert r["spearman_p_asymptotic"] == pytest.approx(sp.pvalue, rel=1e-6)  # spearman_p is exact: see test_stats_correlations.py
    slope, intercept = np.linalg.lstsq(np.column_stack([x, np.ones(9)]), y, rcond=None)[0]
    assert (r["ols_slope"], r["ols_intercept"]) == pytest.approx((slope, intercept))
    o = np.argsort(x)
    assert r["top_minus_bottom_half"] == pytest.approx(y[o[5:]].mean() - y[o[:4]].mean())
    assert "pearson_r" not in correlate([1, 2, 3], [3, 1, 2])  # n < 4: not computed


def test_correlations_table_uses_headline_columns():
    data = shared_ballot()
    c = TABLES["correlations"](data, fast_config()).set_index(["x", "y"])
    h = TABLES["headline"](data, fast_config())
    r = c.loc[("det_acc_pct", "maj_win_pct")]
    assert r["n"] == len(h)
    assert r["pearson_r"] == pytest.approx(stats.pearsonr(h["det_acc_pct"], h["maj_win_pct"]).statistic)
    assert r["pearson_r"] > 0.8  # majority wins are driven by detection in the generator
