"""What a longer game (-T rounds=N > 1, paper Appendix O.3) adds between rounds, pure.

Every remaining player describes again (seeing every earlier round: the public record
below, and with ``-T private_notes`` its own notes) and may not repeat itself; votes for a
seat voted out count as none.  Who is eliminated and who wins is decided by the one
decider, :func:`impostor_bench.core.rules.decide_round`.  Every rule and why:
docs/rules.md, "Multi-round games".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from impostor_bench.core import translations
from impostor_bench.core.glyphs import readings
from impostor_bench.core.records import ELIMINATED_SEAT, player_label

#: The longest private note a player may keep between rounds (-T private_notes; O.3).
NOTE_MAX_CHARS = 300
MAX_ROUNDS = 10  # a 4-player game ends after at most 2 eliminations; more rounds only replay ties


def round_ballot_class(vote: Optional[int], ballot_class: str, voter: int, remaining: Sequence[int]) -> str:
    """The class of a ballot in a round: ``eliminated_seat`` for a vote for a seat no longer in the game."""
    if vote is not None and vote != voter and vote not in remaining:
        return ELIMINATED_SEAT
    return ballot_class


def speaking_order_of_round(order: Sequence[int], remaining: Sequence[int]) -> tuple[int, ...]:
    """The game's speaking order restricted to the seats still in the game."""
    return tuple(s for s in order if s in remaining)


def _norm(text: str) -> set[str]:
    """The readings of ``text`` (the leak rule's: look-alike letters read as the letters they
    show, invisible characters dropped), each without case, punctuation or spacing runs."""
    return {" ".join("".join(c for c in r.casefold() if c.isalnum() or c.isspace()).split()) for r in readings(text)}


def repeat_violation(text: str, earlier: Sequence[str]) -> Optional[str]:
    """Why ``text`` is invalid as a repeat of one of the player's own earlier descriptions, or None.

    Compared as a reader reads them (a Cyrillic "а" for "a" is the same text), ignoring case,
    punctuation and spacing; ``earlier`` is that player's shown descriptions of earlier rounds,
    in order.
    """
    mine = _norm(text) - {""}
    for i, old in enumerate(earlier, start=1):
        if mine & _norm(old):
            return f"it repeats your description from round {i}; give a new one"
    return None


def clip_note(text: str) -> str:
    """A private note as kept: one line, at most NOTE_MAX_CHARS characters."""
    line = " ".join((text or "").split())
    return line if len(line) <= NOTE_MAX_CHARS else line[: NOTE_MAX_CHARS - 1] + "…"


@dataclass(frozen=True)
class RoundView:
    """The public record of one finished round, as every later prompt shows it."""

    round: int
    descriptions: tuple[tuple[int, str], ...]  # (seat, text shown) in speaking order
    votes: tuple[tuple[int, Optional[int]], ...]  # (voter seat, counted vote or None)
    eliminated: Optional[int]


def public_transcript(history: Sequence[RoundView], language: str = "en") -> str:
    """Earlier rounds in words: descriptions, who voted whom, who was eliminated (player numbers);
    in ``language`` (``translations``) when it is not English."""
    if language != "en":
        return _transcript_in(history, translations.TEXTS[language])
    blocks = []
    for r in history:
        lines = [f"Round {r.round} descriptions:"]
        lines += [f"Player {player_label(s)}: {text}" for s, text in r.descriptions]
        votes = "; ".join(f"Player {player_label(s)} voted "
                          + (f"Player {player_label(v)}" if v is not None else "no valid vote") for s, v in r.votes)
        lines.append(f"Round {r.round} votes: {votes}.")
        lines.append(f"Round {r.round} result: " + (
            f"Player {player_label(r.eliminated)} was eliminated and was not the impostor; the game goes on."
            if r.eliminated is not None else "nobody was eliminated; the game goes on."))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _transcript_in(history: Sequence[RoundView], t: dict[str, str]) -> str:
    """:func:`public_transcript` in a translation's words."""
    def name(seat: int) -> str:
        return t["PLAYER"].format(label=player_label(seat))

    blocks = []
    for r in history:
        lines = [t["ROUND_DESCRIPTIONS"].format(round=r.round)]
        lines += [f"{name(s)}: {text}" for s, text in r.descriptions]
        votes = "; ".join(t["VOTED"].format(voter=name(s), target=name(v) if v is not None else t["NO_VALID_VOTE"])
                          for s, v in r.votes)
        lines.append(t["ROUND_VOTES"].format(round=r.round, votes=votes))
        lines.append(t["ROUND_OUT"].format(round=r.round, player=name(r.eliminated)) if r.eliminated is not None
                     else t["ROUND_NOBODY_OUT"].format(round=r.round))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
