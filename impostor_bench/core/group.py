"""Group size: how many players a game seats and how many of them are impostors.

The paper's game has four players and one impostor (A.1).  ``-T players=N`` and
``-T impostors=K`` generalise it (docs/rules.md, "Group size"); every count the rules,
prompts and schedules need is defined here once, so ``players=4, impostors=1`` gives the
paper's numbers (a conviction needs 2 of the 3 majority votes).

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

from typing import Optional

#: The paper's game (A.1): the defaults of ``-T players`` and ``-T impostors``.
PAPER_PLAYERS = 4
PAPER_IMPOSTORS = 1
#: Group sizes a game may have.  Four is the paper's; eight keeps a seat one digit in the
#: tables' seat strings (``speaking_order`` "20315746") and a prompt's player list short.
MIN_PLAYERS = 4
MAX_PLAYERS = 8


def max_impostors(players: int) -> int:
    """The most impostors ``players`` seats allow, a strict minority: four players allow one,
    five or six two, seven or eight three."""
    return (players - 1) // 2


def conviction_threshold(players: int, impostors: int = PAPER_IMPOSTORS) -> int:
    """Non-impostor votes on one impostor that convict it: a strict majority of the majority
    players.  The paper's "at least two non-impostor players" is 2 of its 3 majority players;
    a fixed two would let two of seven majority players convict against five, so the
    generalisation keeps the share, not the count."""
    return (players - impostors) // 2 + 1


def group_problem(players: int, impostors: int) -> Optional[str]:
    """Why (``players``, ``impostors``) is not a game, as ``option: problem; fix: ...``, or None."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        return (f"players={players} is out of range; fix: use {MIN_PLAYERS} to {MAX_PLAYERS} players "
                f"(the paper's game has {PAPER_PLAYERS})")
    top = max_impostors(players)
    if not 1 <= impostors <= top:
        allowed = "impostors=1" if top == 1 else f"1 to {top} impostors"
        return (f"impostors={impostors} is not a minority of {players} players; fix: use {allowed} with "
                f"players={players}, or players={2 * impostors + 1} or more" if impostors > top else
                f"impostors={impostors} is out of range; fix: use {allowed} with players={players}")
    return None


def is_paper_group(players: int, impostors: int) -> bool:
    """Whether this is the paper's four-player, one-impostor game."""
    return players == PAPER_PLAYERS and impostors == PAPER_IMPOSTORS
