"""The report's tables and figures in two processes (90,720 games in under 30 s on two cores).

Tables: this process and a forked one take the report's tables in turn from a shared counter. The
first process to start a table (or one a table asks for) claims it in a shared array, so each table
is computed once; a table that asks for one the other process is computing is put off while other
work is left, and waits for it at the end. Each process records what computing a table did
(``Analysis.recorder``) and sends the table to the other. At the end the parent replays every table
in the report's order (``Analysis.provider``), so the bundle's tables, notes and errors are those one
process makes (tests/analysis/report/test_report_lanes.py).

Figures: each process draws the next figure not yet taken; the parent puts them in order.

The two processes' memory adds up: the intermediate results most tables share are computed before
the fork, and the tables that need the most memory run one at a time (``_HEAVY``).

The child is forked (Linux only), so it shares the loaded games and the prepared arrays, computed
before the fork. The report runs BLAS on one thread whatever ``--jobs`` (``one_blas_thread``): a
second thread spin-waits on the small matrices the tables use, costing a third of the report's CPU
for no time saved, and summing in one fixed order gives the same bundle in one process or two
(benchmarks/RESULTS.md, "the report in two processes").
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing as mp
import os
import queue
import sys
import threading
import time
import traceback
from typing import Any, Callable, Iterator, Mapping, Optional

from impostor_bench.analysis.stats import REGISTRY, share_intermediates
from impostor_bench.analysis.stats.session import Analysis, Computed, Recorder

_FREE, _PARENT, _CHILD = 0, 1, 2  # who claimed a table
_POLL_S = 0.2  # how often a waiting process checks that the other is still alive
#: The slowest tables on 90,720 games (benchmarks/RESULTS.md), taken first so that the two processes
#: finish together (a table left to the end runs alone); the others follow in the report's order.
_SLOWEST = ("team_dynamics", "win_model_mode_difficulty", "headline", "learning", "team_ballots", "chi2",
            "team_language", "opponent_baseline", "style_metrics", "equation1", "style_correlation")
#: The tables that take the most memory while they run on 90,720 games (over 100 MiB more,
#: benchmarks/report_memory.py; ``headline`` with its bootstrap made the peak beside ``team_dynamics``,
#: benchmarks/tree_memory.py): two at once would take the two processes over the report's 800 MB, so
#: while other work is left only one runs at a time (a second is put off like a table waiting on the
#: other process).
_HEAVY = frozenset({"team_dynamics", "detection_by_difficulty", "team_language", "team_ballots", "learning",
                    "style_adjusted", "ratings", "speaking_itt", "headline"})


class _Busy(BaseException):
    """A table asked for one the other process is computing (or, while a heavy one runs there, for a
    heavy one): put it off and take other work (a BaseException, so the tables' own ``except
    Exception`` lets it through)."""


def default_jobs() -> int:
    """2 where the report may fork and has two CPUs, else 1."""
    if not sys.platform.startswith("linux"):  # fork is unsafe with macOS's system libraries
        return 1
    return min(2, len(os.sched_getaffinity(0)))


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread while the report runs (see the module docstring)."""
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _take(counter: Any) -> int:
    with counter.get_lock():
        i = counter.value
        counter.value += 1
    return i


