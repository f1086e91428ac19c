"""Harness overhead: games/s of the Impostor task against a bare Inspect task.

Both tasks run against the same instant in-process provider (``reliability/<name>``,
no sleep, explicit usage), loaded from their files as ``inspect eval <file>`` loads
them.  The bare task (``benchmarks/bare_task.py``) makes the same eight calls per
sample (four sequential, then four concurrent, with the prompts of a real game,
precomputed) with no game logic and a constant score, so the difference is our
harness: building prompts, parsing, the store, the transcript, the scorer and the
bigger log record.  Rounds alternate the two tasks; by default each measured eval
runs in a fresh process after the same warm-up (``--no-isolate``: all in this one).

    python benchmarks/overhead_bench.py --games 200 --rounds 6 --no-log-realtime
    python benchmarks/overhead_bench.py --games 300 --profile game   # cProfile top functions

Target: the game task runs at >= 0.8x the bare task's games/s.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("IMPOSTOR_MLFLOW", "0")  # the game without MLflow, unless --tracking


from inspect_ai import eval as inspect_eval  # noqa: E402

from tests.reliability import scripted  # noqa: E402

MODEL = "bench"


def _player(call: scripted.Call) -> str:
    return scripted.honest(call)


# Both tasks are loaded from their files, as `inspect eval <file>` loads them.  Imported
# as a module instead (``from impostor_bench.tasks.impostor import impostor``), a task pays Inspect's
# lookup of the installed distribution that ships it on every eval (~0.3 s CPU here:
# importlib.metadata.packages_distributions() scans every installed package), while a
# task defined in this script's ``__main__`` would skip it: loading both from files
# gives both the same per-eval cost, the one the README's `inspect eval` pays.
TASK_FILES = {"game": "tasks/impostor.py@impostor", "bare": "benchmarks/bare_task.py@bare"}


def quiet_inspect_mlflow() -> None:
    """Answer inspect-mlflow's hook ``enabled()`` once per process instead of once per event."""
    import importlib.util

    if importlib.util.find_spec("inspect_mlflow") is None:
        return
    from inspect_mlflow.tracing import MlflowTracingHooks
    from inspect_mlflow.tracking import MlflowTrackingHooks

    for cls in (MlflowTracingHooks, MlflowTrackingHooks):
        first = cls.enabled(cls())
        cls.enabled = lambda self, _v=first: _v  # type: ignore[method-assign]


def timed_eval(kind: str, n_games: int, log_dir: str, log_realtime: bool = True) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, the log) for one eval of ``n_games``."""
    c0 = time.process_time()
    t0 = time.perf_counter()
    logs = inspect_eval(TASK_FILES[kind], task_args={"n_games": n_games}, model=f"reliability/{MODEL}",
                        log_dir=log_dir, display="none", log_level="error", max_samples=n_games,
                        max_connections=64, log_realtime=log_realtime)
    return time.perf_counter() - t0, time.process_time() - c0, logs[0]


def check(log: Any, n_games: int) -> None:
    """Every game ran and none errored.  Outside the timed part: ``log.samples`` reads every
    sample back from the log file (Inspect loads them lazily), which ``inspect eval`` does
    not do; timed, the check cost 1.2-1.9 ms of CPU a game, in proportion to the record's size."""
    assert log.status == "success", log.error
    assert len(log.samples) == n_games and all(s.error is None for s in log.samples)


def run_once(kind: str, n_games: int, log_dir: str, log_realtime: bool = True) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) for one checked eval of ``n_games``."""
    elapsed, cpu, log = timed_eval(kind, n_games, log_dir, log_realtime)
    check(log, n_games)
    return elapsed, cpu


def _callgrind(*args: str) -> None:
    """Send a command to the callgrind running this process; it only answers while this
    process runs code, so wait by spinning, not by blocking in ``wait()``."""
    import subprocess

    proc = subprocess.Popen(["callgrind_control", *args, str(os.getpid())], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    while proc.poll() is None:
        sum(range(1000))


def measured_eval(kind: str, n_games: int, log_dir: str, log_realtime: bool, callgrind: bool = False
                  ) -> tuple[float, float]:
    """``run_once`` under a name of its own, so a sampling profiler's stacks tell it from the
    warm-up; under ``--callgrind`` only this eval's instructions are counted."""
    if callgrind:
        _callgrind("--instr=on")
        _callgrind("--zero")
    elapsed, cpu, log = timed_eval(kind, n_games, log_dir, log_realtime)
    if callgrind:
        _callgrind("--dump")
        _callgrind("--instr=off")
    check(log, n_games)
    return elapsed, cpu


def _instructions(prefix: str) -> int:
    """Instructions in the dumps callgrind wrote for the measured eval (``summary:`` lines)."""
    import glob

    total = 0
    for path in glob.glob(f"{prefix}.*.*"):  # PREFIX.<pid>.<dump number>: the measured eval's dump
        with open(path) as f:
            total += sum(int(line.split()[1]) for line in f if line.startswith("summary:"))
    return total


