"""The offline players on multi-round prompts: later rounds' votes and private-note prompts."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig

from impostor_bench.core import prompts
from impostor_bench.core.parsing import parse_vote
from impostor_bench.core.rounds import RoundView, public_transcript
from impostor_bench.providers.bots.api import BotAPI
from impostor_bench.providers.prompt_parse import parse_messages

# Round 1: Player 2 (seat 1) was eliminated; Players 1, 3, 4 remain.
HISTORY = public_transcript([RoundView(1, ((0, "A striped wild cat."), (1, "It flies over the sea."),
                                           (2, "A big cat with stripes."), (3, "An orange jungle cat.")),
                                       ((0, 1), (1, 0), (2, 1), (3, 1)), 1)])


def context(round_no, remaining, notes=()):
    return prompts.round_context(round_no=round_no, max_rounds=3, remaining_labels=remaining, history=HISTORY,
                                 notes=notes)


def vote_messages(player=3):
    user = prompts.voting_prompt(mode="homogeneous", word="tiger", player_label=player,
                                 descriptions=[(1, "Lives in Asian forests."), (3, "Hunts at night."),
                                               (4, "Orange fur, black stripes.")],
                                 context=context(2, [1, 3, 4], ["Player 2 looked odd"]))
    return [ChatMessageSystem(content=prompts.VOTING_SYSTEM), ChatMessageUser(content=user)]


def note_messages(player=3):
    user = prompts.note_prompt(word="tiger", player_label=player, context=context(1, [1, 3, 4]), max_chars=300)
    return [ChatMessageSystem(content=prompts.NOTE_SYSTEM), ChatMessageUser(content=user)]


def test_a_later_rounds_vote_prompt_parses_to_the_remaining_players():
    view = parse_messages(vote_messages())
    assert (view.phase, view.word, view.player, view.round, view.remaining) == ("vote", "tiger", 3, 2, (1, 3, 4))
    assert [n for n, _ in view.descriptions] == [1, 3, 4]  # this round's, not the public record's
    assert view.others == [1, 4]


def test_a_note_prompt_parses_as_a_note_over_the_round_just_played():
    view = parse_messages(note_messages())
    assert (view.phase, view.word, view.player, view.remaining) == ("note", "tiger", 3, (1, 3, 4))
    assert dict(view.descriptions)[2] == "It flies over the sea."
    assert view.others == [1, 4]  # the eliminated Player 2 is no candidate


@pytest.mark.parametrize("bot", ["random", "embedding", "vague"])
def test_bots_vote_only_for_remaining_players_and_write_short_notes(bot):
    api = BotAPI(bot)
    for seed in range(6):
        ballot = parse_vote(api.answer(vote_messages(), GenerateConfig(seed=seed))[0], own_seat=2)
        assert ballot.error is None and ballot.vote in (0, 3)
        note, facts = api.answer(note_messages(), GenerateConfig(seed=seed))
        assert facts["phase"] == "note" and len(note) <= 300
        assert note.startswith("I may be the impostor") or any(f"Player {n}" in note for n in (1, 4)), note
        assert "Player 2 " not in note


def test_script_bot_answers_notes_from_its_note_entries_or_falls_back():
    api = BotAPI("script", script=json.dumps({"note": {"*": "watch {next}"}}))
    assert api.answer(note_messages(), GenerateConfig())[0] == "watch 4"
    fallback = BotAPI("script", script=json.dumps({"vote": {"*": "x"}}))
    assert fallback.answer(note_messages(), GenerateConfig())[0].startswith("I suspect Player")
