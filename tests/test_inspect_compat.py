"""impostor_bench/inspect_compat.py: the package scan Inspect repeats for every task is done once
(a 378-experiment shard spent over 13 minutes in it before its first game, issue 18)."""

from __future__ import annotations


def test_package_scan_cached_and_same_answer():
    from inspect_ai._util import package

    from impostor_bench.inspect_compat import cache_package_scan
    from impostor_bench.tasks.impostor import impostor

    before = package.get_distribution_for_object(impostor)
    cache_package_scan()
    cache_package_scan()  # idempotent: not wrapped twice
    assert hasattr(package.packages_distributions, "cache_info")
    assert not hasattr(package.packages_distributions.__wrapped__, "cache_info")
    first = package.packages_distributions()
    assert package.packages_distributions() is first  # scanned once
    after = package.get_distribution_for_object(impostor)
    assert before is not None and after is not None and after.name == before.name == "impostor-bench"
    assert "impostor-bench" in first.get("impostor_bench", [])  # one installed top-level name (issue 41)


def _live_sample_runs() -> int:
    import gc

    return sum(1 for o in gc.get_objects() if type(o).__name__ == "_SampleRun")


def test_finished_experiments_are_freed_during_the_eval_set(tmp_path, monkeypatch):
    """A sweep is one eval_set of many experiments: a finished experiment's runner state must
    not stay alive until the last one ends (~3.6 MB each, a 378-experiment shard passed 1 GB).

    Three 20-game experiments one after another; when the third starts, Inspect's scheduler
    entries of the first two (one per game) must be gone, and their registry entries must have
    lost the live handles that held them (the counters stay)."""
    from inspect_ai import eval_set
    from inspect_ai.hooks import Hooks, TaskStart, hooks
    from inspect_ai.hooks._hooks import get_all_hooks

    from impostor_bench import eval_memory
    from impostor_bench.inspect_compat import cache_package_scan
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    cache_package_scan()
    eval_memory.install()  # what `impostor sweep` installs in its process (the entry points do not)
    eval_memory.install()  # idempotent: one hook
    seen: dict = {}

    @hooks(name="test_probe_finished_evals", description="test probe")
    class Probe(Hooks):
        async def on_task_start(self, data: TaskStart) -> None:
            from inspect_ai._control.eval_state import get_eval_states

            states = get_eval_states()
            seen.setdefault("starts", []).append({
                "sample_runs": _live_sample_runs(),
                "finished_with_handles": sum(1 for s in states if s.eval_id != data.eval_id
                                             and (s.live is not None or s.sample_requeue is not None)),
                "finished_counted": sum(s.completed for s in states if s.eval_id != data.eval_id),
            })

    assert sum(1 for h in get_all_hooks() if type(h) is eval_memory.ReleaseFinishedEvals) == 1
    tasks = [impostor(n_games=20, seed=i) for i in range(3)]
    ok, logs = eval_set(tasks, log_dir=str(tmp_path), model="bot/random", max_tasks=1, display="none")
    assert ok and all(log.status == "success" for log in logs)
    starts = seen["starts"]
    assert len(starts) == 3
    third = starts[2]
    assert third["finished_with_handles"] == 0
    assert third["finished_counted"] == 40  # the registry still counts the finished games
    assert third["sample_runs"] < 20  # none of the 40 finished games' entries (was 40 before the fix)
