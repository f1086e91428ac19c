"""The bulk trace writer (impostor_bench/tracking/tracestore.py) leaves the store exactly as
MLflow's own writer (``TracingClient.log_spans``) does: every row of every table, compared
between two fresh SQLite stores fed the same games (unicode text, an errored game, token
usage, outcome tags); traces read back through MlflowClient; a trace is never written twice."""

from __future__ import annotations

import sqlite3

import pytest

from impostor_bench.tracking.traces import _id, _span


def _game(run: str, g: int, ok: bool = True) -> list[dict]:
    """A game's spans as traces.game_spans builds them: root, two rounds, LLM calls."""
    tid = "tr-" + _id(run, g, n=32)
    root, t0 = _id(tid, "root"), 1_790_000_000_000_000_000 + g * 10**9
    tags = {"mlflow.traceTag.impostor.winner": "impostor" if ok else "error", "mlflow.traceTag.impostor.mode": "homogeneous"}
    spans = [_span(tid, root, None, f"game {g}", "AGENT", t0, t0 + 9 * 10**6, {"mode": "homogeneous", "words": ["café", "thé"]},
                   {"winner": "impostor"} if ok else None, tags, ok=ok)]
    for p, phase in enumerate(("describe", "vote")):
        rid = _id(tid, phase)
        spans.append(_span(tid, rid, root, f"{phase} round", "CHAIN", t0 + p * 5 * 10**6, t0 + (p + 1) * 4 * 10**6))
        for seat in range(4):
            usage = {"input_tokens": 100 + seat, "output_tokens": 7}
            spans.append(_span(tid, _id(tid, phase, seat), rid, f"Player {seat + 1} {phase}s", "LLM",
                               t0 + p * 5 * 10**6 + seat, t0 + p * 5 * 10**6 + 10**6,
                               {"messages": [{"role": "user", "content": f"Spieler {seat + 1}: Wörter — “{g}”"}]},
                               {"reply": "ünïcødé ✓"}, {"seat": seat, "latency_s": 0.001, **usage,
                                                        "mlflow.chat.tokenUsage": usage | {"total_tokens": 107 + seat}},
                               ok=ok or seat != 2))
    return spans


GAMES = [_game("run-a", g, ok=g != 3) for g in range(5)]


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory):
    """One migrated empty store, copied for each use (creating one takes seconds)."""
    from impostor_bench.tracking.store import get_client

    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    get_client(f"sqlite:///{path}")
    return path


@pytest.fixture
def new_store(empty_db, tmp_path, monkeypatch):
    import shutil

    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)

    def make(name: str):
        (tmp_path / name).mkdir()
        shutil.copy(empty_db, tmp_path / name / "mlflow.db")
        uri = f"sqlite:///{tmp_path}/{name}/mlflow.db"
        client = MlflowClient(uri)
        return uri, client, client.create_experiment("x", artifact_location=str(tmp_path / "art"))
    return make


TRACE_TABLES = ("trace_info", "trace_tags", "trace_request_metadata", "spans")


def _rows(db: str, run_id: str) -> dict[str, list]:
    """The trace tables row for row, the trace-to-run links without their random id and
    time, and the row count of every other table."""
    con = sqlite3.connect(db)
    out = {t: sorted(map(repr, con.execute(f"select * from {t}"))) for t in TRACE_TABLES}
    out["links"] = sorted(con.execute("select source_type, source_id, destination_type, destination_id = ? "
                                      "from entity_associations", (run_id,)))
    out["counts"] = {t: con.execute(f"select count(*) from {t}").fetchone()[0]
                     for (t,) in con.execute("select name from sqlite_master where type='table'")}
    return out


def test_bulk_rows_equal_mlflows_own_writer(tmp_path, new_store):
    from mlflow.tracing.client import TracingClient

    from impostor_bench.tracking import tracestore

    uri_a, client_a, exp_a = new_store("a")
    uri_b, client_b, exp_b = new_store("b")
    run_a, run_b = client_a.create_run(exp_a).info.run_id, client_b.create_run(exp_b).info.run_id
    tracestore._through_log_spans(TracingClient(uri_a), exp_a, GAMES)
    client_a.link_traces_to_run([g[0]["trace_id"] for g in GAMES], run_a)
    assert tracestore.write_traces(uri_b, exp_b, GAMES, run_b) == [g[0]["trace_id"] for g in GAMES]
    a, b = _rows(f"{tmp_path}/a/mlflow.db", run_a), _rows(f"{tmp_path}/b/mlflow.db", run_b)
    assert len(a["spans"]) == 5 * 11 and len(a["trace_info"]) == 5 and len(a["links"]) == 5
    assert a == b
    t = client_b.get_trace(GAMES[1][0]["trace_id"])
    assert t.info.tags["impostor.winner"] == "impostor" and t.info.state.value == "OK"
    llm = [s for s in t.data.spans if s.span_type == "LLM"]
    assert len(llm) == 8 and llm[0].outputs == {"reply": "ünïcødé ✓"} and llm[0].attributes["input_tokens"] >= 100
    assert client_b.get_trace(GAMES[3][0]["trace_id"]).info.state.value == "ERROR"
    assert len(client_b.search_traces(locations=[exp_b], run_id=run_b, max_results=10)) == 5


def test_a_trace_is_never_written_twice(new_store):
    from impostor_bench.tracking.tracestore import write_traces

    uri, client, exp = new_store("a")
    run = client.create_run(exp).info.run_id
    assert len(write_traces(uri, exp, GAMES[:2], run)) == 2
    assert write_traces(uri, exp, GAMES, run) == [g[0]["trace_id"] for g in GAMES[2:]]  # a re-run after a crash
    assert write_traces(uri, exp, GAMES, run) == []
    assert len(client.search_traces(locations=[exp], max_results=100)) == 5
    assert len(client.search_traces(locations=[exp], run_id=run, max_results=100)) == 5


def test_opt_in_rollups_go_through_mlflows_writer(new_store, monkeypatch):
    """MLflow's opt-in trace rollups keep bookkeeping rows the bulk path does not write."""
    from impostor_bench.tracking import tracestore

    uri, client, exp = new_store("a")
    monkeypatch.setenv("MLFLOW_SQL_TRACE_ROLLUPS_ENABLED", "true")
    called = []
    monkeypatch.setattr(tracestore, "_bulk", lambda *a: called.append(a))
    tracestore.write_traces(uri, exp, GAMES[:1])
    assert called == [] and len(client.search_traces(locations=[exp], max_results=10)) == 1


@pytest.mark.slow
def test_through_a_tracking_server(tmp_path, monkeypatch):
    """An http:// store has no SQL session here: MLflow's own writer, same traces read back."""
    from mlflow.tracking import MlflowClient

    from impostor_bench.tracking import tracestore
    from test_sweep_helpers import mlflow_server

    monkeypatch.setattr(tracestore, "_bulk", lambda *a: pytest.fail("bulk path on an http store"))
    with mlflow_server(tmp_path / "srv") as uri:
        client = MlflowClient(uri)
        exp = client.create_experiment("x")
        run = client.create_run(exp).info.run_id
        assert tracestore.write_traces(uri, exp, GAMES[:2], run) == [g[0]["trace_id"] for g in GAMES[:2]]
        assert len(client.search_traces(locations=[exp], run_id=run, max_results=10)) == 2
        t = client.get_trace(GAMES[0][0]["trace_id"])
        assert len(t.data.spans) == 11 and t.info.tags["impostor.winner"] == "impostor"
        assert t.info.token_usage["input_tokens"] == 2 * sum(100 + s for s in range(4))
