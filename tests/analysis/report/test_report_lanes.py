"""The report in two processes (``impostor_bench.analysis.report.lanes``, issue 41) makes the bundle one
process makes: the same tables, byte for byte, the same notes and errors in the same order, the same
figures; and a second process that dies or fails loses no table."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.analysis.io import load_tables
from impostor_bench.analysis.report import build_report
from impostor_bench.analysis.report.lanes import default_jobs, draw_in_two_processes
from impostor_bench.analysis.stats._base import COLUMNS, REGISTRY, StatsUnavailable, table
from impostor_bench.cli import main

stats = pytest.importorskip("impostor_bench.analysis.stats")
FAST = dict(seed=3, bootstrap_reps=60, permutation_reps=60)
#: a few tables that nest others (correlations asks for coordination and headline, evalues for odds_ratios)
#: and write notes: the fast tier's bundle
SOME = ("headline", "odds_ratios", "evalues", "chi2", "balance", "coordination", "correlations", "scaling",
        "tie_sizes", "speaking_itt", "team_ballots", "learning", "size_fit_models", "phenotypes")


def _bundle(out: Path, *, with_figures: bool) -> dict:
    """The bundle less its dates and timings: tables, PNGs, report.md, notes, errors, figures."""
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted((out / "tables").iterdir())}
    if with_figures:
        files |= {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted((out / "figures").glob("*.png"))}
    m = json.loads((out / "manifest.json").read_text())
    md = (out / "report.md").read_text().splitlines()
    return {"files": files, "notes": m["notes"], "errors": m["errors"], "figures": m["figures"],
            "tables": [(t["name"], t["rows"], t["columns"]) for t in m["tables"]],
            "report.md": [re.sub(r"[\d.]+ s\)", "s)", ln) for ln in md if not ln.startswith("- Source:")]}


def _build(data, out: Path, jobs: int, tables=None, figures=False, progress=None) -> dict:
    build_report(data, out, stats.StatsConfig(**FAST), tables=tables, figures=figures, compile_tex=False,
                 jobs=jobs, progress=progress or (lambda s: None))
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


def test_two_processes_make_the_one_process_bundle(data, some_tables, one_process, tmp_path):
    said: list[str] = []
    two = _build(data, tmp_path / "out", 2, some_tables, progress=said.append)
    assert two == one_process
    notes, errors = one_process["notes"], one_process["errors"]
    assert len(notes) >= 5 and [e for e in errors if "probe_lane_broken failed: KeyError" in e] == errors != []
    assert notes.index("probe: before its tables") < notes.index("probe_lane_no_data: not computed: needs what "
                                                                 "these games lack") < notes.index("probe: after its tables")
    assert any(s.endswith("(second process)") for s in said), said  # the second process did compute tables


@pytest.mark.parametrize("how", ["killed", "raises"])
def test_a_second_process_that_dies_loses_no_table(data, some_tables, one_process, tmp_path, monkeypatch, how):
    """The child dies (or raises past the table's own error handling) at its first table: the parent
    computes every table it had claimed, and the bundle is the same."""
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
    assert not any(s.endswith("(second process)") for s in said)
    assert any("second process failed" in s and "KeyboardInterrupt" in s for s in said) == (how == "raises")


def test_draw_in_two_processes_keeps_the_order_and_redraws_what_the_child_lost():
    parent = os.getpid()
    assert draw_in_two_processes(lambda i: (i, i * i), 9) == [(i, i * i) for i in range(9)]

    def dies(i):
        if os.getpid() != parent:
            os._exit(1)
        return i

    assert draw_in_two_processes(dies, 5) == list(range(5))
    assert draw_in_two_processes(lambda i: i, 0) == []


def test_jobs_option(sim_export, tmp_path, capsys):
    assert default_jobs() in (1, 2)
    with pytest.raises(SystemExit) as exit_:
        main(["report", "--parquet", str(sim_export), "--out", str(tmp_path / "o"), "--jobs", "zero"])
    assert exit_.value.code == 2 and "--jobs" in capsys.readouterr().err


@pytest.mark.slow
def test_the_whole_report_with_figures_is_the_same_in_two_processes(data, tmp_path):
    one = _build(data, tmp_path / "one", 1, figures=True)
    two = _build(data, tmp_path / "two", 2, figures=True)
    assert one["files"].keys() == two["files"].keys() and len(one["figures"]) >= 6
    assert one == two


def test_a_replay_in_order_gives_the_notes_of_computing_in_order(data):
    """Computed out of order and replayed in order, two tables that share a noting intermediate result
    (``memo``) and nest a third give the notes, errors and tables of computing them in order."""
    from impostor_bench.analysis.stats.session import Analysis, Recorder

    def shared(a):
        return a.memo(("probe_shared",), lambda: a.note("shared: computed") or 7)

    @table("probe_replay_first", columns=["x"], title="Probe: first", section="beyond")
    def first(a, config):
        a.note("first: start")
        return pd.DataFrame({"x": [shared(a) + len(a.table("probe_replay_inner"))]})

    @table("probe_replay_second", columns=["x"], title="Probe: second", section="beyond")
    def second(a, config):
        a.note("second: start")
        a.error("second: an error")
        return pd.DataFrame({"x": [shared(a)]})

    @table("probe_replay_inner", columns=["x"], title="Probe: inner", section="beyond")
    def inner(a, config):
        a.note("inner")
        return pd.DataFrame({"x": [1]})

    names = ("probe_replay_first", "probe_replay_second")
    try:
        in_order = Analysis(data, stats.StatsConfig(**FAST))
        want = [in_order.table(n) for n in names]

        class Store:
            def __init__(self):
                self.tables = {}

            def table(self, key):
                return self.tables.get(key)

            def memo_events(self, key):
                return rec.memos.get(key, [])

        store = Store()
        rec = Recorder(on_table=lambda key, computed: store.tables.__setitem__(key, computed))
        a = Analysis(data, stats.StatsConfig(**FAST))
        a.recorder = rec
        [a.table(n) for n in reversed(names)]  # second first: the shared result's note comes with it
        assert a.notes.index("second: start") < a.notes.index("shared: computed") < a.notes.index("first: start")
        a.recorder = None
        a.restart(list(data.notes), [])
        a.provider = store
        got = [a.table(n) for n in names]
        assert all(g.equals(w) for g, w in zip(got, want))
        assert a.notes == in_order.notes and a.errors == in_order.errors == ["second: an error"]
        assert [n for n in a.notes if n in ("first: start", "shared: computed", "inner", "second: start")] == [
            "first: start", "shared: computed", "inner", "second: start"]
    finally:
        for name in ("probe_replay_first", "probe_replay_second", "probe_replay_inner"):
            REGISTRY.pop(name, None)
            COLUMNS.pop(name, None)


def test_the_lanes_tuning_names_registered_tables():
    """``_SLOWEST`` (taken first) and ``_HEAVY`` (one at a time) name tables by hand: a renamed table
    would silently lose its place."""
    from impostor_bench.analysis.report import lanes

    assert set(lanes._SLOWEST) | set(lanes._HEAVY) <= set(stats.TABLES)
    assert len(set(lanes._SLOWEST)) == len(lanes._SLOWEST)
