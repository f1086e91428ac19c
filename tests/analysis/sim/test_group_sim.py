"""Simulated games of other group sizes (analysis/sim/groups.py) and their validation: the
tables pass the analysis's seat and outcome checks, and a planted group-size effect is there."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.sim.conditions import ConditionPlan
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.validate import validate_tables
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.rules import Ballot, decide


@pytest.fixture(scope="module")
def grouped():
    plan = ConditionPlan("group_size", ("4x1", "6x2", "7x1"), {"6x2": 2.0, "7x1": 0.6})
    return simulate_games(48, 30, seed=3, modes=["homogeneous", "cross_play"], conditions=plan)


def test_games_have_their_seats_and_impostors(grouped):
    games, players, models = grouped
    data = validate_tables(games, players, models)  # the analysis's own checks: seats, roles, outcomes
    per = data.players.groupby("game_id").agg(n=("seat", "size"), k=("role", lambda r: (r == "impostor").sum()))
    g = data.games.set_index("game_id")
    assert (per["n"] == g.loc[per.index, "n_players"]).all() and (per["k"] == g.loc[per.index, "n_impostors"]).all()
    six = data.games[data.games["n_players"] == 6]
    assert six["impostor_seats"].str.count(",").eq(1).all()
    assert {len(s) for s in six["speaking_order"]} == {6}


def test_every_regrouped_outcome_is_what_the_rules_decide(grouped):
    games, players, _ = grouped
    seats: dict[str, list[dict]] = {}
    for row in players.to_dict("records"):
        seats.setdefault(row["game_id"], []).append(row)
    checked = 0
    for g in games[games["n_players"] != 4].to_dict("records"):
        imps = [int(s) for s in g["impostor_seats"].split(",")] if g["impostor_seats"] else [int(g["impostor_seat"])]
        rows = sorted(seats[g["game_id"]], key=lambda r: r["seat"])
        ballots = [Ballot(None if pd.isna(r["vote"]) else int(r["vote"]), bool(r["self_declared"]), r["word_guess"])
                   for r in rows]
        out = decide(ballots, imps, g["majority_word"])
        assert (out.winner, out.win_condition, out.tie_k) == (g["winner"], g["win_condition"], g["tie_k"])
        checked += 1
    assert checked > 500


def test_the_planted_group_effect_is_recovered(grouped):
    games, _, _ = grouped
    rate = games.groupby(["n_players", "n_impostors"])["winner"].apply(lambda s: (s == "impostor").mean())
    truth = games.groupby(["n_players", "n_impostors"])["p_design"].mean()
    n = games.groupby(["n_players", "n_impostors"]).size()
    # each level's win rate within 4 binomial SEs of its planted truth, and the ordering planted
    assert (np.abs(rate - truth) < 4 * np.sqrt(truth * (1 - truth) / n)).all(), (rate, truth)
    assert rate[(6, 2)] > rate[(4, 1)] > rate[(7, 1)]


def test_a_conviction_below_the_groups_threshold_is_refused(grouped):
    games, players, models = grouped
    games, players = games.copy(), players.copy()
    # a seven-player game recorded as a conviction with two majority votes on the impostor (needs 4 of 6)
    gid = games.loc[(games["n_players"] == 7) & (games["win_condition"] == "conviction"), "game_id"].iloc[0]
    g = games.index[games["game_id"] == gid][0]
    imp = int(games.at[g, "impostor_seat"])
    rows = players.index[players["game_id"] == gid]
    voters = [i for i in rows if players.at[i, "seat"] != imp]
    for j, i in enumerate(voters):
        players.at[i, "vote"] = imp if j < 2 else (imp + 1 + j) % 7 if (imp + 1 + j) % 7 != players.at[i, "seat"] else None
        players.at[i, "ballot_class"] = "valid" if players.at[i, "vote"] is not None else "unparseable"
        players.at[i, "ballot_valid"] = players.at[i, "vote"] is not None
        players.at[i, "self_declared"] = False
    with pytest.raises(ImpostorError, match="win_condition"):
        validate_tables(games, players, models)


def test_team_modes_stay_in_the_papers_group():
    plan = ConditionPlan("group_size", ("4x1", "6x2"))
    games, players, _ = simulate_games(12, 4, seed=0, modes=["team_blind", "homogeneous"], conditions=plan)
    team = games["mode"] == "team_blind"
    assert (games.loc[team, "n_players"] == 4).all() and (games.loc[~team, "n_players"] == 6).any()
    with pytest.raises(ValueError, match="add the level 4x1"):
        simulate_games(12, 4, seed=0, modes=["team_blind"], conditions=ConditionPlan("group_size", ("6x2", "5x1")))
