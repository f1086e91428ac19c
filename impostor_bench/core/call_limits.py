"""Bounds of one model call, defined once: the task's defaults and the sweep's ``retries``.

Inspect's own default retries a failing call without limit (exponential backoff up to
30 minutes between tries), so a provider that always fails would hang a game and with it
a plain ``inspect eval``.  ``tasks/impostor.py`` puts these numbers in the task's
``GenerateConfig`` (``--max-retries`` / ``--timeout`` / ``--attempt-timeout`` override
them), ``impostor_bench.sweep.Retries`` uses them as its defaults (a sweep config overrides them).
"""

from __future__ import annotations

from typing import Iterable, Optional

MAX_RETRIES: int = 10  # retries of one model call (11 attempts)
TIMEOUT: Optional[int] = None  # seconds for one call, retries included (None: bounded by the retries)
ATTEMPT_TIMEOUT: int = 300  # seconds for one attempt of a call (a hung request is cut off and retried)
GAME_TIME_LIMIT: int = 210  # seconds one game may take (-T game_time_limit; 0: none); see below

# Why 210 s: with MAX_RETRIES a call that can never succeed backs off 3, 6, 12, ... s (about
# 50 minutes in all) before the game errors; a game of a live API model takes well under a
# minute (8-12 calls).  A slow local model, or many games sharing one local server, may need more:
# -T game_time_limit=900 (sweep: game_time_limit).  Inspect starts the clock when the game starts.
#
# Local engines get no limit by default: Inspect's clock is wall time, and a game played by a
# ``local/`` engine shared by the eval's games counts the time it waits for the engine and the
# machine's other load (4 local/smollm2 games hit 210 s at a load of ~8, 62 s on a quiet machine).
# A local engine has no dead-provider failure (the reason for the limit): each call
# is still bounded by ATTEMPT_TIMEOUT and MAX_RETRIES. -T game_time_limit=N sets one anyway.
LOCAL_ENGINES = ("local/",)


def game_time_limit(given: Optional[int], models: Iterable[str]) -> int:
    """Seconds one game may take (0: no limit): ``given`` when set, else ``GAME_TIME_LIMIT``,
    or no limit when any of ``models`` (model strings) is a local engine."""
    if given is not None:
        return given
    return 0 if any(str(m).startswith(LOCAL_ENGINES) for m in models) else GAME_TIME_LIMIT
