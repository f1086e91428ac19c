"""Games played in Spanish and German by the offline bots: the task draws the language's pairs,
prompts every seat in it, checks descriptions with its inflections, and the games table and
export record the language; the guess matching of the deciding rule reads its forms."""

from __future__ import annotations

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import resolve_sample_attachments

from impostor_bench.core.records import GameRow
from impostor_bench.core.rules import Ballot, decide, guess_matches
from impostor_bench.core.wordpairs import load_word_pairs
from impostor_bench.export import tables_from_log

SCRIPT = {
    # seat 1 leaks a Spanish/German plural first (re-prompted), then describes; seat 2's ballot names
    # a player the way the prompt names them
    "description": {"1": ["Muchos {word}s y {word}es.", "Algo cotidiano."], "*": "Algo cotidiano."},
    "vote": {"2": {"suspected_impostor_id": "Jugador {next}", "confidence": 0.5, "reasoning": "x",
                   "self_declaration": False, "word_guess": None},
             "*": {"suspected_impostor_id": "{next}", "confidence": 0.5, "reasoning": "x",
                   "self_declaration": False, "word_guess": None}},
}


def _play(tmp_path, language, **kw):
    from impostor_bench.tasks.impostor import impostor

    model = kw.pop("model", "bot/random")
    kw |= {} if language == "en" else {"language": language}  # as a sweep passes it: only when not English
    [log] = inspect_eval(impostor(n_games=4, **kw), model=model, log_dir=str(tmp_path),
                         display="none")
    assert log.status == "success", log.error
    return log


@pytest.mark.parametrize("language", ["es", "de"])
def test_a_bot_game_is_played_and_recorded_in_the_language(tmp_path, language, monkeypatch):
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    log = _play(tmp_path, language)
    pairs = {(p.majority, p.impostor) for p in load_word_pairs(language=language)["easy"]}
    system = {"es": "Estás jugando", "de": "Du spielst"}[language]
    for sample in log.samples:
        game = GameRow(**sample.scores["impostor_winner"].metadata["game"])
        assert game.language == language and game.experiment_id.endswith(f"|{language}")
        assert (game.majority_word, game.impostor_word) in pairs
    assert log.eval.task_args["language"] == language
    assert log.eval.metadata["word_pairs_file"].endswith(f"word_pairs_{language}.json")
    # every model call was prompted in the language (the bots read it back: the games finished)
    calls = [e for s in log.samples for e in resolve_sample_attachments(s).events if e.event == "model"]
    assert calls and all(system in str(c.input[0].content) for c in calls)
    assert all({"es": "Jugador", "de": "Spieler"}[language] in str(c.input[1].content) for c in calls)
    tables = tables_from_log(log)
    assert set(tables.games["language"]) == {language}


def test_an_english_game_keeps_its_record_and_exports_en(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    log = _play(tmp_path, "en")
    md = log.samples[0].scores["impostor_winner"].metadata["game"]
    assert "language" not in md  # the record of the paper's game as before (golden games)
    assert "language" not in log.eval.task_args and "|en" not in md["experiment_id"]
    assert set(tables_from_log(log).games["language"]) == {"en"}


def test_a_scripted_spanish_game_reprompts_a_plural_leak_and_reads_jugador(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    monkeypatch.setenv("IMPOSTOR_SCRIPT", json.dumps(SCRIPT))
    log = _play(tmp_path, "es", model="bot/script", rounds=2)
    from impostor_bench.core.records import PlayerRow

    for sample in log.samples:
        players = [PlayerRow(**p) for p in sample.scores["impostor_winner"].metadata["players"]]
        first = players[0]
        assert first.description_attempts == 2 and first.description_valid  # the plural leaked, then fixed
        assert players[1].ballot_class == "valid" and players[1].vote == 2  # "Jugador 3" read as seat 2


def test_guess_matching_reads_the_languages_forms():
    assert guess_matches("los gatos", "gato", "es") and guess_matches("Gata", "gato", "es")
    assert guess_matches("die Äpfel", "Apfel", "de") and guess_matches("Strasse", "Straße", "de")
    assert not guess_matches("gatito", "gato", "es") and not guess_matches("Apfelbaum", "Apfel", "de")
    assert not guess_matches("gatas", "gato")  # an English game reads English plurals only
    ballots = [Ballot(1), Ballot(None, True, "las gatas"), Ballot(0), Ballot(0)]
    assert decide(ballots, 1, "gato", language="es").win_condition == "impostor_guess_correct"
    assert decide(ballots, 1, "gato").win_condition == "impostor_guess_wrong"
