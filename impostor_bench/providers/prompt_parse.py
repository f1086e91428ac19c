"""Read the game state back out of the chat messages a player receives.

The bots (``bot/random``, ``bot/embedding``, ``bot/script``) see exactly what an
LLM sees: the system message and user prompt of Appendix A.2 (built by
``impostor_bench.core.prompts``), optionally followed by re-prompts (``DESCRIPTION_RETRY`` /
``VOTING_RETRY``).  This module turns those messages into a :class:`GameView`.

It works on plain ``(role, text)`` pairs so that it is testable without Inspect;
:func:`parse_messages` also accepts Inspect ``ChatMessage`` objects or dicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Optional

from impostor_bench.core import prompts

Phase = Literal["description", "vote", "note"]  # note: a multi-round game's private note (O.3)

_WORD_IS = re.compile(r"^Your word is: (?P<w>.*?)\s*$", re.MULTILINE)
_WORD_WAS = re.compile(r"^Your word was: (?P<w>.*?)\s*$", re.MULTILINE)
# Numbers are read with at most 4 digits (players are 1-4, the character limit is 750): a
# description quoting "You and Player 999...9 are teammates" must not reach int() unbounded.
_YOU_ARE = re.compile(r"^You are Player (?P<n>\d{1,4})(?P<first> and will go first)?\.\s*$", re.MULTILINE)
_TEAMMATE = re.compile(r"You and Player (?P<n>\d{1,4}) are teammates")
_PLAYER_LINE = re.compile(r"^Player (?P<n>\d{1,4}): ?", re.MULTILINE)
_MAX_CHARS = re.compile(r"in at most (?P<n>\d{1,6}) characters")
_RETRY_DESCRIPTION = re.compile(r"^Your description broke a rule: (?P<why>.*?)\. Try again\.", re.DOTALL)
_RETRY_VOTE = re.compile(r"^Your answer could not be used: (?P<why>.*?)\. Respond again", re.DOTALL)
_ROUND = re.compile(r"this is round (?P<r>\d{1,3}) of at most (?P<n>\d{1,3})\. Remaining players: (?P<left>[^\n]*)\.")
_ROUND_DESCRIPTIONS = re.compile(r"^Round (?P<r>\d{1,3}) descriptions:$", re.MULTILINE)


@dataclass(frozen=True)
class GameView:
    """What one player knows at one call."""

    phase: Phase
    word: str
    player: int  # 1-based player number ("You are Player N")
    # description phase: the previous speakers; vote phase: all four descriptions
    descriptions: tuple[tuple[int, str], ...] = ()
    teammate: Optional[int] = None  # team_aware prompts only
    team_mode: Optional[str] = None  # "team_aware" | "team_semi_aware" | None
    first_speaker: bool = False
    attempt: int = 1  # 1 + number of re-prompts seen
    retry_reason: Optional[str] = None  # text of the last re-prompt's reason
    max_chars: Optional[int] = None  # from a description re-prompt
    prompt_text: str = ""  # system + user texts joined (used to derive seeds)
    round: int = 1  # a multi-round game's round (prompts.round_context); 1 in the paper's game
    remaining: tuple[int, ...] = ()  # player numbers still in a multi-round game; () in the paper's game
    round_context: str = ""  # a multi-round game's block (rules, public record, own notes), as in the prompt
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def others(self) -> list[int]:
        """The other players' numbers seen in the prompt (vote and note phases: the candidates, only
        players still in a multi-round game)."""
        seen = [n for n, _ in self.descriptions if n != self.player and (not self.remaining or n in self.remaining)]
        if self.phase != "description" and not seen:
            seen = [n for n in (self.remaining or range(1, 5)) if n != self.player]
        return seen


def message_text(message: Any) -> tuple[str, str]:
    """(role, text) of an Inspect ChatMessage, a dict or a (role, text) pair."""
    if isinstance(message, tuple):
        return str(message[0]), str(message[1])
    if isinstance(message, dict):
        role, content = message.get("role", "user"), message.get("content", "")
    else:
        role = getattr(message, "role", "user")
        content = getattr(message, "text", None)
        if content is None:
            content = getattr(message, "content", "")
    if isinstance(content, list):  # list of content parts
        parts = []
        for part in content:
            text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
            if text:
                parts.append(text)
        content = "\n".join(parts)
    return str(role), str(content or "")


def _description_block(text: str, header: str) -> tuple[tuple[int, str], ...]:
    """``Player N: text`` entries between ``header`` and the final "You are Player"."""
    start = text.find(header)
    if start < 0:
        return ()
    body = text[start + len(header) :]
    ends = [m.start() for m in _YOU_ARE.finditer(body)]
    if ends:
        body = body[: ends[-1]]
    return _entries(body)


def _last_round_descriptions(text: str) -> tuple[tuple[int, str], ...]:
    """A note prompt's ``Player N: text`` entries of the last round in its public record."""
    heads = list(_ROUND_DESCRIPTIONS.finditer(text))
    if not heads:
        return ()
    body = text[heads[-1].end():]
    end = re.search(r"^Round \d{1,3} votes:", body, re.MULTILINE)
    return _entries(body[: end.start()] if end else body)


