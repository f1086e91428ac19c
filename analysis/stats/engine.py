"""Computing many tables of one session: in this process, or in a standard process pool.

Each table's result carries its own notes and error (``session.TableResult``), so where and in which
order a table is computed does not change what it says: the pool's results are installed in the
session and taken in the caller's order, which gives the notes one process gives.

The pool (``concurrent.futures.ProcessPoolExecutor``, forked on Linux so the workers share the loaded
games and the intermediate results most tables use, computed before the fork) takes the tables
longest first and a table after the tables it asked for, both as the last run measured them (a small
record in the user's cache, ``IMPOSTOR_TABLE_RECORD`` to move it; without one, the declaration
order). Each task carries the results the worker needs and lacks; a table the worker still lacks it
computes itself (the same result). Two tables that took over ``HEAVY_MIB`` beyond their worker's
memory last time do not run at the same time (the report's peak). A worker that dies loses no
table: what is missing is computed here.

BLAS runs on one thread while tables are computed (``one_blas_thread``): a second thread spin-waits
on the small matrices the tables use, and summing in one fixed order gives the same bundle with any
number of processes (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import contextlib
import gc
import json
import multiprocessing as mp
import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional

from impostor_bench.analysis.stats.session import REGISTRY, Analysis, TableResult

#: A table whose working memory went over this (MiB, last run) runs beside no other such table.
HEAVY_MIB = 100.0
_RECORD_ENV = "IMPOSTOR_TABLE_RECORD"


def default_jobs() -> int:
    """2 where tables may be computed in forked processes and there are two CPUs, else 1."""
    if not sys.platform.startswith("linux"):  # fork is unsafe with macOS's system libraries
        return 1
    return min(2, len(os.sched_getaffinity(0)))


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside the block (see the module docstring)."""
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    with threadpool_limits(limits=1, user_api="blas"):
        yield


# --------------------------------------------------------------------------- the last run's record


def record_path() -> Path:
    """Where the last run's seconds, memory and requests of each table are kept."""
    if os.environ.get(_RECORD_ENV):
        return Path(os.environ[_RECORD_ENV])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "impostor-bench" / "table-record.json"


def read_record(path: Optional[Path] = None) -> dict[str, dict]:
    """``{table: {"seconds", "mib", "needs"}}`` of the last run ({} when there is none or it is unreadable:
    it only orders the work)."""
    try:
        got = json.loads((path or record_path()).read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in got.items() if isinstance(v, dict)} if isinstance(got, dict) else {}


def write_record(results: Iterable[TableResult], mib: dict[str, float], path: Optional[Path] = None) -> None:
    """Keep this run's measurements for the next (merged into the old record; a failure to write is ignored)."""
    path = path or record_path()
    record = read_record(path)
    for r in results:
        old = record.get(r.name, {})
        record[r.name] = {"seconds": round(r.seconds, 3), "mib": round(mib.get(r.name, old.get("mib", 0.0)), 1),
                          "needs": list(r.needs)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True))
        os.replace(tmp, path)
    except OSError:
        pass


def needs_of(name: str, record: dict[str, dict]) -> tuple[str, ...]:
    """The tables ``name`` asks for: those its declaration names (``@table(needs=...)``: names, or a function
    of the declarations giving them) and those it asked for last run."""
    declared = getattr(getattr(REGISTRY.get(name), "spec", None), "needs", ())
    declared = declared() if callable(declared) else declared
    return tuple(dict.fromkeys([*declared, *record.get(name, {}).get("needs", ())]))


def path_seconds(names: list[str], record: dict[str, dict]) -> dict[str, float]:
    """Each of ``names``' last-run seconds plus the longest chain of tables (of ``names``) that wait for it:
    how long the work still takes once it starts, at best. A quick table that a slow one asks for
    thus starts early (rounds_trust, 0 s, before team_dynamics, 10 s, not at the end)."""
    waiting: dict[str, list[str]] = {n: [] for n in names}
    for n in names:
        for d in needs_of(n, record):
            if d in waiting and d != n:
                waiting[d].append(n)
    out: dict[str, float] = {}

    def chain(n: str, open_: frozenset) -> float:
        if n not in out:
            after = [chain(w, open_ | {n}) for w in waiting[n] if w not in open_ and w != n]  # a loop ends it
            out[n] = float(record.get(n, {}).get("seconds", 0.0)) + max(after, default=0.0)
        return out[n]

    for n in names:
        chain(n, frozenset())
    return out


