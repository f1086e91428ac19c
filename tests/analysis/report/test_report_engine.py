"""The analysis engine (``impostor_bench.analysis.stats.engine``): each table's result holds its own notes and
error, so a process pool, any order of computing, or a worker that dies gives the bundle one process gives:
the same tables byte for byte, the same notes and errors in the same order, the same figures."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.analysis.io import load_tables
from impostor_bench.analysis.report import build_report
from impostor_bench.analysis.stats import engine
from impostor_bench.analysis.stats._base import COLUMNS, REGISTRY, StatsUnavailable, table
from impostor_bench.analysis.stats.session import Analysis, TableResult
from impostor_bench.cli import main

stats = pytest.importorskip("impostor_bench.analysis.stats")
FAST = dict(seed=3, bootstrap_reps=60, permutation_reps=60)
#: a few tables that nest others (correlations asks for coordination and headline, evalues for odds_ratios)
#: and write notes: the fast tier's bundle
SOME = ("headline", "odds_ratios", "evalues", "chi2", "balance", "coordination", "correlations", "scaling",
        "tie_sizes", "speaking_itt", "team_ballots", "learning", "size_fit_models", "phenotypes")


@pytest.fixture(autouse=True)
def own_record(tmp_path, monkeypatch):
    """Each test's own record of the last run (none to start with), never the user's."""
    monkeypatch.setenv("IMPOSTOR_TABLE_RECORD", str(tmp_path / "record.json"))


def _bundle(out: Path, *, with_figures: bool) -> dict:
    """The bundle less its dates, timings and commit (others commit meanwhile): tables, PNGs, report.md,
    notes, errors, figures."""
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted((out / "tables").iterdir())}
    if with_figures:
        files |= {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted((out / "figures").glob("*.png"))}
    m = json.loads((out / "manifest.json").read_text())
    md = (out / "report.md").read_text().splitlines()
    return {"files": files, "notes": m["notes"], "errors": m["errors"], "figures": m["figures"],
            "tables": [(t["name"], t["rows"], t["columns"]) for t in m["tables"]],
            "report.md": [re.sub(r"[\d.]+ s\)", "s)", ln) for ln in md
                          if not ln.startswith(("- Source:", "- Provenance:"))]}  # the date; the checkout's commit


def _build(data, out: Path, jobs: int, tables=None, figures=False, progress=None, remember=False) -> dict:
    build_report(data, out, stats.StatsConfig(**FAST), tables=tables, figures=figures, compile_tex=False,
                 jobs=jobs, progress=progress or (lambda s: None), remember=remember)
    return _bundle(out, with_figures=figures)


@pytest.fixture(scope="module")
def data(sim_export):
    return load_tables(sim_export)


PROBES = ("probe_lane_broken", "probe_lane_nests", "probe_lane_no_data")  # the nesting one asked first


@pytest.fixture(scope="module")
def some_tables():
    """SOME and three probe tables, registered through the real decorator (removed afterwards): one with a
    bug, one the data cannot support, one that notes before and after asking for two others."""
    @table("probe_lane_broken", columns=["x"], title="Probe: a bug", section="beyond")
    def broken(data, config):
        return pd.DataFrame({"x": [1]}).loc[:, "no_such_column"]

    @table("probe_lane_no_data", columns=["x"], title="Probe: no data", section="beyond")
    def no_data(data, config):
        raise StatsUnavailable("needs what these games lack")

    @table("probe_lane_nests", columns=["x"], title="Probe: nests", section="beyond")
    def nests(data, config):
        data.note("probe: before its tables")
        n = len(data.table("coordination")) + len(data.table("probe_lane_no_data"))
        data.note("probe: after its tables")
        return pd.DataFrame({"x": [n]})

    yield {name: stats.TABLES[name] for name in (*SOME, *PROBES)}
    for name in PROBES:
        REGISTRY.pop(name, None)
        COLUMNS.pop(name, None)


@pytest.fixture(scope="module")
def one_process(data, some_tables, tmp_path_factory):
    return _build(data, tmp_path_factory.mktemp("one") / "out", 1, some_tables)


def test_a_pool_makes_the_one_process_bundle(data, some_tables, one_process, tmp_path):
    said: list[str] = []
    two = _build(data, tmp_path / "out", 2, some_tables, progress=said.append)
    assert two == one_process
    notes, errors = one_process["notes"], one_process["errors"]
    assert len(notes) >= 5 and [e for e in errors if "probe_lane_broken failed: KeyError" in e] == errors != []
    assert notes.index("probe: before its tables") < notes.index("probe_lane_no_data: not computed: needs what "
                                                                 "these games lack") < notes.index("probe: after its tables")
    assert any("in 2 processes" in s for s in said), said


def test_the_last_runs_record_orders_the_next_and_keeps_the_bundle(data, some_tables, one_process, tmp_path):
    """A first pool run records each table's seconds, memory and the tables it asked for; the next run,
    ordered by that record (and the nesting table after what it asks for), makes the same bundle."""
    first = _build(data, tmp_path / "a", 2, some_tables, remember=True)
    record = engine.read_record()
    assert set(record) == set(some_tables)
    assert record["probe_lane_nests"]["needs"] == ["coordination", "probe_lane_no_data"]
    assert {"headline", "coordination"} <= set(record["correlations"]["needs"])
    assert all(v["seconds"] >= 0 and v["mib"] >= 0 for v in record.values())
    order = engine.work_order(list(some_tables), record)
    path = engine.path_seconds(list(some_tables), record)
    assert [path[n] for n in order] == sorted((path[n] for n in order), reverse=True)
    assert all(path[n] >= record[n]["seconds"] + max((path[w] for w in some_tables if n in record[w]["needs"]),
                                                     default=0.0) - 1e-9 for n in some_tables)
    second = _build(data, tmp_path / "b", 2, some_tables, remember=True)
    assert first == second == one_process


def test_a_quick_table_a_slow_one_waits_for_goes_first():
    """Ordered by the longest chain each table starts, not its own seconds: the 0-second table the
    10-second one asks for comes before a 5-second table that nothing waits for; a loop in an odd
    record ends its chain instead of recursing."""
    record = {"slow": {"seconds": 10.0, "needs": ["quick"]}, "quick": {"seconds": 0.0, "needs": []},
              "mid": {"seconds": 5.0, "needs": []}, "last": {"seconds": 1.0, "needs": ["slow", "mid"]},
              "new": {}}
    names = ["mid", "last", "new", "slow", "quick"]
    assert engine.work_order(names, record) == ["quick", "slow", "mid", "last", "new"]
    assert engine.path_seconds(names, record) == {"quick": 11.0, "slow": 11.0, "mid": 6.0, "last": 1.0, "new": 0.0}
    looped = {"a": {"seconds": 2.0, "needs": ["b"]}, "b": {"seconds": 1.0, "needs": ["a"]}}
    assert engine.work_order(["a", "b"], looped)[0] in ("a", "b")


@pytest.mark.parametrize("how", ["killed", "raises"])
def test_a_worker_that_dies_loses_no_table(data, some_tables, one_process, tmp_path, monkeypatch, how):
    """Every worker dies (or raises past the table's own error handling) at its first table: this
    process computes every table, and the bundle is the same."""
    parent = os.getpid()
    for fn in REGISTRY.values():
        def dying(analysis, config, _compute=fn.compute):
            if os.getpid() != parent:
                if how == "killed":
                    os._exit(3)
                raise KeyboardInterrupt  # not an Exception: the table's own handling lets it through
            return _compute(analysis, config)
        monkeypatch.setattr(fn, "compute", dying)
    said: list[str] = []
    two = _build(data, tmp_path / "out", 2, some_tables, progress=said.append)
    assert two == one_process
    assert any("computed here" in s for s in said), said


def test_map_in_processes_keeps_the_order_and_redoes_what_a_worker_lost():
    parent = os.getpid()
    assert engine.map_in_processes(lambda i: (i, i * i), 9, jobs=2) == [(i, i * i) for i in range(9)]
    assert engine.map_in_processes(lambda i: os.getpid() != parent, 4, jobs=2) != [False] * 4  # really elsewhere

    def dies(i):
        if os.getpid() != parent:
            os._exit(1)
        return i

    assert engine.map_in_processes(dies, 5, jobs=2) == list(range(5))
    assert engine.map_in_processes(lambda i: i, 0, jobs=2) == []


def test_jobs_option(sim_export, tmp_path, capsys):
    assert engine.default_jobs() in (1, 2)
    with pytest.raises(SystemExit) as exit_:
        main(["report", "--parquet", str(sim_export), "--out", str(tmp_path / "o"), "--jobs", "zero"])
    assert exit_.value.code == 2 and "--jobs" in capsys.readouterr().err


@pytest.mark.slow
def test_the_whole_report_with_figures_is_the_same_in_a_pool(data, tmp_path):
    one = _build(data, tmp_path / "one", 1, figures=True)
    two = _build(data, tmp_path / "two", 2, figures=True)
    assert one["files"].keys() == two["files"].keys() and len(one["figures"]) >= 6
    assert one == two


@pytest.fixture
def probes():
    """Three tables that share a noting intermediate result (``memo``), one nesting another and one with an error."""
    def shared(a):
        return a.memo(("probe_shared",), lambda: a.note("shared: computed") or 7)

    @table("probe_first", columns=["x"], title="Probe: first", section="beyond")
    def first(a, config):
        a.note("first: start")
        return pd.DataFrame({"x": [shared(a) + len(a.table("probe_inner"))]})

    @table("probe_second", columns=["x"], title="Probe: second", section="beyond")
    def second(a, config):
        a.note("second: start")
        a.error("second: an error")
        return pd.DataFrame({"x": [shared(a)]})

    @table("probe_inner", columns=["x"], title="Probe: inner", section="beyond")
    def inner(a, config):
        a.note("inner")
        return pd.DataFrame({"x": [1]})

    yield ("probe_first", "probe_second")
    for name in ("probe_first", "probe_second", "probe_inner"):
        REGISTRY.pop(name, None)
        COLUMNS.pop(name, None)


def test_a_result_holds_its_own_notes_whatever_was_computed_before(data, probes):
    """A table's result has the notes of what it used (a shared intermediate result, a nested table) even when
    another table computed them first, and the session's notes are the tables' in the order asked."""
    in_order = Analysis(data, stats.StatsConfig(**FAST))
    want = [in_order.table(n) for n in probes]
    a = Analysis(data, stats.StatsConfig(**FAST))
    second = a.result("probe_second")  # second first: it computes the shared result
    first = a.result("probe_first")
    assert isinstance(first, TableResult) and first.needs == ("probe_inner",)
    assert first.notes == ("first: start", "shared: computed", "inner")
    assert second.notes == ("second: start", "shared: computed")
    assert second.errors == ("second: an error",) and second.error == "second: an error" and first.error is None
    assert [n for n in a.notes if n in first.notes + second.notes] == ["second: start", "shared: computed",
                                                                        "first: start", "inner"]
    # installed elsewhere, then taken in order: the session's notes are those of computing in order
    b = Analysis(data, stats.StatsConfig(**FAST))
    for r in (second, first, a.result("probe_inner")):
        b.install(r)
    assert b.notes == list(data.notes)
    got = [b.table(n) for n in probes]
    assert all(g.equals(w) for g, w in zip(got, want))
    assert b.notes == in_order.notes and b.errors == in_order.errors == ["second: an error"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.notes = ()  # type: ignore[misc]


def test_a_declared_need_is_computed_first_and_once(data, tmp_path):
    """Without any record, a table declaring ``needs`` waits for it in the pool and gets it with its task: the
    slow table it reads is computed once, although the reader comes first in the work."""
    calls = tmp_path / "calls"

    @table("probe_slow_input", columns=["x"], title="Probe: slow input", section="beyond")
    def slow_input(a, config):
        with calls.open("a") as f:
            f.write(f"{os.getpid()}\n")
        import time
        time.sleep(1.0)
        return pd.DataFrame({"x": [2]})

    @table("probe_reader", columns=["x"], title="Probe: reader", section="beyond", needs=("probe_slow_input",))
    def reader(a, config):
        a.note("reader: read it")
        return pd.DataFrame({"x": [3 * int(a.table("probe_slow_input")["x"].iloc[0])]})

    try:
        a = Analysis(data, stats.StatsConfig(**FAST))
        got = engine.compute_tables(a, ["probe_reader", "probe_slow_input"], jobs=2)
        assert got["probe_reader"].frame["x"].tolist() == [6] and got["probe_reader"].needs == ("probe_slow_input",)
        assert len(calls.read_text().splitlines()) == 1
        assert engine.needs_of("probe_reader", {}) == ("probe_slow_input",)
        assert a.notes == list(data.notes)  # nothing taken yet: the caller takes the results in its order
        a.table("probe_reader")
        assert a.notes[-1] == "reader: read it"
    finally:
        for name in ("probe_slow_input", "probe_reader"):
            REGISTRY.pop(name, None)
            COLUMNS.pop(name, None)