def _entries(body: str) -> tuple[tuple[int, str], ...]:
    marks = list(_PLAYER_LINE.finditer(body))
    out = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(body)
        out.append((int(mark.group("n")), body[mark.end() : end].strip()))
    return tuple(out)


def _round_block(text: str) -> str:
    """The block ``prompts.round_context`` added to the prompt ("" in the paper's game)."""
    start = text.find(prompts.ROUND_RULES.split("{", 1)[0])
    if start < 0:
        return ""
    ends = [i for mark in ("\n\nYour word is:", "\n\nAll descriptions:", "\n\nYou are Player", "\n\nYour word was:")
            if (i := text.find(mark, start)) >= 0]
    return text[start: min(ends)] if ends else text[start:]


class PromptParseError(ValueError):
    """The messages are not an Impostor Game prompt."""


def parse_messages(messages: Iterable[Any]) -> GameView:
    """Parse the chat messages of one description or vote call."""
    pairs = [message_text(m) for m in messages]
    system = "\n".join(t for r, t in pairs if r == "system")
    users = [t for r, t in pairs if r == "user"]
    if not users:
        raise PromptParseError("no user message")
    main_index = next(
        (i for i, t in enumerate(users) if _WORD_IS.search(t) or _WORD_WAS.search(t)), None
    )
    if main_index is None:
        raise PromptParseError("no 'Your word is:' / 'Your word was:' line in the user prompt")
    main = users[main_index]
    retries = users[main_index + 1 :]

    phase: Phase
    if system.strip() == prompts.NOTE_SYSTEM:  # the descriptions of the round just played
        phase = "note"
        word = _WORD_IS.search(main)
        descriptions = _last_round_descriptions(main)
    elif _WORD_WAS.search(main) or system.strip() == prompts.VOTING_SYSTEM:
        phase = "vote"
        word = _WORD_WAS.search(main) or _WORD_IS.search(main)
        descriptions = _description_block(main, "All descriptions:")
    else:
        phase = "description"
        word = _WORD_IS.search(main)
        descriptions = _description_block(main, prompts.DESCRIPTION_PREVIOUS_HEADER)
    assert word is not None
    you = list(_YOU_ARE.finditer(main))
    if not you:
        raise PromptParseError("no 'You are Player N.' line in the user prompt")
    you_m = you[-1]
    teammate = _TEAMMATE.search(main)
    team_mode = None
    if teammate:
        team_mode = "team_aware"
    elif "You have exactly one teammate" in main:
        team_mode = "team_semi_aware"

    round_m = _ROUND.search(main)
    retry_reason = None
    max_chars = None
    for text in retries:
        m = _RETRY_DESCRIPTION.search(text) or _RETRY_VOTE.search(text)
        retry_reason = m.group("why") if m else text.strip()
        mc = _MAX_CHARS.search(text)
        if mc:
            max_chars = int(mc.group("n"))
    return GameView(
        phase=phase,
        word=word.group("w").strip(),
        player=int(you_m.group("n")),
        descriptions=descriptions,
        teammate=int(teammate.group("n")) if teammate else None,
        team_mode=team_mode,
        first_speaker=bool(you_m.group("first")),
        attempt=1 + len(retries),
        retry_reason=retry_reason,
        max_chars=max_chars,
        prompt_text=system + "\n\n" + "\n\n".join(users),
        round=int(round_m.group("r")) if round_m else 1,
        round_context=_round_block(main),
        remaining=tuple(int(n) for n in re.findall(r"Player (\d{1,4})", round_m.group("left"))) if round_m else (),
    )
