"""The one decider of a round, for the paper's game and for longer ones.

The paper's game (Appendix A.1/A.3, tie rules of Appendix F) is the one-round case:
with ``max_rounds == 1`` a round is decided by conviction, strict plurality, a top
tie or no conviction; with more rounds (Appendix O.3) a round eliminates the unique
top of the counted votes and the game ends when the impostor is out, two players are
left or the rounds run out.  Self-declarations are decided first in both.  Pure
functions over ballots; no model calls, no Inspect.  The order in which the rules
are checked is a documented choice (docs/rules.md, "Winner logic" and "Multi-round games").
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Mapping, Optional, Sequence, Union, cast

from impostor_bench.core.descriptions import plural_forms
from impostor_bench.core.glyphs import readings
from impostor_bench.core.group import MAX_PLAYERS, conviction_threshold, group_problem
from impostor_bench.core.inflections import guess_forms
from impostor_bench.core.languages import DEFAULT_LANGUAGE, language_of
from impostor_bench.core.records import N_SEATS, TIE_RULES, WINNER_OF, Side, TieRule, WinCondition
from impostor_bench.core.schedule import derive_seed


@dataclass(frozen=True)
class Ballot:
    """One seat's vote. ``vote`` is the seat voted for, None when the ballot is invalid."""

    vote: Optional[int]
    self_declared: bool = False
    word_guess: Optional[str] = None


