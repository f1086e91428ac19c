"""An experiment's identity and which model plays which role: defined once, here.

An *experiment* is one (mode, difficulty, model assignment, seed) cell of the design.
Its identity string names it in the tables (``experiment_id``) and seeds every draw
that the design makes per game of each experiment (speaking order, generation seeds),
so two experiments of the same cell never share those draws, while the same config
and seed give identical games on any machine.  The task solver (live models), the
exporter and tracker (log headers) and the sweep (config aliases) all call
:func:`experiment_id` with the role → model mapping they hold.

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

from typing import Mapping, Optional

from impostor.core.records import TEAM_MODES

#: Inspect model roles the game uses; ``homogeneous`` uses ``--model`` alone.
GAME_ROLES = ("impostor", "majority", "team_a", "team_b")

#: Mode → the model roles that seat its players.
MODE_ROLES: dict[str, tuple[str, ...]] = {
    "homogeneous": (),
    "cross_play": ("impostor", "majority"),
    **{mode: ("team_a", "team_b") for mode in TEAM_MODES},
}

#: The key of the single model in a homogeneous experiment's assignment (also the
#: MLflow param ``model.all``).
ALL_SEATS = "all"


def role_models(mode: str, default_model: str, roles: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The model of each role of ``mode``; a role that is not given falls back to ``default_model``
    (Inspect's ``--model``), as the seating does.  Homogeneous: ``{"all": default_model}``."""
    roles = roles or {}
    wanted = MODE_ROLES[mode]
    if not wanted:
        return {ALL_SEATS: default_model}
    return {role: roles.get(role) or default_model for role in wanted}


def assignment_label(mode: str, assignment: Mapping[str, str]) -> str:
    """Who plays which role, e.g. ``imp=bot/random,maj=bot/embedding`` or ``A=x,B=y``."""
    if mode == "homogeneous":
        return assignment[ALL_SEATS]
    if mode == "cross_play":
        return f"imp={assignment['impostor']},maj={assignment['majority']}"
    return f"A={assignment['team_a']},B={assignment['team_b']}"


def experiment_id(mode: str, difficulty: str, assignment: Mapping[str, str], seed: int, rounds: int = 1,
                  private_notes: bool = False) -> str:
    """The experiment's identity, e.g. ``cross_play|easy|imp=a,maj=b|s0``; a multi-round game adds
    its rounds (``|r3``, ``|r3n`` with private notes), so the paper's game keeps its identity."""
    base = f"{mode}|{difficulty}|{assignment_label(mode, assignment)}|s{seed}"
    return base if rounds == 1 else f"{base}|r{rounds}{'n' if private_notes else ''}"


def side_models(mode: str, assignment: Mapping[str, str]) -> dict[str, list[str]]:
    """The models that play each side of the game in an experiment, whatever the mode:
    ``{"impostor": [...], "majority": [...]}`` (sorted, distinct).  Homogeneous: the one
    model on both sides; cross-play: its two roles; team modes: both team models on both
    sides, since the impostor's team alternates by game (A.3).  The MLflow tags
    ``impostor.impostor_model`` / ``impostor.majority_model`` are these lists, so runs of
    every mode group by model (docs/tracking.md)."""
    if mode == "homogeneous":
        both = [assignment[ALL_SEATS]]
        return {"impostor": both, "majority": both}
    if mode == "cross_play":
        return {"impostor": [assignment["impostor"]], "majority": [assignment["majority"]]}
    teams = sorted({assignment["team_a"], assignment["team_b"]})
    return {"impostor": teams, "majority": teams}
