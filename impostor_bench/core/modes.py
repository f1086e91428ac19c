"""What each game mode is, defined once: its model roles, its teams, what teammates see.

The task, the seating, the prompts, the experiment identity and the sweep read a mode's
facts from :data:`MODE_SPECS` instead of branching on mode names (A.3; docs/rules.md).

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Sequence

from impostor_bench.core.records import MODES, N_SEATS, TEAM_MODES

#: The role of every seat of a homogeneous game (its one model is Inspect's ``--model``).
ALL_SEATS_ROLE = "model"


@dataclass(frozen=True)
class ModeSpec:
    """One mode: which model roles seat its players and what a player is told of its team."""

    name: str
    roles: tuple[str, ...]  # Inspect model roles of its two models; () = ``--model`` plays every seat
    role_labels: tuple[str, ...]  # each role's short name in an experiment id ("imp=a,maj=b", "A=x,B=y")
    seats_by: Literal["all", "side", "team"]  # roles[0] seats: every seat | the impostor | team A
    teammate_view: Literal["none", "named", "unnamed"]  # told nothing | the teammate's number | only that a team exists
    sweep_pairs: Literal["each", "ordered", "unordered"]  # a sweep's experiments: each model | model pairs
    label: str  # its name in tables and figures ("cross-play")
    colour: str  # its colour in the figures

    @property
    def teams(self) -> bool:
        return self.seats_by == "team"

    @property
    def display_role(self) -> Optional[str]:
        """The role that stands for the eval's ``--model`` when the task binds the roles itself."""
        return self.roles[-1] if self.seats_by == "side" else (self.roles[0] if self.roles else None)

    def seat_roles(self, impostor_seat: int, team_assignment: Optional[Sequence[str]] = None, *,
                   players: int = N_SEATS, impostor_seats: Optional[Sequence[int]] = None) -> list[str]:
        """The model role of each of the ``players`` seats (``model`` in homogeneous games); in
        cross-play every impostor seat (``impostor_seats``, else ``impostor_seat``) is the impostor role's."""
        if self.seats_by == "all":
            return [ALL_SEATS_ROLE] * players
        if self.seats_by == "side":
            imps = set(impostor_seats) if impostor_seats else {impostor_seat}
            return [self.roles[0] if s in imps else self.roles[1] for s in range(players)]
        if team_assignment is None:
            raise ValueError(f"mode {self.name!r} needs a team assignment")
        return [self.roles[0] if t == "A" else self.roles[1] for t in team_assignment]


_TEAMMATE_VIEW = {"team_blind": "none", "team_aware": "named", "team_semi_aware": "unnamed"}
_TEAM_COLOUR = {"team_blind": "#55A868", "team_aware": "#C44E52", "team_semi_aware": "#8172B3"}

MODE_SPECS: dict[str, ModeSpec] = {
    "homogeneous": ModeSpec("homogeneous", (), (), "all", "none", "each", "homogeneous", "#4C72B0"),
    "cross_play": ModeSpec("cross_play", ("impostor", "majority"), ("imp", "maj"), "side", "none", "ordered",
                           "cross-play", "#DD8452"),
    **{m: ModeSpec(m, ("team_a", "team_b"), ("A", "B"), "team", _TEAMMATE_VIEW[m], "unordered",  # type: ignore[arg-type]
                   m.replace("_", "-"), _TEAM_COLOUR[m])
       for m in TEAM_MODES},
}
assert tuple(MODE_SPECS) == MODES, "every mode of records.MODES needs a ModeSpec, in that order"
assert tuple(m for m, s in MODE_SPECS.items() if s.teams) == TEAM_MODES, "records.TEAM_MODES: the modes seated by team"

#: Each mode's label and colour (tables and figures).
MODE_LABEL: dict[str, str] = {m: s.label for m, s in MODE_SPECS.items()}
MODE_COLOUR: dict[str, str] = {m: s.colour for m, s in MODE_SPECS.items()}
#: The team modes from the least to the most the players are told of their team (figures' order).
TEAM_MODES_BY_DISCLOSURE: tuple[str, ...] = tuple(
    sorted(TEAM_MODES, key=lambda m: ("none", "unnamed", "named").index(MODE_SPECS[m].teammate_view)))

#: Inspect model roles the game uses (every mode's, in first use order).
GAME_ROLES = tuple(dict.fromkeys(r for s in MODE_SPECS.values() for r in s.roles))


def mode_spec(mode: str) -> ModeSpec:
    try:
        return MODE_SPECS[mode]
    except KeyError:
        raise ValueError(f"unknown mode {mode!r}; the modes are {', '.join(MODES)}") from None
