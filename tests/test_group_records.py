"""Games-table group-size columns and seat bounds (docs/data-contract.md, "Group size")."""

import pytest
from pydantic import ValidationError

from impostor_bench.core.records import GameRow, MoveRow, PlayerRow, impostor_seat_list, row_dict

BASE = dict(experiment_id="e", game_id="e/g", game_index=0, mode="homogeneous", difficulty="easy", pair_id="p",
            majority_word="dog", impostor_word="cat", impostor_seat=1, impostor_model="m",
            impostor_speaking_position=2, winner="majority", win_condition="conviction", seed=0,
            winner_live="majority", p_imp_default=0.0, p_imp_sym_candidate=0.0, p_imp_sym_side=0.0,
            n_valid_votes=4, n_invalid_ballots=0, n_invalid_descriptions=0, votes_on_impostor=2,
            speaking_order="3120")


def test_the_papers_game_keeps_its_record():
    row = GameRow(**BASE)
    assert (row.n_players, row.n_impostors, row.impostor_seats) == (4, 1, None)
    assert not {"n_players", "n_impostors", "impostor_seats"} & set(row_dict(row))


def test_a_six_player_two_impostor_game():
    row = GameRow(**BASE | dict(impostor_seat=1, impostor_seats="1,5", n_players=6, n_impostors=2,
                                impostor_speaking_position=5, speaking_order="310245"))
    assert impostor_seat_list(row.impostor_seat, row.impostor_seats) == [1, 5]
    assert row_dict(row)["impostor_seats"] == "1,5" and row_dict(row)["n_players"] == 6


@pytest.mark.parametrize("change", [
    dict(impostor_seat=5),  # seat 5 in a four-player game
    dict(n_players=6, n_impostors=2, impostor_seats="1"),  # one seat listed for two impostors
    dict(n_players=6, n_impostors=2, impostor_seats="2,5"),  # impostor_seat is not the lowest
    dict(n_players=9),
    dict(impostor_seats="1;5"),
])
def test_inconsistent_group_columns_are_refused(change):
    with pytest.raises(ValidationError):
        GameRow(**BASE | change)


def test_seat_columns_reach_the_eighth_seat():
    p = PlayerRow(game_id="g", seat=7, model="m", role="majority", speaking_position=7, description="d",
                  description_valid=True, vote=6, self_declared=False, experiment_id="e", word="dog")
    assert (p.seat, p.vote) == (7, 6)
    with pytest.raises(ValidationError):
        PlayerRow(**p.model_dump() | {"seat": 8})
    fields = MoveRow.model_fields
    assert all(fields[f].metadata[-1].le == 7 for f in ("seat", "speaking_position"))


def test_the_game_summary_names_every_impostor_and_the_groups_threshold():
    from impostor_bench.core.summary import answer_line, rule_text

    game = GameRow(**BASE | dict(impostor_seat=1, impostor_seats="1,5", n_players=6, n_impostors=2,
                                 impostor_speaking_position=5, speaking_order="310245", votes_on_impostor=3))
    votes = [1, 0, 1, 1, 1, 0]
    players = [PlayerRow(game_id="e/g", seat=s, model="m", role="impostor" if s in (1, 5) else "majority",
                         speaking_position=s, description="d", description_valid=True, vote=votes[s],
                         self_declared=False, experiment_id="e", word="cat" if s in (1, 5) else "dog")
               for s in range(6)]
    assert rule_text(game, players) == "3 majority players voted for Players 2 and 6 (3 or more on one impostor convict)"
    assert "impostor Players 2 and 6, m" in answer_line(game, players)
