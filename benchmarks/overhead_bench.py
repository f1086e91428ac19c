"""Harness overhead: games/s of the Impostor task against a bare Inspect task.

Both run in one process against the same instant in-process provider
(``reliability/<name>``, no sleep, explicit usage).  The bare task makes the
same eight calls per sample (four sequential, then four concurrent, with the
prompts of a real game, precomputed) with no game logic and a trivial scorer,
so the difference is our harness: building prompts, parsing, the store, the
transcript, the scorer and the bigger log record.

    python benchmarks/overhead_bench.py --games 300 --rounds 3
    python benchmarks/overhead_bench.py --games 300 --profile game   # cProfile top functions

Target: the game task runs at >= 0.8x the bare task's games/s.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("IMPOSTOR_MLFLOW", "0")  # measure the game, not MLflow

from inspect_ai import Task, eval as inspect_eval, task  # noqa: E402
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model  # noqa: E402
from inspect_ai.scorer import Score, Target, accuracy, scorer  # noqa: E402
from inspect_ai.solver import Generate, TaskState, solver  # noqa: E402

from impostor import prompts  # noqa: E402
from tasks.impostor import impostor  # noqa: E402
from tests.reliability import scripted  # noqa: E402

MODEL = "bench"


def _player(call: scripted.Call) -> str:
    return scripted.honest(call)


def _canned_prompts() -> tuple[list[str], list[str]]:
    """The eight user prompts of one real game (built once: the bare task sends the same
    bytes as the game task, so the comparison isolates game logic, not prompt size)."""
    shown: list[tuple[int, str]] = []
    describe, vote = [], []
    for label in (2, 4, 1, 3):
        describe.append(prompts.description_prompt(mode="homogeneous", word="apple", player_label=label,
                                                   previous=list(shown)))
        shown.append((label, "Something many people come across in everyday life."))
    for label in range(1, 5):
        vote.append(prompts.voting_prompt(mode="homogeneous", word="apple", player_label=label, descriptions=shown))
    return describe, vote


DESCRIBE_PROMPTS, VOTE_PROMPTS = _canned_prompts()


@solver
def bare_calls():
    """Eight model calls per sample, shaped like a game (four sequential, four concurrent),
    with the same prompts, and no game logic: no parsing, no store, no transcript."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        for user in DESCRIBE_PROMPTS:
            await model.generate([ChatMessageSystem(content=prompts.DESCRIPTION_SYSTEM), ChatMessageUser(content=user)])

        async def vote(user: str) -> None:
            await model.generate([ChatMessageSystem(content=prompts.VOTING_SYSTEM), ChatMessageUser(content=user)])

        await asyncio.gather(*(vote(user) for user in VOTE_PROMPTS))
        return state

    return solve


@scorer(metrics=[accuracy()])
def bare_score():
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1.0)

    return score


@task
def bare(n_games: int = 100) -> Task:
    samples = [Sample(id=f"g{i:05d}", input=f"game {i}", target="x") for i in range(n_games)]
    return Task(dataset=MemoryDataset(samples), solver=[bare_calls()], scorer=bare_score())


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


def run_once(kind: str, n_games: int, log_dir: str, log_realtime: bool = True) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) for one eval of ``n_games``."""
    t = impostor(n_games=n_games) if kind == "game" else bare(n_games=n_games)
    c0 = time.process_time()
    t0 = time.perf_counter()
    logs = inspect_eval(t, model=f"reliability/{MODEL}", log_dir=log_dir, display="none", log_level="error",
                        max_samples=n_games, max_connections=64, log_realtime=log_realtime)
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    log = logs[0]
    assert log.status == "success", log.error
    assert len(log.samples) == n_games and all(s.error is None for s in log.samples)
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", choices=["game", "bare"], default=None)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--log-realtime", action=argparse.BooleanOptionalAction, default=True,
                        help="Inspect's live sample buffer, for both tasks (Inspect's default: on)")
    parser.add_argument("--quiet-inspect-mlflow", action="store_true",
                        help="short-circuit the enabled() checks of the inspect-mlflow package's hooks "
                             "(they build a pydantic-settings object on every hook event)")
    args = parser.parse_args()
    if args.quiet_inspect_mlflow:
        quiet_inspect_mlflow()
    scripted.SCRIPTS[MODEL] = _player
    with tempfile.TemporaryDirectory() as tmp:
        run_once("bare", 8, tmp)  # warm up: imports, entry points, registry
        run_once("game", 8, tmp)  # building the game task applies impostor.gc_tuning: to both tasks from here on
        import gc

        print(f"collector: thresholds {gc.get_threshold()}, frozen objects {gc.get_freeze_count()} "
              f"(IMPOSTOR_GC={os.environ.get('IMPOSTOR_GC', '(tuned)')}); log_realtime {args.log_realtime}", flush=True)
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            elapsed, _ = run_once(args.profile, args.games, tmp, args.log_realtime)
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(args.top)
            print(out.getvalue())
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(args.top)
            print(out.getvalue())
            print(f"{args.profile}: {args.games} games in {elapsed:.2f}s under cProfile")
            return
        rates: dict[str, list[float]] = {"bare": [], "game": []}
        cpu_rates: dict[str, list[float]] = {"bare": [], "game": []}
        for r in range(args.rounds):
            for kind in ("bare", "game") if r % 2 == 0 else ("game", "bare"):
                elapsed, cpu = run_once(kind, args.games, tmp, args.log_realtime)
                rates[kind].append(args.games / elapsed)
                cpu_rates[kind].append(args.games / cpu)
                print(f"round {r + 1} {kind:4s}: {args.games} games in {elapsed:6.2f}s wall, {cpu:6.2f}s CPU = "
                      f"{args.games / elapsed:6.1f} games/s ({args.games / cpu:6.1f} games per CPU-second)",
                      flush=True)
    med = {k: sorted(v)[len(v) // 2] for k, v in rates.items()}
    cmed = {k: sorted(v)[len(v) // 2] for k, v in cpu_rates.items()}
    cbest = {k: max(v) for k, v in cpu_rates.items()}  # best round: least disturbed by a shared machine (timeit's rule)
    print(f"median games/s: bare {med['bare']:.1f}, game {med['game']:.1f}, ratio {med['game'] / med['bare']:.2f}")
    print(f"median games per CPU-second: bare {cmed['bare']:.1f}, game {cmed['game']:.1f}, "
          f"ratio {cmed['game'] / cmed['bare']:.2f}")
    print(f"best round, games per CPU-second: bare {cbest['bare']:.1f}, game {cbest['game']:.1f}, "
          f"ratio {cbest['game'] / cbest['bare']:.2f}")
    print(f"load average at end: {os.getloadavg()[0]:.2f} (nproc {os.cpu_count()})")


if __name__ == "__main__":
    main()
