"""Every game as an MLflow trace (impostor_bench/tracking/traces.py): logged through the Inspect
hooks into a local SQLite store and read back: one trace per game under its run, a
description and a vote round, one LLM span per model call with prompt, reply, tokens and
latency (the tokens agree with players.parquet), the outcome in the trace tags; switched off
by IMPOSTOR_MLFLOW_TRACES=0; not logged twice; secrets scrubbed from prompts."""

from __future__ import annotations

import contextvars
import json
import types

import pytest

from impostor_bench.core.records import player_label

FAKE_SECRET = "sk-test-TRACESECRET-0123456789"


@pytest.fixture
def store(tmp_path, monkeypatch):
    for var in ("IMPOSTOR_MLFLOW", "MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "IMPOSTOR_MLFLOW_EXPERIMENT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("IMPOSTOR_MLFLOW_TRACES", raising=False)  # the default: on
    monkeypatch.chdir(tmp_path)
    from mlflow.tracking import MlflowClient

    return tmp_path, lambda: MlflowClient(f"sqlite:///{tmp_path}/mlruns/mlflow.db")


def _eval(n_games: int):
    from inspect_ai import eval as inspect_eval

    from impostor_bench.tasks.impostor import impostor

    task = contextvars.Context().run(impostor, mode="cross_play", n_games=n_games)
    [log] = inspect_eval(task, model="bot/embedding", model_roles={"impostor": "bot/random"}, log_dir="logs",
                         display="none")
    assert log.status == "success", log.error
    return log


def _run(client):
    exp = client.get_experiment_by_name("impostor")
    [run] = client.search_runs([exp.experiment_id])
    return exp, run


def test_one_trace_per_game_with_rounds_calls_and_outcome(store):
    import pandas as pd

    tmp, client_of = store
    log = _eval(3)
    client = client_of()
    exp, run = _run(client)
    traces = client.search_traces(locations=[exp.experiment_id], run_id=run.info.run_id, max_results=100)
    assert len(traces) == 3 and run.data.tags["impostor.traces_logged"] == "1"
    art = client.download_artifacts(run.info.run_id, "tables", str(tmp / "dl"))
    games = pd.read_parquet(f"{art}/games.parquet").set_index("game_id")
    players = pd.read_parquet(f"{art}/players.parquet").set_index(["game_id", "seat"])
    n_events = {s.scores["impostor_winner"].metadata["game"]["game_id"]: sum(e.event == "model" for e in s.events)
                for s in log.samples}
    for t in traces:
        tags = t.info.tags
        gid = tags["impostor.game_id"]
        g = games.loc[gid]
        assert tags["impostor.winner"] == g["winner"] and tags["impostor.win_condition"] == g["win_condition"]
        # one numbering for people: "Player 1"-"Player 4" wherever a trace names a seat
        imp = f"Player {player_label(int(g['impostor_seat']))}"
        assert tags["impostor.impostor_player"] == imp and "impostor.impostor_seat" not in tags
        spans = t.data.spans
        root = [s for s in spans if s.parent_id is None]
        assert len(root) == 1 and root[0].outputs["winner"] == g["winner"]
        assert root[0].inputs["impostor"] == imp and "impostor_seat" not in root[0].inputs
        assert root[0].inputs["speaking_order"] == [f"Player {int(c) + 1}" for c in g["speaking_order"]]
        votes = players.loc[gid]["vote"]
        assert root[0].outputs["ballots"] == {f"Player {s + 1}": None if pd.isna(v) else f"Player {int(v) + 1}"
                                              for s, v in votes.items()}
        rounds = {s.name: s for s in spans if s.parent_id == root[0].span_id}
        assert set(rounds) == {"description round", "vote round"}
        calls = [s for s in spans if s.span_type == "LLM"]
        assert len(calls) == n_events[gid]
        for seat in range(4):
            mine = [s for s in calls if s.attributes["player"] == player_label(seat)]
            assert all("seat" not in s.attributes for s in mine)
            assert {s.parent_id for s in mine} == {rounds["description round"].span_id, rounds["vote round"].span_id}
            assert sum(s.attributes["input_tokens"] for s in mine) == players.loc[(gid, seat), "input_tokens"]
            assert sum(s.attributes["output_tokens"] for s in mine) == players.loc[(gid, seat), "output_tokens"]
            for s in mine:
                assert s.attributes["latency_s"] >= 0 and s.start_time_ns <= s.end_time_ns
                assert s.inputs["messages"][-1]["role"] == "user" and s.outputs["reply"]
        describe = [s for s in calls if s.attributes["phase"] == "describe"]
        assert all(f"Player {s.attributes['player']}" in s.inputs["messages"][-1]["content"] for s in describe)


def test_traces_off_and_not_twice(store, monkeypatch):
    from impostor_bench.tracking.traces import log_game_traces

    _, client_of = store
    monkeypatch.setenv("IMPOSTOR_MLFLOW_TRACES", "0")
    log = _eval(2)
    client = client_of()
    exp, run = _run(client)
    assert client.search_traces(locations=[exp.experiment_id], max_results=10) == []
    assert run.data.metrics["games_completed"] == 2  # the run itself is logged as before
    monkeypatch.setenv("IMPOSTOR_MLFLOW_TRACES", "1")
    assert log_game_traces(client, run.info.run_id, log, set()) == 2  # e.g. a later sync
    assert log_game_traces(client, run.info.run_id, log, set()) == 0  # tagged: not twice
    assert len(client.search_traces(locations=[exp.experiment_id], max_results=10)) == 2


def _messages(messages, secrets, attachments=None):
    """A prompt as an LLM span stores it (its ``mlflow.spanInputs``, decoded)."""
    from impostor_bench.tracking.traces import _Texts

    return json.loads(_Texts(secrets, attachments).messages(messages))["messages"]


def test_prompts_and_replies_are_scrubbed():
    msg = types.SimpleNamespace(role="user", content=f"key={FAKE_SECRET} rest")
    assert FAKE_SECRET not in str(_messages([msg], {FAKE_SECRET}))


def test_attachments_are_resolved_then_scrubbed():
    """Inspect stores long prompts once per sample (``attachment://<hash>``); the span gets the text."""
    text = types.SimpleNamespace(type="text", text="attachment://h2")
    msgs = [types.SimpleNamespace(role="system", content="attachment://h1"),
            types.SimpleNamespace(role="user", content=[text, types.SimpleNamespace(type="image", text="x")])]
    out = _messages(msgs, {FAKE_SECRET}, {"h1": "You are Player 2.", "h2": f"key={FAKE_SECRET} describe"})
    from impostor_bench.tracking.redact import REDACTED

    assert out == [{"role": "system", "content": "You are Player 2."},
                   {"role": "user", "content": f"key={REDACTED} describe"}]


def test_url_credentials_are_scrubbed_from_texts():
    from impostor_bench.tracking.redact import REDACTED, redact_text

    text = "db at postgresql://bench:s3cretpw@host:5432/x, plain user@example.com, no url"
    assert redact_text(text, set()) == f"db at postgresql://{REDACTED}@host:5432/x, plain user@example.com, no url"
    assert redact_text("no scheme here: user:pw@host", set()) == "no scheme here: user:pw@host"


def test_traces_from_the_samples_the_hook_collected(store, monkeypatch):
    """In a sweep the end-of-task hook gets no samples: the spans built at each sample's end
    are written, the log's events are not read back."""
    from impostor_bench.tracking import traces

    _, client_of = store
    monkeypatch.setenv("IMPOSTOR_MLFLOW_TRACES", "0")
    log = _eval(2)
    client = client_of()
    exp, run = _run(client)
    monkeypatch.setenv("IMPOSTOR_MLFLOW_TRACES", "1")
    for s in log.samples:
        traces.collect(run.info.run_id, s, set())
    bare = log.model_copy(update={"location": "", "samples": [s.model_copy(update={"events": []}) for s in log.samples]})
    assert traces.log_game_traces(client, run.info.run_id, bare, set()) == 2
    assert traces._collected == {}
    found = client.search_traces(locations=[exp.experiment_id], run_id=run.info.run_id, max_results=10)
    n_calls = sorted(sum(e.event == "model" for e in s.events) for s in log.samples)
    assert sorted(sum(sp.span_type == "LLM" for sp in t.data.spans) for t in found) == n_calls


@pytest.mark.slow
def test_huge_answers_are_cut_in_the_traces(tmp_path):
    """Issue 42 (1): a provider answering megabytes (here ``bot/script``, which Inspect records
    whole in the model event, as it does for its own ``openai-api``) stores at most
    ``MAX_ANSWER_CHARS`` of each text in a span, through the real ``inspect eval`` command."""
    import os
    import sqlite3
    import subprocess
    import sys
    from pathlib import Path

    from test_sweep_helpers import REPO, cli_env

    from impostor_bench.core.model_text import MAX_ANSWER_CHARS

    huge = "y" * 2_000_000
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"description": {"*": huge}, "vote": {"*": huge + " " + FAKE_SECRET}}))
    task = os.path.relpath(REPO / "tasks" / "impostor.py", tmp_path)
    env = cli_env()
    env.pop("IMPOSTOR_MLFLOW", None)
    env.pop("IMPOSTOR_MLFLOW_TRACES", None)
    r = subprocess.run([str(Path(sys.executable).parent / "inspect"), "eval", task, "--model", "bot/script",
                        "-M", f"script={script}", "-T", "n_games=1", "--log-dir", "logs", "--display", "none"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    db = tmp_path / "mlruns" / "mlflow.db"
    with sqlite3.connect(db) as con:
        spans = con.execute("select name, content from spans").fetchall()
    llm = [json.loads(c) for n, c in spans if n.startswith("Player ")]
    assert len(llm) >= 8  # 4 descriptions (each re-prompted) and 4 ballots
    for span in llm:
        reply = json.loads(span["attributes"]["mlflow.spanOutputs"])["reply"]
        assert reply.startswith("y" * 1000) and len(reply) <= MAX_ANSWER_CHARS + 100, len(reply)
        assert f"{len(huge)} characters" in reply or f"{len(huge) + 1 + len(FAKE_SECRET)} characters" in reply
        for m in json.loads(span["attributes"]["mlflow.spanInputs"])["messages"]:
            assert len(m["content"]) <= MAX_ANSWER_CHARS + 100
    assert max(len(c) for _, c in spans) < 4 * MAX_ANSWER_CHARS
    assert db.stat().st_size < 8_000_000  # was ~20 MB a game (16 spans of 2 MB, and more)


def test_a_secret_halved_by_the_cut_is_scrubbed_whole():
    from impostor_bench.core.model_text import MAX_ANSWER_CHARS
    from impostor_bench.tracking.traces import _Texts

    for at in (MAX_ANSWER_CHARS - 5, MAX_ANSWER_CHARS - len(FAKE_SECRET) + 1, MAX_ANSWER_CHARS):
        text = "z" * at + FAKE_SECRET + "z" * 50_000
        reply = json.loads(_Texts({FAKE_SECRET}, None).reply(text))["reply"]
        assert FAKE_SECRET[:5] not in reply and len(reply) < MAX_ANSWER_CHARS + 100
        url = "z" * at + "http://user:" + FAKE_SECRET + "@host/v1 " + "z" * 50_000
        assert FAKE_SECRET[:5] not in json.loads(_Texts(set(), None).reply(url))["reply"]