def _watch_parent() -> Callable[[], bool]:
    """In a child: exit when the parent is gone (killed), so no orphan keeps computing; returns
    whether the parent is alive."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
    return lambda: os.getppid() == parent


class _Lane:
    """One process's side of the tables: its claims, the tables it holds (computed or received)
    and the queues to and from the other process; the session's ``provider``."""

    def __init__(self, me: int, index: dict[str, int], claims: Any, heavy: Any, inbox: Any, outbox: Any,
                 analysis: Analysis, progress: Callable[[str], None] = lambda s: None) -> None:
        self.me, self.index, self.claims, self.heavy = me, index, claims, heavy
        self.inbox, self.outbox = inbox, outbox
        self.config = analysis.config
        self.other_alive: Callable[[], bool] = lambda: True
        self.store: dict[tuple, Computed] = {}
        self.memos: dict[tuple, list[tuple]] = {}  # received from the other process
        self.other_done = False
        self.failure: Optional[str] = None
        self.recorder = Recorder(on_table=self._computed)
        self._sent_memos: set[tuple] = set()
        self._progress = progress
        self._done_names: set[str] = set()
        self._open: list[int] = []  # the tables this process claimed and is computing (innermost last)
        self._holding: Optional[str] = None  # the heavy table this process holds the lock for
        self.may_put_off = False  # True while other work is left to take: a table waiting on the other is put off

    # ----------------------------------------------------------------- the session's provider

    def table(self, key: tuple) -> Optional[Computed]:
        if key in self.store:
            return self.store[key]
        name, config = key
        i = self.index.get(name)
        if i is None or config != self.config:
            return None
        if self._claim(i):
            if name in _HEAVY and self._holding is None:
                if self._acquire_heavy():
                    self._holding = name
                elif self.may_put_off:
                    raise _Busy(None)
            return None
        if self.may_put_off:
            while self.receive(0):  # it may have come meanwhile
                pass
            if key not in self.store:
                raise _Busy(key)
        return self._wait_for(key)

    def _acquire_heavy(self) -> bool:
        """The heavy lock: at once or not while other work is left; else once the other process lets
        it go (a holder never waits on the other, see ``_wait_for``), or not when that one has ended."""
        if self.may_put_off:
            return bool(self.heavy.acquire(block=False))
        while not self.heavy.acquire(timeout=_POLL_S):
            if self.other_done or not self.other_alive():
                return False  # it ended (or died) holding it
            self.receive(0)
        return True

    def _claim(self, i: int) -> bool:
        """Whether this process is to compute table ``i`` (it was free, now claimed, or already ours)."""
        with self.claims.get_lock():
            owner = self.claims[i]
            if owner == _FREE:
                self.claims[i] = self.me
                self._open.append(i)
        return owner in (_FREE, self.me)

    def memo_events(self, key: tuple) -> list[tuple]:
        return self.memos.get(key) or self.recorder.memos.get(key, [])

    # ----------------------------------------------------------------- computing and exchanging

    def work(self, analysis: Analysis, names: list[str], counter: Any) -> None:
        """Compute the next table nobody has claimed, until the counter runs past ``names``. A table that
        waits on one the other process is computing, or a heavy one while the other runs a heavy one, is
        put off (its claims let go) and tried again once what it waited for is there."""
        put_off: dict[str, Optional[tuple]] = {}  # name -> the table it waits for (None: the heavy lock)
        while True:
            while self.receive(0):
                pass
            for name in [n for n, key in put_off.items() if self._ready(key)]:
                if self._attempt(analysis, name, put_off):
                    del put_off[name]
            if (i := _take(counter)) >= len(names):
                break
            if self.claims[self.index[names[i]]] == _FREE:
                self._attempt(analysis, names[i], put_off)
        for name in put_off:  # nothing else to take: wait for the other process where needed
            analysis.table(name)

    def _ready(self, key: Optional[tuple]) -> bool:
        """Whether what a put-off table waited for is there (a table received; the heavy lock free)."""
        if key is not None:
            return key in self.store
        if self.heavy.acquire(block=False):
            self.heavy.release()
            return True
        return False

    def _attempt(self, analysis: Analysis, name: str, put_off: dict[str, Optional[tuple]]) -> bool:
        """Compute ``name`` unless it must wait (then it is put off, with what it waits for): done?"""
        self.may_put_off = True
        try:
            analysis.table(name)
            return True
        except _Busy as busy:
            put_off[name] = busy.args[0]
            self._let_go_open()
            self._release_heavy()
            return False
        finally:
            self.may_put_off = False

    def _let_go_open(self) -> None:
        """Free the claims of the tables a put-off table was computing (none of them finished)."""
        with self.claims.get_lock():
            for i in self._open:
                self.claims[i] = _FREE
        self._open.clear()

    def _release_heavy(self) -> None:
        if self._holding is not None:
            self._holding = None
            self.heavy.release()

    def _computed(self, key: tuple, computed: Computed) -> None:
        if key[0] == self._holding:
            self._release_heavy()
        i = self.index.get(key[0])
        if key[1] == self.config and i in self._open:
            self._open.remove(i)
        self.store[key] = computed
        new = {k: v for k, v in self.recorder.memos.items() if k not in self._sent_memos}
        self._sent_memos.update(new)
        if not self.other_done:
            self.outbox.put(("table", key, computed, new))
        self._report(key, computed, "")

    def _report(self, key: tuple, computed: Computed, where: str) -> None:
        if key[1] == self.config and key[0] not in self._done_names:
            self._done_names.add(key[0])
            self._progress(f"[{len(self._done_names)}/{len(self.index)}] table {key[0]}: {len(computed.frame)} rows "
                           f"in {computed.seconds:.1f} s{where}")

    def receive(self, timeout: float) -> bool:
        """Take one message from the other process (False: none came within ``timeout``)."""
        try:
            msg = self.inbox.get(timeout=timeout)
        except queue.Empty:
            return False
        if msg[0] == "table":
            _, key, computed, memos = msg
            self.store.setdefault(key, computed)
            self.memos.update(memos)
            self._report(key, computed, " (second process)")
        else:  # "done" or ("failed", traceback)
            self.other_done = True
            self.failure = msg[1] if msg[0] == "failed" else None
        return True

    def _wait_for(self, key: tuple) -> Optional[Computed]:
        self._release_heavy()  # waiting on the other process, which may need it: the rest runs without it
        i = self.index[key[0]]
        while key not in self.store:
            if self._claim(i):
                return None  # the other process put it off: compute it here
            if not self.receive(_POLL_S) and (self.other_done or not self.other_alive()):
                return None  # the other process ended without it: compute it here
        return self.store[key]


