"""A sweep's hook that frees each finished experiment's runner state as it ends.

A sweep is one ``eval_set`` of hundreds of experiments in one process; without this,
Inspect holds every finished experiment's runner state until the last one ends, and a
shard of the paper's grid grows by ~3.6 MB per experiment (measured).  The hook calls a
private function of Inspect's (``impostor_bench.inspect_compat.release_finished_eval``), so it
is not registered by the package's entry points, which load in every ``inspect eval`` on the
machine: ``impostor sweep`` installs it in its own process (:func:`install`), and even there it
leaves any task that is not the impostor's alone.
"""

from __future__ import annotations

from inspect_ai.hooks import Hooks, TaskEnd, hooks

from impostor_bench.export import is_impostor_task
from impostor_bench.inspect_compat import release_finished_eval

HOOK_NAME = "impostor_eval_memory"


class ReleaseFinishedEvals(Hooks):
    async def on_task_end(self, data: TaskEnd) -> None:
        if is_impostor_task(data.log.eval.task):
            release_finished_eval(data.eval_id)


_installed: list[type[Hooks]] = []


def install() -> None:
    """Register the hook in this process (once); Inspect reads its hooks at every emission."""
    if not _installed:
        _installed.append(hooks(name=HOOK_NAME, description="Free each finished impostor experiment's runner "
                                                             "state (impostor sweep)")(ReleaseFinishedEvals))
