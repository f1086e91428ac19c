"""The task's ``models`` option: registry aliases (or model strings) bound to the game's roles.

``-T models=gpt-4o`` (homogeneous) or ``-T 'models={impostor: gpt-4o, majority: claude-sonnet-4}'``
binds each role to a model the task builds itself, so an alias brings everything the
registry says about it: its model string, its ``model_args`` (Inspect ``-M``) and its
``defaults`` (temperature, max_tokens, vote_temperature), which the solvers apply per
seat below an explicit -T option (``impostor_bench.core.generation``).  Sweeps pass their models
this way.  Roles not named here come from ``--model`` / ``--model-role`` as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from inspect_ai.model import Model, get_model

from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.modes import ALL_SEATS_ROLE, mode_spec


@dataclass
class BoundModels:
    """What ``models`` binds: Inspect models per role and the alias facts the record keeps."""

    model: Optional[Model] = None  # the task's default model (the eval's --model otherwise)
    roles: dict[str, Model] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # role -> name as given (alias or model string)
    defaults: dict[str, dict[str, Any]] = field(default_factory=dict)  # role -> alias defaults


def parse_models(models: Any, mode: str) -> dict[str, str]:
    """``models`` as role -> name: a single name plays every seat of a homogeneous game."""
    if models is None or models == "" or models == {}:
        return {}
    roles = mode_spec(mode).roles or (ALL_SEATS_ROLE,)
    if isinstance(models, str):
        if mode_spec(mode).roles:
            raise ImpostorError(f"-T models={models!r}: mode {mode!r} has roles {', '.join(roles)}; fix: name "
                                f"each, e.g. -T 'models={{{roles[0]}: gpt-4o, {roles[1]}: claude-sonnet-4}}'")
        return {ALL_SEATS_ROLE: models.strip()}
    if not isinstance(models, dict):
        raise ImpostorError(f"-T models: expected a model name or a mapping role -> name, got "
                            f"{type(models).__name__}; fix: e.g. -T 'models={{{roles[0]}: gpt-4o}}'")
    stray = sorted(set(map(str, models)) - set(roles))
    if stray:
        raise ImpostorError(f"-T models: role(s) {', '.join(stray)} are not roles of mode {mode!r}; "
                            f"fix: use {', '.join(roles)}")
    return {str(k): str(v).strip() for k, v in models.items()}


def model_named(name: str, where: str, **model_args: Any) -> Model:
    """The Inspect model of ``name``: a registry alias built with its model_args (``model_args``
    over them), or an Inspect model string; an unknown bare name, provider or key is one line
    starting with ``where``.  Inspect's own ``get_model`` takes model strings only: the aliases
    are the package's, resolved where it reads a model name (docs/models.md)."""
    from impostor_bench.registry import load_registry

    registry = load_registry()
    string = registry.resolve(name)  # an unknown bare name: one line with the closest aliases
    entry = registry.entries.get(name)
    args = (dict(entry.model_args) if entry else {}) | model_args
    try:
        return get_model(string, **args)
    except ImpostorError:
        raise
    except Exception as exc:  # noqa: BLE001 - unknown provider, missing key or package: the user's to fix
        from impostor_bench.preflight import problem_of

        raise ImpostorError(f"{where}: {problem_of(name, string, exc)}") from None


def bind_models(models: Any, mode: str) -> BoundModels:
    """Build the Inspect model of every named role (registry aliases with their model_args)."""
    names = parse_models(models, mode)
    out = BoundModels(names=names)
    if not names:
        return out
    from impostor_bench.registry import load_registry

    registry = load_registry()
    for role, name in names.items():
        entry = registry.entries.get(name)
        out.defaults[role] = entry.defaults.model_dump(exclude_none=True) if entry else {}
        model = model_named(name, f"-T models ({role})")
        if role == ALL_SEATS_ROLE:
            out.model = model
        else:
            out.roles[role] = model
    if out.model is None and out.roles:  # the role a sweep always took as the eval's --model
        out.model = out.roles.get(mode_spec(mode).display_role or "")
    return out
