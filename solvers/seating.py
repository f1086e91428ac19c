"""Which model plays which seat: modes mapped onto Inspect model roles (A.3)."""

from __future__ import annotations

import functools
import weakref
from typing import Optional

from inspect_ai.model import Model, get_model, model_roles

from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.experiment import ALL_SEATS, GAME_ROLES, MODE_ROLES, identity_of
from impostor_bench.core.options import GameOptions
from impostor_bench.core.modes import ALL_SEATS_ROLE, mode_spec


def check_roles(mode: str, defined: set[str]) -> None:
    """Refuse role/mode combinations that cannot describe the experiment."""
    _check_roles(mode, frozenset(defined))


@functools.lru_cache(maxsize=64)  # every phase of every game checks the eval's same roles: once per set
def _check_roles(mode: str, defined: frozenset[str]) -> None:
    wanted = MODE_ROLES[mode]
    unknown = sorted(defined - set(GAME_ROLES))
    if unknown:
        flags = " ".join(f"--model-role {r}=..." for r in unknown)
        uses = ", ".join(f"{m}: {' and '.join(r) or 'only --model'}" for m, r in MODE_ROLES.items())
        raise ImpostorError(f"unknown model role(s) {flags}; the game's roles per mode are {uses}")
    stray = sorted((defined & set(GAME_ROLES)) - set(wanted))
    if stray:
        flags = " ".join(f"--model-role {r}=..." for r in stray)
        need = " and ".join(f"--model-role {r}=..." for r in wanted) or "only --model"
        raise ImpostorError(
            f"mode {mode!r} does not use {flags}; it takes {need}. "
            f"Drop the stray role(s) or pick the mode that uses them (-T mode=...)."
        )
    if wanted and not (defined & set(wanted)):
        a, b = wanted
        raise ImpostorError(
            f"mode {mode!r} needs a second model: pass --model-role {a}=<model> and/or "
            f"--model-role {b}=<model> (a missing one falls back to --model)."
        )


def seat_models(mode: str, impostor_seat: int, team_assignment: tuple[str, ...] | None, *, players: int = 4,
                impostor_seats: Optional[tuple[int, ...]] = None) -> list[Model]:
    """The model of each seat (0-3 in the paper's game).  In cross-play and team modes one missing role
    falls back to ``--model``; both missing is an error naming the roles."""
    check_roles(mode, set(model_roles()))
    spec = mode_spec(mode)
    if spec.teams and team_assignment is None:
        raise ImpostorError(f"mode {mode!r} needs a team assignment for every game")
    by_role = {role: get_model(role=role) for role in spec.roles} or {ALL_SEATS_ROLE: get_model()}
    return [by_role[role] for role in spec.seat_roles(impostor_seat, team_assignment, players=players,
                                                      impostor_seats=impostor_seats)]


_NAMES: "weakref.WeakKeyDictionary[Model, str]" = weakref.WeakKeyDictionary()


def model_name(model: Model) -> str:
    """The model's provider/name string, as recorded in the tables (``str(model)`` builds a
    ``ModelName`` each time; a game asks ~17 times, of the same few models)."""
    name = _NAMES.get(model)
    if name is None:
        name = _NAMES[model] = str(model)
    return name


def live_assignment(mode: str) -> dict[str, str]:
    """The model string of each role of ``mode`` in this eval (missing roles: ``--model``)."""
    return {role: model_name(get_model(role=role)) for role in mode_spec(mode).roles} or {ALL_SEATS: model_name(get_model())}


def experiment_id_for(options: GameOptions) -> str:
    """This eval's experiment identity: its options with the models it plays (``core.experiment.identity_of``)."""
    return identity_of(options.model_dump(), live_assignment(options.mode))
