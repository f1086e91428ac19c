"""Tables declared for the paper's four-player, one-impostor game leave other group sizes out with
one note; the data of the paper's game give the same table as before (analysis/stats/groups.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.conditions import ConditionPlan
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.groups import PAPER_GROUP_NOTE, paper_mask
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.validate import validate_tables

TABLE = "win_by_model_mode"  # a paper table read from the games and players tables


@pytest.fixture(scope="module")
def mixed():
    plan = ConditionPlan("group_size", ("4x1", "6x2"), {"6x2": 1.5})
    g, p, m = simulate_games(24, 12, seed=5, modes=["homogeneous", "cross_play"], conditions=plan)
    return validate_tables(g, p, m)


def _paper_only(data: AnalysisData) -> AnalysisData:
    keep = paper_mask(data.games)
    games = data.games.loc[keep].reset_index(drop=True)
    players = data.players[data.players["game_id"].isin(set(games["game_id"]))].reset_index(drop=True)
    return AnalysisData(games=games, players=players, models=data.models)


def test_every_table_declares_its_groups():
    assert {t.spec.groups for t in TABLES.values()} <= {"paper", "any"}


def test_a_paper_table_is_computed_on_the_papers_games_with_one_note(mixed):
    session = Analysis(mixed)
    got = session.result(TABLE)
    alone = Analysis(_paper_only(mixed)).result(TABLE)
    pd.testing.assert_frame_equal(got.frame, alone.frame)
    lines = [n for n in got.notes if PAPER_GROUP_NOTE in n]
    n_paper = int(paper_mask(mixed.games).sum())
    assert len(lines) == 1 and f"computed on its {n_paper:,} games" in lines[0]
    assert f"{len(mixed.games) - n_paper:,} game(s) of other group sizes left out" in lines[0]
    assert not got.errors


def test_a_paper_table_without_paper_games_says_so(mixed):
    games = mixed.games.loc[~paper_mask(mixed.games)].reset_index(drop=True)
    players = mixed.players[mixed.players["game_id"].isin(set(games["game_id"]))].reset_index(drop=True)
    got = Analysis(AnalysisData(games=games, players=players, models=mixed.models)).result(TABLE)
    assert len(got.frame) == 0 and not got.errors
    assert any(PAPER_GROUP_NOTE in n and "no such game" in n for n in got.notes)


def test_the_papers_data_are_untouched(mixed):
    paper = _paper_only(mixed)
    got = Analysis(paper).result(TABLE)
    assert not any(PAPER_GROUP_NOTE in n for n in got.notes) and len(got.frame)
