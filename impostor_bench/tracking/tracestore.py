"""Write game traces to MLflow in one bulk transaction (the fast path of ``traces.py``).

MLflow's own span writer (``TracingClient.log_spans`` -> ``SqlAlchemyStore.log_spans``)
runs ~25 ORM statements per trace (a flush per new trace, an UPDATE of its aggregates, a
merge per trace tag): ~15-30 ms a game here, as much as a whole game against an instant
provider (benchmarks/RESULTS.md "Traces"). On a SQL tracking store (SQLite, PostgreSQL,
MySQL) this module writes the same rows MLflow's writer leaves behind (``trace_info``
with its previews, status and token totals, ``trace_tags``, ``spans`` with their stored
JSON) with one executemany per table in one transaction, through MLflow's own table
definitions and session; tests/test_tracking_tracestore.py checks row for row that the
store holds what ``log_spans`` would have written. Any other store (an ``http://``
tracking server) and stores with MLflow's opt-in trace rollups get ``log_spans``.

A span here is a dict in MLflow's stored form as ``traces._span`` builds it (ids in hex,
attribute values JSON-encoded); traces already in the store are skipped, never doubled.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Optional

from impostor_bench.tracking.spanjson import json_encoder

ROOT_TAG_PREFIX = "mlflow.traceTag."
_USAGE_COLUMNS = {"input_tokens": "input_tokens", "output_tokens": "output_tokens", "total_tokens": "total_tokens"}


def _b64(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def write_traces(tracking_uri: str, experiment_id: str, games: list[list[dict]], run_id: Optional[str] = None
                 ) -> list[str]:
    """Store each game's spans as one trace, linked to ``run_id`` when given; the ids of the
    traces written (a trace already stored is neither written nor linked again)."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
    from mlflow.store.tracking.utils.sql_trace_rollups import rollups_enabled
    from mlflow.tracing.client import TracingClient

    tracing = TracingClient(tracking_uri)
    store = tracing.store
    # exactly MLflow's SQL store: its workspace-aware subclass filters what it writes
    if type(store) is SqlAlchemyStore and not rollups_enabled():
        return _bulk(store, experiment_id, games, run_id)
    written = _through_log_spans(tracing, experiment_id, games)
    if run_id is not None:
        for i in range(0, len(written), 100):  # MLflow's limit per call
            store.link_traces_to_run(written[i:i + 100], run_id)
    return written


def _through_log_spans(tracing: Any, experiment_id: str, games: list[list[dict]], batch: int = 50) -> list[str]:
    """MLflow's supported writer (any store; one call per ``batch`` games)."""
    from mlflow.entities import Span

    for i in range(0, len(games), batch):  # spans are upserted and trace ids fixed: a re-run writes no second trace
        tracing.log_spans(experiment_id, [Span.from_dict(d) for g in games[i:i + batch] for d in g])
    return [g[0]["trace_id"] for g in games]


_encode = json_encoder(ensure_ascii=False)  # = json.dumps(v, ensure_ascii=False)


def stored_content(span: dict, b64: Optional[dict[str, str]] = None) -> str:
    """The ``spans.content`` JSON MLflow stores for ``span`` (``Span.to_dict`` after its
    storing translation, which leaves spans in this form unchanged: tested); ``b64`` keeps
    the ids already encoded (a trace's id is in each of its spans, a parent's in each child)."""
    b64 = {} if b64 is None else b64
    tid, sid, parent = span["trace_id"], span["span_id"], span["parent_span_id"]
    for i in (tid, sid, parent):
        if i and i not in b64:
            b64[i] = _b64(i.removeprefix("tr-"))
    name, start, end, ev, links = (span["name"], span["start_time_unix_nano"], span["end_time_unix_nano"],
                                   span["events"], span["links"])
    if type(name) is str and type(start) is int and type(end) is int and ev == [] and links == []:
        try:  # the same JSON written directly: the encoder's walk cost ~1/3 of encoding the texts
            attrs = ", ".join([f"{_q(k)}: {_q(v)}" for k, v in span["attributes"].items()])
            return (f'{{"trace_id": "{b64[tid]}", "span_id": "{b64[sid]}", "parent_span_id": '
                    f'{_q(b64[parent]) if parent else "null"}, "name": {_q(name)}, "start_time_unix_nano": {start}, '
                    f'"end_time_unix_nano": {end}, "events": [], "status": {_encode(span["status"])}, '
                    f'"attributes": {{{attrs}}}, "links": []}}')
        except TypeError:  # an attribute key or value not a str (not JSON-encoded yet): the encoder's walk
            pass
    return _encode({"trace_id": b64[tid], "span_id": b64[sid], "parent_span_id": b64[parent] if parent else None,
                    "name": name, "start_time_unix_nano": start, "end_time_unix_nano": end, "events": ev,
                    "status": span["status"], "attributes": span["attributes"], "links": links})


_q = json.encoder.encode_basestring  # = json.dumps(a str, ensure_ascii=False)


