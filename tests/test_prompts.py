"""Prompt texts against Appendix A.2 (expected texts copied from the paper by hand)."""

from impostor_bench.core import prompts

PAPER_DESCRIPTION_SYSTEM = (
    "You are playing a word guessing game. In the DESCRIPTION PHASE, you must ONLY describe your word "
    "in 1-2 sentences without analyzing others. Save analysis for the VOTING PHASE."
)

EXPECTED_FIRST_SPEAKER_TEAM_AWARE = """You are participating in a word guessing game. You and 3 other players each have a word. Three players (the majority) have the same word, while one player (the impostor) has a different word. The impostor's goal is to blend in and avoid detection, while the majority's goal is to identify the impostor.

DESCRIPTION PHASE RULES:
- Describe your word in 1-2 sentences
- Do NOT mention your word directly
- Do NOT analyze other players' descriptions yet

TEAM INFORMATION:
- You and Player 3 are teammates (paired together for this game)
- Teams are based on model type, NOT on roles (majority/impostor)
- Your teammate might have the same word as you OR might be the impostor
- There is only 1 impostor total among all 4 players

Your word is: river

You are Player 2 and will go first.

Provide ONLY your 1-2 sentence description of your word. Do not analyze others or share your thoughts about the game:"""

EXPECTED_VOTE_SEMI_AWARE = """Based on the descriptions below, identify which player has the different word.

Your word was: stream

TEAM INFORMATION:
- You have exactly one teammate among the other 3 players (paired with you for this game)
- You must deduce who your teammate is from the descriptions
- Your teammate might share your word OR might be the impostor
- There is only 1 impostor total among all 4 players

All descriptions:
Player 3: Flowing water.
Player 1: Wet and moving.
Player 4: Fish live there.
Player 2: Smaller and narrow.

You are Player 2.

Please respond in the following JSON format:
{
  "suspected_impostor_id": "player_id",
  "confidence": 0.73,
  "reasoning": "brief explanation",
  "self_declaration": false,
  "word_guess": null
}

Note: confidence is a float in [0, 1].
If you believe YOU have the different word, set self_declaration to true.
If you think you know what the majority word is (and you're the impostor), include it in word_guess.
Note: the word_guess is considered only if you set self_declaration to true."""

DESCRIPTIONS = [(3, "Flowing water."), (1, "Wet and moving."), (4, "Fish live there."), (2, "Smaller and narrow.")]


def test_system_messages_are_verbatim():
    assert prompts.DESCRIPTION_SYSTEM == PAPER_DESCRIPTION_SYSTEM
    assert prompts.VOTING_SYSTEM == "You are playing a word guessing game. You must respond with valid JSON only."


def test_first_speaker_team_aware_description_prompt():
    text = prompts.description_prompt(mode="team_aware", word="river", player_label=2, previous=[], teammate_label=3)
    assert text == EXPECTED_FIRST_SPEAKER_TEAM_AWARE


def test_later_speaker_sees_previous_descriptions_in_order():
    text = prompts.description_prompt(mode="homogeneous", word="river", player_label=4, previous=DESCRIPTIONS[:2])
    assert (
        "Your word is: river\n\nPrevious descriptions (for context only - do not analyze them now):\n"
        "Player 3: Flowing water.\nPlayer 1: Wet and moving.\n\nYou are Player 4.\n\nProvide ONLY"
    ) in text
    assert "will go first" not in text and "TEAM INFORMATION" not in text


def test_team_blocks_only_in_their_modes():
    for mode in ("homogeneous", "cross_play", "team_blind"):
        assert "TEAM INFORMATION" not in prompts.description_prompt(mode=mode, word="w", player_label=1, previous=[])
        assert "TEAM INFORMATION" not in prompts.voting_prompt(mode=mode, word="w", player_label=1, descriptions=DESCRIPTIONS)
    semi = prompts.description_prompt(mode="team_semi_aware", word="w", player_label=1, previous=[])
    assert "- You don't know which player is your teammate\n" in semi
    aware_vote = prompts.voting_prompt(mode="team_aware", word="w", player_label=1, descriptions=DESCRIPTIONS, teammate_label=4)
    assert "- You and Player 4 are teammates" in aware_vote
    assert aware_vote.count("- Remember: If your teammate is the impostor, they win by avoiding detection") == 1


def test_semi_aware_vote_prompt():
    text = prompts.voting_prompt(mode="team_semi_aware", word="stream", player_label=2, descriptions=DESCRIPTIONS)
    assert text == EXPECTED_VOTE_SEMI_AWARE


def test_team_aware_needs_teammate():
    import pytest

    with pytest.raises(ValueError, match="teammate"):
        prompts.description_prompt(mode="team_aware", word="w", player_label=1, previous=[])


def test_documented_differences_from_the_printed_prompts():
    """docs/rules.md lists every difference between A.2 as printed and the text sent; each listed
    one holds for the sent text (braces added, no '# ' before the confidence note, no LaTeX,
    word_guess spelled right, no condition markers), and the doc names all of them."""
    from pathlib import Path

    vote = prompts.voting_prompt(mode="team_semi_aware", word="stream", player_label=2, descriptions=DESCRIPTIONS)
    first = prompts.description_prompt(mode="team_aware", word="river", player_label=2, previous=[],
                                       teammate_label=3)
    fmt = vote[vote.index("Please respond in the following JSON format:"):].splitlines()
    assert fmt[1] == "{" and fmt[7] == "}"  # 1: braces around the five keys
    assert "\nNote: confidence is a float in [0, 1].\n" in vote and "# Note" not in vote  # 2
    for sent in (vote, first):
        assert "\\textbf" not in sent and "word_quess" not in sent and "# {If" not in sent  # 3, 4, 8
    assert "\n- There is only 1 impostor total among all 4 players" in vote  # 6
    assert "\n- You and Player 3 are teammates (paired together for this game)\n" in first  # 6, 7
    assert "You are Player 2.\n" not in first  # 8: a first speaker gets only the 'will go first' line
    doc = (Path(__file__).resolve().parents[1] / "docs" / "rules.md").read_text(encoding="utf-8")
    section = doc[doc.index("**Every difference between the prompts as printed"):]
    for needle in ("`# Note: confidence is a float in [0, 1].`", "no braces", "\\textbf", "word_quess",
                   "might be the", "leading `- `", "Line wraps", "Condition markers", "Additions"):
        assert needle in section, needle
