"""The ``impostor_bench`` entry point of Inspect: our model providers and the task by name.

Inspect loads it in every ``inspect eval`` on the machine (and when it meets a name it does
not know: a provider ``bot/``, ``local/``, ``litellm/``, ``human/``, the task
``impostor_bench/impostor`` or the judge scorer ``impostor_bench/strategy_judge``), so
importing it only registers them, through Inspect's public API (docs/architecture.md, "A guest
in Inspect"), and ``inspect eval impostor_bench/impostor --model bot/random`` works from any
folder once the package is installed.

The task is the one of ``tasks/impostor.py`` (``inspect eval tasks/impostor.py`` from the
repository keeps working): Inspect names a task after the top-level package of the module
that defines the function, so the registered twin here is a function of this module that
calls the same factory, with its signature and docstring (``-T`` options, ``inspect list
tasks``).
"""

from __future__ import annotations

import inspect as _inspect
from typing import Any

from inspect_ai import Task, task
from inspect_ai.util import registry_info

from impostor_bench.providers import register as _providers  # noqa: F401 - registers bot/local/litellm/human
from impostor_bench.scorers.judge import strategy_judge  # noqa: F401 - `inspect score --scorer impostor_bench/strategy_judge`
from impostor_bench.tasks.impostor import impostor as _file_task

_factory = _inspect.unwrap(_file_task)  # the undecorated function (Inspect's @task uses functools.wraps)


def impostor(*args: Any, **kwargs: Any) -> Task:
    return _factory(*args, **kwargs)


impostor.__signature__ = _inspect.signature(_factory)  # type: ignore[attr-defined]
impostor.__doc__ = _factory.__doc__
impostor.__annotations__ = dict(_factory.__annotations__)
# Inspect prefixes the name with the installed package it finds for the function.  With the
# repository root on PYTHONPATH, pip's build metadata there (impostor_bench.egg-info, no
# direct_url.json) hides the editable install from that lookup and the task would be plain
# "impostor", so `inspect eval impostor_bench/impostor` found nothing: then the name is given whole
# (the plain registration stays beside it, naming the same task).
_named = task(impostor)
impostor = (_named if registry_info(_named).name == "impostor_bench/impostor"
            else task(name="impostor_bench/impostor")(impostor))
