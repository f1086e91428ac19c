"""Multi-round games through ``inspect eval`` with the offline bots: rounds, records, moves, export."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import get_model

from impostor_bench.core.records import MOVES_FILE, GameRow, MoveRow, PlayerRow
from impostor_bench.export import tables_from_logs, write_tables


def run(tmp_path, model="bot/random", **kw):
    from impostor_bench.tasks.impostor import impostor

    roles = kw.pop("model_roles", None)
    [log] = inspect_eval(impostor(**kw), model=model, model_roles=roles, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return log


def rows(sample):
    md = sample.scores["impostor_winner"].metadata
    return GameRow(**md["game"]), [PlayerRow(**p) for p in md["players"]], [MoveRow(**m) for m in md["moves"]]


# Everyone votes Player 1 (Player 1 votes Player 2); every description call answers the
# first text, and its re-prompt the second (and every later one).
SCRIPT = {
    "description": {"*": ["Something you find in everyday life.", "A thing people talk about often."]},
    "vote": {"*": {"suspected_impostor_id": "1", "confidence": 0.6, "reasoning": "scripted",
                   "self_declaration": False, "word_guess": None},
             "1": {"suspected_impostor_id": "2", "confidence": 0.6, "reasoning": "scripted",
                   "self_declaration": False, "word_guess": None}},
}


def test_scripted_three_round_game_eliminates_then_ignores_votes_for_the_eliminated(tmp_path):
    log = run(tmp_path, model=get_model("bot/script", script=json.dumps(SCRIPT)), n_games=4, seed=5, rounds=3)
    seen = set()
    for sample in log.samples:
        game, players, moves = rows(sample)
        assert game.max_rounds == 3 and game.elimination_order == "0"
        assert players[0].eliminated_round == 1 and all(p.eliminated_round is None for p in players[1:])
        if game.impostor_seat == 0:  # three votes on the impostor in round 1
            seen.add("impostor out")
            assert (game.winner, game.win_condition, game.rounds_played, len(moves)) == ("majority", "eliminated", 1, 4)
            continue
        seen.add("exhausted")
        # rounds 2 and 3: the three remaining vote for the eliminated Player 1: no counted vote, nobody out
        assert (game.winner, game.win_condition, game.rounds_played) == ("impostor", "rounds_exhausted", 3)
        assert [(m.round, m.seat) for m in moves] == [(1, s) for s in range(4)] + [(r, s) for r in (2, 3)
                                                                                  for s in (1, 2, 3)]
        later = [m for m in moves if m.round > 1]
        assert all(m.ballot_class == "eliminated_seat" and m.vote is None and not m.eliminated for m in later)
        assert [m.eliminated for m in moves if m.round == 1] == [True, False, False, False]
        # round 2 repeated round 1's description, was re-prompted and its second answer is shown; round 3
        # repeats round 2's on both attempts (a script repeats its last answer): invalid, the placeholder shown
        assert all(m.description == "A thing people talk about often." and m.description_valid
                   for m in later if m.round == 2)
        assert all(m.description == "[no valid description]" and not m.description_valid
                   and m.description_error.startswith("it repeats your description from round 2")
                   for m in later if m.round == 3)
        assert {m.speaking_position for m in later if m.round == 2} == {0, 1, 2}
        messages = [m.text for m in sample.messages]
        assert "Round 1: Player 1 eliminated" in messages and "Round 2: nobody eliminated" in messages
        answer = sample.scores["impostor_winner"].answer
        assert "3 of 3 rounds, out: P1" in answer and "Round 3" in sample.scores["impostor_winner"].explanation
    assert seen == {"impostor out", "exhausted"}, "seed 5 should draw the impostor at seat 0 in one of 4 games"


def test_later_prompts_carry_the_public_record_and_private_notes(tmp_path):
    log = run(tmp_path, n_games=2, seed=1, rounds=3, private_notes=True)
    for sample in log.samples:
        game, players, moves = rows(sample)
        assert game.private_notes and 1 <= game.rounds_played <= 3
        users = [e.input[-1].text for e in resolve_sample_attachments(sample).events if e.event == "model"]
        round2 = [u for u in users if "this is round 2 of at most 3" in u]
        if game.rounds_played >= 2:
            assert round2 and all("EARLIER ROUNDS (public record):\nRound 1 descriptions:" in u for u in round2)
            assert all("YOUR PRIVATE NOTES" in u for u in round2)
            noted = [m for m in moves if m.round == 1 and m.note is not None]
            assert noted and all(len(m.note) <= 300 for m in noted)
            # a note is shown only to its writer
            for m in noted:
                mine = f"You are Player {m.seat + 1}"
                assert all((m.note in u) == (mine in u) for u in round2 if "After round 1:" in u)
        else:
            assert not round2


def test_bots_cross_play_three_rounds_and_export_moves(tmp_path):
    logs = tmp_path / "logs"
    log = run(logs, mode="cross_play", n_games=4, seed=2, rounds=3,
              model_roles={"impostor": "bot/embedding", "majority": "bot/random"})
    n_moves = 0
    for sample in log.samples:
        game, players, moves = rows(sample)
        n_moves += len(moves)
        assert game.win_condition in ("eliminated", "two_left", "rounds_exhausted", "majority_self_declared",
                                      "impostor_guess_correct", "impostor_guess_wrong")
        assert game.rounds_played == max(m.round for m in moves)
        out = [int(s) for s in game.elimination_order.split(",") if s]
        assert out == [m.seat for m in moves if m.eliminated]
        assert (game.winner == "majority") == (game.impostor_seat in out or game.win_condition in (
            "majority_self_declared", "impostor_guess_wrong"))
        # every round's movers are exactly the seats not yet eliminated
        for r in range(1, game.rounds_played + 1):
            gone = {m.seat for m in moves if m.round < r and m.eliminated}
            assert sorted(m.seat for m in moves if m.round == r) == sorted(set(range(4)) - gone)
        # round 1's moves are the players rows
        for p in players:
            [m] = [m for m in moves if m.round == 1 and m.seat == p.seat]
            assert (m.description, m.vote, m.model) == (p.description, p.vote, p.model)
    tables = tables_from_logs(logs)
    write_tables(tables, tmp_path / "x", models=False)
    exported = pd.read_parquet(tmp_path / "x" / MOVES_FILE)
    assert len(exported) == n_moves and list(exported.columns) == list(MoveRow.model_fields)
    assert set(exported["round"]) <= {1, 2, 3} and exported["vote"].dtype == "Int64"
    games = pd.read_parquet(tmp_path / "x" / "games.parquet")
    assert set(games["max_rounds"]) == {3} and games["rounds_played"].between(1, 3).all()


def test_one_round_export_writes_four_moves_per_game(tmp_path):
    logs = tmp_path / "logs"
    log = run(logs, n_games=2, seed=4)
    assert "moves" not in log.samples[0].scores["impostor_winner"].metadata  # the paper's log, unchanged
    assert log.plan.steps[0].solver == "impostor_game" and "rounds" not in log.plan.steps[0].params
    write_tables(tables_from_logs(logs), tmp_path / "x", models=False)
    moves = pd.read_parquet(tmp_path / "x" / MOVES_FILE)
    players = pd.read_parquet(tmp_path / "x" / "players.parquet")
    assert len(moves) == 8 and set(moves["round"]) == {1} and not moves["eliminated"].any()
    merged = moves.merge(players, on=["game_id", "seat"], suffixes=("", "_p"))
    assert (merged["description"] == merged["description_p"]).all()
    assert (merged["vote"].fillna(-1) == merged["vote_p"].fillna(-1)).all()


@pytest.mark.parametrize("opts, fix", [({"rounds": 0}, "-T rounds=0 is not valid"),
                                       ({"rounds": 11}, "-T rounds=11 is not valid"),
                                       ({"private_notes": True}, "needs -T rounds=2 or more")])
def test_bad_round_options_are_one_line_errors(opts, fix):
    from impostor_bench.tasks.impostor import TaskOptionError, impostor

    with pytest.raises(TaskOptionError) as err:
        impostor(n_games=2, **opts)
    assert fix in str(err.value) and "\n" not in str(err.value)


def test_trace_has_a_span_per_round_with_its_phases(tmp_path):
    from impostor_bench.tracking.traces import game_calls, game_spans

    log = run(tmp_path, n_games=2, seed=1, rounds=3, private_notes=True)
    for sample in log.samples:
        game, _, moves = rows(sample)
        sample = resolve_sample_attachments(sample)
        assert all(c["phase"] is not None for c in game_calls(sample))  # every call attributed to its seat
        spans = game_spans("run", sample, set())
        by_id = {s["span_id"]: s for s in spans}
        rounds = [s for s in spans if s["name"].startswith("round ")]
        assert [s["name"] for s in rounds] == [f"round {r}" for r in range(1, game.rounds_played + 1)]
        for r in rounds:
            phases = {s["name"] for s in spans if s["parent_span_id"] == r["span_id"]}
            assert {"description round", "vote round"} <= phases
        llm = [s for s in spans if json.loads(s["attributes"]["mlflow.spanType"]) == "LLM"]
        describes = [s for s in llm if json.loads(s["attributes"]["phase"]) == "describe"]
        assert len(describes) >= len(moves)  # one call per seat and round, re-prompts on top
        for s in describes:  # under its own round's description span
            phase_span = by_id[s["parent_span_id"]]
            assert by_id[phase_span["parent_span_id"]]["name"] == f"round {json.loads(s['attributes']['round'])}"
        notes = [s for s in llm if json.loads(s["attributes"]["phase"]) == "note"]
        assert len(notes) == sum(m.note is not None for m in moves)
        out = json.loads(spans[0]["attributes"]["mlflow.spanOutputs"])
        assert out["rounds_played"] == game.rounds_played and len(out["eliminated"]) == len(
            [s for s in game.elimination_order.split(",") if s])
