"""Issue 43: Table 12 filled from judge labels (Strategy Align., Alignment Gap) and from multi-round
games (Trust Recovery, Resilience Factor), each against an independent computation on planted
data; table12_undefined names the cause that holds; Cohen's kappa against a hand computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _synth_stats import fast_config
from _synth_team import make_team_games
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.rounds import simulate_rounds
from impostor_bench.analysis.stats import TABLES, Analysis
from impostor_bench.analysis.stats.judge_labels import NO_LABELS, judge_agreement
from impostor_bench.analysis.stats.table12 import TABLE12

LABELS = ("literal", "vague", "mirror")


def _label(data: AnalysisData, seed: int = 0) -> AnalysisData:
    """Planted strategies: both members of a 'loyal' team share one label; every 'loose' seat draws
    its own (so two loose teammates agree 1/3 of the time); impostors are labelled too."""
    rng = np.random.default_rng(seed)
    p = data.players.copy()
    lab = rng.choice(LABELS, len(p)).astype(object)
    first = {}
    for i, (g, team, model) in enumerate(zip(p["game_id"], p["team"], p["model"])):
        if model == "loyal" and team is not None and pd.notna(team):
            lab[i] = first.setdefault((g, team), lab[i])
    p["judge_strategy"] = lab
    p["judge_model"] = "bot/judge"
    return AnalysisData(data.games, p, data.models)


@pytest.fixture(scope="module")
def labelled():
    data = _label(make_team_games(seed=1))
    cfg = fast_config()
    return data, cfg, TABLES["team_dynamics"](data, cfg).set_index("model")


def _mm_teams(data: AnalysisData) -> pd.DataFrame:
    """Independent computation: majority-majority teams of team-mode games, straight from players."""
    p = data.players[data.players["team"].notna()]
    rows = []
    for _key, d in p.groupby(["game_id", "team"]):
        if len(d) == 2 and (d["role"] == "majority").all():
            rows.append({"model": d["model"].iloc[0], "same": d["judge_strategy"].nunique() == 1})
    return pd.DataFrame(rows)


def test_strategy_alignment_recovers_planted_labels(labelled):
    data, _, t = labelled
    truth = _mm_teams(data).groupby("model")["same"].mean() * 100
    assert t.loc["loyal", "strategy_align_pct"] == pytest.approx(100.0) == pytest.approx(truth["loyal"])
    assert t.loc["loose", "strategy_align_pct"] == pytest.approx(truth["loose"])
    lo, hi = t.loc["loose", "strategy_align_pct_ci_low"], t.loc["loose", "strategy_align_pct_ci_high"]
    assert lo <= 100 / 3 <= hi and hi - lo < 40
    for m in t.index:  # Alignment Gap = Strategy Align. - Collab. Success over the same mm teams
        assert t.loc[m, "alignment_gap_pp"] == pytest.approx(t.loc[m, "strategy_align_pct"]
                                                            - t.loc[m, "collab_success_pct"])
    assert set(t["strategy_judge"]) == {"bot/judge"}


def test_judge_labels_fill_twelve_columns_and_the_undefined_list_says_why(labelled):
    data, cfg, t = labelled
    filled = [c for c, _, _ in TABLE12 if t[c].notna().any()]
    assert len(filled) == 12 and {"strategy_align_pct", "alignment_gap_pp"} <= set(filled)
    und = TABLES["table12_undefined"](data, cfg).set_index("metric")
    assert "strategy_align_pct" not in und.index
    assert und.loc["trust_recovery_pct", "models"] == "all" and "one round" in und.loc["trust_recovery_pct", "reason"]
    plain = make_team_games(seed=1)  # no labels: the cause is the missing annotation pass
    und0 = TABLES["table12_undefined"](plain, cfg).set_index("metric")
    assert NO_LABELS in und0.loc["strategy_align_pct", "reason"]
    # an empty cell of one model names that model and its own cause (loyal never betrays: 0 / 0)
    assert und.loc["vulnerability_index", "models"] == "loyal" and "0 betrayals" in und.loc["vulnerability_index",
                                                                                             "reason"]


def test_multi_round_games_fill_trust_recovery_and_resilience():
    g, p, mv, m = simulate_rounds(30, 12, 3, seed=4)
    data = Analysis(AnalysisData(g, p, m, moves=mv))
    cfg = fast_config()
    t = TABLES["team_dynamics"](data, cfg).set_index("model")
    rt = TABLES["rounds_trust"](data, cfg).set_index("model")
    assert t["trust_recovery_pct"].notna().sum() >= 8 and t["resilience_factor"].notna().sum() >= 8
    for model in t.index:
        assert t.loc[model, "trust_recovery_pct"] == pytest.approx(rt.loc[model, "recovery_pct"], nan_ok=True)
        assert t.loc[model, "trust_recovery_pct_ci_low"] == pytest.approx(rt.loc[model, "recovery_ci_low"], nan_ok=True)
        # the paper's Resilience Factor is its printed Trust Recovery / its printed Betrayal Rate (all nine rows)
        assert t.loc[model, "resilience_factor"] == pytest.approx(
            t.loc[model, "trust_recovery_pct"] / t.loc[model, "betrayal_pct"], nan_ok=True)
        # rounds_trust's ratio over every round's ballots is kept beside it, under its own name
        assert t.loc[model, "resilience_all_rounds"] == pytest.approx(
            rt.loc[model, "recovery_pct"] / rt.loc[model, "betrayal_pct"], nan_ok=True)
    assert (t["resilience_factor"] != t["resilience_all_rounds"]).sum() >= 4  # two definitions, two numbers
    und = TABLES["table12_undefined"](data, cfg)
    assert not ({"trust_recovery_pct", "resilience_factor"} & set(und.loc[und["models"] == "all", "metric"]))


def test_cohens_kappa_against_a_hand_computation():
    hand = pd.DataFrame({"game": ["g"] * 8, "seat": range(8),
                         "strategy": ["literal", "literal", "vague", "vague", "mirror", "mirror", "literal", "vague"],
                         "trust": [True, False] * 4, "coord_intent": [False] * 8})
    judged = hand.copy()
    judged.loc[[1, 3], "strategy"] = ["vague", "literal"]  # two disagreements
    out = judge_agreement(hand, judged).set_index("label")
    # by hand: p_o = 6/8; marginals hand (3 literal, 3 vague, 2 mirror), judge (3, 3, 2): p_e = (9 + 9 + 4) / 64
    p_o, p_e = 6 / 8, 22 / 64
    assert out.loc["strategy", "kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
    assert out.loc["trust", "kappa"] == pytest.approx(1.0) and out.loc["strategy", "agreement_pct"] == 75.0
    assert np.isnan(out.loc["coord_intent", "kappa"])  # one category only: kappa undefined
