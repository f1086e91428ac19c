"""Odds ratios (Tables 2/4) and E-values: closed forms and recovery of known effects."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from _synth_stats import fast_config, make_logit_games, shared_ballot
from impostor_bench.analysis.stats import TABLES


def woolf(a, b, c, d, z=stats.norm.ppf(0.975)):
    """2x2 OR (a/b)/(c/d) with the Woolf (log) Wald interval and p."""
    lor = math.log((a / b) / (c / d))
    se = math.sqrt(1 / a + 1 / b + 1 / c + 1 / d)
    return math.exp(lor), math.exp(lor - z * se), math.exp(lor + z * se), 2 * stats.norm.sf(abs(lor / se))


def test_paper_methods_seat_and_mode_ors_equal_2x2_closed_form():
    """StatsConfig.paper_methods: the paper's game-level Wald (Woolf) ORs."""
    data = shared_ballot()
    o = TABLES["odds_ratios"](data, fast_config(paper_methods=True)).set_index("comparison")
    assert o["method"].str.startswith("paper (game-level Wald").all()
    g = data.games.assign(y=data.games["winner"] == "impostor")
    for seat in (1, 2, 3):
        s, r = g[g["impostor_seat"] == seat]["y"], g[g["impostor_seat"] == 0]["y"]
        exp = woolf(s.sum(), (~s).sum(), r.sum(), (~r).sum())
        got = o.loc[f"seat{seat}_vs_seat0", ["or", "ci_low", "ci_high", "p"]].to_numpy(float)
        assert got == pytest.approx(exp, rel=1e-6)
    for mode in ("cross_play", "team_blind", "team_aware", "team_semi_aware"):
        s, r = g[g["mode"] == mode]["y"], g[g["mode"] == "homogeneous"]["y"]
        exp = woolf(s.sum(), (~s).sum(), r.sum(), (~r).sum())
        got = o.loc[f"{mode}_vs_homogeneous", ["or", "ci_low", "ci_high", "p"]].to_numpy(float)
        assert got == pytest.approx(exp, rel=1e-6)
    # the default: the same ORs, cluster-robust intervals; seats shared across experiments -> no seat rows
    d = shared_ballot()
    o2 = TABLES["odds_ratios"](d, fast_config()).set_index("comparison")
    assert not o2.index.str.startswith("seat").any()
    assert any("seat ORs: impostor seat shared with the word pairs" in n for n in d.notes)
    assert o2.loc["team_aware_vs_homogeneous", "or"] == pytest.approx(o.loc["team_aware_vs_homogeneous", "or"])
    modes = o2.index.str.contains("_vs_") & ~o2.index.str.startswith("seat")
    assert o2.loc["size_per_10x", "method"].startswith("logit slope, CR2 residuals of the design logit")
    assert o2.loc[modes, "method"].str.startswith("marginal log-OR, CR2 residuals of the design logit").all()
    # the paper's aware-vs-blind contrast has its row: the ratio of the two modes' odds
    aw, bl = g[g["mode"] == "team_aware"]["y"].mean(), g[g["mode"] == "team_blind"]["y"].mean()
    assert o2.loc["team_aware_vs_team_blind", "or"] == pytest.approx((aw / (1 - aw)) / (bl / (1 - bl)))


def test_recovers_known_seat_and_mode_ors():
    """~20k games with true seat-1 OR 0.8, seat-2 OR 1.25 and a team-aware OR 0.77."""
    true = {"seat1_vs_seat0": 0.8, "seat2_vs_seat0": 1.25, "seat3_vs_seat0": 1.0,
            "team_aware_vs_homogeneous": 0.77, "cross_play_vs_homogeneous": 1.0}
    data = make_logit_games(n_exp=200, games_per_exp=100, seed=5,
                            seat_lor=(0, math.log(0.8), math.log(1.25), 0),
                            mode_lor={"homogeneous": 0.0, "team_aware": math.log(0.77), "cross_play": 0.0},
                            seats="per_experiment")
    o = TABLES["odds_ratios"](data, fast_config()).set_index("comparison")
    for comp, t in true.items():
        assert o.loc[comp, "ci_low"] < t < o.loc[comp, "ci_high"], comp
    assert o.loc["seat1_vs_seat0", "p"] < 1e-4 and o.loc["team_aware_vs_homogeneous", "p"] < 1e-4
    # modes are balanced over seats, so the marginal seat OR is (nearly) the conditional one
    assert o.loc["seat1_vs_seat0", "or"] == pytest.approx(0.8, abs=0.06)


