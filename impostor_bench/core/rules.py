"""Winner logic of Appendix A.1/A.3 and the symmetric tie-breakers of Appendix F, for any group
size (``impostor_bench.core.group``; the paper's four players and one impostor by default).

Pure functions over ballots; no model calls, no Inspect.  The order in which
the rules are checked is a documented choice (docs/rules.md, "Winner logic").
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from impostor_bench.core.descriptions import plural_forms
from impostor_bench.core.glyphs import readings
from impostor_bench.core.group import MAX_PLAYERS, MIN_PLAYERS, conviction_threshold, group_problem
from impostor_bench.core.records import TIE_RULES, WINNER_OF, Side, TieRule, WinCondition


@dataclass(frozen=True)
class Ballot:
    """One seat's vote. ``vote`` is the seat voted for, None when the ballot is invalid."""

    vote: Optional[int]
    self_declared: bool = False
    word_guess: Optional[str] = None


@dataclass(frozen=True)
class Outcome:
    winner: Side  # under the default rule
    win_condition: WinCondition
    winner_live: Side  # under the tie rule the game was played with
    tie_rule: TieRule
    tie_k: int  # candidates tied at the top of the ballot (0 = no top tie)
    impostor_in_tie: bool
    p_imp_default: float  # P(impostor wins) under each rule, from these ballots
    p_imp_sym_candidate: float
    p_imp_sym_side: float
    votes_on_impostor: int
    n_valid_votes: int


_ARTICLE = re.compile(r"^(?:the|an|a)\s+")
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")


def normalize_guess(text: Optional[str]) -> str:
    """Case/whitespace/punctuation-insensitive form of a word guess, leading article dropped."""
    if text is None:
        return ""
    s = " ".join(str(text).lower().split())
    s = _EDGE_PUNCT.sub("", s)
    s = _ARTICLE.sub("", s)
    return _EDGE_PUNCT.sub("", s)


def guess_matches(guess: Optional[str], majority_word: str) -> bool:
    """A guess is correct if, read as the leak rule reads text (``glyphs.readings``: fullwidth
    ``ｃａｔ``, ``café``, a Cyrillic look-alike read as the letters they show) and normalised, it
    is the majority word or one of its regular plurals (``descriptions.plural_forms``: ``dogs``,
    ``berries``, ``tomatoes``, ``wolves``).  Nothing is ever taken off the majority word, so
    ``cactu`` is not ``cactus`` (docs/rules.md, "Guess matching")."""
    if guess is None:
        return False
    word = normalize_guess(readings(majority_word)[0])
    accepted = set(plural_forms(word)) if word else set()
    return any(normalize_guess(reading) in accepted for reading in readings(str(guess)))


def top_tie(ballots: Sequence[Ballot]) -> tuple[int, frozenset[int]]:
    """(k, tied seats) for the top of the valid ballot; k=0 when no tie (or no votes)."""
    counts = Counter(b.vote for b in ballots if b.vote is not None)
    if not counts:
        return 0, frozenset()
    top = max(counts.values())
    tied = frozenset(seat for seat, c in counts.items() if c == top)
    return (len(tied), tied) if len(tied) >= 2 else (0, frozenset())


def impostor_seat_set(impostor_seat: Union[int, Sequence[int]]) -> frozenset[int]:
    """The impostor seats of a game given as one seat (the paper's game) or several."""
    return frozenset((impostor_seat,) if isinstance(impostor_seat, int) else impostor_seat)


def decide(
    ballots: Sequence[Ballot],
    impostor_seat: Union[int, Sequence[int]],
    majority_word: str,
    *,
    tie_rule: TieRule = "default",
    rng: Optional[random.Random] = None,
) -> Outcome:
    """Decide a game from its ballots (index = seat; one per player, four in the paper's game).

    Order (docs/rules.md): non-impostor self-declaration; impostor self-declaration (a
    declared impostor's guess decides; with several declared, every guess must be right);
    conviction (some impostor gets ``conviction_threshold`` non-impostor votes: 2 of 3 in
    the paper's game); strict plurality (some impostor has more votes than all other
    players combined); top-of-ballot tie; otherwise no conviction.  Only the last two are
    impostor wins, and only a top tie is touched by the symmetric rules.  ``impostor_seat``
    is one seat or, with several impostors, their seats: the impostors are one side, and
    convicting any of them is a majority win.
    """
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {TIE_RULES}, got {tie_rule!r}")
    n = len(ballots)
    imps = impostor_seat_set(impostor_seat)
    if group_problem(n, len(imps)) or not all(0 <= s < n for s in imps):
        raise ValueError(f"a game has one ballot per player ({MIN_PLAYERS} ballots in the paper's game, at most "
                         f"{MAX_PLAYERS}) and a minority of impostor seats among them; got {n} ballots and "
                         f"impostor seats {sorted(imps)}")
    valid = [b.vote for b in ballots if b.vote is not None]
    on_seat = Counter(b.vote for seat, b in enumerate(ballots) if b.vote in imps and seat not in imps)
    on_imp = sum(on_seat.values())
    counts = Counter(valid)
    k, tied = top_tie(ballots)
    in_tie = bool(imps & tied)

    def fixed(condition: WinCondition) -> Outcome:
        winner = WINNER_OF[condition]
        p = 1.0 if winner == "impostor" else 0.0
        return Outcome(winner=winner, win_condition=condition, winner_live=winner, tie_rule=tie_rule, tie_k=k,
                       impostor_in_tie=in_tie, p_imp_default=p, p_imp_sym_candidate=p,
                       p_imp_sym_side=p, votes_on_impostor=on_imp, n_valid_votes=len(valid))

    if any(b.self_declared for seat, b in enumerate(ballots) if seat not in imps):
        return fixed("majority_self_declared")
    declared = [ballots[s] for s in sorted(imps) if ballots[s].self_declared]
    if declared:
        if all(guess_matches(b.word_guess, majority_word) for b in declared):
            return fixed("impostor_guess_correct")
        return fixed("impostor_guess_wrong")
    if on_seat and max(on_seat.values()) >= conviction_threshold(n, len(imps)):
        return fixed("conviction")
    if any(counts[s] > len(valid) - counts[s] for s in imps):
        return fixed("strict_plurality")
    if k >= 2:
        share = len(imps & tied) / k  # the chance a uniformly eliminated tied seat is an impostor
        p_cand = 1.0 - share
        p_side = 0.5
        live: Side = "impostor"
        if tie_rule != "default":
            if rng is None:
                raise ValueError("symmetric tie rules need a seeded rng")
            if tie_rule == "sym_candidate":
                eliminated = rng.choice(sorted(tied))
                live = "majority" if eliminated in imps else "impostor"
            else:
                live = "majority" if rng.random() < 0.5 else "impostor"
        return Outcome(winner=WINNER_OF["tie"], win_condition="tie", winner_live=live, tie_rule=tie_rule, tie_k=k,
                       impostor_in_tie=in_tie, p_imp_default=1.0, p_imp_sym_candidate=p_cand,
                       p_imp_sym_side=p_side, votes_on_impostor=on_imp, n_valid_votes=len(valid))
    return fixed("no_conviction")
