"""impostor_bench/tracking/tables.py downloads the runs' tables in parallel (756 runs of the paper's grid
took ~10 min one at a time from a loaded server, issue 18): results stay in run order, a run
without tables is None, and a failed download of tables that exist is raised, not hidden."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from impostor_bench.core.records import GAMES_FILE, PLAYERS_FILE
from impostor_bench.tracking import tables


class FakeClient:
    def __init__(self, layout: dict[str, list[str]], broken: set[str] = frozenset()):
        self.layout, self.broken = layout, broken
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()

    def download_artifacts(self, run_id: str, path: str, dst: str) -> str:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(0.02 * (hash(run_id) % 3))  # finish out of order
            if run_id in self.broken or not self.layout.get(run_id):
                raise OSError(f"cannot download {run_id}/{path}")
            out = Path(dst) / path
            out.mkdir(parents=True)
            for name in self.layout[run_id]:
                (out / name).write_text(run_id)
            return str(out)
        finally:
            with self._lock:
                self.in_flight -= 1

    def list_artifacts(self, run_id: str, path: str):
        return [SimpleNamespace(path=f"{path}/{n}") for n in self.layout.get(run_id, [])]


def _runs(ids):
    return [SimpleNamespace(info=SimpleNamespace(run_id=i, artifact_uri=f"http://server/{i}/artifacts")) for i in ids]


def test_parallel_in_order_missing_is_none(tmp_path):
    both = [GAMES_FILE, PLAYERS_FILE, "models.csv"]
    layout = {f"r{i}": both for i in range(40)}
    layout["r7"] = []  # a run that logged nothing
    layout["r9"] = [GAMES_FILE]  # half-uploaded
    client = FakeClient(layout)
    got = tables._download_all(client, _runs(layout), tmp_path)
    assert [g.run_id for g in got] == list(layout)
    for g in got:
        if g.run_id in ("r7", "r9"):
            assert g.directory is None
        else:
            assert (g.directory / GAMES_FILE).read_text() == g.run_id
    assert 1 < client.max_in_flight <= tables.DOWNLOAD_THREADS


def test_failed_download_of_existing_tables_raises(tmp_path):
    layout = {"a": [GAMES_FILE, PLAYERS_FILE], "b": [GAMES_FILE, PLAYERS_FILE]}
    with pytest.raises(OSError, match="cannot download b"):
        tables._download_all(FakeClient(layout, broken={"b"}), _runs(layout), tmp_path)
