"""A sweep's one live progress view: experiments and games done, errors, rate, time left.

Inspect's own display prints a result panel of ~40 lines per experiment (36 panels in the
demo: 1,600 lines in which the sweep's summary scrolls away); a sweep runs Inspect with
``display="none"`` and shows this view instead (``impostor sweep --display rich`` brings the
panels back; every panel's numbers are in the experiment's Inspect log and MLflow run).

An Inspect hook (registered when this module is imported, enabled only while a sweep's
``SweepProgress`` is active) counts the games and experiments as they end.  On a terminal the
view is one line rewritten in place; into a file or pipe it prints a line at each tenth of
the games (at most ``MAX_LINES`` lines), so a captured log stays short.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, TextIO

from inspect_ai.hooks import Hooks, SampleEnd, TaskEnd, hooks

REFRESH_S = 0.5  # a terminal's line is redrawn at most this often
MAX_LINES = 10  # lines written to a file or pipe (one per tenth of the games), the last one included


def _clock_text(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


@dataclass
class SweepProgress:
    """Counts of one sweep run (this process's games: a resumed sweep counts what is left)."""

    experiments_total: int
    games_total: int
    finished: dict[str, bool] = field(default_factory=dict)  # experiment (task id) -> its last attempt succeeded
    games_done: int = 0
    games_errored: int = 0
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=-1.0)

    def __post_init__(self) -> None:
        if self.started < 0:
            self.started = self.clock()

    def game_ended(self, errored: bool) -> None:
        """A game ended: finished, or errored (a game Inspect retries may end errored, then finished:
        it counts once among the games and once among the errors)."""
        if errored:
            self.games_errored += 1
        else:
            self.games_done += 1

    def experiment_ended(self, task_id: str, ok: bool) -> None:
        """One attempt of an experiment ended (eval_set retries a failed one: counted once, as its last attempt)."""
        self.finished[task_id] = ok

    @property
    def experiments_done(self) -> int:
        return len(self.finished)

    @property
    def experiments_failed(self) -> int:
        return sum(1 for ok in self.finished.values() if not ok)

    def rate(self) -> Optional[float]:
        """Games per second so far (None before the first game)."""
        elapsed = self.clock() - self.started
        return self.games_done / elapsed if self.games_done and elapsed > 0 else None

    def seconds_left(self) -> Optional[float]:
        r = self.rate()
        return None if r is None else max(self.games_total - self.games_done, 0) / r

    def line(self) -> str:
        """``experiments 12/36, games 96/288 (33%), errors 0, 5.2 games/s, 0:00:37 left``."""
        pct = min(100.0, 100 * self.games_done / self.games_total) if self.games_total else 100.0
        errors = f"errors {self.games_errored}" + (f" ({self.experiments_failed} experiment(s) failed)"
                                                   if self.experiments_failed else "")
        r, left = self.rate(), self.seconds_left()
        speed = "rate -" if r is None else (f"{r:.1f} games/s" if r >= 0.1 else f"{60 * r:.1f} games/min")
        eta = "time left -" if left is None else f"{_clock_text(left)} left"
        return (f"experiments {self.experiments_done}/{self.experiments_total}, games {self.games_done:,}/"
                f"{self.games_total:,} ({pct:.0f}%), {errors}, {speed}, {eta}, "
                f"elapsed {_clock_text(self.clock() - self.started)}")


class ProgressView:
    """Where ``SweepProgress`` is shown: one line redrawn on a terminal, else a line per tenth."""

    def __init__(self, progress: SweepProgress, stream: Optional[TextIO] = None,
                 live: Optional[bool] = None) -> None:
        self.progress = progress
        self.stream = stream if stream is not None else sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)()) if live is None else live
        self._lock = threading.Lock()
        self._last_draw = -1e9
        self._tenths = 0  # the last tenth of the games a line was written for
        self._drawn = False

    def update(self, force: bool = False) -> None:
        p = self.progress
        with self._lock:
            if self.live:
                now = p.clock()
                if force or now - self._last_draw >= REFRESH_S:
                    self._last_draw = now
                    self.stream.write("\r\x1b[2K" + "progress: " + p.line())
                    self.stream.flush()
                    self._drawn = True
                return
            tenths = (MAX_LINES * p.games_done // p.games_total) if p.games_total else MAX_LINES
            if tenths > self._tenths and (tenths < MAX_LINES or p.experiments_done >= p.experiments_total):
                self._tenths = tenths
                self.stream.write("progress: " + p.line() + "\n")
                self.stream.flush()

    def close(self) -> None:
        """End the view: a terminal's line is finished with a newline (what follows starts on its own line)."""
        p = self.progress
        with self._lock:
            if self.live:
                if self._drawn or p.games_done:
                    self.stream.write("\r\x1b[2K" + "progress: " + p.line() + "\n")
                    self.stream.flush()
                return
            if self._tenths < MAX_LINES and p.games_done:
                self._tenths = MAX_LINES
                self.stream.write("progress: " + p.line() + "\n")
                self.stream.flush()


_active: Optional[ProgressView] = None


class showing:
    """``with showing(view):`` the hook feeds ``view`` while eval_set runs; closed at the end."""

    def __init__(self, view: ProgressView) -> None:
        self.view = view

    def __enter__(self) -> ProgressView:
        global _active
        _active = self.view
        self.view.update(force=True)
        return self.view

    def __exit__(self, *exc: Any) -> None:
        global _active
        _active = None
        self.view.close()


@hooks(name="impostor_sweep_progress", description="the live progress line of `impostor sweep`")
class SweepProgressHooks(Hooks):
    def enabled(self) -> bool:
        return _active is not None

    async def on_sample_end(self, data: SampleEnd) -> None:
        view = _active
        if view is None:
            return
        view.progress.game_ended(data.sample.error is not None)
        view.update()

    async def on_task_end(self, data: TaskEnd) -> None:
        view = _active
        if view is None:
            return
        view.progress.experiment_ended(data.log.eval.task_id, data.log.status == "success")
        view.update(force=True)