def work_order(names: list[str], record: dict[str, dict]) -> list[str]:
    """``names`` by ``path_seconds``, longest first (a table never measured, and none waiting for it,
    keeps its place after them): the critical path first, so the pool's last minutes are not one table."""
    path = path_seconds(names, record)  # on a tie, the quicker first: a table before the one waiting for it
    return sorted(names, key=lambda n: (-path[n], float(record.get(n, {}).get("seconds", 0.0))))


# --------------------------------------------------------------------------- in a worker

_SESSION: Optional[Analysis] = None  # the session a forked worker computes in (set before the fork)
_JOB: Optional[Callable[[int], Any]] = None  # what ``map_in_processes``' workers call


class _Sampler:
    """This worker's highest RSS since ``start()`` (MiB), read every 50 ms by a thread: the memory a
    table takes while it runs (nothing is reset, so ``/usr/bin/time`` still sees every peak)."""

    def __init__(self) -> None:
        self.peak = 0.0
        threading.Thread(target=self._run, daemon=True).start()

    def start(self) -> float:
        self.peak = now = _rss_mib()
        return now

    def sample(self) -> float:
        """The peak including the memory now (read here: waiting for the thread's next read idled the
        worker 60 ms a table, 3.4 s of the report's 57)."""
        self.peak = max(self.peak, _rss_mib())
        return self.peak

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, _rss_mib())
            time.sleep(0.05)


