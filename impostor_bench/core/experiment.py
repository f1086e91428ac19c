"""An experiment's identity and which model plays which role: defined once, here.

An *experiment* is one (mode, difficulty, model assignment, seed) cell of the design.
Its identity string names it in the tables (``experiment_id``) and seeds every draw
that the design makes per game of each experiment (speaking order, generation seeds),
so two experiments of the same cell never share those draws, while the same config
and seed give identical games on any machine.  The task solver (live models), the
exporter (log headers) and the sweep (config aliases, and its resume key) all call
:func:`identity_of` with the options they hold and the role → model mapping they hold,
so an axis added to the identity reaches every one of them.

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from impostor_bench.core.modes import GAME_ROLES, MODE_SPECS, mode_spec
from impostor_bench.core.options import GameOptions

__all__ = ["GAME_ROLES", "MODE_ROLES", "ALL_SEATS", "role_models", "assignment_label", "experiment_id", "with_ablations",
           "identity_of", "side_models"]

#: Mode → the model roles that seat its players (``impostor_bench.core.modes``); ``homogeneous`` uses ``--model`` alone.
MODE_ROLES: dict[str, tuple[str, ...]] = {mode: spec.roles for mode, spec in MODE_SPECS.items()}

#: The key of the single model in a homogeneous experiment's assignment (also the
#: MLflow param ``model.all``).
ALL_SEATS = "all"


def role_models(mode: str, default_model: str, roles: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The model of each role of ``mode``; a role that is not given falls back to ``default_model``
    (Inspect's ``--model``), as the seating does.  Homogeneous: ``{"all": default_model}``."""
    roles = roles or {}
    wanted = mode_spec(mode).roles
    if not wanted:
        return {ALL_SEATS: default_model}
    return {role: roles.get(role) or default_model for role in wanted}


def assignment_label(mode: str, assignment: Mapping[str, str]) -> str:
    """Who plays which role, e.g. ``imp=bot/random,maj=bot/embedding`` or ``A=x,B=y``."""
    spec = mode_spec(mode)
    if not spec.roles:
        return assignment[ALL_SEATS]
    return ",".join(f"{label}={assignment[role]}" for role, label in zip(spec.roles, spec.role_labels))


def experiment_id(mode: str, difficulty: str, assignment: Mapping[str, str], seed: int, rounds: int = 1,
                  private_notes: bool = False, *, players: int = 4, impostors: int = 1, language: str = "en") -> str:
    """The experiment's identity, e.g. ``cross_play|easy|imp=a,maj=b|s0``; a multi-round game adds
    its rounds (``|r3``, ``|r3n`` with private notes), a group other than four players with one
    impostor its size (``|p6k2``) and a language other than English its code (``|es``), so the
    paper's game keeps its identity."""
    base = f"{mode}|{difficulty}|{assignment_label(mode, assignment)}|s{seed}"
    if rounds != 1:
        base = f"{base}|r{rounds}{'n' if private_notes else ''}"
    if (players, impostors) != (4, 1):
        base = f"{base}|p{players}k{impostors}"
    return base if language == "en" else f"{base}|{language}"


ABLATION_OPTIONS = ("temperature", "top_p", "length_budget", "truncate_to")


def ablations_of(options: Mapping[str, Any]) -> dict[str, Any]:
    """The :func:`with_ablations` settings held by task arguments or task metadata (absent: unset)."""
    return {k: options.get(k) for k in ABLATION_OPTIONS}


def with_ablations(identity: str, *, temperature: Optional[float] = None, top_p: Optional[float] = None,
                   length_budget: Optional[int] = None, truncate_to: Optional[int] = None) -> str:
    """``identity`` with the length and decoding settings that were set (``|T0.3|P0.9``,
    ``|L200``, ``|C180``): experiments of a ``decoding:`` or length axis differ only there, and need
    their own identities (tables, draws).  Unset, the identity is unchanged."""
    parts = [f"T{temperature:g}" if temperature is not None else "", f"P{top_p:g}" if top_p is not None else "",
             f"L{length_budget}" if length_budget is not None else "",
             f"C{truncate_to}" if truncate_to is not None else ""]
    return "|".join([identity, *(p for p in parts if p)])


#: The options that name an experiment besides its models and :data:`ABLATION_OPTIONS`, in
#: :func:`experiment_id`'s order.
IDENTITY_OPTIONS = ("mode", "difficulty", "seed", "rounds", "private_notes", "players", "impostors", "language")


def identity_of(options: Mapping[str, Any], assignment: Mapping[str, str]) -> str:
    """The experiment's full identity: :func:`experiment_id` with its length and decoding settings
    (:func:`with_ablations`), from an options mapping (task arguments, task metadata, a
    ``GameOptions`` dump, a sweep's experiment).  An option absent or None is its ``GameOptions``
    default, so task arguments that leave defaults out (older logs) name the same experiment."""
    o = {k: GameOptions.model_fields[k].default if options.get(k) is None else options[k] for k in IDENTITY_OPTIONS}
    base = experiment_id(o["mode"], o["difficulty"], assignment, o["seed"], int(o["rounds"]), bool(o["private_notes"]),
                         players=int(o["players"]), impostors=int(o["impostors"]), language=str(o["language"]))
    return with_ablations(base, **ablations_of(options))


def side_models(mode: str, assignment: Mapping[str, str]) -> dict[str, list[str]]:
    """The models that play each side of the game in an experiment, whatever the mode:
    ``{"impostor": [...], "majority": [...]}`` (sorted, distinct).  Homogeneous: the one
    model on both sides; cross-play: its two roles; team modes: both team models on both
    sides, since the impostor's team alternates by game (A.3).  The MLflow tags
    ``impostor.impostor_model`` / ``impostor.majority_model`` are these lists, so runs of
    every mode group by model (docs/tracking.md)."""
    spec = mode_spec(mode)
    if not spec.roles:
        both = [assignment[ALL_SEATS]]
        return {"impostor": both, "majority": both}
    if spec.seats_by == "side":  # roles[0] plays the impostor, roles[1] the majority
        return {"impostor": [assignment[spec.roles[0]]], "majority": [assignment[spec.roles[1]]]}
    teams = sorted({assignment[role] for role in spec.roles})
    return {"impostor": teams, "majority": teams}
