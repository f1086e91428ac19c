"""Winner logic of Appendix A.1/A.3 and the symmetric tie-breakers of Appendix F.

Pure functions over ballots; no model calls, no Inspect.  The order in which
the rules are checked is a documented choice (docs/rules.md, "Winner logic").
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

from impostor_bench.core.descriptions import plural_forms
from impostor_bench.core.glyphs import readings
from impostor_bench.core.records import N_SEATS, TIE_RULES, WINNER_OF, Side, TieRule, WinCondition


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


def decide(
    ballots: Sequence[Ballot],
    impostor_seat: int,
    majority_word: str,
    *,
    tie_rule: TieRule = "default",
    rng: Optional[random.Random] = None,
) -> Outcome:
    """Decide a game from the four ballots (index = seat).

    Order (docs/rules.md): non-impostor self-declaration; impostor
    self-declaration (guess decides); conviction (>= 2 non-impostor votes on the
    impostor); strict plurality (impostor has more votes than all others
    combined); top-of-ballot tie; otherwise no conviction.  Only the last two
    are impostor wins, and only a top tie is touched by the symmetric rules.
    """
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {TIE_RULES}, got {tie_rule!r}")
    if len(ballots) != N_SEATS:
        raise ValueError(f"a game has {N_SEATS} ballots, got {len(ballots)}")
    valid = [b.vote for b in ballots if b.vote is not None]
    on_imp = sum(1 for seat, b in enumerate(ballots) if b.vote == impostor_seat and seat != impostor_seat)
    others = sum(1 for v in valid if v != impostor_seat)
    k, tied = top_tie(ballots)

    def fixed(condition: WinCondition) -> Outcome:
        winner = WINNER_OF[condition]
        p = 1.0 if winner == "impostor" else 0.0
        return Outcome(winner=winner, win_condition=condition, winner_live=winner, tie_rule=tie_rule, tie_k=k,
                       impostor_in_tie=impostor_seat in tied, p_imp_default=p, p_imp_sym_candidate=p,
                       p_imp_sym_side=p, votes_on_impostor=on_imp, n_valid_votes=len(valid))

    if any(b.self_declared for seat, b in enumerate(ballots) if seat != impostor_seat):
        return fixed("majority_self_declared")
    imp = ballots[impostor_seat]
    if imp.self_declared:
        if guess_matches(imp.word_guess, majority_word):
            return fixed("impostor_guess_correct")
        return fixed("impostor_guess_wrong")
    if on_imp >= 2:
        return fixed("conviction")
    votes_imp = sum(1 for v in valid if v == impostor_seat)
    if votes_imp > others:
        return fixed("strict_plurality")
    if k >= 2:
        in_tie = impostor_seat in tied
        p_cand = (1.0 - 1.0 / k) if in_tie else 1.0
        p_side = 0.5
        live: Side = "impostor"
        if tie_rule != "default":
            if rng is None:
                raise ValueError("symmetric tie rules need a seeded rng")
            if tie_rule == "sym_candidate":
                eliminated = rng.choice(sorted(tied))
                live = "majority" if eliminated == impostor_seat else "impostor"
            else:
                live = "majority" if rng.random() < 0.5 else "impostor"
        return Outcome(winner=WINNER_OF["tie"], win_condition="tie", winner_live=live, tie_rule=tie_rule, tie_k=k,
                       impostor_in_tie=in_tie, p_imp_default=1.0, p_imp_sym_candidate=p_cand,
                       p_imp_sym_side=p_side, votes_on_impostor=on_imp, n_valid_votes=len(valid))
    return fixed("no_conviction")