def _rss_mib() -> float:
    """This process's resident memory (MiB; 0 where /proc cannot say)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


_SAMPLER: Optional[_Sampler] = None


def _worker_start() -> None:
    """In each worker: end when the parent is gone (killed), so no orphan keeps computing; sample the RSS."""
    global _SAMPLER
    _watch_parent()
    _SAMPLER = _Sampler()


def _compute_in_worker(name: str, given: list[TableResult]) -> tuple[list[TableResult], float]:
    """Table ``name`` in this worker's session, with ``given`` results installed first; returns every
    result computed here (the table and those it asked for that the worker lacked) and its working MiB."""
    a = _SESSION
    assert a is not None, "the worker's session is set before the fork"
    for r in given:
        a.install(r)
    before = set(a.computed())
    rss = _SAMPLER.start() if _SAMPLER is not None else 0.0
    a.result(name)
    mib = max(0.0, _SAMPLER.sample() - rss) if _SAMPLER is not None and rss else 0.0
    return [r for n, r in a.computed().items() if n not in before], mib


def _run_job(i: int) -> Any:
    assert _JOB is not None
    return _JOB(i)


def _before_fork(trim: Optional[Callable[[], None]]) -> None:
    """Free what can be freed, then freeze the collector: a forked worker touching the objects it
    shares with this process (refcounts aside) would copy their pages."""
    gc.collect()
    if trim is not None:
        trim()
    gc.freeze()


def _pool(jobs: int, sample: bool = False) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("fork"),
                               initializer=_worker_start if sample else _watch_parent)


def _watch_parent() -> None:
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


# --------------------------------------------------------------------------- tables


def compute_tables(analysis: Analysis, names: Iterable[str], jobs: int = 1,
                   progress: Callable[[str], None] = lambda s: None, *, remember: bool = False,
                   warm: Callable[[Analysis], None] = lambda a: None) -> dict[str, TableResult]:
    """The registered tables ``names`` of ``analysis``, computed and installed in the session (nothing is
    added to its notes: take them with ``analysis.result(name)`` in the order wanted). ``jobs`` > 1: in
    a process pool (not with ``config.strict``: a table's exception must reach the caller here).
    ``warm(analysis)`` computes, before the fork, the intermediate results to share. The last run's
    record orders the work; ``remember``: keep this run's measurements for the next run."""
    names = list(dict.fromkeys(names))
    record = read_record()
    done: dict[str, TableResult] = dict(analysis.computed())
    mib: dict[str, float] = {}
    if jobs > 1 and not analysis.config.strict and len([n for n in names if n not in done]) > 1:
        with analysis.batch():
            _in_pool(analysis, names, jobs, record, done, mib, progress, warm)
    with analysis.batch():
        for i, name in enumerate(names, 1):  # here: one process, or what the pool did not send
            if name not in done:
                t0 = time.perf_counter()
                with _holding(analysis):
                    r = analysis.result(name)
                done.update(analysis.computed())
                progress(f"[{i}/{len(names)}] table {name}: {len(r.frame)} rows in {time.perf_counter() - t0:.1f} s")
    if remember:
        write_record([done[n] for n in names if n in done], mib)
    return {n: done[n] for n in names}


@contextlib.contextmanager
def _holding(analysis: Analysis) -> Iterator[None]:
    """The notes of a table computed for the caller stay in its result, not in the session's notes yet."""
    notes, errors = list(analysis.notes), list(analysis.errors)
    try:
        yield
    finally:
        analysis.notes, analysis.errors = notes, errors


def _in_pool(analysis: Analysis, names: list[str], jobs: int, record: dict[str, dict], done: dict[str, TableResult],
             mib: dict[str, float], progress: Callable[[str], None], warm: Callable[[Analysis], None]) -> None:
    """Compute what it can of ``names`` in a pool of ``jobs`` forked workers, into ``done`` and the session."""
    global _SESSION
    with _holding(analysis):
        warm(analysis)  # their notes go with the tables that use them
    todo = [n for n in work_order(names, record) if n not in done]
    wanted = set(names)
    heavy = {n for n in todo if float(record.get(n, {}).get("mib", 0.0)) > HEAVY_MIB}
    running: dict[Future, str] = {}
    _SESSION = analysis
    _before_fork(analysis.after_table)
    progress(f"computing {len(todo)} tables in {jobs} processes")
    try:
        with _pool(jobs, sample=True) as pool:
            while todo or running:
                while todo and len(running) < jobs:
                    name = _next(todo, running, record, done, heavy)
                    if name is None:
                        break
                    todo.remove(name)
                    given = [done[n] for n in _needs(name, record, done)]
                    running[pool.submit(_compute_in_worker, name, given)] = name
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    name = running.pop(fut)
                    try:
                        results, used = fut.result()
                    except BrokenProcessPool:
                        raise
                    except BaseException as exc:  # noqa: BLE001 - the worker's, e.g. a result that does not pickle
                        if isinstance(exc, (SystemExit, GeneratorExit)):
                            raise
                        progress(f"table {name} did not come back from its worker ({type(exc).__name__}: {exc}); "
                                 "it is computed here")
                        continue
                    mib[name] = used
                    for r in results:
                        if r.name not in done:
                            done[r.name] = r
                            analysis.install(r)
                            if r.name in todo:
                                todo.remove(r.name)
                            if r.name in wanted:
                                progress(f"[{len([n for n in done if n in wanted])}/{len(names)}] table {r.name}: "
                                         f"{len(r.frame)} rows in {r.seconds:.1f} s")
    except BrokenProcessPool as exc:  # a worker died: what it did not send is computed here
        progress(f"a worker process died ({exc}); its tables are computed here")
    finally:
        _SESSION = None
        gc.unfreeze()


def _next(todo: list[str], running: dict[Future, str], record: dict[str, dict], done: dict[str, TableResult],
          heavy: set[str]) -> Optional[str]:
    """The first table of ``todo`` whose tables (as last run asked for them) are done and that is not heavy
    beside a heavy one running; None: wait for a running one (or, with nothing running, the first)."""
    busy = set(running.values())
    heavy_running = bool(busy & heavy)
    for name in todo:
        if any(n not in done for n in needs_of(name, record) if n in todo or n in busy):
            continue
        if name in heavy and heavy_running:
            continue
        return name
    return None if running else todo[0]


def _needs(name: str, record: dict[str, dict], done: dict[str, TableResult]) -> list[str]:
    """The done tables that ``name`` asks for, and theirs (a worker may lack any of them); for a table never
    measured, every done table (they are small)."""
    if name not in record:
        return list(done)
    out: dict[str, None] = {}
    stack = list(needs_of(name, record))
    while stack:
        n = stack.pop()
        if n in done and n not in out:
            out[n] = None
            stack += needs_of(n, record)
    return list(out)


# --------------------------------------------------------------------------- anything else


def map_in_processes(job: Callable[[int], Any], count: int, jobs: int = 1,
                     trim: Optional[Callable[[], None]] = None) -> list[Any]:
    """``[job(i) for i in range(count)]``, in a pool of ``jobs`` forked workers when ``jobs`` > 1 (what
    ``job`` returns must pickle); an ``i`` a worker did not send back (it died) is done here."""
    global _JOB
    out: dict[int, Any] = {}
    if jobs > 1 and count > 1:
        _JOB = job
        _before_fork(trim)
        try:
            with _pool(jobs) as pool:
                futures = {pool.submit(_run_job, i): i for i in range(count)}
                for fut in futures:
                    with contextlib.suppress(BrokenProcessPool):
                        out[futures[fut]] = fut.result()
        finally:
            _JOB = None
            gc.unfreeze()
    return [out[i] if i in out else job(i) for i in range(count)]
