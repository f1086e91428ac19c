"""Inspect hooks: every eval of the impostor task becomes one MLflow run.

Registered through the ``inspect_ai`` entry point (importing this module runs
``@hooks`` and nothing else), so it also works for a plain ``inspect eval tasks/impostor.py``.
Other tasks are ignored: the entry point loads in every ``inspect eval`` on the machine.
``IMPOSTOR_MLFLOW=0`` switches it off.  If the store cannot be reached the eval goes on, the
Inspect log is written as usual and a one-line message says how to ``impostor sync`` it later.
"""

from __future__ import annotations

import importlib.util
import os
import time
from typing import Any

import anyio
from inspect_ai.hooks import Hooks, RunEnd, SampleEnd, TaskEnd, TaskStart, hooks

from impostor_bench.export import is_impostor_task, read_log
from impostor_bench.tracking import context as _context
from impostor_bench.tracking import traces
from impostor_bench.tracking.store import (
    TrackingUnavailable,
    ensure_experiment,
    experiment_name,
    get_client,
    refused_or,
    shown_uri,
    tracking_disabled,
    warn,
)


LIVE_INTERVAL_S = 5.0


class LiveProgress:
    """Games finished and the running impostor win rate of one eval, logged to MLflow
    at most every ``LIVE_INTERVAL_S`` seconds (and once at the end), in a worker thread.

    One write per game would be one SQLite commit per game on the event loop: ~6 ms
    a game, a fifth of an instant-provider eval (``benchmarks/RESULTS.md``).
    """

    def __init__(self, clock: Any = time.monotonic) -> None:
        self.games = 0
        self.wins = 0.0
        self.logged = 0
        self._clock = clock
        self._last = clock()
        self._busy = False

    @property
    def unlogged(self) -> bool:
        return self.games > self.logged

    def add(self, impostor_win: float) -> bool:
        """Count one game; True when it is time to log (and no log is under way)."""
        self.games += 1
        self.wins += impostor_win
        if self._busy or self._clock() - self._last < LIVE_INTERVAL_S:
            return False
        self._busy = True
        return True

    def points(self) -> tuple[int, list[Any]]:
        """(games, the series' points now): what ``log`` writes."""
        from mlflow.entities import Metric

        games, wins = self.games, self.wins
        now = int(time.time() * 1000)
        return games, [Metric("live/games_done", games, now, games),
                       Metric("live/impostor_win_rate", wins / games, now, games)]

    def log(self, client: Any, run_id: str) -> None:
        games, points = self.points()
        try:
            client.log_batch(run_id, metrics=points)
            self.logged = games
        finally:
            self._last = self._clock()
            self._busy = False


