"""Read the game state back out of the chat messages a player receives.

The bots (``bot/random``, ``bot/embedding``, ``bot/script``) see exactly what an
LLM sees: the system message and user prompt of Appendix A.2 (built by
``impostor_bench.core.prompts``), optionally followed by re-prompts (``DESCRIPTION_RETRY`` /
``VOTING_RETRY``).  This module turns those messages into a :class:`GameView`.

It works on plain ``(role, text)`` pairs so that it is testable without Inspect;
:func:`parse_messages` also accepts Inspect ``ChatMessage`` objects or dicts.  A prompt in
another language (-T language: ``prompts.texts``) is read with that language's markers,
found from its "Your word is:" line, so the bots play in any shipped language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Optional

from impostor_bench.core import prompts
from impostor_bench.core.languages import DEFAULT_LANGUAGE, LANGUAGES

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
class _Markers:
    """How one language's prompts say each thing the bots read (English: the patterns above)."""

    word_is: re.Pattern[str]
    word_was: re.Pattern[str]
    you_are: re.Pattern[str]
    teammate: re.Pattern[str]
    player_line: re.Pattern[str]
    player_ref: re.Pattern[str]
    max_chars: re.Pattern[str]
    retry_description: re.Pattern[str]
    retry_vote: re.Pattern[str]
    round: re.Pattern[str]
    semi_aware: str
    previous_header: str
    all_descriptions: str
    round_rules_start: str
    note_system: str
    voting_system: str


def _template(text: str, flags: int = 0, **slots: str) -> re.Pattern[str]:
    """A prompt template as a pattern: its text literal, each ``{slot}`` the given group."""
    pattern = re.escape(text)
    for name, group in slots.items():
        pattern = pattern.replace(re.escape("{" + name + "}"), group)
    return re.compile(pattern, flags)


def _markers(language: str) -> _Markers:
    t = prompts.texts(language)
    if language == DEFAULT_LANGUAGE:
        return _Markers(_WORD_IS, _WORD_WAS, _YOU_ARE, _TEAMMATE, _PLAYER_LINE, re.compile(r"Player (\d{1,4})"),
                        _MAX_CHARS, _RETRY_DESCRIPTION, _RETRY_VOTE, _ROUND, "You have exactly one teammate",
                        prompts.DESCRIPTION_PREVIOUS_HEADER, "All descriptions:", prompts.ROUND_RULES.split("{", 1)[0],
                        prompts.NOTE_SYSTEM, prompts.VOTING_SYSTEM)
    number = r"\d{1,4}"
    you, first = t["DESCRIPTION_YOU_ARE"], t["DESCRIPTION_YOU_ARE_FIRST"]
    head = you.split("{player_position}")[0]
    first_tail = first.split("{player_position}")[1].removesuffix(".")
    mate_line = next(line for line in t["DESCRIPTION_TEAM_AWARE"].splitlines() if "{teammate_position}" in line)
    semi_line = t["DESCRIPTION_TEAM_SEMI_AWARE"].splitlines()[1].removeprefix("- ")
    return _Markers(
        word_is=re.compile("^" + _template(t["WORD_IS"], word=r"(?P<w>.*?)\s*$").pattern, re.MULTILINE),
        word_was=re.compile("^" + _template(t["WORD_WAS"], word=r"(?P<w>.*?)\s*$").pattern, re.MULTILINE),
        you_are=re.compile(rf"^{re.escape(head)}(?P<n>{number})(?P<first>{re.escape(first_tail)})?\.\s*$",
                           re.MULTILINE),
        teammate=_template(mate_line.removeprefix("- ").split(" (")[0], teammate_position=rf"(?P<n>{number})"),
        player_line=re.compile("^" + _template(t["PLAYER"], label=rf"(?P<n>{number})").pattern + ": ?", re.MULTILINE),
        player_ref=_template(t["PLAYER"], label=rf"({number})"),
        max_chars=_template(t["DESCRIPTION_RETRY"], re.DOTALL, violation=".*?", max_chars=r"(?P<n>\d{1,6})"),
        retry_description=_template(t["DESCRIPTION_RETRY"], re.DOTALL, violation="(?P<why>.*?)", max_chars=r"\d+"),
        retry_vote=_template(t["VOTING_RETRY"], re.DOTALL, error="(?P<why>.*?)"),
        round=_template(t["ROUND_RULES"].splitlines()[0].split(": ", 1)[1], round=r"(?P<r>\d{1,3})",
                        max_rounds=r"(?P<n>\d{1,3})", remaining=r"(?P<left>[^\n]*)"),
        semi_aware=semi_line.split(" (")[0],
        previous_header=t["DESCRIPTION_PREVIOUS_HEADER"],
        all_descriptions=t["ALL_DESCRIPTIONS"],
        round_rules_start=t["ROUND_RULES"].split("{", 1)[0],
        note_system=t["NOTE_SYSTEM"],
        voting_system=t["VOTING_SYSTEM"],
    )


