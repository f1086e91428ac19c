"""An analysis session: the input tables, one ``StatsConfig``, and each table's result.

In the spirit of statsmodels' results objects, ``Analysis(data, config)`` holds what the tables
share, so nothing is hidden on the input: ``a.table("odds_ratios")`` computes a table once (the
tables that reuse others get the cached one) and ``a.result(name)`` gives it as a
:class:`TableResult`: the frame with its own notes and error. ``a.memo(key, fn)`` keeps
intermediate results (the prepared games, bootstrap weights; ``per_table=True``: only while the
table that made it runs).

Notes belong to what made them. While a table (or an intermediate result) is computed, ``note`` and
``error`` write into its own collector; a table that uses another table or an intermediate result
takes that one's notes too, at the point it asks for it. So a table's notes are the same whether
it was computed here, in another process, first or last, and the session's ``a.notes`` is simply
the loader's ``data.notes`` (never appended to) followed by the notes of each table in the order
they were asked for, each once. Nothing mutable is shared between tables.

The cache is keyed by a content fingerprint of the frames (games, players, models, moves) (and the
word embedder's identity), taken at every outermost call (a table asked for from outside, not one
table reusing another): after an in-place edit of a frame, or a frame replaced by another that
happens to get the same ``id()``, the session starts over (results and notes) instead of serving a
stale table. ``with a.batch():`` takes the fingerprint once for a run of calls (the report's ~60
tables) on frames that do not change meanwhile.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import time
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class TableResult:
    """One computed table: its frame, its notes (its own and those of the tables and intermediate
    results it used, in the order it met them), the failures behind it (``errors``: its own and those
    of the tables it used; ``error``: its own), the tables it asked for and its seconds. It pickles:
    a process pool hands it back whole."""

    name: str
    frame: pd.DataFrame = field(repr=False)
    notes: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    error: Optional[str] = None
    needs: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class _Memo:
    """An intermediate result with the notes and errors computing it made."""

    value: Any
    notes: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


class _Collector:
    """What one table (or intermediate result) says while it is computed: notes and errors, each once."""

    def __init__(self) -> None:
        self.notes: dict[str, None] = {}
        self.errors: dict[str, None] = {}
        self.own_error: Optional[str] = None
        self.needs: dict[str, None] = {}

    def take(self, notes: Iterable[str], errors: Iterable[str]) -> None:
        self.notes.update(dict.fromkeys(notes))
        self.errors.update(dict.fromkeys(errors))


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
        self._tables: dict[tuple[str, StatsConfig], TableResult] = {}
        self._misc: dict[tuple, _Memo] = {}
        self._open: list[_Collector] = []  # the tables and intermediate results being computed, innermost last
        self._table_memos: list[list[tuple]] = []  # per table being computed: its memos kept only while it runs
        self._fingerprint: Optional[tuple] = None
        self._depth = 0  # > 0 inside a table or a batch: the frames are not re-fingerprinted
        #: called after each table is computed (nested ones too); the report hands freed heap pages
        #: back to the system there (``impostor_bench.heap.trim_heap``)
        self.after_table: Optional[Callable[[], None]] = None

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
        return self.result(name, config).frame.copy()

    def inference(self) -> pd.DataFrame:
        """Every printed p-value and interval of the tables, with its method (the ``inference`` table)."""
        return self.table("inference")

    def result(self, name: str, config: Optional[StatsConfig] = None) -> TableResult:
        """The :class:`TableResult` of ``name`` under ``config``: computed once, then cached. Its notes and
        errors go to the table asking for it, or to the session's ``notes`` when asked from outside."""
        if name not in REGISTRY:
            raise KeyError(f"no analysis table {name!r}; the tables are: {', '.join(sorted(REGISTRY))}")
        config = config or self.config
        with self.batch():
            got = self._tables.get((name, config))
            if got is None:
                got = self._compute(name, REGISTRY[name].compute, config)
                self._tables[(name, config)] = got
            self._took(got.notes, got.errors, name)
            return got

    def run(self, name: str, compute: Callable[["Analysis", StatsConfig], pd.DataFrame],
            config: Optional[StatsConfig] = None) -> TableResult:
        """``compute`` (a table function that is not the registered ``name``: a caller's own) as a result,
        not cached; its notes go where a registered table's would."""
        with self.batch():
            got = self._compute(name, compute, config or self.config)
            self._took(got.notes, got.errors, None)
            return got

    def install(self, result: TableResult, config: Optional[StatsConfig] = None) -> None:
        """A result computed elsewhere (another process of the same data and config) as this session's.
        Nothing is added to ``notes`` until the table is asked for."""
        self._tables[(result.name, config or self.config)] = result

    def computed(self, config: Optional[StatsConfig] = None) -> dict[str, TableResult]:
        """The results held under ``config`` (default: the session's), in the order they were computed."""
        config = config or self.config
        return {name: r for (name, c), r in self._tables.items() if c == config}

    def _compute(self, name: str, compute: Callable[["Analysis", StatsConfig], pd.DataFrame],
                 config: StatsConfig) -> TableResult:
        got = self._open_collector()
        self._table_memos.append([])
        t0 = time.perf_counter()
        try:
            frame = compute(self, config)
        except BaseException:
            self._close_collector(got)
            raise
        finally:
            for k in self._table_memos.pop():
                self._misc.pop(k, None)
            if self.after_table is not None:
                self.after_table()
        self._close_collector(got, keep=True)
        return TableResult(name, frame, tuple(got.notes), tuple(got.errors), got.own_error, tuple(got.needs),
                           time.perf_counter() - t0)

    def _open_collector(self) -> _Collector:
        got = _Collector()
        self._open.append(got)
        return got

    def _close_collector(self, got: _Collector, keep: bool = False) -> None:
        """Close the innermost collector; unless its notes are ``keep``-t with what it made, they go to the
        one around it (a failure's notes are not lost)."""
        assert self._open and self._open[-1] is got
        self._open.pop()
        if not keep:
            self._took(tuple(got.notes), tuple(got.errors), None)

    def _took(self, notes: Iterable[str], errors: Iterable[str], table: Optional[str]) -> None:
        """Notes and errors of a result used by the innermost table (or, from outside, by the session)."""
        if self._open:
            self._open[-1].take(notes, errors)
            if table is not None:
                self._open[-1].needs[table] = None
            return
        self.notes.extend(n for n in notes if n not in self.notes)
        self.errors.extend(e for e in errors if e not in self.errors)

    def tables(self, names: Optional[Iterable[str]] = None, config: Optional[StatsConfig] = None
               ) -> dict[str, pd.DataFrame]:
        """Several tables (default: every registered one) by name."""
        with self.batch():
            return {n: self.table(n, config) for n in (list(REGISTRY) if names is None else names)}

    def memo(self, key: tuple, fn: Callable[[], Any], *, per_table: bool = False) -> Any:
        """An intermediate result (prepared games, bootstrap weights) computed once per session; with
        ``per_table`` kept only until the table that computed it returns (an intermediate one table
        needs, e.g. the rating fit: the report's peak memory). Whoever uses it takes its notes."""
        with self.batch():
            got = self._misc.get(key)
            if got is None:
                said = self._open_collector()
                try:
                    value = fn()
                except BaseException:
                    self._close_collector(said)
                    raise
                self._close_collector(said, keep=True)
                got = _Memo(value, tuple(said.notes), tuple(said.errors))
                self._misc[key] = got
                if per_table and self._table_memos:
                    self._table_memos[-1].append(key)
            self._took(got.notes, got.errors, None)
            return got.value

    def drop_memos(self, keep: Iterable[tuple] = ()) -> None:
        """Forget the intermediate results but ``keep`` (the report, once every table is computed: what
        a figure still needs is computed again, the same, on demand)."""
        keep = set(keep)
        for key in [k for k in self._misc if k not in keep]:
            del self._misc[key]

    def note(self, msg: str) -> None:
        """Add a human-readable caveat once (to the table being computed, else to the session)."""
        self._took((msg,), (), None)

    def error(self, msg: str) -> None:
        """Record once an unexpected failure (a bug, not data that cannot support a table)."""
        if self._open and self._open[-1].own_error is None:
            self._open[-1].own_error = msg
        self._took((), (msg,), None)
