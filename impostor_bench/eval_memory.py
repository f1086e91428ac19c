"""An Inspect hook that frees each finished experiment's runner state as it ends.

A sweep is one ``eval_set`` of hundreds of experiments in one process; without this,
Inspect holds every finished experiment's runner state until the last one ends, and a
shard of the paper's grid grows by ~3.6 MB per experiment (issue 18).  Registered through
the ``inspect_ai`` entry point, so ``inspect eval`` and ``impostor sweep`` both get it;
it only drops what ``inspect ctl`` would otherwise read from the finished log anyway.
"""

from __future__ import annotations

from inspect_ai.hooks import Hooks, TaskEnd, hooks

from impostor_bench.inspect_compat import release_finished_eval


@hooks(name="impostor_eval_memory", description="Free each finished impostor experiment's runner state")
class ReleaseFinishedEvals(Hooks):
    async def on_task_end(self, data: TaskEnd) -> None:
        release_finished_eval(data.eval_id)
