"""Bot games of other group sizes end to end through the task (docs/rules.md, "Group size")."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import get_model

from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.rules import Ballot, decide
from impostor_bench.tasks.impostor import impostor


def _games(tmp_path, roles=None, **kw):
    roles = {k: get_model(v) for k, v in (roles or {}).items()}
    [log] = inspect_eval(impostor(**kw), model="bot/random", model_roles=roles or None, log_dir=str(tmp_path),
                         display="none")
    assert log.status == "success", (log.status, log.error)
    return [resolve_sample_attachments(s) for s in log.samples]


def test_six_players_two_impostors(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    samples = _games(tmp_path, n_games=6, seed=3, players=6, impostors=2)
    seats_seen = set()
    for s in samples:
        md = s.scores["impostor_winner"].metadata
        g, players = md["game"], md["players"]
        imps = [int(x) for x in g["impostor_seats"].split(",")]
        assert (g["n_players"], g["n_impostors"], len(players), len(imps)) == (6, 2, 6, 2)
        assert g["experiment_id"].endswith("|p6k2") and g["impostor_seat"] == imps[0]
        assert sorted(int(c) for c in g["speaking_order"]) == list(range(6))
        for p in players:
            assert (p["role"] == "impostor") == (p["seat"] in imps)
            assert p["word"] == (g["impostor_word"] if p["seat"] in imps else g["majority_word"])
        ballots = [Ballot(p["vote"], p["self_declared"], p["word_guess"]) for p in sorted(players, key=lambda r: r["seat"])]
        assert decide(ballots, imps, g["majority_word"]).win_condition == g["win_condition"]
        seats_seen |= set(imps)
        first = s.events and next(e for e in s.events if getattr(e, "event", "") == "model")
        assert "You and 5 other players" in first.input[-1].text
        assert "two players (the impostors) share a different word" in first.input[-1].text
    assert seats_seen == set(range(6))  # one block of six games: every seat twice
    from impostor_bench.tracking.traces import game_calls

    assert {c["seat"] for c in game_calls(samples[0])} == set(range(6))  # traces attribute every seat's calls


def test_cross_play_seats_every_impostor_with_the_impostor_model(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    samples = _games(tmp_path, {"impostor": "bot/random", "majority": "bot/embedding"}, n_games=3, seed=1,
                     mode="cross_play", players=5, impostors=2)
    for s in samples:
        players = s.scores["impostor_winner"].metadata["players"]
        assert {p["model"] for p in players if p["role"] == "impostor"} == {"bot/random"}
        assert {p["model"] for p in players if p["role"] == "majority"} == {"bot/embedding"}
        assert sum(p["role"] == "impostor" for p in players) == 2 and len(players) == 5


@pytest.mark.parametrize("kw, words", [
    (dict(players=3), "-T players=3 is not valid; use 4 to 8 players"),
    (dict(players=9), "-T players=9 is not valid; use 4 to 8 players"),
    (dict(impostors=2), "-T impostors=2 is not valid; impostors must be a strict minority"),
    (dict(players=6, mode="team_aware"), "-T players=6 is not valid; mode=team_aware is two teams of two"),
])
def test_bad_group_options_are_one_line(kw, words):
    with pytest.raises(ImpostorError) as e:
        impostor(**kw)
    assert str(e.value).startswith(words) and "\n" not in str(e.value)


def test_play_names_every_impostor_and_refuses_a_bad_group(capsys):
    from impostor_bench.cli import main
    from impostor_bench.commands.play import outcome_text

    game = {"impostor_seat": 1, "impostor_seats": "1,4", "impostor_model": "bot/random", "winner": "majority",
            "win_condition": "conviction", "impostor_word": "cat", "majority_word": "dog"}
    assert "The impostors were Players 2 and 5 (bot/random)" in outcome_text(game, [], "human/x")
    assert "The impostor was Player 2 " in outcome_text(game | {"impostor_seats": None}, [], "human/x")
    assert main(["play", "--players", "4", "--impostors", "2", "--model", "bot/random"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--impostors 2" in err[0] and "fix: use impostors=1 with players=4" in err[0]
