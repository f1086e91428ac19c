"""Garbage-collector settings for a process that plays many games.

An eval allocates millions of short-lived objects (events, pydantic models,
JSON patches) on top of a large, long-lived heap (Inspect, pydantic, pandas,
the schedule).  With CPython's default thresholds (700, 10, 10) the collector
runs ~1,000 times per 200 games and its full passes rescan that whole heap:
measured at 25-30% of the process's CPU time for both our task and a bare
Inspect task (``benchmarks/RESULTS.md``).  Freezing the heap that exists once
the task is built and raising the thresholds removes most of it.  Higher
thresholds than these were faster still but let memory grow without a plateau
(measured over 3,000 games); with these RSS levels off.

``IMPOSTOR_GC=default`` leaves the interpreter's settings alone;
``IMPOSTOR_GC=t0,t1,t2`` picks other thresholds.
"""

from __future__ import annotations

import gc
import os

from impostor_bench.core.errors import ImpostorError

THRESHOLDS = (10_000, 10, 10)
_tuned = False


def _thresholds(setting: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in setting.split(","))
    except ValueError:
        values = ()
    if len(values) != 3 or min(values) < 1:
        raise ImpostorError(f"environment variable IMPOSTOR_GC={setting!r} is not valid; fix: unset it, "
                            f"or use 'default' or three positive integers like {','.join(map(str, THRESHOLDS))}")
    return values


def tune_gc() -> bool:
    """Freeze the current heap and raise the collection thresholds, once per process.

    Returns True if the settings are (now) tuned.  Called when a task is built,
    i.e. in the process that will run the games, after the big imports.
    """
    global _tuned
    setting = os.environ.get("IMPOSTOR_GC", "").strip().lower()
    if setting == "default":
        return False
    thresholds = _thresholds(setting) if setting else THRESHOLDS
    if not _tuned:
        gc.collect()
        gc.freeze()
        gc.set_threshold(*thresholds)
        _tuned = True
    return True
