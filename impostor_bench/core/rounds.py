"""Multi-round games (paper Appendix O.3): elimination rounds, pure.

With ``-T rounds=N`` > 1 the game goes on Undercover-style: every remaining player
describes again (seeing every earlier round), then the remaining players vote at once;
the seat with the most counted votes is eliminated.  The majority wins when the
impostor is eliminated; the impostor wins when two players remain or the rounds run out.
Self-declarations are decided first, as in the one-round rules.  With ``rounds=1`` the
game is the paper's and is decided by :func:`impostor_bench.core.rules.decide` alone; nothing
here runs.  Every rule and why: docs/rules.md, "Multi-round games".
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

from impostor_bench.core.glyphs import readings
from impostor_bench.core.records import ELIMINATED_SEAT, TIE_RULES, WINNER_OF, player_label
from impostor_bench.core.rules import Ballot, guess_matches
from impostor_bench.core.schedule import derive_seed

#: The longest private note a player may keep between rounds (-T private_notes; O.3).
NOTE_MAX_CHARS = 300
MAX_ROUNDS = 10  # a 4-player game ends after at most 2 eliminations; more rounds only replay ties


def counted_vote(vote: Optional[int], voter: int, remaining: Sequence[int]) -> Optional[int]:
    """The vote as counted in a round: a vote for oneself or an eliminated seat counts as none."""
    if vote is None or vote == voter or vote not in remaining:
        return None
    return vote


def round_ballot_class(vote: Optional[int], ballot_class: str, voter: int, remaining: Sequence[int]) -> str:
    """The class of a ballot in a round: ``eliminated_seat`` for a vote for a seat no longer in the game."""
    if vote is not None and vote != voter and vote not in remaining:
        return ELIMINATED_SEAT
    return ballot_class


@dataclass(frozen=True)
class RoundResult:
    """What one round decided: the seat eliminated (None: nobody), and the winner if the game ended."""

    round: int
    remaining: tuple[int, ...]  # seats in the game at the round's start
    eliminated: Optional[int]
    winner: Optional[str]  # "impostor" | "majority" | None (the game goes on)
    win_condition: Optional[str]
    votes: Mapping[int, int]  # seat -> counted votes received
    tie_k: int  # seats tied at the top (0 = no top tie)
    impostor_in_tie: bool


def decide_round(ballots: Mapping[int, Ballot], remaining: Sequence[int], impostor_seat: int, majority_word: str,
                 *, round_no: int, max_rounds: int, tie_rule: str = "default",
                 rng: Optional[random.Random] = None) -> RoundResult:
    """Decide one round from the remaining seats' ballots (``ballots``: seat -> Ballot).

    Order: a non-impostor's self-declaration (majority wins); the impostor's (its
    guess decides); else the unique top of the counted votes is eliminated, a top
    tie eliminates nobody under the default rule, one tied seat drawn under
    ``sym_candidate``, and under ``sym_side`` a fair coin picks the side that loses a
    seat among the tied (the impostor if tied, else a drawn tied seat).  Then: the
    impostor eliminated -> majority wins; two players left -> impostor wins; the last
    round -> impostor wins.
    """
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {TIE_RULES}, got {tie_rule!r}")
    remaining = tuple(sorted(remaining))
    if set(ballots) != set(remaining):
        raise ValueError(f"a round needs one ballot per remaining seat {remaining}, got seats {sorted(ballots)}")
    if impostor_seat not in remaining:
        raise ValueError(f"the impostor (seat {impostor_seat}) is not among the remaining seats {remaining}")
    counts = Counter(v for seat, b in ballots.items() if (v := counted_vote(b.vote, seat, remaining)) is not None)
    top = max(counts.values(), default=0)
    tied = sorted(s for s, c in counts.items() if c == top) if top else []
    k = len(tied) if len(tied) >= 2 else 0

    def result(eliminated: Optional[int], condition: Optional[str]) -> RoundResult:
        winner = None if condition is None else WINNER_OF[condition]
        return RoundResult(round_no, remaining, eliminated, winner, condition, dict(counts), k,
                           k > 0 and impostor_seat in tied)

    if any(b.self_declared for seat, b in ballots.items() if seat != impostor_seat):
        return result(None, "majority_self_declared")
    if ballots[impostor_seat].self_declared:
        if guess_matches(ballots[impostor_seat].word_guess, majority_word):
            return result(None, "impostor_guess_correct")
        return result(None, "impostor_guess_wrong")
    eliminated: Optional[int] = tied[0] if len(tied) == 1 else None
    if k and tie_rule != "default":
        if rng is None:
            raise ValueError("symmetric tie rules need a seeded rng")
        if tie_rule == "sym_candidate":
            eliminated = rng.choice(tied)
        else:
            impostor_side = rng.random() < 0.5
            others = [s for s in tied if s != impostor_seat]
            if impostor_seat in tied and impostor_side:
                eliminated = impostor_seat
            else:
                eliminated = rng.choice(others)
    if eliminated == impostor_seat:
        return result(eliminated, "eliminated")
    left = len(remaining) - (eliminated is not None)
    if left <= 2:
        return result(eliminated, "two_left")
    if round_no >= max_rounds:
        return result(eliminated, "rounds_exhausted")
    return result(eliminated, None)


@dataclass(frozen=True)
class GameResult:
    winner: str
    win_condition: str
    rounds: tuple[RoundResult, ...]

    @property
    def elimination_order(self) -> tuple[int, ...]:
        return tuple(r.eliminated for r in self.rounds if r.eliminated is not None)


RngFor = Callable[[int], random.Random]


def round_rng(game_seed: Optional[int], tie_rule: str, round_no: int) -> random.Random:
    """The seeded draw of a round's symmetric tie-breaker (the solver and the scorer draw alike)."""
    return random.Random(derive_seed(game_seed, "tie_rule", tie_rule, "round", round_no))


def play_rounds(rounds: Sequence[Mapping[int, Ballot]], impostor_seat: int, majority_word: str, *, max_rounds: int,
                tie_rule: str = "default", rng_for: Optional[RngFor] = None, n_seats: int = 4) -> GameResult:
    """Replay a finished game from its rounds' ballots (each: seat -> Ballot of the seats then remaining)."""
    remaining = list(range(n_seats))
    results = []
    for i, ballots in enumerate(rounds, start=1):
        r = decide_round(ballots, remaining, impostor_seat, majority_word, round_no=i, max_rounds=max_rounds,
                         tie_rule=tie_rule, rng=rng_for(i) if rng_for else None)
        results.append(r)
        if r.winner is not None:
            if i != len(rounds):
                raise ValueError(f"the game ended in round {i} but {len(rounds)} rounds were recorded")
            return GameResult(r.winner, r.win_condition or "", tuple(results))
        if r.eliminated is not None:
            remaining.remove(r.eliminated)
    raise ValueError(f"the recorded {len(rounds)} round(s) do not finish the game (max_rounds={max_rounds})")


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


def public_transcript(history: Sequence[RoundView]) -> str:
    """Earlier rounds in words: descriptions, who voted whom, who was eliminated (player numbers)."""
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