def _before_fork(trim: Optional[Callable[[], None]]) -> None:
    """Fork-friendly memory: no garbage, freed pages handed back (else the parent reusing one copies it
    while the child keeps the old one), and the collector frozen (else the child's, or the parent's,
    writes to every object the two share, copying its page); ``gc.unfreeze`` once the child is done."""
    gc.collect()
    if trim is not None:
        trim()
    gc.freeze()


def _end(proc: Any) -> None:
    """Wait a little for a child that has sent what it will send, then end it."""
    proc.join(timeout=10)
    if proc.is_alive():
        proc.terminate()


def _let_go(analysis: Analysis) -> None:
    """Forget the intermediate results but the prepared arrays (the tables a process still asks for
    compute theirs again) and hand the freed memory back: the two processes' peaks add up."""
    analysis.drop_memos(keep=[("prepared",)])
    if analysis.after_table is not None:
        analysis.after_table()


def _table_child(lane: _Lane, analysis: Analysis, names: list[str], counter: Any) -> None:
    lane.other_alive = _watch_parent()
    analysis.recorder, analysis.provider = lane.recorder, lane
    try:
        lane.work(analysis, names, counter)
        lane.outbox.put(("done", None))
    except BaseException:  # noqa: BLE001 - the parent computes what is missing
        lane._release_heavy()
        lane.outbox.put(("failed", traceback.format_exc()))
    lane.outbox.close()
    lane.outbox.join_thread()


class _Replay:
    """The tables both processes computed, handed to the session in the report's order."""

    def __init__(self, store: dict[tuple, Computed], memos: dict[tuple, list[tuple]]) -> None:
        self.store, self.memos = store, memos

    def table(self, key: tuple) -> Optional[Computed]:
        return self.store.get(key)

    def memo_events(self, key: tuple) -> list[tuple]:
        return self.memos.get(key, [])


