"""The bots read the real game prompts (impostor_bench.core.prompts) back into a GameView."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

from impostor_bench.core import prompts
from impostor_bench.providers.prompt_parse import PromptParseError, parse_messages


def desc_messages(word="violin", player=2, previous=(), mode="homogeneous", teammate=None, retries=()):
    user = prompts.description_prompt(mode=mode, word=word, player_label=player, previous=list(previous),
                                      teammate_label=teammate)
    msgs = [("system", prompts.DESCRIPTION_SYSTEM), ("user", user)]
    for r in retries:
        msgs += [("assistant", "something"), ("user", r)]
    return msgs


def vote_messages(word="violin", player=2, descriptions=(), mode="homogeneous", teammate=None, retries=()):
    user = prompts.voting_prompt(mode=mode, word=word, player_label=player, descriptions=list(descriptions),
                                 teammate_label=teammate)
    msgs = [("system", prompts.VOTING_SYSTEM), ("user", user)]
    for r in retries:
        msgs += [("assistant", "not json"), ("user", r)]
    return msgs


FOUR = [(3, "It has strings."), (1, "You play it with a bow."), (4, "It lives in the sea."), (2, "Orchestra.")]


def test_first_speaker_description():
    v = parse_messages(desc_messages(word="ice cream", player=3))
    assert (v.phase, v.word, v.player, v.first_speaker, v.descriptions, v.attempt) == (
        "description", "ice cream", 3, True, (), 1)


def test_later_speaker_sees_previous_descriptions_in_order():
    prev = [(4, "Something with strings."), (1, "Played in an orchestra: it is\nsmall and wooden.")]
    v = parse_messages(desc_messages(previous=prev, player=2))
    assert v.phase == "description" and v.player == 2 and not v.first_speaker
    assert v.descriptions == ((4, "Something with strings."), (1, "Played in an orchestra: it is\nsmall and wooden."))


def test_vote_prompt_and_others():
    v = parse_messages(vote_messages(descriptions=FOUR, player=2))
    assert v.phase == "vote" and v.word == "violin" and v.player == 2
    assert v.descriptions == tuple(FOUR)
    assert v.others == [3, 1, 4]


def test_description_containing_player_like_text_and_blank_lines():
    tricky = [(1, "Think of it.\n\nYou are Player 9. Not really."), (2, "Second."), (3, "x"), (4, "y")]
    v = parse_messages(vote_messages(descriptions=tricky, player=4))
    assert v.player == 4
    assert v.descriptions[0] == (1, "Think of it.\n\nYou are Player 9. Not really.")
    assert [n for n, _ in v.descriptions] == [1, 2, 3, 4]


@pytest.mark.parametrize("mode,teammate,expected", [("team_aware", 3, "team_aware"),
                                                     ("team_semi_aware", None, "team_semi_aware"),
                                                     ("team_blind", None, None)])
def test_team_blocks(mode, teammate, expected):
    v = parse_messages(vote_messages(descriptions=FOUR, mode=mode, teammate=teammate))
    assert v.team_mode == expected and v.teammate == teammate
    d = parse_messages(desc_messages(mode=mode, teammate=teammate))
    assert d.team_mode == expected and d.teammate == teammate


def test_retries_counted_with_reason_and_limit():
    r1 = prompts.DESCRIPTION_RETRY.format(violation='the description contains your word ("violin")', max_chars=750)
    v = parse_messages(desc_messages(retries=[r1]))
    assert v.attempt == 2 and v.max_chars == 750 and "contains your word" in v.retry_reason
    r2 = prompts.VOTING_RETRY.format(error="no JSON object with suspected_impostor_id was found")
    v = parse_messages(vote_messages(descriptions=FOUR, retries=[r2, r2]))
    assert v.attempt == 3 and v.retry_reason.startswith("no JSON object")


def test_inspect_messages_and_dicts():
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    msgs = [ChatMessageSystem(content=prompts.VOTING_SYSTEM),
            ChatMessageUser(content=prompts.voting_prompt(mode="homogeneous", word="cat", player_label=1,
                                                          descriptions=FOUR))]
    assert parse_messages(msgs).word == "cat"
    assert parse_messages([{"role": m.role, "content": m.text} for m in msgs]).player == 1


def test_not_a_game_prompt():
    with pytest.raises(PromptParseError):
        parse_messages([("user", "What is the capital of France?")])
