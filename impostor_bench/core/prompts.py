"""Prompt templates of Appendix A.2, reproduced verbatim.

The paper's PDF text has extraction artefacts ("word_quess", a line cut at
"might be the", a LaTeX ``\\textbf``); the resolved choices are listed in
docs/rules.md.  Player numbers are ``seat + 1`` (see ``records.player_label``).
Every builder takes a ``language`` (``languages.LANGUAGES``): English is these texts, the
others their parallel translations (``translations``), fetched with :func:`texts`.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from impostor_bench.core import translations
from impostor_bench.core.languages import DEFAULT_LANGUAGE, language_of
from impostor_bench.core.modes import MODE_SPECS, mode_spec

DESCRIPTION_SYSTEM = (
    "You are playing a word guessing game. In the DESCRIPTION PHASE, you must ONLY "
    "describe your word in 1-2 sentences without analyzing others. Save analysis for "
    "the VOTING PHASE."
)

DESCRIPTION_INTRO = (
    "You are participating in a word guessing game. You and 3 other players each have "
    "a word. Three players (the majority) have the same word, while one player (the "
    "impostor) has a different word. The impostor's goal is to blend in and avoid "
    "detection, while the majority's goal is to identify the impostor.\n"
    "\n"
    "DESCRIPTION PHASE RULES:\n"
    "- Describe your word in 1-2 sentences\n"
    "- Do NOT mention your word directly\n"
    "- Do NOT analyze other players' descriptions yet"
)

DESCRIPTION_TEAM_AWARE = (
    "TEAM INFORMATION:\n"
    "- You and Player {teammate_position} are teammates (paired together for this game)\n"
    "- Teams are based on model type, NOT on roles (majority/impostor)\n"
    "- Your teammate might have the same word as you OR might be the impostor\n"
    "- There is only 1 impostor total among all 4 players"
)

DESCRIPTION_TEAM_SEMI_AWARE = (
    "TEAM INFORMATION:\n"
    "- You have exactly one teammate among the other 3 players (paired with you for this game)\n"
    "- You don't know which player is your teammate\n"
    "- Your teammate might share your word OR might be the impostor\n"
    "- There is only 1 impostor total among all 4 players"
)

DESCRIPTION_PREVIOUS_HEADER = "Previous descriptions (for context only - do not analyze them now):"
DESCRIPTION_YOU_ARE = "You are Player {player_position}."
DESCRIPTION_YOU_ARE_FIRST = "You are Player {player_position} and will go first."
DESCRIPTION_OUTRO = (
    "Provide ONLY your 1-2 sentence description of your word. Do not analyze others "
    "or share your thoughts about the game:"
)

VOTING_SYSTEM = "You are playing a word guessing game. You must respond with valid JSON only."

VOTING_INTRO = "Based on the descriptions below, identify which player has the different word."

VOTING_TEAM_AWARE = (
    "TEAM INFORMATION:\n"
    "- You and Player {teammate_position} are teammates (paired together for this game)\n"
    "- Teams are based on model type, NOT on roles (majority/impostor)\n"
    "- Your teammate might have the same word as you OR might be the impostor\n"
    "- There is only 1 impostor total among all 4 players\n"
    "- Remember: If your teammate is the impostor, they win by avoiding detection"
)

VOTING_TEAM_SEMI_AWARE = (
    "TEAM INFORMATION:\n"
    "- You have exactly one teammate among the other 3 players (paired with you for this game)\n"
    "- You must deduce who your teammate is from the descriptions\n"
    "- Your teammate might share your word OR might be the impostor\n"
    "- There is only 1 impostor total among all 4 players"
)

VOTING_JSON_FORMAT = (
    "Please respond in the following JSON format:\n"
    "{\n"
    '  "suspected_impostor_id": "player_id",\n'
    '  "confidence": 0.73,\n'
    '  "reasoning": "brief explanation",\n'
    '  "self_declaration": false,\n'
    '  "word_guess": null\n'
    "}\n"
    "\n"
    "Note: confidence is a float in [0, 1].\n"
    "If you believe YOU have the different word, set self_declaration to true.\n"
    "If you think you know what the majority word is (and you're the impostor), "
    "include it in word_guess.\n"
    "Note: the word_guess is considered only if you set self_declaration to true."
)

# Re-prompts (not in the paper; the paper only says compliance is enforced).
DESCRIPTION_RETRY = (
    "Your description broke a rule: {violation}. Try again. Describe your word in 1-2 "
    "sentences, without using the word itself or any form of it, in at most "
    "{max_chars} characters."
)
VOTING_RETRY = (
    "Your answer could not be used: {error}. Respond again with valid JSON only, "
    "exactly in the JSON format above, with suspected_impostor_id set to the number "
    "of another player."
)

# What other players see in place of a description that failed enforcement twice.
INVALID_DESCRIPTION_PLACEHOLDER = "[no valid description]"

#: Modes whose prompts tell a player about its team (``ModeSpec.teammate_view``).
TEAM_PROMPT_MODES = tuple(m for m, spec in MODE_SPECS.items() if spec.teammate_view != "none")


_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight")


def description_intro(players: int = 4, impostors: int = 1, language: str = DEFAULT_LANGUAGE) -> str:
    """The description prompt's opening for a group of ``players`` with ``impostors`` impostors:
    :data:`DESCRIPTION_INTRO` itself in the paper's game; otherwise the same sentences with the
    counts, and the impostors said to share their word (docs/rules.md, "Group size")."""
    if language != DEFAULT_LANGUAGE:
        t, numbers = texts(language), translations.NUMBER_WORDS[language]
        return (t["INTRO_ONE"] if impostors == 1 else t["INTRO_MANY"]).format(
            others=players - 1, majority=numbers[players - impostors].capitalize(), impostors=numbers[impostors])
    if (players, impostors) == (4, 1):
        return DESCRIPTION_INTRO
    majority = _NUMBER_WORDS[players - impostors].capitalize()
    if impostors == 1:
        who = "one player (the impostor) has a different word. The impostor's goal is"
    else:
        who = (f"{_NUMBER_WORDS[impostors]} players (the impostors) share a different word. The impostors' goal "
               f"is")
    return DESCRIPTION_INTRO.replace(
        "You and 3 other players", f"You and {players - 1} other players").replace(
        "Three players (the majority)", f"{majority} players (the majority)").replace(
        "one player (the impostor) has a different word. The impostor's goal is", who).replace(
        "identify the impostor.", "identify the impostor." if impostors == 1 else "identify an impostor.")


def voting_intro(impostors: int = 1, language: str = DEFAULT_LANGUAGE) -> str:
    """The voting prompt's opening: :data:`VOTING_INTRO` with one impostor; with several, any
    one of them is the player to name (convicting one wins, docs/rules.md)."""
    if language != DEFAULT_LANGUAGE:
        return texts(language)["VOTING_INTRO" if impostors == 1 else "VOTING_INTRO_MANY"]
    return VOTING_INTRO if impostors == 1 else (
        "Based on the descriptions below, identify one of the players who have the different word.")


def texts(language: str = DEFAULT_LANGUAGE) -> Mapping[str, str]:
    """Every text of the prompts in ``language``, by the English constant's name (and ``WORD_IS``,
    ``WORD_WAS``, ``PLAYER``, ``ALL_DESCRIPTIONS``, ``AFTER_ROUND``: the short lines the builders add)."""
    if language == DEFAULT_LANGUAGE:
        return _ENGLISH
    language_of(language)  # an unshipped language: one line naming the shipped ones
    return translations.TEXTS[language]


def player_name(label: int, language: str = DEFAULT_LANGUAGE) -> str:
    """``Player 2`` (``Jugador 2``, ``Spieler 2``): how the prompts name a player."""
    return texts(language)["PLAYER"].format(label=label)


def description_retry(violation: str, max_chars: int, language: str = DEFAULT_LANGUAGE) -> str:
    """The re-prompt after a broken description rule (the rule's message in the language)."""
    return texts(language)["DESCRIPTION_RETRY"].format(
        violation=violation if language == DEFAULT_LANGUAGE else translations.reason(violation, language),
        max_chars=max_chars)


def voting_retry(error: str, language: str = DEFAULT_LANGUAGE) -> str:
    """The re-prompt after an unusable ballot (the parse error as written: it quotes the JSON keys)."""
    return texts(language)["VOTING_RETRY"].format(error=error)


def _team_block(mode: str, teammate_label: Optional[int], aware: str, semi: str) -> Optional[str]:
    view = mode_spec(mode).teammate_view
    if view == "named":
        if teammate_label is None:
            raise ValueError(f"{mode} prompts need the teammate's player number")
        return aware.format(teammate_position=teammate_label)
    return semi if view == "unnamed" else None


def description_prompt(
    *,
    mode: str,
    word: str,
    player_label: int,
    previous: Sequence[tuple[int, str]],
    teammate_label: Optional[int] = None,
    context: Optional[str] = None,
    players: int = 4,
    impostors: int = 1,
    language: str = DEFAULT_LANGUAGE,
) -> str:
    """User prompt A.1 for one speaker; ``previous`` is [(player label, text)] so far;
    ``context``: a later round's block (:func:`round_context`), None in the paper's game."""
    t = texts(language)
    parts = [description_intro(players, impostors, language)]
    block = _team_block(mode, teammate_label, t["DESCRIPTION_TEAM_AWARE"], t["DESCRIPTION_TEAM_SEMI_AWARE"])
    if block:
        parts.append(block)
    if context:
        parts.append(context)
    parts.append(t["WORD_IS"].format(word=word))
    if previous:
        lines = [t["DESCRIPTION_PREVIOUS_HEADER"]]
        lines += [f"{player_name(label, language)}: {text}" for label, text in previous]
        parts.append("\n".join(lines))
        parts.append(t["DESCRIPTION_YOU_ARE"].format(player_position=player_label))
    else:
        parts.append(t["DESCRIPTION_YOU_ARE_FIRST"].format(player_position=player_label))
    parts.append(t["DESCRIPTION_OUTRO"])
    return "\n\n".join(parts)


def voting_prompt(
    *,
    mode: str,
    word: str,
    player_label: int,
    descriptions: Sequence[tuple[int, str]],
    teammate_label: Optional[int] = None,
    context: Optional[str] = None,
    impostors: int = 1,
    language: str = DEFAULT_LANGUAGE,
) -> str:
    """User prompt A.2; ``descriptions`` is [(player label, text)] in speaking order;
    ``context``: a multi-round game's block (:func:`round_context`), None in the paper's game."""
    t = texts(language)
    parts = [voting_intro(impostors, language), t["WORD_WAS"].format(word=word)]
    block = _team_block(mode, teammate_label, t["VOTING_TEAM_AWARE"], t["VOTING_TEAM_SEMI_AWARE"])
    if block:
        parts.append(block)
    if context:
        parts.append(context)
    lines = [t["ALL_DESCRIPTIONS"]] + [f"{player_name(label, language)}: {text}" for label, text in descriptions]
    parts.append("\n".join(lines))
    parts.append(t["DESCRIPTION_YOU_ARE"].format(player_position=player_label))
    parts.append(t["VOTING_JSON_FORMAT"])
    return "\n\n".join(parts)


# ------------------------------------------------------------------ multi-round games (O.3)
# Not in the paper's A.2 (one round); docs/rules.md, "Multi-round games".

ROUND_RULES = (
    "MULTI-ROUND GAME: this is round {round} of at most {max_rounds}. Remaining players: {remaining}.\n"
    "- Each round every remaining player gives a NEW description (never repeat your own earlier one), then the "
    "remaining players vote\n"
    "- The player with the most votes is eliminated; a tie eliminates nobody\n"
    "- A vote for yourself or for an eliminated player does not count\n"
    "- The majority wins when the impostor is eliminated; the impostor wins when only two players remain or "
    "the rounds run out"
)
ROUND_HISTORY_HEADER = "EARLIER ROUNDS (public record):"
NOTES_HEADER = "YOUR PRIVATE NOTES (only you can read them):"

NOTE_SYSTEM = (
    "You are playing a word guessing game. Between rounds you may keep a short private note for yourself; "
    "no other player ever sees it."
)
NOTE_OUTRO = (
    "Write your private note for the next round in at most {max_chars} characters: your suspicions and your plan. "
    "Reply with the note only:"
)


def round_context(*, round_no: int, max_rounds: int, remaining_labels: Sequence[int], history: str,
                  notes: Sequence[str] = (), language: str = DEFAULT_LANGUAGE) -> str:
    """The block a multi-round game adds to every prompt: the round rules, the public record of
    earlier rounds and, with -T private_notes, this player's own notes."""
    t = texts(language)
    parts = [t["ROUND_RULES"].format(round=round_no, max_rounds=max_rounds,
                                     remaining=", ".join(player_name(n, language) for n in remaining_labels))]
    if history:
        parts.append(t["ROUND_HISTORY_HEADER"] + "\n" + history)
    if notes:
        parts.append(t["NOTES_HEADER"] + "\n" + "\n".join(t["AFTER_ROUND"].format(round=i, note=n)
                                                          for i, n in enumerate(notes, 1)))
    return "\n\n".join(parts)


def note_prompt(*, word: str, player_label: int, context: str, max_chars: int,
                language: str = DEFAULT_LANGUAGE) -> str:
    """The user prompt for a private note after a round (``context`` includes the round just played)."""
    t = texts(language)
    return "\n\n".join([t["WORD_IS"].format(word=word), context,
                          t["DESCRIPTION_YOU_ARE"].format(player_position=player_label),
                          t["NOTE_OUTRO"].format(max_chars=max_chars)])


# The English texts by name (what :func:`texts` returns for "en"): the constants above, as in the paper
# (the intros of other group sizes are :func:`description_intro`'s own).
_ENGLISH: dict[str, str] = {
    name: globals()[name] for name in translations.ES
    if name in globals() and isinstance(globals()[name], str)} | {
    "VOTING_INTRO_MANY": voting_intro(2),
    "WORD_IS": "Your word is: {word}", "WORD_WAS": "Your word was: {word}", "PLAYER": "Player {label}",
    "ALL_DESCRIPTIONS": "All descriptions:", "AFTER_ROUND": "After round {round}: {note}"}