@contextlib.contextmanager
def tables_in_two_processes(analysis: Analysis, tables: Mapping[str, Callable], names: list[str],
                            progress: Callable[[str], None] = lambda s: None) -> Iterator[dict[str, float]]:
    """Compute the registered tables among ``names`` (those ``tables`` maps to the registered function:
    not a caller's own) in this process and a forked one; inside the
    block ``analysis.table(name)`` replays them (the notes of one process, in the order asked).
    Yields each table's seconds of computing. A table the child did not send (it failed, was
    killed) is computed here."""
    ctx = mp.get_context("fork")
    index = {n: i for i, n in enumerate(REGISTRY)}
    names = [n for n in names if REGISTRY.get(n) is tables[n]]
    names = [n for n in _SLOWEST if n in names] + [n for n in names if n not in _SLOWEST]
    claims, counter = ctx.Array("b", len(index)), ctx.Value("i", 0)
    to_parent, to_child = ctx.Queue(), ctx.Queue()
    notes0, errors0 = list(analysis.notes), list(analysis.errors)
    heavy = ctx.Lock()
    lane = _Lane(_PARENT, index, claims, heavy, to_parent, to_child, analysis, progress)
    child_lane = _Lane(_CHILD, index, claims, heavy, to_child, to_parent, analysis)
    analysis.recorder, analysis.provider = lane.recorder, lane
    try:
        share_intermediates(analysis)  # once, before the fork: the child shares their pages
        _before_fork(analysis.after_table)
        child = ctx.Process(target=_table_child, args=(child_lane, analysis, names, counter), daemon=True)
        child.start()
        lane.other_alive = child.is_alive
        try:
            lane.work(analysis, names, counter)
            _let_go(analysis)  # this process computes no more: its intermediate results go while it waits
            while not lane.other_done and (lane.receive(_POLL_S) or child.is_alive()):
                pass
        except BaseException:  # interrupted, or a bug in strict mode: the child's work is not wanted
            child.terminate()
            raise
        finally:
            gc.unfreeze()
            lane.other_done = True  # nothing more is sent to the child
            to_child.cancel_join_thread()
            _end(child)
        if lane.failure:
            progress(f"the second process failed; its tables are computed here:\n{lane.failure}")
    except BaseException:
        analysis.recorder = analysis.provider = None
        raise
    analysis.recorder = None
    analysis.restart(notes0, errors0)
    analysis.provider = _Replay(lane.store, {**lane.recorder.memos, **lane.memos})
    try:
        yield {key[0]: c.seconds for key, c in lane.store.items() if key[1] == analysis.config}
    finally:
        analysis.provider = None


def draw_in_two_processes(draw: Callable[[int], Any], count: int, trim: Optional[Callable[[], None]] = None
                          ) -> list[Any]:
    """``[draw(i) for i in range(count)]``, each process drawing the next ``i`` not yet taken; what
    ``draw`` returns must pickle. An ``i`` the child did not send back (it failed) is drawn here.
    ``trim`` hands freed memory back before the fork."""
    ctx = mp.get_context("fork")
    counter, results = ctx.Value("i", 0), ctx.Queue()

    def child() -> None:
        _watch_parent()
        while (i := _take(counter)) < count:
            results.put((i, draw(i)))
        results.close()
        results.join_thread()

    _before_fork(trim)
    try:
        return _draw_beside(ctx, child, draw, count, counter, results)
    finally:
        gc.unfreeze()


def _draw_beside(ctx: Any, child: Callable[[], None], draw: Callable[[int], Any], count: int, counter: Any,
                 results: Any) -> list[Any]:
    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    out: dict[int, Any] = {}
    try:
        while (i := _take(counter)) < count:
            out[i] = draw(i)
        while len(out) < count and (proc.is_alive() or not results.empty()):
            with contextlib.suppress(queue.Empty):
                j, res = results.get(timeout=_POLL_S)
                out[j] = res
    except BaseException:  # interrupted: the child's figures are not wanted
        proc.terminate()
        raise
    _end(proc)
    for i in range(count):
        if i not in out:
            out[i] = draw(i)
    return [out[i] for i in range(count)]