@dataclass(frozen=True)
class RoundResult:
    """What one round decided; the solver stores it and the scorer reads it (no second decision).

    ``winner`` is None while the game goes on.  In the paper's game it is the winner under
    the default rule and ``winner_live`` the winner under the rule played (a symmetric rule
    may change a top tie's); ``winner_live_by_rule`` holds the live winner under every rule,
    each drawn from its own seed, so a log re-scores under another rule without drawing.
    """

    round: int
    remaining: tuple[int, ...]  # seats in the game at the round's start
    eliminated: Optional[int]  # the seat voted out (longer games only; None: nobody)
    winner: Optional[Side]
    win_condition: Optional[WinCondition]
    winner_live: Optional[Side]
    tie_rule: TieRule
    votes: Mapping[int, int]  # seat -> votes received
    tie_k: int  # seats tied at the top (0 = no top tie)
    impostor_in_tie: bool
    votes_on_impostor: int  # from seats other than the impostor's
    n_valid_votes: int
    p_imp_default: Optional[float] = None  # P(impostor wins) under each rule, from these ballots (None: goes on)
    p_imp_sym_candidate: Optional[float] = None
    p_imp_sym_side: Optional[float] = None
    winner_live_by_rule: Mapping[str, Side] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (seat keys as strings, as JSON keeps them)."""
        d = asdict(self)
        d["votes"] = {str(s): n for s, n in self.votes.items()}
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RoundResult":
        return cls(**{**d, "remaining": tuple(d["remaining"]),
                      "votes": {int(s): n for s, n in d["votes"].items()},
                      "winner_live_by_rule": dict(d.get("winner_live_by_rule") or {})})


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


def guess_matches(guess: Optional[str], majority_word: str, language: str = DEFAULT_LANGUAGE) -> bool:
    """A guess is correct if, read as the leak rule reads text (``glyphs.readings``: fullwidth
    ``ｃａｔ``, ``café``, a Cyrillic look-alike read as the letters they show) and normalised, it
    is the majority word or one of its regular plurals (``descriptions.plural_forms``: ``dogs``,
    ``berries``, ``tomatoes``, ``wolves``).  Nothing is ever taken off the majority word, so
    ``cactu`` is not ``cactus`` (docs/rules.md, "Guess matching").  In Spanish and German the
    forms are that language's (``inflections.guess_forms``: ``gatas`` for ``gato``, ``Äpfel``
    or ``Aepfel`` for ``Apfel``) and so is the leading article (``el gato``, ``die Katze``)."""
    if guess is None:
        return False
    if language != DEFAULT_LANGUAGE:
        article = re.compile(rf"^(?:{'|'.join(language_of(language).articles)})\s+")
        forms = guess_forms(majority_word, language)
        return any(_EDGE_PUNCT.sub("", article.sub("", normalize_guess(reading))) in forms
                   for reading in readings(str(guess)))
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


def counted_vote(vote: Optional[int], voter: int, remaining: Sequence[int]) -> Optional[int]:
    """The vote as counted in a round: a vote for oneself or an eliminated seat counts as none."""
    if vote is None or vote == voter or vote not in remaining:
        return None
    return vote


def decide_round(ballots: Mapping[int, Ballot], remaining: Sequence[int], impostor_seat: Union[int, Sequence[int]],
                 majority_word: str,
                 *, round_no: int = 1, max_rounds: int = 1, tie_rule: str = "default",
                 rng: Optional[random.Random] = None, language: str = DEFAULT_LANGUAGE) -> RoundResult:
    """Decide one round from the remaining seats' ballots (``ballots``: seat -> Ballot).

    Order (docs/rules.md): a non-impostor's self-declaration (majority wins); the
    impostor's (its guess decides).  Then, in the paper's game (``max_rounds == 1``):
    conviction (an impostor named by a strict majority of the majority players: 2 of 3 in the
    paper's game; several impostors are one side, docs/rules.md "Group size"); strict plurality
    (an impostor has more votes than all others combined); a top tie; otherwise no conviction; only the
    last two are impostor wins and only a top tie is touched by the symmetric rules
    (``rng`` draws the seat a ``sym_candidate`` tie eliminates, or ``sym_side``'s coin).
    In a longer game: the unique top of the counted votes is eliminated; a top tie
    eliminates nobody under the default rule, a drawn tied seat under ``sym_candidate``,
    and under ``sym_side`` a fair coin picks the side that loses a seat among the tied (the
    impostor if tied, else a drawn tied seat); then the impostor out -> majority wins, two
    players left -> impostor wins, the last round -> impostor wins.
    """
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {TIE_RULES}, got {tie_rule!r}")
    rule = cast(TieRule, tie_rule)
    remaining = tuple(sorted(remaining))
    if set(ballots) != set(remaining):
        raise ValueError(f"a round needs one ballot per remaining seat {remaining}, got seats {sorted(ballots)}")
    imps = impostor_seat_set(impostor_seat)
    if not imps <= set(remaining):
        raise ValueError(f"the impostor (seat {impostor_seat}) is not among the remaining seats {remaining}")
    one_round = max_rounds == 1
    if not one_round and len(imps) != 1:
        raise ValueError(f"a game of more than one round has one impostor; got impostor seats {sorted(imps)}")
    if not isinstance(impostor_seat, int):  # one impostor given as a list
        impostor_seat = min(imps)
    # The paper's game counts the ballots as cast (the parser already records a self-vote as
    # no vote); a longer game also drops votes for seats voted out.
    votes = {seat: b.vote if one_round else counted_vote(b.vote, seat, remaining) for seat, b in ballots.items()}
    counts = Counter(v for v in votes.values() if v is not None)
    top = max(counts.values(), default=0)
    tied = sorted(s for s, c in counts.items() if c == top) if top else []
    k = len(tied) if len(tied) >= 2 else 0
    in_tie = k > 0 and bool(imps & set(tied))
    on_imp = sum(1 for seat, v in votes.items() if v in imps and seat not in imps)
    n_valid = sum(counts.values())

    def result(condition: Optional[WinCondition], *, eliminated: Optional[int] = None,
               live: Optional[Side] = None, p_candidate: Optional[float] = None,
               p_side: Optional[float] = None) -> RoundResult:
        winner = None if condition is None else WINNER_OF[condition]
        p = None if winner is None else (1.0 if winner == "impostor" else 0.0)
        return RoundResult(round_no, remaining, eliminated, winner, condition, live or winner, rule, dict(counts), k,
                           in_tie, on_imp, n_valid, p, p if p_candidate is None else p_candidate,
                           p if p_side is None else p_side)

    def draw() -> random.Random:
        if rng is None:
            raise ValueError("symmetric tie rules need a seeded rng")
        return rng

    if any(b.self_declared for seat, b in ballots.items() if seat not in imps):
        return result("majority_self_declared")
    declared = [ballots[s] for s in sorted(imps) if ballots[s].self_declared]
    if declared:  # with several impostors, every declared one must guess right
        if all(guess_matches(b.word_guess, majority_word, language) for b in declared):
            return result("impostor_guess_correct")
        return result("impostor_guess_wrong")
    if one_round:
        # a conviction: some impostor named by a strict majority of the majority players (2 of 3 in the paper's game)
        on_seat = Counter(v for seat, v in votes.items() if v in imps and seat not in imps)
        if on_seat and max(on_seat.values()) >= conviction_threshold(len(remaining), len(imps)):
            return result("conviction")
        if any(counts[s] > n_valid - counts[s] for s in imps):
            return result("strict_plurality")
        if not k:
            return result("no_conviction")
        live: Side = "impostor"
        if rule == "sym_candidate":
            live = "majority" if draw().choice(tied) in imps else "impostor"
        elif rule == "sym_side":
            live = "majority" if draw().random() < 0.5 else "impostor"
        return result("tie", live=live, p_candidate=1.0 - len(imps & set(tied)) / k, p_side=0.5)
    eliminated: Optional[int] = tied[0] if len(tied) == 1 else None
    if k and rule != "default":
        drawn = draw()
        if rule == "sym_candidate":
            eliminated = drawn.choice(tied)
        else:
            impostor_side = drawn.random() < 0.5
            if in_tie and impostor_side:
                eliminated = impostor_seat
            else:
                eliminated = drawn.choice([s for s in tied if s != impostor_seat])
    if eliminated == impostor_seat:
        return result("eliminated", eliminated=eliminated)
    if len(remaining) - (eliminated is not None) <= 2:
        return result("two_left", eliminated=eliminated)
    if round_no >= max_rounds:
        return result("rounds_exhausted", eliminated=eliminated)
    return result(None, eliminated=eliminated)


def decide(ballots: Sequence[Ballot], impostor_seat: Union[int, Sequence[int]], majority_word: str, *, tie_rule: str = "default",
           rng: Optional[random.Random] = None, language: str = DEFAULT_LANGUAGE) -> RoundResult:
    """A one-round game decided from its ballots (index = seat; four in the paper's game, one per player):
    :func:`decide_round` of its one round; ``impostor_seat`` is one seat, or every impostor's seat."""
    imps = impostor_seat_set(impostor_seat)
    if group_problem(len(ballots), len(imps)) or not all(0 <= s < len(ballots) for s in imps):
        raise ValueError(f"a game has one ballot per player ({N_SEATS} ballots in the paper's game, at most "
                         f"{MAX_PLAYERS}) and a minority of impostor seats among them; got {len(ballots)} ballots "
                         f"and impostor seats {sorted(imps)}")
    return decide_round(dict(enumerate(ballots)), range(len(ballots)), impostor_seat, majority_word,
                        tie_rule=tie_rule, rng=rng, language=language)


def tie_draw(game_seed: Optional[int], tie_rule: str, round_no: int, max_rounds: int) -> Optional[random.Random]:
    """The seeded generator of a round's symmetric tie draw (None under the default rule, which draws
    nothing): the paper's game draws from the game's seed, a longer game's rounds each from their own."""
    if tie_rule == "default":
        return None
    parts: tuple = ("tie_rule", tie_rule) if max_rounds == 1 else ("tie_rule", tie_rule, "round", round_no)
    return random.Random(derive_seed(game_seed, *parts))


def decide_played_round(ballots: Mapping[int, Ballot], remaining: Sequence[int],
                        impostor_seat: Union[int, Sequence[int]],
                        majority_word: str, *, round_no: int, max_rounds: int, tie_rule: str,
                        game_seed: Optional[int], language: str = DEFAULT_LANGUAGE) -> RoundResult:
    """A played round decided once, with the game's seeded tie draws (:func:`tie_draw`).

    In the paper's game the result also holds the live winner under every tie rule (the
    default's and each symmetric rule's own draw), so ``inspect score`` can re-score the
    log under another rule from what was decided.  A longer game's later rounds depend on
    the rule played, so only its result is kept.
    """
    def under(rule: str) -> RoundResult:
        return decide_round(ballots, remaining, impostor_seat, majority_word, round_no=round_no,
                            max_rounds=max_rounds, tie_rule=rule, rng=tie_draw(game_seed, rule, round_no, max_rounds),
                            language=language)

    played = under(tie_rule)
    if max_rounds != 1:
        return played
    by_rule = {rule: played.winner_live if rule == tie_rule else under(rule).winner_live for rule in TIE_RULES}
    return replace(played, winner_live_by_rule=cast(dict[str, Side], by_rule))