def test_recovers_size_slope_per_10x():
    params = {"s": 1.0, "m": 10.0, "l": 100.0, "xl": 1000.0}
    data = make_logit_games(n_exp=200, games_per_exp=100, seed=2, size_slope=math.log(1.71), model_params=params,
                            b0=-1.0)
    o = TABLES["odds_ratios"](data, fast_config()).set_index("comparison")
    assert o.loc["size_per_10x", "ci_low"] < 1.71 < o.loc["size_per_10x", "ci_high"]
    # independent: statsmodels' formula API on the game-level rows
    import statsmodels.formula.api as smf
    g = data.games.assign(y=(data.games["winner"] == "impostor").astype(int),
                          x=np.log10(data.games["impostor_model"].map(params)))
    res = smf.logit("y ~ x", g).fit(disp=0)
    assert o.loc["size_per_10x", "or"] == pytest.approx(math.exp(res.params["x"]), rel=1e-6)
    paper = TABLES["odds_ratios"](data, fast_config(paper_methods=True)).set_index("comparison")
    assert paper.loc["size_per_10x", "p"] == pytest.approx(res.pvalues["x"], rel=1e-4, abs=1e-300)


def evalue_closed(rr):
    rr = 1 / rr if rr < 1 else rr
    return rr + math.sqrt(rr * (rr - 1))


def test_evalues_paper_numbers_and_sqrt_approximation():
    from impostor_bench.analysis.stats.odds import evalue_ci, evalue_rr
    # Appendix B.3 treats OR as RR: 1.71 -> 2.81, 1.26 -> 1.83, 0.79 -> 1.85, 0.90 -> 1.46
    for o, e in ((1.71, 2.81), (1.26, 1.83), (1.22, 1.74), (1.12, 1.49), (0.79, 1.85), (0.77, 1.92),
                 (0.80, 1.81), (0.90, 1.46)):
        assert float(evalue_rr(o)) == pytest.approx(e, abs=0.006)
    assert float(evalue_rr(math.sqrt(1.71))) == pytest.approx(evalue_closed(math.sqrt(1.71)))
    assert float(evalue_rr(1.0)) == 1.0
    assert float(evalue_ci([0.9], [1.2], lambda v: v)[0]) == 1.0  # CI covers 1
    assert float(evalue_ci([1.5], [2.0], lambda v: v)[0]) == pytest.approx(evalue_closed(1.5))
    assert float(evalue_ci([0.5], [0.8], lambda v: v)[0]) == pytest.approx(evalue_closed(0.8))


def test_evalues_table_matches_odds_ratios():
    data = shared_ballot()
    o = TABLES["odds_ratios"](data, fast_config())
    e = TABLES["evalues"](data, fast_config())
    assert list(e["comparison"]) == list(o["comparison"])
    for r_o, r_e in zip(o.itertuples(), e.itertuples()):
        odds = r_o._2
        # `evalue` is the paper's convention (OR taken as RR); the common-outcome sqrt(OR) has its own columns
        assert r_e.evalue == pytest.approx(evalue_closed(odds))
        assert r_e.evalue_or_as_rr == r_e.evalue
        assert r_e.evalue_common_outcome == pytest.approx(evalue_closed(math.sqrt(odds)))
        assert r_e.rr_common_outcome == r_e.rr_approx == pytest.approx(math.sqrt(odds))
        assert r_e.evalue >= r_e.evalue_common_outcome >= 1
        lo, hi = r_o.ci_low, r_o.ci_high
        expect_ci = 1.0 if lo <= 1 <= hi else evalue_closed(lo if lo > 1 else hi)
        assert r_e.evalue_ci == r_e.evalue_ci_or_as_rr == pytest.approx(expect_ci)
        expect_ci_co = 1.0 if lo <= 1 <= hi else evalue_closed(math.sqrt(lo if lo > 1 else hi))
        assert r_e.evalue_ci_common_outcome == pytest.approx(expect_ci_co)


@pytest.mark.parametrize("odds, e_paper, e_common", [
    # worked by hand from VanderWeele & Ding (2017): E = RR + sqrt(RR (RR - 1)), RR < 1 inverted
    (1.71, 1.71 + math.sqrt(1.71 * 0.71), 1.3076697 + math.sqrt(1.3076697 * 0.3076697)),  # 2.8119, 1.9420
    (0.79, 1 / 0.79 + math.sqrt((1 / 0.79) * (1 / 0.79 - 1)), 1.5002344),  # RR* = 1.2658: 1.8459
    (2.0, 2 + math.sqrt(2), 2.1795804),  # 3.4142; sqrt(2) = 1.41421 -> 1.41421 + sqrt(0.58579)
])
def test_evalue_against_hand_computation(odds, e_paper, e_common):
    from impostor_bench.analysis.stats.odds import evalue_rr
    assert float(evalue_rr(odds)) == pytest.approx(e_paper, rel=1e-9)
    assert float(evalue_rr(math.sqrt(odds))) == pytest.approx(e_common, rel=1e-6)
