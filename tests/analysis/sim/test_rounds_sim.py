"""Issue 32: the round tables recover the known truth of the multi-round simulator
(analysis/sim/rounds.py), whose ballot model has closed forms when the game effects are off."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.effects import SimModel
from impostor_bench.analysis.sim.rounds import simulate_rounds, vote_accuracy_truth
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.validate import validate_tables

Q, GAIN = 0.55, 0.5
TWINS = (SimModel("a", det=Q), SimModel("b", det=Q))
PURE = dict(models=TWINS, hiding_scale=0.0, invalid_vote_rate=0.0, self_decl_rate=0.0, det_gain_per_round=GAIN)


def _data(g, p, mv, m) -> AnalysisData:
    data = validate_tables(g, p, m)
    data.moves = mv
    return data


@pytest.fixture(scope="module")
def team_games():
    return _data(*simulate_rounds(240, 20, 3, modes=("team_aware",), difficulties=("easy",), seed=5, **PURE))


@pytest.fixture(scope="module")
def plain_games():
    return _data(*simulate_rounds(240, 20, 3, modes=("homogeneous",), difficulties=("easy",), seed=6, **PURE))


def q_of(r):
    return vote_accuracy_truth(Q, r, GAIN)


def exact_round1_voted_out(q: float) -> float:
    """P(the impostor, seat 0, has strictly the most votes in round 1): all 3^4 ballot profiles."""
    total = 0.0
    for votes in itertools.product(range(4), repeat=4):
        prob = 1.0
        for voter, v in enumerate(votes):
            if v == voter:
                prob = 0.0
            elif voter == 0:
                prob *= 1 / 3
            else:
                prob *= q if v == 0 else (1 - q) / 2
        if prob:
            counts = np.bincount(votes, minlength=4)
            total += prob * (counts[0] > np.delete(counts, 0).max())
    return total


def test_game_records_follow_the_round_rules(plain_games):
    g, mv = plain_games.games, plain_games.moves
    assert set(g["win_condition"]) <= {"eliminated", "two_left", "rounds_exhausted"}
    assert ((g["winner"] == "majority") == (g["win_condition"] == "eliminated")).all()
    per_round = mv.groupby(["game_id", "round"]).size()
    assert per_round.xs(1, level="round").eq(4).all() and per_round.le(4).all()
    out = mv[mv["eliminated"]].groupby("game_id").size()
    order = g.set_index("game_id")["elimination_order"]
    assert (order.reindex(out.index).str.split(",").str.len() == out).all()
    assert (g.loc[g["elimination_order"] == "", "win_condition"] == "rounds_exhausted").all()
    imp_out = mv[mv["eliminated"] & (mv["role"] == "impostor")]["game_id"]
    assert set(imp_out) == set(g.loc[g["win_condition"] == "eliminated", "game_id"])


def test_survival_round1_matches_the_exact_probability(plain_games):
    s = TABLES["rounds_survival"](plain_games, StatsConfig())
    row = s[(s["mode"] == "ALL") & (s["round"] == 1)].iloc[0]
    truth = 100 * (1 - exact_round1_voted_out(Q))
    assert row["survival_ci_low"] <= truth <= row["survival_ci_high"]
    assert abs(row["survival_pct"] - truth) < 3.0
    assert s.groupby("mode")["survival_pct"].apply(lambda v: v.is_monotonic_decreasing).all()


def test_vote_accuracy_by_round_recovers_the_planted_learning(plain_games):
    v = TABLES["rounds_votes"](plain_games, StatsConfig())
    pooled = v[v["model"] == "ALL"].set_index("round")
    for r in (1, 2, 3):
        truth = 100 * q_of(r)
        assert pooled.loc[r, "vote_acc_ci_low"] <= truth <= pooled.loc[r, "vote_acc_ci_high"], (r, truth)
    assert pooled.loc[3, "vote_acc_pct"] > pooled.loc[1, "vote_acc_pct"] + 10


def _present(mv):
    return mv.groupby(["game_id", "round"])["seat"].transform("size")


@pytest.mark.slow
def test_betrayal_and_recovery_match_their_closed_forms(team_games):
    mv = team_games.moves.copy()
    mv["k"] = _present(mv)
    t = TABLES["rounds_trust"](team_games, StatsConfig()).set_index("model").loc["ALL"]
    team = mv[mv["round"] == 1].set_index(["game_id", "seat"])
    mates = {(g, s): s2 for (g, s), tm in team["team"].items() for s2 in range(4)
             if s2 != s and team["team"].get((g, s2)) == tm}
    role = team["role"]
    here = set(zip(mv["game_id"], mv["round"], mv["seat"]))
    p_betray, p_rec = [], []
    k_at = mv.groupby(["game_id", "round"])["seat"].size()
    for gid, r, s, v, k, rl in zip(mv["game_id"], mv["round"], mv["seat"], mv["vote"], mv["k"], mv["role"]):
        mate = mates[(gid, s)]
        if (gid, r, mate) not in here or role[(gid, mate)] == "impostor":
            continue
        p_betray.append(0.0 if rl == "impostor" else (1 - q_of(r)) / (k - 2))
        if v == mate and (gid, r + 1, s) in here and (gid, r + 1, mate) in here:
            k1, q1 = k_at[(gid, r + 1)], q_of(r + 1)
            p_rec.append(q1 ** 2 + (1 - q1) ** 2 * (k1 - 3) / (k1 - 2) ** 2)
    truth_b, truth_r = 100 * np.mean(p_betray), 100 * np.mean(p_rec)
    assert t["betrayal_ci_low"] <= truth_b <= t["betrayal_ci_high"], (t["betrayal_pct"], truth_b)
    assert t["recovery_ci_low"] <= truth_r <= t["recovery_ci_high"], (t["recovery_pct"], truth_r)
    assert t["resilience"] == pytest.approx(t["recovery_pct"] / t["betrayal_pct"])
    assert len(p_rec) == t["recovery_n"] and len(p_betray) == t["betrayal_n"]


def test_strategy_revision_matches_its_closed_form(plain_games):
    mv = plain_games.moves
    k_at = mv.groupby(["game_id", "round"])["seat"].size()
    imp = mv[mv["role"] == "impostor"].groupby("game_id")["seat"].first()
    here = set(zip(mv["game_id"], mv["round"], mv["seat"]))
    p_change = []
    for gid, r, s, v, rl in zip(mv["game_id"], mv["round"], mv["seat"], mv["vote"], mv["role"]):
        if pd.isna(v) or (gid, r + 1, s) not in here or (gid, r + 1, int(v)) not in here:
            continue
        k1, q1 = k_at[(gid, r + 1)], q_of(r + 1)
        same = 1 / (k1 - 1) if rl == "impostor" else (q1 if v == imp[gid] else (1 - q1) / (k1 - 2))
        p_change.append(1 - same)
    t = TABLES["rounds_trust"](plain_games, StatsConfig()).set_index("model").loc["ALL"]
    truth = 100 * np.mean(p_change)
    assert t["revision_ci_low"] <= truth <= t["revision_ci_high"], (t["revision_pct"], truth)
    assert len(p_change) == t["revision_n"]
    assert np.isnan(t["betrayal_pct"]) if "betrayal_pct" in t else True  # no teams in homogeneous games


def test_commitment_hazard_matches_its_closed_form(team_games):
    mv = team_games.moves
    c = TABLES["rounds_commit"](team_games, StatsConfig())
    row = c[(c["mode"] == "ALL") & (c["round"] == 1)].iloc[0]
    # round 1, four seats: a majority team commits w.p. q^2 + (1-q)^2/4, the impostor's team w.p. (1-q)/2
    truth = 100 * ((Q ** 2 + (1 - Q) ** 2 / 4) + (1 - Q) / 2) / 2
    assert row["commit_ci_low"] <= truth <= row["commit_ci_high"], (row["commit_pct"], truth)
    assert row["n_teams"] == 2 * mv["game_id"].nunique()
    assert 1 <= row["mean_commit_round"] <= 3
