"""One game loop: the solver stores what the core decided each round and the scorer reads it, deciding
nothing again (no replay of the round's tie draw): a stored decision is the game's, whatever a fresh
draw from the game's seed would give."""

from __future__ import annotations

import json

import pytest
from inspect_ai import eval as inspect_eval, score as inspect_score
from inspect_ai.model import get_model

from impostor_bench.core.rules import RoundResult
from impostor_bench.scorers.winner import impostor_winner
from impostor_bench.solvers.game_store import DECISIONS_KEY, load_decisions


def ballot(target: str) -> dict:
    return {"suspected_impostor_id": target, "confidence": 0.5, "reasoning": "scripted", "self_declaration": False,
            "word_guess": None}


CLUES = {"description": {"*": ["Something you find in everyday life.", "A thing people talk about often."]}}
RING = CLUES | {"vote": {"*": ballot("1"), "1": ballot("2"), "2": ballot("3"), "3": ballot("4")}}  # a 4-way tie
ON_PLAYER_1 = CLUES | {"vote": {"*": ballot("1"), "1": ballot("2")}}


def play(tmp_path, script: dict, **kw):
    from impostor_bench.tasks.impostor import impostor

    [log] = inspect_eval(impostor(**kw), model=get_model("bot/script", script=json.dumps(script)),
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return log


def stored(sample) -> list[RoundResult]:
    decisions = load_decisions(sample.store)
    assert decisions
    return decisions


def store(sample, decisions: list[RoundResult]) -> None:
    sample.store[DECISIONS_KEY] = json.dumps([d.to_dict() for d in decisions])


def rescore(log, tie_rule: str) -> list[dict]:
    out = inspect_score(log, scorers=[impostor_winner(tie_rule=tie_rule)], display="none", action="overwrite")
    return [s.scores["impostor_winner"].metadata["game"] for s in out.samples]


def test_the_scorer_reports_the_stored_tie_draw_not_a_new_one(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    log = play(tmp_path, RING, n_games=6, seed=3, tie_rule="sym_candidate")
    played = [s.scores["impostor_winner"].metadata["game"] for s in log.samples]
    assert all(g["win_condition"] == "tie" and g["tie_k"] == 4 for g in played)
    flip = {"impostor": "majority", "majority": "impostor"}
    for sample in log.samples:
        [d] = stored(sample)
        assert d.winner_live == sample.scores["impostor_winner"].metadata["game"]["winner_live"]
        # what the draw from the game's seed gave, turned over: only a stored decision can say this
        store(sample, [RoundResult.from_dict({**d.to_dict(), "winner_live": flip[d.winner_live]})])
    again = rescore(log, "sym_candidate")
    assert [g["winner_live"] for g in again] == [flip[g["winner_live"]] for g in played]
    assert [g["winner"] for g in again] == ["impostor"] * 6  # the default rule's label of a tie


def test_the_scorer_reports_the_stored_eliminations_of_a_longer_game(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    log = play(tmp_path, ON_PLAYER_1, n_games=4, seed=5, rounds=3)
    changed = 0
    for sample in log.samples:
        decisions = stored(sample)
        game = sample.scores["impostor_winner"].metadata["game"]
        assert len(decisions) == game["rounds_played"]
        if game["rounds_played"] != 3:
            continue
        # rounds 2 and 3 eliminated nobody (votes for the seat already out); say round 2 took the impostor
        imp = game["impostor_seat"]
        decisions[1] = RoundResult.from_dict({**decisions[1].to_dict(), "eliminated": imp, "winner": "majority",
                                              "winner_live": "majority", "win_condition": "eliminated",
                                              "p_imp_default": 0.0, "p_imp_sym_candidate": 0.0,
                                              "p_imp_sym_side": 0.0})
        store(sample, decisions[:2])
        rounds = json.loads(sample.store["impostor:rounds"])
        sample.store["impostor:rounds"] = json.dumps({**rounds, "rounds": rounds["rounds"][:2]})
        changed += 1
    assert changed, "seed 5 plays a game to its third round"
    out = inspect_score(log, scorers=[impostor_winner()], display="none", action="overwrite")
    for sample in out.samples:
        md = sample.scores["impostor_winner"].metadata
        game = md["game"]
        if game["rounds_played"] == 2:
            assert (game["winner"], game["win_condition"]) == ("majority", "eliminated")
            assert game["elimination_order"] == f"0,{game['impostor_seat']}"
            assert [m["seat"] for m in md["moves"] if m["eliminated"]] == [0, game["impostor_seat"]]


def test_a_longer_game_is_not_rescored_under_another_tie_rule(tmp_path, monkeypatch):
    """Its later rounds followed from the rule played: the scorer says which rule to use (one line)."""
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    log = play(tmp_path, ON_PLAYER_1, n_games=1, seed=5, rounds=2)
    with pytest.raises(Exception, match="played under tie rule 'default'.*score it with tie_rule='default'"):
        inspect_score(log, scorers=[impostor_winner(tie_rule="sym_side")], display="none", action="overwrite")


def test_no_module_of_the_scorer_draws():
    """The scorer reads decisions; nothing in scorers/ seeds or draws a tie (the solver did)."""
    from pathlib import Path

    import impostor_bench.scorers as scorers

    for path in Path(scorers.__path__[0]).glob("*.py"):
        text = path.read_text()
        for name in ("import random", "derive_seed", "tie_draw", "decide_round", "decide("):
            assert name not in text, (path.name, name)
