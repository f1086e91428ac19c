"""The prompts in Spanish and German: parallel to the English ones, the ballot still read by
machine, players named in the language and read back by the ballot parser and the bots."""

from __future__ import annotations

import json
import string

import pytest

from impostor_bench.core import prompts, translations
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.parsing import parse_player_id, parse_vote
from impostor_bench.providers.bots.players import random_description
from impostor_bench.providers.prompt_parse import parse_messages

LANGS = ("es", "de")


def _slots(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("language", LANGS)
def test_every_english_text_has_a_translation_with_the_same_slots(language):
    english, other = prompts.texts("en"), prompts.texts(language)
    assert set(english) <= set(other)
    for name, text in english.items():
        assert _slots(other[name]) == _slots(text), name
        assert other[name] != text, f"{name} is not translated"
    assert set(translations.ES) == set(translations.DE)


@pytest.mark.parametrize("language", LANGS)
def test_the_ballot_template_keeps_its_json_keys(language):
    def template(text: str) -> dict:
        return json.loads(text[text.index("{"): text.index("}") + 1])

    assert template(prompts.texts(language)["VOTING_JSON_FORMAT"]).keys() == template(prompts.VOTING_JSON_FORMAT).keys()
    for key in ("self_declaration", "word_guess", "true"):  # the notes name the keys and values as sent
        assert key in prompts.texts(language)["VOTING_JSON_FORMAT"]


def test_players_are_named_in_the_language_and_the_parser_reads_every_name():
    assert [prompts.player_name(2, lang) for lang in ("en", "es", "de")] == ["Player 2", "Jugador 2", "Spieler 2"]
    for text, label in (("Jugador 3", 3), ("jugadora 2", 2), ("Spieler 4", 4), ("Spielerin 1", 1), ("tres", 3),
                        ("drei", 3), ("Player 2", 2), ("p3", 3)):
        assert parse_player_id(text) == label, text
    assert parse_player_id("Jugador -2") is None and parse_player_id("Jugadores 2") is None
    ballot = {"suspected_impostor_id": "Spieler 3", "confidence": 0.6, "reasoning": "anders",
              "self_declaration": False, "word_guess": None}
    assert parse_vote(json.dumps(ballot), own_seat=0).vote == 2


def test_english_prompts_are_the_papers_texts():
    english = prompts.description_prompt(mode="homogeneous", word="cat", player_label=2, previous=[(1, "A pet.")])
    assert "Your word is: cat" in english and "Player 1: A pet." in english and "You are Player 2." in english
    assert prompts.description_prompt(mode="homogeneous", word="cat", player_label=2, previous=[(1, "A pet.")],
                                      language="en") == english


@pytest.mark.parametrize("language", LANGS)
def test_a_prompt_in_the_language_holds_no_english_marker(language):
    text = prompts.voting_prompt(mode="team_aware", word="gato", player_label=1, teammate_label=2,
                                 descriptions=[(1, "a"), (2, "b"), (3, "c"), (4, "d")], language=language)
    for marker in ("Your word", "Player ", "You are", "All descriptions", "TEAM INFORMATION"):
        assert marker not in text


def test_description_rule_messages_are_translated_and_others_kept():
    leak = 'the description contains your word ("gatos")'
    assert 'la descripción contiene tu palabra ("gatos")' in prompts.description_retry(leak, 750, "es")
    assert "die Beschreibung ist 800 Zeichen lang oder länger; die Grenze liegt bei 750" in prompts.description_retry(
        "the description is 800 characters long or more; the limit is 750", 750, "de")
    assert prompts.description_retry(leak, 750) == prompts.DESCRIPTION_RETRY.format(violation=leak, max_chars=750)
    assert "self_declaration must be true or false" in prompts.voting_retry("self_declaration must be true or false", "de")


def test_an_unshipped_language_is_one_line():
    with pytest.raises(ImpostorError, match=r"^language 'fr' is not shipped; use one of: en \(English\), es"):
        prompts.texts("fr")


@pytest.mark.parametrize("language", ["en", *LANGS])
def test_the_bots_read_every_languages_prompts(language):
    t = prompts.texts(language)
    user = prompts.description_prompt(mode="team_aware", word="Häuser", player_label=3, teammate_label=4,
                                      previous=[(1, "Un animal."), (2, "Otro: x")], language=language)
    retry = prompts.description_retry('the description contains your word ("x")', 300, language)
    view = parse_messages([("system", t["DESCRIPTION_SYSTEM"]), ("user", user), ("user", retry)])
    assert (view.phase, view.word, view.player, view.teammate, view.team_mode) == ("description", "Häuser", 3, 4,
                                                                                  "team_aware")
    assert view.descriptions == ((1, "Un animal."), (2, "Otro: x")) and view.language == language
    assert (view.attempt, view.max_chars) == (2, 300)
    context = prompts.round_context(round_no=2, max_rounds=3, remaining_labels=[1, 2, 4], history="",
                                    language=language)
    vote = prompts.voting_prompt(mode="team_semi_aware", word="gato", player_label=1, context=context,
                                 descriptions=[(1, "a"), (2, "b"), (4, "d")], language=language)
    view = parse_messages([("system", t["VOTING_SYSTEM"]), ("user", vote)])
    assert (view.phase, view.player, view.team_mode, view.round, view.remaining) == (
        "vote", 1, "team_semi_aware", 2, (1, 2, 4))
    assert view.others == [2, 4]
    first = prompts.description_prompt(mode="homogeneous", word="x", player_label=2, previous=[], language=language)
    assert parse_messages([("system", t["DESCRIPTION_SYSTEM"]), ("user", first)]).first_speaker


def test_a_bot_description_never_leaks_the_word_in_the_games_language(monkeypatch):
    import random

    from impostor_bench.providers.bots import players

    monkeypatch.setattr(players, "random_words", lambda word, rng, k=3: ["gatas", "milk", "night"])
    user = prompts.description_prompt(mode="homogeneous", word="gato", player_label=1, previous=[], language="es")
    view = parse_messages([("system", prompts.texts("es")["DESCRIPTION_SYSTEM"]), ("user", user)])
    assert "gatas" not in random_description(view, random.Random(0))  # a Spanish form of the word: guarded
    english = parse_messages([("system", prompts.DESCRIPTION_SYSTEM), ("user", prompts.description_prompt(
        mode="homogeneous", word="gato", player_label=1, previous=[]))])
    assert "gatas" in random_description(english, random.Random(0))  # not a form in an English game
