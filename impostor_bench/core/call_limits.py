"""Bounds of one model call, defined once: the task's defaults and the sweep's ``retries``.

Inspect's own default retries a failing call without limit (exponential backoff up to
30 minutes between tries), so a provider that always fails would hang a game and with it
a plain ``inspect eval``.  ``tasks/impostor.py`` puts these numbers in the task's
``GenerateConfig`` (``--max-retries`` / ``--timeout`` / ``--attempt-timeout`` override
them), ``impostor_bench.sweep.Retries`` uses them as its defaults (a sweep config overrides them).
"""

from __future__ import annotations

from typing import Optional

MAX_RETRIES: int = 10  # retries of one model call (11 attempts)
TIMEOUT: Optional[int] = None  # seconds for one call, retries included (None: bounded by the retries)
ATTEMPT_TIMEOUT: int = 300  # seconds for one attempt of a call (a hung request is cut off and retried)
GAME_TIME_LIMIT: int = 210  # seconds one game may take (-T game_time_limit; 0: none); see below

# Why 210 s: with MAX_RETRIES a call that can never succeed backs off 3, 6, 12, ... s (about
# 50 minutes in all) before the game errors; a game of a live API model takes well under a
# minute (8-12 calls).  A slow local model, or many games sharing one local server, may need more:
# -T game_time_limit=900 (sweep: game_time_limit).  Inspect starts the clock when the game starts.