def _rows(exp_id: int, artifact_root: str, spans: list[dict]) -> tuple[dict, list[dict], list[dict]]:
    """The ``trace_info`` row, ``trace_tags`` rows and ``spans`` rows of one game's trace."""
    from mlflow.tracing.utils.truncation import _get_truncated_preview
    from mlflow.utils.uri import append_to_uri_path

    root = next(s for s in spans if s["parent_span_id"] is None)
    tid = root["trace_id"]
    start_ms = min(s["start_time_unix_nano"] for s in spans) // 1_000_000
    end_ms = max(s["end_time_unix_nano"] for s in spans) // 1_000_000
    attrs = root["attributes"]
    usage: dict[str, int] = {}
    for s in spans:
        if "mlflow.chat.tokenUsage" in s["attributes"]:
            for k, v in json.loads(s["attributes"]["mlflow.chat.tokenUsage"]).items():
                usage[k] = usage.get(k, 0) + v
    # columns left out (client_request_id, trace_name, session_id; a span's costs, model name
    # and provider) have no default: NULL, as MLflow stores them, without binding None per row
    info = {"request_id": tid, "experiment_id": exp_id, "timestamp_ms": start_ms, "execution_time_ms": end_ms - start_ms,
            "status": "ERROR" if root["status"]["code"] == "STATUS_CODE_ERROR" else "OK",
            "request_preview": _get_truncated_preview(attrs["mlflow.spanInputs"], role="user")
            if "mlflow.spanInputs" in attrs else None,
            "response_preview": _get_truncated_preview(attrs["mlflow.spanOutputs"], role="assistant")
            if "mlflow.spanOutputs" in attrs else None,
            "db_payload_generation": 1, **{col: usage.get(k) for k, col in _USAGE_COLUMNS.items()}}
    tags = [{"request_id": tid, "key": "mlflow.artifactLocation",
             "value": append_to_uri_path(artifact_root, "traces", tid, "artifacts")},
            {"request_id": tid, "key": "mlflow.trace.spansLocation", "value": "TRACKING_STORE"}]
    tags += [{"request_id": tid, "key": k.removeprefix(ROOT_TAG_PREFIX), "value": str(json.loads(v))}
             for k, v in attrs.items() if k.startswith(ROOT_TAG_PREFIX)]
    b64: dict[str, str] = {}
    rows = [{"trace_id": tid, "experiment_id": exp_id, "span_id": s["span_id"], "parent_span_id": s["parent_span_id"],
             "name": s["name"], "type": _span_type(s["attributes"]["mlflow.spanType"]),
             "status": "ERROR" if s["status"]["code"] == "STATUS_CODE_ERROR" else "OK",
             "start_time_unix_nano": s["start_time_unix_nano"], "end_time_unix_nano": s["end_time_unix_nano"],
             "content": stored_content(s, b64)} for s in spans]
    return info, tags, rows


_SPAN_TYPES = {json.dumps(t): t for t in ("AGENT", "CHAIN", "LLM")}


def _span_type(encoded: str) -> str:
    """``json.loads`` of a span's ``mlflow.spanType``, our three types looked up."""
    t = _SPAN_TYPES.get(encoded)
    return json.loads(encoded) if t is None else t


def _insert(session: Any, table: Any, rows: list[dict]) -> None:
    """``session.execute(insert(table), rows)`` (rows with the same keys). On SQLite the
    statement SQLAlchemy compiles goes to the driver's executemany with the rows as tuples,
    without SQLAlchemy's processing of each row's parameters (~15% of the writing, and none
    of the columns here has a bind processor on SQLite: plain strings and integers); other
    databases keep SQLAlchemy's own executemany (PostgreSQL's batches rows per statement)."""
    from sqlalchemy import insert

    conn = session.connection()
    if conn.dialect.name != "sqlite":
        session.execute(insert(table), rows)
        return
    compiled = insert(table).compile(dialect=conn.dialect, column_keys=list(rows[0]))
    order = compiled.positiontup or []  # qmark: the parameters' order
    conn.exec_driver_sql(str(compiled), [tuple([row[k] for k in order]) for row in rows])


def _bulk(store: Any, experiment_id: str, games: list[list[dict]], run_id: Optional[str]) -> list[str]:
    """One transaction: skip the traces already stored, then one executemany per table
    (and the trace-to-run links ``MlflowClient.link_traces_to_run`` would add)."""
    import uuid

    from mlflow.store.tracking.dbmodels.models import (SqlEntityAssociation, SqlExperiment, SqlSpan, SqlTraceInfo,
                                                       SqlTraceTag)
    from mlflow.utils.time import get_current_time_millis
    from sqlalchemy import select

    if not games:
        return []
    exp_id = int(experiment_id)
    with store.ManagedSessionMaker(read_only=False) as session:
        artifact_root = session.execute(select(SqlExperiment.artifact_location)
                                        .where(SqlExperiment.experiment_id == exp_id)).scalar_one()
        ids = [g[0]["trace_id"] for g in games]
        stored = set()
        for i in range(0, len(ids), 500):
            stored |= set(session.execute(select(SqlTraceInfo.request_id)
                                          .where(SqlTraceInfo.request_id.in_(ids[i:i + 500]))).scalars())
        infos, tags, spans = [], [], []
        for game in games:
            if game[0]["trace_id"] in stored:
                continue
            info, t, s = _rows(exp_id, artifact_root, game)
            infos.append(info)
            tags += t
            spans += s
        if infos:
            _insert(session, SqlTraceInfo.__table__, infos)
            _insert(session, SqlTraceTag.__table__, tags)
            _insert(session, SqlSpan.__table__, spans)
            if run_id is not None:
                _insert(session, SqlEntityAssociation.__table__, [
                    {"association_id": uuid.uuid4().hex, "source_type": "trace", "source_id": i["request_id"],
                     "destination_type": "run", "destination_id": run_id, "created_time": get_current_time_millis()} for i in infos])
    return [i["request_id"] for i in infos]