#: Each shipped language's markers, English first (an English prompt is read as before).
_LANGUAGE_MARKERS = {code: _markers(code) for code in LANGUAGES}


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
    language: str = DEFAULT_LANGUAGE  # the prompt's language (languages.LANGUAGES)
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


def _description_block(text: str, header: str, markers: _Markers) -> tuple[tuple[int, str], ...]:
    """``Player N: text`` entries between ``header`` and the final "You are Player"."""
    start = text.find(header)
    if start < 0:
        return ()
    body = text[start + len(header) :]
    ends = [m.start() for m in markers.you_are.finditer(body)]
    if ends:
        body = body[: ends[-1]]
    return _entries(body, markers)


def _last_round_descriptions(text: str, language: str = DEFAULT_LANGUAGE) -> tuple[tuple[int, str], ...]:
    """A note prompt's ``Player N: text`` entries of the last round in its public record."""
    t = prompts.texts(language)
    heads = list((_ROUND_DESCRIPTIONS if language == DEFAULT_LANGUAGE else re.compile(
        "^" + _template(t["ROUND_DESCRIPTIONS"], round=r"(?P<r>\d{1,3})").pattern + "$", re.MULTILINE)).finditer(text))
    if not heads:
        return ()
    body = text[heads[-1].end():]
    votes = (r"^Round \d{1,3} votes:" if language == DEFAULT_LANGUAGE
             else "^" + _template(t["ROUND_VOTES"].split("{votes}")[0], round=r"\d{1,3}").pattern)
    end = re.search(votes, body, re.MULTILINE)
    return _entries(body[: end.start()] if end else body, _LANGUAGE_MARKERS[language])


def _entries(body: str, markers: Optional[_Markers] = None) -> tuple[tuple[int, str], ...]:
    marks = list((markers.player_line if markers else _PLAYER_LINE).finditer(body))
    out = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(body)
        out.append((int(mark.group("n")), body[mark.end() : end].strip()))
    return tuple(out)


def _round_block(text: str, markers: _Markers, language: str) -> str:
    """The block ``prompts.round_context`` added to the prompt ("" in the paper's game)."""
    start = text.find(markers.round_rules_start)
    if start < 0:
        return ""
    t = prompts.texts(language)
    ends = [i for mark in ("\n\n" + t["WORD_IS"].split("{")[0].rstrip(), "\n\n" + t["ALL_DESCRIPTIONS"],
                           "\n\n" + t["DESCRIPTION_YOU_ARE"].split("{")[0].rstrip(),
                           "\n\n" + t["WORD_WAS"].split("{")[0].rstrip())
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
    found = next(((i, code, mk) for i, t in enumerate(users) for code, mk in _LANGUAGE_MARKERS.items()
                  if mk.word_is.search(t) or mk.word_was.search(t)), None)
    if found is None:
        raise PromptParseError("no 'Your word is:' / 'Your word was:' line in the user prompt")
    main_index, language, mk = found
    main = users[main_index]
    retries = users[main_index + 1 :]

    phase: Phase
    if system.strip() == mk.note_system:  # the descriptions of the round just played
        phase = "note"
        word = mk.word_is.search(main)
        descriptions = _last_round_descriptions(main, language)
    elif mk.word_was.search(main) or system.strip() == mk.voting_system:
        phase = "vote"
        word = mk.word_was.search(main) or mk.word_is.search(main)
        descriptions = _description_block(main, mk.all_descriptions, mk)
    else:
        phase = "description"
        word = mk.word_is.search(main)
        descriptions = _description_block(main, mk.previous_header, mk)
    assert word is not None
    you = list(mk.you_are.finditer(main))
    if not you:
        raise PromptParseError("no 'You are Player N.' line in the user prompt")
    you_m = you[-1]
    teammate = mk.teammate.search(main)
    team_mode = None
    if teammate:
        team_mode = "team_aware"
    elif mk.semi_aware in main:
        team_mode = "team_semi_aware"

    round_m = mk.round.search(main)
    retry_reason = None
    max_chars = None
    for text in retries:
        m = mk.retry_description.search(text) or mk.retry_vote.search(text)
        retry_reason = m.group("why") if m else text.strip()
        mc = mk.max_chars.search(text)
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
        round_context=_round_block(main, mk, language),
        remaining=tuple(int(n) for n in mk.player_ref.findall(round_m.group("left"))) if round_m else (),
        language=language,
    )