def run_isolated(kind: str, args: argparse.Namespace) -> tuple[float, float]:
    """One measured eval in a fresh process (same warm-up as here), so neither task runs on
    the heap the other left behind: in one process the bare task's cost per game moved by
    a third depending on which eval ran before it."""
    import subprocess

    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", kind, "--games", str(args.games),
           "--log-realtime" if args.log_realtime else "--no-log-realtime"]
    if args.callgrind:
        prefix = f"{args.tracking_dir}/callgrind-{kind}-{time.monotonic_ns()}"
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={prefix}.%p",
               *cmd, "--callgrind"]
    if args.quiet_inspect_mlflow:
        cmd.append("--quiet-inspect-mlflow")
    env = dict(os.environ)
    if args.tracking:  # our MLflow hooks on, into a throwaway SQLite store (the bare task is not tracked)
        env.update(IMPOSTOR_MLFLOW="1", MLFLOW_TRACKING_URI=f"sqlite:///{args.tracking_dir}/mlflow.db",
                   LITELLM_LOCAL_MODEL_COST_MAP="True")
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    elapsed, cpu = (float(v) for v in line.split()[1:])
    if args.callgrind:
        return elapsed, _instructions(prefix) / 1e9  # "CPU" becomes giga-instructions
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", choices=["game", "bare"], default=None)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--log-realtime", action=argparse.BooleanOptionalAction, default=True,
                        help="Inspect's live sample buffer, for both tasks (Inspect's default: on)")
    parser.add_argument("--isolate", action=argparse.BooleanOptionalAction, default=True,
                        help="run each measured eval in a fresh process after the same warm-up (default); "
                             "--no-isolate alternates the tasks in this process")
    parser.add_argument("--tracking", action="store_true",
                        help="with our MLflow tracking on (the product's default) into a temporary SQLite store; "
                             "needs the default --isolate")
    parser.add_argument("--callgrind", action="store_true",
                        help="count instructions (valgrind's callgrind, ~100x slower) instead of CPU time: "
                             "repeatable where time on a shared machine is not; use ~60 games")
    parser.add_argument("--one", choices=["game", "bare"], default=None, help=argparse.SUPPRESS)
    parser.add_argument("--quiet-inspect-mlflow", action="store_true",
                        help="short-circuit the enabled() checks of the inspect-mlflow package's hooks "
                             "(they build a pydantic-settings object on every hook event)")
    args = parser.parse_args()
    os.chdir(ROOT)  # the task files are relative to the repository root
    if args.quiet_inspect_mlflow:
        quiet_inspect_mlflow()
    scripted.SCRIPTS[MODEL] = _player
    if (args.tracking or args.callgrind) and not args.isolate and not args.one:
        parser.error("--tracking and --callgrind need --isolate (the default)")
    with tempfile.TemporaryDirectory() as tmp:
        args.tracking_dir = tmp
        if args.tracking:  # create the store once, not inside the first measured eval
            from impostor_bench.tracking.store import get_client

            get_client(f"sqlite:///{tmp}/mlflow.db")
        run_once("bare", 8, tmp)  # warm up: imports, entry points, registry
        run_once("game", 8, tmp)  # building the game task applies impostor_bench.gc_tuning: to both tasks from here on
        import gc

        print(f"collector: thresholds {gc.get_threshold()}, frozen objects {gc.get_freeze_count()} "
              f"(IMPOSTOR_GC={os.environ.get('IMPOSTOR_GC', '(tuned)')}); log_realtime {args.log_realtime}", flush=True)
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            elapsed, _, log = timed_eval(args.profile, args.games, tmp, args.log_realtime)
            prof.disable()
            check(log, args.games)
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(args.top)
            print(out.getvalue())
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.top)
            print(out.getvalue())
            print(f"{args.profile}: {args.games} games in {elapsed:.2f}s under cProfile")
            return
        if args.one:
            elapsed, cpu = measured_eval(args.one, args.games, tmp, args.log_realtime, args.callgrind)
            print(f"RESULT {elapsed} {cpu}")
            return
        rates: dict[str, list[float]] = {"bare": [], "game": []}
        cpu_rates: dict[str, list[float]] = {"bare": [], "game": []}
        for r in range(args.rounds):
            for kind in ("bare", "game") if r % 2 == 0 else ("game", "bare"):
                if args.isolate:
                    elapsed, cpu = run_isolated(kind, args)
                else:
                    elapsed, cpu = run_once(kind, args.games, tmp, args.log_realtime)
                rates[kind].append(args.games / elapsed)
                cpu_rates[kind].append(args.games / cpu)
                if args.callgrind:
                    print(f"round {r + 1} {kind:4s}: {args.games} games, {cpu * 1e3 / args.games:7.1f} M instructions "
                          f"per game", flush=True)
                    continue
                print(f"round {r + 1} {kind:4s}: {args.games} games in {elapsed:6.2f}s wall, {cpu:6.2f}s CPU = "
                      f"{args.games / elapsed:6.1f} games/s ({args.games / cpu:6.1f} games per CPU-second)",
                      flush=True)
    if args.callgrind:
        per_game = {k: statistics.median(v) / args.games * 1e3 for k, v in (("bare", [args.games / x for x in
                    cpu_rates["bare"]]), ("game", [args.games / x for x in cpu_rates["game"]]))}
        print(f"median M instructions per game: bare {per_game['bare']:.1f}, game {per_game['game']:.1f}, "
              f"ratio (games per instruction) {per_game['bare'] / per_game['game']:.3f}")
        return
    med = {k: statistics.median(v) for k, v in rates.items()}
    cmed = {k: statistics.median(v) for k, v in cpu_rates.items()}
    cbest = {k: max(v) for k, v in cpu_rates.items()}  # best round: least disturbed by a shared machine (timeit's rule)
    print(f"median games/s: bare {med['bare']:.1f}, game {med['game']:.1f}, ratio {med['game'] / med['bare']:.2f}")
    print(f"median games per CPU-second: bare {cmed['bare']:.1f}, game {cmed['game']:.1f}, "
          f"ratio {cmed['game'] / cmed['bare']:.2f}")
    print(f"best round, games per CPU-second: bare {cbest['bare']:.1f}, game {cbest['game']:.1f}, "
          f"ratio {cbest['game'] / cbest['bare']:.2f}")
    print(f"load average at end: {os.getloadavg()[0]:.2f} (nproc {os.cpu_count()})")


if __name__ == "__main__":
    main()
