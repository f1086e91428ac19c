"""An explicit analysis session: the input tables, one ``StatsConfig``, the table cache and the notes.

In the spirit of statsmodels' results objects, ``Analysis(data, config)`` holds what the tables
share, so nothing is hidden on the input: ``a.table("odds_ratios")`` computes a table once (the
tables that reuse others get the cached one), ``a.memo(key, fn)`` keeps intermediate results
(the prepared games, bootstrap weights; ``per_table=True``: only while the table that made it runs) and ``a.notes`` collects the caveats, starting from the
loader's ``data.notes``, which are never appended to.

The cache is keyed by a content fingerprint of the frames (games, players, models, moves) (and the word embedder's identity), taken at every outermost call
(a table asked for from outside, not one table reusing another): after an in-place edit of a
frame, or a frame replaced by another that happens to get the same ``id()``, the session starts
over (cache and notes) instead of serving a stale table. ``with a.batch():`` takes the
fingerprint once for a run of calls (the report's ~60 tables) on frames that do not change meanwhile.

A ``Recorder`` notes what each table did (its notes, errors, and the tables and intermediate results
it asked for, in order) and a ``Provider`` hands the session tables computed elsewhere, which it
installs by replaying what they did: the report computes its tables in two processes, in any order,
and then replays them in its own order, so its notes come out as one process would have made them
(``impostor_bench.analysis.report.lanes``).
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional, Protocol

import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.declaration import TableSpec


class Table(Protocol):
    """A registered table: ``fn(data, config)`` gives the cached table of ``Analysis.of(data)``;
    ``fn.compute(analysis, config)`` computes it (errors become an empty table plus a note)."""

    table_name: str
    spec: "TableSpec"  # its declaration (title, section, inference, figures, rounds)
    # an attribute, not a method: the registry sets it on the wrapper function (tests replace it)
    compute: Callable[["Analysis", StatsConfig], pd.DataFrame]

    def __call__(self, data: "AnalysisData | Analysis", config: Optional[StatsConfig] = None) -> pd.DataFrame: ...


@dataclass
class Computed:
    """A table computed (possibly in another process) and what computing it did, in order:
    ``("note", msg)``, ``("error", msg)``, ``("table", name, config)``, ``("memo", key)``."""

    frame: pd.DataFrame
    events: list[tuple]
    seconds: float = 0.0


class Recorder:
    """What each table and intermediate result did while this session computed it (``Computed.events``)."""

    def __init__(self, on_table: Optional[Callable[[tuple, Computed], None]] = None) -> None:
        self._frames: list[list[tuple]] = [[]]  # the innermost table or memo being computed last
        self.memos: dict[tuple, list[tuple]] = {}  # memo key -> what computing it did
        self.on_table = on_table  # called with each table this session computes

    def event(self, ev: tuple) -> None:
        self._frames[-1].append(ev)

    def push(self) -> None:
        self._frames.append([])

    def pop(self) -> list[tuple]:
        return self._frames.pop()


class Provider(Protocol):
    """Tables computed elsewhere: ``table(key)`` gives one (or None: compute it here), ``memo_events(key)``
    what computing an intermediate result did."""

    def table(self, key: tuple) -> Optional[Computed]: ...

    def memo_events(self, key: tuple) -> list[tuple]: ...


#: Every table by name, filled by ``impostor_bench.analysis.stats._base.table`` as the table modules are imported.
REGISTRY: dict[str, Table] = {}


def frame_fingerprint(df: Optional[pd.DataFrame]) -> Optional[tuple]:
    """Columns, dtypes and a digest of every cell and index label, in row order (None for no frame)."""
    if df is None:
        return None
    try:
        cells = pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes()
    except TypeError:  # a cell pandas cannot hash (a list, a dict): fall back to its pickle
        cells = pickle.dumps(df, protocol=pickle.HIGHEST_PROTOCOL)
    digest = hashlib.blake2b(cells, digest_size=16).hexdigest()
    return tuple(map(str, df.columns)), tuple(map(str, df.dtypes)), len(df), digest


class Analysis:
    """One analysis of ``data`` under ``config`` (see the module docstring)."""

    def __init__(self, data: AnalysisData, config: Optional[StatsConfig] = None) -> None:
        if isinstance(data, Analysis):
            raise TypeError("Analysis(data): data is already an Analysis; use Analysis.of(data)")
        self.data = data
        self.config = config or StatsConfig()
        self.notes: list[str] = list(data.notes)
        self.errors: list[str] = []  # unexpected failures of tables (each also a note)
        self._tables: dict[tuple[str, StatsConfig], pd.DataFrame] = {}
        self._misc: dict[tuple, Any] = {}
        self._table_memos: list[list[tuple]] = []  # per table being computed: its memos kept only while it runs
        self._fingerprint: Optional[tuple] = None
        self._depth = 0  # > 0 inside a table or a batch: the frames are not re-fingerprinted
        #: called after each table is computed (nested ones too); the report hands freed heap pages
        #: back to the system there (``impostor_bench.heap.trim_heap``)
        self.after_table: Optional[Callable[[], None]] = None
        self.recorder: Optional[Recorder] = None  # set while the report's lanes compute tables
        self.provider: Optional[Provider] = None  # tables computed elsewhere, installed by replay

    @classmethod
    def of(cls, data: "AnalysisData | Analysis", config: Optional[StatsConfig] = None) -> "Analysis":
        """``data`` itself when it is a session, else a new session of it."""
        return data if isinstance(data, Analysis) else cls(data, config)

    # the input, read through (never copied, so an edit is seen and invalidates the cache)
    @property
    def games(self) -> pd.DataFrame:
        return self.data.games

    @property
    def players(self) -> pd.DataFrame:
        return self.data.players

    @property
    def models(self) -> Optional[pd.DataFrame]:
        return self.data.models

    @property
    def moves(self) -> Optional[pd.DataFrame]:
        """The export's moves table (multi-round games); None when it has none (``impostor_bench.analysis.moves.moves_of``)."""
        return getattr(self.data, "moves", None)

    @property
    def embedder(self) -> Optional[Any]:
        return self.data.embedder

    # ------------------------------------------------------------------ cache

    def _check_fresh(self) -> None:
        if self._depth:
            return
        key = (*(frame_fingerprint(x) for x in (self.data.games, self.data.players, self.data.models, self.moves)),
               id(self.data.embedder))  # word vectors: a model object, known by identity only
        if key != self._fingerprint:
            if self._fingerprint is not None:  # the input changed: its tables and notes are stale
                self._tables.clear()
                self._misc.clear()
                self.notes = list(self.data.notes)
                self.errors = []
            self._fingerprint = key

    @contextlib.contextmanager
    def batch(self) -> Iterator["Analysis"]:
        """Fingerprint the frames once for every call inside (they must not change meanwhile)."""
        self._check_fresh()
        self._depth += 1
        try:
            yield self
        finally:
            self._depth -= 1

    def table(self, name: str, config: Optional[StatsConfig] = None) -> pd.DataFrame:
        """The table ``name`` (a copy of the cached one) under ``config`` (default: the session's)."""
        if name not in REGISTRY:
            raise KeyError(f"no analysis table {name!r}; the tables are: {', '.join(sorted(REGISTRY))}")
        config = config or self.config
        with self.batch():
            key = (name, config)
            if self.recorder is not None:
                self.recorder.event(("table", name, config))
            if key not in self._tables:
                got = self.provider.table(key) if self.provider is not None else None
                if got is not None:
                    self._install(key, got)
                else:
                    self._compute(key)
            return self._tables[key].copy()

    def _compute(self, key: tuple[str, StatsConfig]) -> None:
        rec = self.recorder
        self._table_memos.append([])
        if rec is not None:
            rec.push()
        t0 = time.perf_counter()
        try:
            self._tables[key] = REGISTRY[key[0]].compute(self, key[1])
        finally:
            events = rec.pop() if rec is not None else []
            for k in self._table_memos.pop():
                self._misc.pop(k, None)
            if self.after_table is not None:
                self.after_table()
        if rec is not None and rec.on_table is not None:
            rec.on_table(key, Computed(self._tables[key], events, time.perf_counter() - t0))

    def _install(self, key: tuple[str, StatsConfig], got: Computed) -> None:
        """A table computed elsewhere: cached, and what computing it did done again here (its notes and
        errors, the tables it asked for), so the notes come in the order computing it here would give."""
        self._tables[key] = got.frame
        if self.recorder is not None:
            self.recorder.push()  # what is replayed belongs to the installed table, not to the one asking
        try:
            self._replay(got.events)
        finally:
            if self.recorder is not None:
                self.recorder.pop()

    def _replay(self, events: list[tuple]) -> None:
        for ev in events:
            if ev[0] == "note":
                self.note(ev[1])
            elif ev[0] == "error":
                self.error(ev[1])
            elif ev[0] == "table":
                self.table(ev[1], ev[2])
            elif ev[0] == "memo" and self.provider is not None:
                self._replay(self.provider.memo_events(ev[1]))

    def tables(self, names: Optional[Iterable[str]] = None, config: Optional[StatsConfig] = None
               ) -> dict[str, pd.DataFrame]:
        """Several tables (default: every registered one) by name."""
        with self.batch():
            return {n: self.table(n, config) for n in (list(REGISTRY) if names is None else names)}

    def memo(self, key: tuple, fn: Callable[[], Any], *, per_table: bool = False) -> Any:
        """An intermediate result (prepared games, bootstrap weights) computed once per session; with
        ``per_table`` kept only until the table that computed it returns (an intermediate one table
        needs, e.g. the rating fit: the report's peak memory)."""
        with self.batch():
            rec = self.recorder
            if rec is not None:
                rec.event(("memo", key))
            if key not in self._misc:
                if rec is not None:
                    rec.push()
                try:
                    self._misc[key] = fn()
                finally:
                    if rec is not None:
                        rec.memos[key] = rec.pop()
                if per_table and self._table_memos:
                    self._table_memos[-1].append(key)
            return self._misc[key]

    def restart(self, notes: list[str], errors: list[str]) -> None:
        """Forget every cached table and set the notes and errors back to ``notes`` and ``errors`` (the
        report's lanes, before the tables computed in two processes are replayed in its order)."""
        self._tables.clear()
        self.notes = list(notes)
        self.errors = list(errors)

    def drop_memos(self, keep: Iterable[tuple] = ()) -> None:
        """Forget the intermediate results but ``keep`` (the report, once every table is computed: what
        a figure still needs is computed again, the same, on demand)."""
        keep = set(keep)
        for key in [k for k in self._misc if k not in keep]:
            del self._misc[key]

    def note(self, msg: str) -> None:
        """Add a human-readable caveat once."""
        if self.recorder is not None:
            self.recorder.event(("note", msg))
        if msg not in self.notes:
            self.notes.append(msg)

    def error(self, msg: str) -> None:
        """Record once an unexpected failure (a bug, not data that cannot support a table)."""
        if self.recorder is not None:
            self.recorder.event(("error", msg))
        if msg not in self.errors:
            self.errors.append(msg)