@hooks(name="impostor_mlflow", description="MLflow tracking for the Impostor Game (one run per experiment)")
class ImpostorMlflowHooks(Hooks):
    def __init__(self) -> None:
        # eval_id -> (client, run_id, uri, created: open_run made the run, logrun.OpenedRun)
        self._runs: dict[str, tuple[Any, str, str, bool]] = {}
        self._untracked: dict[str, str] = {}  # eval_id -> reason
        self._live: dict[str, LiveProgress] = {}
        self._secrets: dict[str, set[str]] = {}  # eval_id -> secrets scrubbed from its traces
        self._finished: dict[str, dict[tuple, Any]] = {}  # eval_id -> (id, epoch) -> sample without events
        self._logged: list[tuple[Any, str, str]] = []  # (client, run_id, uri) finished outside a sweep

    def enabled(self) -> bool:
        return not tracking_disabled()

    # ------------------------------------------------------------ lifecycle

    def _start(self, data: TaskStart) -> None:
        self._start_spec(data.eval_id, data.spec)

    def _start_spec(self, eval_id: str, spec: Any) -> None:
        from impostor_bench.tracking.logrun import open_run, spec_secrets

        ctx = _context.get()
        if ctx.disabled:
            return
        client, uri = get_client(ctx.tracking_uri)
        exp_id = ensure_experiment(client, experiment_name(ctx.experiment), uri)
        try:
            run_id, created = open_run(client, exp_id, spec, ctx, source="hook")
        except Exception as exc:  # noqa: BLE001 - HTTP 403: a user without EDIT on the experiment
            refused_or(exc, uri, TrackingUnavailable(
                f"MLflow tracking at {shown_uri(uri)} failed ({str(exc).splitlines()[0][:200]})"))
        self._runs[eval_id] = (client, run_id, uri, created)
        self._secrets[eval_id] = spec_secrets(spec)

    async def on_task_start(self, data: TaskStart) -> None:
        if not is_impostor_task(data.spec.task):
            return
        try:
            await anyio.to_thread.run_sync(self._start, data)
        except Exception as exc:  # noqa: BLE001 - tracking must never stop a game
            self._untracked[data.eval_id] = str(exc)
            warn(f"start:{exc}", f"{exc}; this eval is not tracked, its Inspect log is still written "
                 f"(log it later with `impostor sync LOG_DIR`)")

    async def on_sample_end(self, data: SampleEnd) -> None:
        entry = self._runs.get(data.eval_id)
        if entry is None:
            return
        try:  # the game's trace spans, built while its events are in memory (impostor_bench.tracking.traces)
            traces.collect(entry[1], data.sample, self._secrets.get(data.eval_id, set()))
        except Exception:  # noqa: BLE001 - the end of the run builds them from the log instead
            pass
        # what the run's tables need of the game, so the end of the run need not read the whole
        # log back from disk (~1/6 of a sweep's CPU, measured): the sample as read_log reads it
        self._finished.setdefault(data.eval_id, {})[(data.sample.id, data.sample.epoch)] = data.sample.model_copy(
            update={"events": [], "messages": [], "attachments": {}})
        score = (data.sample.scores or {}).get("impostor_winner")
        if score is None or not isinstance(score.value, (int, float)):
            return
        live = self._live.setdefault(data.eval_id, LiveProgress())
        if live.add(float(score.value)):
            client, run_id, _, _ = entry
            try:
                await anyio.to_thread.run_sync(live.log, client, run_id)
            except Exception:  # noqa: BLE001 - final metrics are logged at the end anyway
                pass

    def _finish(self, eval_id: str, log: Any) -> None:
        from impostor_bench.tracking.logrun import finish_run

        client, run_id, uri, created = self._runs.pop(eval_id)
        live = self._live.pop(eval_id, None)
        self._secrets.pop(eval_id, None)
        loc = str(log.location or "").removeprefix("file://")
        finished = self._finished.pop(eval_id, {})
        # the games seen ending here first: the log ``eval()`` hands over loads its samples lazily,
        # and asking it whether it has any read the whole log back, events and all (~4 ms a game)
        full = with_finished_samples(log, finished) if finished else None
        if full is None:
            full = log if log.samples else None
        if full is None:  # not exactly the games seen ending here: the log on disk has them
            full = read_log(loc) if loc else log
        try:
            # the series ends at the last game: its last points go with the run's metrics
            last = live.points()[1] if live is not None and live.unlogged else []
            finish_run(client, run_id, full, _context.get(), live=last, created=created)
            if not _context.get().sweep_id:  # a sweep prints its own addresses
                self._logged.append((client, run_id, uri))
        except Exception as exc:  # noqa: BLE001
            raise TrackingUnavailable(f"MLflow tracking at {shown_uri(uri)} failed while logging results "
                                      f"({str(exc).splitlines()[0][:200]})") from exc

    async def _finish_or_warn(self, eval_id: str, log: Any) -> None:
        loc = str(log.location or "").removeprefix("file://")
        if eval_id in self._untracked:
            reason = self._untracked.pop(eval_id)
            try:  # the server may be back (a restart during a long sweep): log the whole run now
                await anyio.to_thread.run_sync(self._start_spec, eval_id, log.eval)
            except Exception:  # noqa: BLE001
                pass
            if eval_id not in self._runs:
                warn(f"end:{eval_id}", f"not tracked ({reason.split(';')[0]}); log it later with: impostor sync {loc}")
                return
        if eval_id not in self._runs:
            return
        try:
            await anyio.to_thread.run_sync(self._finish, eval_id, log)
        except Exception as exc:  # noqa: BLE001
            warn(f"end:{eval_id}", f"{exc}; log it later with: impostor sync {loc}")

    async def on_task_end(self, data: TaskEnd) -> None:
        await self._finish_or_warn(data.eval_id, data.log)

    def _announce(self) -> None:
        import sys

        for client, run_id, uri in self._logged:
            try:
                print(where_logged(client, run_id, uri), file=sys.stderr)
            except Exception:  # noqa: BLE001 - only a message
                pass
        self._logged.clear()

    async def on_run_end(self, data: RunEnd) -> None:
        # tasks that were cancelled or crashed get no on_task_end: close their runs from the log on disk
        for log in data.logs or []:
            eid = log.eval.eval_id
            if eid in self._runs or eid in self._untracked:
                await self._finish_or_warn(eid, log)
        self._finished.clear()
        self._announce()
        for eid in list(self._runs):
            client, run_id, _, _ = self._runs.pop(eid)
            self._live.pop(eid, None)
            self._secrets.pop(eid, None)
            traces.discard(run_id)
            try:
                client.set_terminated(run_id, status="FAILED")
            except Exception:  # noqa: BLE001
                pass


