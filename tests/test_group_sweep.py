"""Sweep grid axes ``players:`` and ``impostors:`` (docs/rules.md, "Group size")."""

from __future__ import annotations

import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.sweep import experiments, load_config
from impostor_bench.sweep.config import config_hash, left_out_cells, planned_experiments
from impostor_bench.sweep.plan import task_spec

from test_sweep_helpers import write_config


def _cfg(tmp_path, **fields):
    p = write_config(tmp_path / "g.yaml", **fields)
    return load_config(p), p


def test_the_grid_plans_every_cell_that_is_a_game(tmp_path):
    cfg, _ = _cfg(tmp_path, modes=["homogeneous", "cross_play", "team_blind"], players=[4, 6], impostors=[1, 2])
    exps = experiments(cfg)
    cells = {(e.mode, e.players, e.impostors) for e in exps}
    # 4 players with 2 impostors is no game; team modes are two teams of two
    assert cells == {("homogeneous", 4, 1), ("homogeneous", 6, 1), ("homogeneous", 6, 2),
                     ("cross_play", 4, 1), ("cross_play", 6, 1), ("cross_play", 6, 2), ("team_blind", 4, 1)}
    assert len(exps) == planned_experiments(cfg) == 2 * 3 + 2 * 3 + 1
    assert len({e.label for e in exps}) == len(exps)  # every experiment its own identity (and draws)
    assert "homogeneous: players=4 impostors=2" in left_out_cells(cfg)
    six = next(e for e in exps if (e.mode, e.players, e.impostors) == ("cross_play", 6, 2))
    args = task_spec(six, cfg, tmp_path / "g.yaml", {})["task_args"]
    assert (args["players"], args["impostors"]) == (6, 2) and six.label.endswith("|p6k2")


def test_the_papers_group_keeps_the_plan_and_the_resume_hash(tmp_path):
    plain, p1 = _cfg(tmp_path)
    (tmp_path / "b").mkdir()
    explicit_path = write_config(tmp_path / "b" / "g.yaml", players=4, impostors=[1])
    explicit = load_config(explicit_path)
    assert [e.label for e in experiments(plain)] == [e.label for e in experiments(explicit)]
    assert config_hash(plain, p1) == config_hash(explicit, explicit_path)
    assert "players" not in task_spec(experiments(plain)[0], plain, p1, {})["task_args"]
    (tmp_path / "c").mkdir()
    six_path = write_config(tmp_path / "c" / "g.yaml", players=[4, 6])
    assert config_hash(load_config(six_path), six_path) != config_hash(plain, p1)


@pytest.mark.parametrize("change, field", [
    ({"players": [4, 9]}, "players[1]"),
    ({"players": [3]}, "players[0]"),
    ({"impostors": [2]}, "(top level)"),  # no cell of 4 players with 2 impostors is a game
    ({"players": [6, 6]}, "players"),
])
def test_bad_axes_name_the_field_and_the_fix(tmp_path, change, field):
    p = write_config(tmp_path / "bad.yaml", **change)
    with pytest.raises(ImpostorError) as ei:
        load_config(p)
    msg = str(ei.value)
    assert str(p) in msg and f"field '{field}'" in msg and ("fix" in msg or "list each once" in msg), msg
    assert "\n" not in msg


def test_the_cost_estimate_counts_the_games_seats(tmp_path):
    from impostor_bench.sweep.estimate import game_seat_load, seats_per_game

    assert seats_per_game("cross_play", {"impostor": "a", "majority": "b"}, 6, 2) == {"a": 2, "b": 4}
    assert seats_per_game("homogeneous", {"model": "a"}, 7) == {"a": 7}
    assert seats_per_game("cross_play", {"impostor": "a", "majority": "b"}) == {"a": 1, "b": 3}
    # a seat of a bigger game reads more descriptions before it votes
    assert game_seat_load("homogeneous", 150, players=8)[1] > game_seat_load("homogeneous", 150)[1]
