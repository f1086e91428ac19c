"""Everything impostor-bench needs from Inspect beyond its public API, in one place.

Each item says why the public API does not do, so an Inspect upgrade has one file to
check (``tests/test_layering.py`` keeps private imports out of every other module;
the bad-input suite checks the behaviour through the real ``inspect eval``).
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Optional

# ``inspect eval`` prints a PrerequisiteError as its message alone, any other exception
# from building a task with a long traceback; Inspect exports no public equivalent.
from inspect_ai._util.error import PrerequisiteError

# The eval's generate config (the task's GenerateConfig under the command line's): Inspect
# gives a model role only part of it (not ``attempt_timeout``), so impostor_bench.solvers.vote_format passes
# that per call; Inspect exports no public getter.
from inspect_ai.model._generate_config import active_generate_config

# ``get_model_info("bot/script")`` (Inspect calls it with a model event's model name, e.g. for
# each generate's usage update) builds the provider once more from its bare name, with this
# placeholder key and without the model args the run gave it; Inspect exports no public way
# to tell that construction from a real one.
from inspect_ai.model._model_info import MODEL_INFO_LOOKUP_API_KEY

from impostor_bench.core.errors import ImpostorError

__all__ = [
    "PrerequisiteError", "UserInputError", "active_generate_config", "building_task_for_eval", "cache_package_scan",
    "eval_models", "installed_package_name", "is_model_info_lookup", "refuse_unbounded_task_args", "release_finished_eval",
]

#: The most values, and levels, one ``-T`` value may hold (aliases counted as used).
MAX_TASK_ARG_VALUES = 10_000
MAX_TASK_ARG_DEPTH = 32


def eval_models() -> dict[str, object]:
    """The models of the eval being set up, by where they were given (``--model``, each
    ``--model-role``): while Inspect builds the task the active model is set but Inspect
    exports no getter for it (``get_model()`` would create a default one)."""
    from inspect_ai.model import model_roles
    from inspect_ai.model._model import active_model

    out: dict[str, object] = {}
    model = active_model()
    if model is not None:
        out["--model"] = model
    for role, models in model_roles().items():
        for m in models if isinstance(models, list) else [models]:
            out[f"--model-role {role}"] = m
    return out


def is_model_info_lookup(api_key: object) -> bool:
    """Whether a provider is being built only so that Inspect can look up its model info."""
    return api_key == MODEL_INFO_LOOKUP_API_KEY


class UserInputError(ImpostorError, PrerequisiteError):
    """A bad option, role, model arg or file (an ImpostorError) that ``inspect eval`` prints
    as its message alone, like its own prerequisite errors, instead of with a traceback."""

    def __init__(self, message: str) -> None:
        ImpostorError.__init__(self, message)
        self.message = message

    @classmethod
    def of(cls, exc: ImpostorError) -> "UserInputError":
        """``exc`` as one; under ``--display none`` Inspect prints no message, so it is printed here."""
        from inspect_ai.util import display_type

        if display_type() == "none":
            print(f"impostor: {exc}", file=sys.stderr)
        return exc if isinstance(exc, cls) else cls(str(exc))


def installed_package_name(obj: object) -> str | None:
    """The installed package Inspect names a registered object after (``<package>/<name>``), or
    None when it finds none (``inspect_ai._util.package.get_installed_package_name``)."""
    from inspect_ai._util.package import get_installed_package_name

    return get_installed_package_name(obj)


def cache_package_scan() -> None:
    """Scan the installed packages once per process instead of once per task.

    Opening each task's log, Inspect looks up the distribution that ships the task
    (``inspect_ai._util.package.get_distribution_for_object``); for ``impostor_bench.tasks.impostor``, whose
    top-level name is no distribution, that reads every installed package's file list
    (``importlib.metadata.packages_distributions``, ~0.6 s of CPU) -- for every task, before
    the first game: a 378-experiment shard of the paper's grid spent over 13 minutes in it
    (issue 18, measured). The installed packages do not change during a sweep; Inspect has
    no option for this.
    """
    import functools

    from inspect_ai._util import package

    if not hasattr(package.packages_distributions, "cache_info"):
        package.packages_distributions = functools.lru_cache(maxsize=1)(package.packages_distributions)


def refuse_unbounded_task_args() -> None:
    """Check every task argument's shape before Inspect resolves it.

    ``inspect eval -T 'models=&a [*a]'`` parses the value as YAML into a list that holds
    itself, and Inspect's ``registry_kwargs`` (resolving registry objects inside the task
    arguments, before the task function runs) recursed into it until ``RecursionError``, a
    traceback before any of our checks. Wrapped here to refuse such a value with one line
    (``UserInputError``); Inspect has no hook before it. Idempotent.
    """
    from inspect_ai._util import registry

    original = registry.registry_kwargs
    if getattr(original, "_impostor_checked", False):
        return

    from impostor_bench.core.input_limits import shape_problem

    def registry_kwargs(**kwargs: object) -> dict:
        for name, value in kwargs.items():
            problem = shape_problem(value, MAX_TASK_ARG_VALUES, MAX_TASK_ARG_DEPTH)
            if problem:
                raise UserInputError.of(ImpostorError(
                    f"-T {name}: the value {problem}; fix: write it out without YAML '&'/'*' anchors"))
        return original(**kwargs)

    registry_kwargs._impostor_checked = True  # type: ignore[attr-defined]
    registry.registry_kwargs = registry_kwargs


def release_finished_eval(eval_id: str) -> None:
    """Let a finished eval's task runner be freed now rather than at the end of ``eval_set``.

    Inspect keeps a registry entry per eval for ``inspect ctl`` until the whole ``eval_set``
    returns, and the entry's live handles (the task logger, the sample scheduler's requeue
    handle, the interim-scoring inputs) keep the finished task's runner state alive: ~3.6 MB
    per 120-game experiment, so a 378-experiment shard of the paper's grid grew past 1 GB
    (issue 18, measured). ``detach_eval_live`` is what Inspect itself calls when a retry
    supersedes an attempt: the counters stay, and per-sample reads fall back to the finished
    log on disk. Inspect has no public call or option for this.
    """
    from inspect_ai._control.eval_state import detach_eval_live

    detach_eval_live(eval_id)


def building_task_for_eval() -> bool:
    """True while Inspect itself builds a task for an eval (``inspect eval``, ``eval("file.py")``),
    when the eval's model roles are already set and an absent role is really absent.

    Inspect has no public signal for this: a Task built beforehand in Python cannot see the
    roles later passed to ``eval()``, and ``eval_set`` leaves its last roles and model set in
    the caller's context, so neither ``model_roles()`` nor the active model tells the two
    cases apart.  The one reliable mark is Inspect's task resolver on the call stack.
    """
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "eval_resolve_tasks" and "inspect_ai" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def resolve_registry_aliases() -> None:
    """Let every ``get_model`` take a registry alias (``--model gpt-4o``): its Inspect model string
    and model_args from ``configs/models.yaml``, a missing key said in one line.

    Inspect refuses a model name without ``<api>/`` inside ``get_model`` before any provider
    plugin is asked (no public hook maps names), so the function its resolver calls is wrapped:
    names with a ``/`` pass through untouched, so nothing that worked before changes.
    """
    import functools

    from inspect_ai.model import _model

    original = _model.get_model
    if getattr(original, "_impostor_aliases", False):
        return

    @functools.wraps(original)
    def get_model(model=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(model, str) and model and "/" not in model:
            if _is_alias(model):
                model, alias_args = _alias_model(model)
                kwargs = alias_args | kwargs  # -M arguments over the alias's model_args
            else:  # Inspect's own names without a '/' ("none") stay Inspect's; else one line, not a traceback
                try:
                    return original(model, *args, **kwargs)
                except ValueError as exc:
                    if "<api_name>/<model_name>" not in str(exc):
                        raise
                    _alias_model(model)  # raises the one line, with close aliases
        return original(model, *args, **kwargs)

    get_model._impostor_aliases = True  # type: ignore[attr-defined]
    _model.get_model = get_model


def _is_alias(name: str) -> bool:
    from impostor_bench.registry import load_registry

    try:
        return name in load_registry().entries
    except ImpostorError:
        return False


def _alias_model(name: str) -> tuple[str, dict]:
    """(Inspect model string, model_args) of the alias ``name``; one-line errors for an unknown
    alias or a model that cannot be created here (a missing key names the key)."""
    import difflib

    from impostor_bench.preflight import check_models
    from impostor_bench.registry import load_registry

    try:
        reg = load_registry()
        entry = reg.entries.get(name)
        if entry is None:
            close = difflib.get_close_matches(name, list(reg.entries), n=3)
            raise ImpostorError(f"model {name!r} is neither an Inspect model string (<api>/<model>) nor an alias of "
                                f"the model registry; fix: "
                                + (f"did you mean {', '.join(close)}? " if close else "")
                                + "use an alias of configs/models.yaml (docs/models.md) or an Inspect model string such as openai/gpt-4o")
        args = dict(entry.model_args)
        check_models({name: entry.model}, "--model", {name: args})
    except ImpostorError as exc:
        raise UserInputError.of(exc) from None
    return entry.model, args