ENV_KEEP_INSPECT_MLFLOW = "IMPOSTOR_KEEP_INSPECT_MLFLOW"


def where_logged(client: Any, run_id: str, uri: str) -> str:
    """One line for a person after a plain ``inspect eval``: where its MLflow run went, how to
    open it, and how to turn tracking off (Inspect itself only lists the hook's name)."""
    from impostor_bench.tracking.store import ENV_DISABLE, runs_view

    exp_id = client.get_run(run_id).info.experiment_id
    server = uri.startswith(("http://", "https://"))
    view = runs_view(client, exp_id, shown_uri(uri) if server else "http://127.0.0.1:5000")
    start = "" if server else (f" after `LITELLM_LOCAL_MODEL_COST_MAP=True mlflow ui --backend-store-uri "
                               f"{shown_uri(uri)}`")
    return (f"impostor: MLflow run {run_id} logged to {shown_uri(uri)}; open {view}{start}; "
            f"{ENV_DISABLE}=0 turns MLflow tracking off")


def with_finished_samples(log: Any, finished: dict[tuple, Any]) -> Any:
    """``log`` (a header, as ``eval_set`` hands it over) with the samples seen ending in this
    process, or None when those are not exactly the log's games (a resumed eval reuses games
    of an earlier attempt, which end in no hook; an unfinished eval): then the log is read."""
    planned = log.eval.dataset.sample_ids if log.eval.dataset else None
    epochs = (log.eval.config.epochs or 1) if log.eval.config else 1
    if log.status != "success" or not planned or len(finished) != len(planned) * epochs:
        return None
    if set(finished) != {(sid, e) for sid in planned for e in range(1, epochs + 1)}:
        return None
    order = {sid: i for i, sid in enumerate(planned)}
    samples = sorted(finished.values(), key=lambda s: (s.epoch, order[s.id]))
    return log.model_copy(update={"samples": samples})


def quiet_inspect_mlflow() -> None:
    """While our tracking is on, switch off inspect-mlflow's generic tracking hook in this process.

    inspect-mlflow (if installed) turns itself on whenever MLFLOW_TRACKING_URI is
    set and would log every eval a second time (experiment ``inspect_ai``, one
    REST call per model call).  ``IMPOSTOR_KEEP_INSPECT_MLFLOW=1`` keeps both.
    Called when the impostor task is built, never on import: this module is an entry point
    that loads in every ``inspect eval``, and other people's evals keep their inspect-mlflow.
    """
    if importlib.util.find_spec("inspect_mlflow") is None:
        return
    try:
        from inspect_mlflow.tracking import MlflowTrackingHooks
    except Exception:  # noqa: BLE001 - a broken optional package must not break ours
        return
    original = MlflowTrackingHooks.enabled
    if getattr(original, "_impostor_wrapped", False):
        return

    def enabled(self: Any) -> bool:
        if not tracking_disabled() and os.environ.get(ENV_KEEP_INSPECT_MLFLOW, "0").lower() not in {"1", "true", "yes", "on"}:
            return False
        return original(self)

    enabled._impostor_wrapped = True  # type: ignore[attr-defined]
    MlflowTrackingHooks.enabled = enabled  # type: ignore[method-assign]
