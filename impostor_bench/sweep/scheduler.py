"""The shard a job scheduler's array task runs: its index and count read from the environment.

A Slurm job array (``sbatch --array=0-7``) and a Kubernetes Indexed Job start one process per
index with the same command; ``impostor sweep CONFIG --shard auto`` turns the index into
``--shard I/N`` so no wrapper script does arithmetic.  The variables:

* Slurm: ``SLURM_ARRAY_TASK_ID`` offset by ``SLURM_ARRAY_TASK_MIN`` (``--array=1-4`` is shards
  1..4 as well as ``--array=0-3``); the count from ``SLURM_ARRAY_TASK_COUNT`` or ``_MAX - _MIN + 1``.
  An array with a step (``0-15:4``) or a list with holes (``0,3,7``) is refused: its indices are not
  one shard each of a contiguous range, and a shard nobody runs would be games silently missing.
* Kubernetes: ``JOB_COMPLETION_INDEX`` (0-based), the count from ``IMPOSTOR_SHARDS`` (the shipped
  manifest sets it to ``spec.completions``: Kubernetes does not put the count in the pod).

Pure: a mapping in, a shard out; every refusal is one line naming the variable and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from impostor_bench.core.errors import ImpostorError

SLURM_ID, SLURM_COUNT, SLURM_MIN, SLURM_MAX, SLURM_STEP = (
    "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP")
K8S_INDEX, K8S_COUNT = "JOB_COMPLETION_INDEX", "IMPOSTOR_SHARDS"
# The variables whose presence makes a sweep without --shard take its shard from the scheduler.
ARRAY_VARIABLES = (SLURM_ID, K8S_INDEX)


@dataclass(frozen=True)
class SchedulerShard:
    index: int  # 1-based, as --shard I/N
    count: int
    source: str  # e.g. "SLURM_ARRAY_TASK_ID=3 of 0..7", for the line the sweep prints

    @property
    def text(self) -> str:
        return f"{self.index}/{self.count}"


def _int(env: Mapping[str, str], name: str, fix: str) -> int:
    raw = env.get(name, "").strip()
    try:
        return int(raw, 10)
    except ValueError:
        raise ImpostorError(f"--shard auto: {name}={raw!r} is not an integer; fix: {fix}") from None


def _slurm(env: Mapping[str, str]) -> SchedulerShard:
    fix = "submit with a contiguous --array range such as --array=0-7 (no step, no list), or give --shard I/N"
    task = _int(env, SLURM_ID, fix)
    step = env.get(SLURM_STEP, "").strip()
    if step not in ("", "1"):
        raise ImpostorError(f"--shard auto: {SLURM_STEP}={step!r}: an array with a step leaves indices no task "
                            f"runs; fix: {fix}")
    low = _int(env, SLURM_MIN, fix) if env.get(SLURM_MIN, "").strip() else 0
    count = _int(env, SLURM_COUNT, fix) if env.get(SLURM_COUNT, "").strip() else None
    if env.get(SLURM_MAX, "").strip():
        span = _int(env, SLURM_MAX, fix) - low + 1
        if count is not None and count != span:
            raise ImpostorError(f"--shard auto: {SLURM_COUNT}={count} but {SLURM_MIN}..{SLURM_MAX} is {low}.."
                                f"{low + span - 1} ({span} indices): the array has holes; fix: {fix}")
        count = span
    if count is None:
        raise ImpostorError(f"--shard auto: {SLURM_ID} is set but neither {SLURM_COUNT} nor {SLURM_MAX} is; "
                            f"fix: run inside an array task of sbatch --array, or give --shard I/N")
    if count < 1 or not (low <= task < low + count):
        raise ImpostorError(f"--shard auto: {SLURM_ID}={task} is outside the array {low}..{low + count - 1}; "
                            f"fix: {fix}")
    return SchedulerShard(task - low + 1, count, f"{SLURM_ID}={task} of {low}..{low + count - 1}")


def _kubernetes(env: Mapping[str, str]) -> SchedulerShard:
    fix = f"set {K8S_COUNT} to the Job's spec.completions (the shipped manifest does), or give --shard I/N"
    index = _int(env, K8S_INDEX, "run as a pod of an Indexed Job (completionMode: Indexed), or give --shard I/N")
    if not env.get(K8S_COUNT, "").strip():
        raise ImpostorError(f"--shard auto: {K8S_INDEX} is set but {K8S_COUNT} is not; fix: {fix}")
    count = _int(env, K8S_COUNT, fix)
    if count < 1 or not (0 <= index < count):
        raise ImpostorError(f"--shard auto: {K8S_INDEX}={index} is outside 0..{count - 1} ({K8S_COUNT}={count}); "
                            f"fix: {fix}")
    return SchedulerShard(index + 1, count, f"{K8S_INDEX}={index} of {K8S_COUNT}={count}")


def scheduler_shard(env: Mapping[str, str]) -> Optional[SchedulerShard]:
    """The shard of this array task, or None when no scheduler's array variable is set."""
    slurm, k8s = bool(env.get(SLURM_ID, "").strip()), bool(env.get(K8S_INDEX, "").strip())
    if slurm and k8s:
        raise ImpostorError(f"--shard auto: both {SLURM_ID} and {K8S_INDEX} are set, so the shard is ambiguous; "
                            f"fix: unset the one that does not belong to this job, or give --shard I/N")
    if slurm:
        return _slurm(env)
    if k8s:
        return _kubernetes(env)
    return None


def auto_shard(env: Mapping[str, str]) -> SchedulerShard:
    """``--shard auto``: the scheduler's shard, refused in one line when no array variable is set."""
    found = scheduler_shard(env)
    if found is None:
        raise ImpostorError(f"--shard auto: neither {SLURM_ID} (a Slurm array task) nor {K8S_INDEX} (a Kubernetes "
                            f"Indexed Job) is set; fix: run it as an array task, or give --shard I/N")
    return found
