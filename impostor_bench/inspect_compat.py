"""Everything impostor-bench needs from Inspect beyond its public API, in one place.

Each item says why the public API does not do, so an Inspect upgrade has one file to
check (``tests/test_layering.py`` keeps private imports out of every other module;
the bad-input suite checks the behaviour through the real ``inspect eval``).

Nothing here runs when a module is imported: the package's ``inspect_ai`` entry points load in
every ``inspect eval`` on the machine, whoever's task it runs.  The two workarounds that change
Inspect's behaviour (:func:`cache_package_scan`, and
:func:`release_finished_eval` through :mod:`impostor_bench.eval_memory`) are installed by
``impostor sweep`` in its own process only (docs/architecture.md, "A guest in Inspect").
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
    "eval_models", "is_model_info_lookup", "release_finished_eval",
]

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


def cache_package_scan() -> None:
    """Scan the installed packages once per process instead of once per task (``impostor sweep``'s
    process only: it replaces Inspect's ``packages_distributions`` with a cached one).

    Opening each task's log, Inspect looks up the distribution that ships the task
    (``inspect_ai._util.package.get_distribution_for_object``); for ``impostor_bench.tasks.impostor``, whose
    top-level name is no distribution, that reads every installed package's file list
    (``importlib.metadata.packages_distributions``, ~0.6 s of CPU) -- for every task, before
    the first game: a 378-experiment shard of the paper's grid spent over 13 minutes in it
    (measured). The installed packages do not change during a sweep; Inspect has no option for
    this.
    """
    import functools

    from inspect_ai._util import package

    if not hasattr(package.packages_distributions, "cache_info"):
        package.packages_distributions = functools.lru_cache(maxsize=1)(package.packages_distributions)


def release_finished_eval(eval_id: str) -> None:
    """Let a finished eval's task runner be freed now rather than at the end of ``eval_set``.

    Inspect keeps a registry entry per eval for ``inspect ctl`` until the whole ``eval_set``
    returns, and the entry's live handles (the task logger, the sample scheduler's requeue
    handle, the interim-scoring inputs) keep the finished task's runner state alive: ~3.6 MB
    per 120-game experiment, so a 378-experiment shard of the paper's grid grew past 1 GB
    (measured). ``detach_eval_live`` is what Inspect itself calls when a retry
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
