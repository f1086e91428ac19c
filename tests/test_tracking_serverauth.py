"""Roles of ``impostor tracking-server``'s basic-auth app (issue 42, finding 11): a user who is not
the admin reads, and cannot create an experiment or a registered model (MLflow lets every logged-in
user create both, then MANAGE them). Checked at the WSGI layer: MLflow's real Flask app with its
real basic-auth ``create_app``, our ``authorization_function`` from the ini, SQLite stores, in a
subprocess (MLflow reads the auth config when ``mlflow.server.auth`` is imported)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from impostor_bench.tracking.serverauth import Auth, private_dir

REPO = Path(__file__).resolve().parents[1]

PROBE = textwrap.dedent('''
    import base64, json, os, sys
    from mlflow.server import app as flask_app
    from mlflow.server.auth import create_app, store
    app = create_app(flask_app)
    store.create_user("reader", "reader-password-1234")
    client = app.test_client()
    def login(user, password):
        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}
    out = {}
    for who, password in (("admin", sys.argv[1]), ("reader", "reader-password-1234")):
        for prefix in ("api", "ajax-api"):
            r = client.post(f"/{prefix}/2.0/mlflow/experiments/create", json={"name": f"{who}-{prefix}"},
                            headers=login(who, password))
            out[f"{who} {prefix} experiments/create"] = r.status_code
        r = client.post("/api/2.0/mlflow/registered-models/create", json={"name": f"m-{who}"},
                        headers=login(who, password))
        out[f"{who} registered-models/create"] = r.status_code
        r = client.get("/api/2.0/mlflow/experiments/get-by-name?experiment_name=admin-api", headers=login(who, password))
        out[f"{who} experiments/get-by-name"] = r.status_code
    out["wrong password"] = client.post("/api/2.0/mlflow/experiments/create", json={"name": "x"},
                                        headers=login("reader", "wrong")).status_code
    out["no login"] = client.post("/api/2.0/mlflow/experiments/create", json={"name": "y"}).status_code
    print("RESULT " + json.dumps(out))
''')


def test_the_private_folder_is_0700_whatever_the_umask(tmp_path):
    """The server's artifact folder (every run's tables and logs) is not readable by other local
    users: created 0700 under a 022 umask, and an existing 0755 one is narrowed."""
    old = os.umask(0o022)
    try:
        fresh = private_dir(tmp_path / "a" / "artifacts")
        (tmp_path / "b").mkdir(mode=0o755)
        existing = private_dir(tmp_path / "b")
    finally:
        os.umask(old)
    assert fresh.stat().st_mode & 0o777 == 0o700 and existing.stat().st_mode & 0o777 == 0o700


def test_serve_makes_its_artifact_folder_private(tmp_path, monkeypatch):
    """``impostor tracking-server`` made DIR/artifacts 0755 (the umask's default): it is 0700.
    PostgreSQL is stubbed and stops the start right after the folders are made."""
    from impostor_bench.tracking import server

    class Stop(Exception):
        pass

    class FakePostgres:
        def __init__(self, root, port):
            self.pgpass_file = Path(root) / "pgpass"

        def init(self):
            pass

        def write_pgpass(self):
            pass

        def start(self):
            raise Stop

        def stop(self):
            pass

    monkeypatch.setattr(server, "Postgres", FakePostgres)
    old = os.umask(0o022)
    try:
        with pytest.raises(Stop):
            server.serve(tmp_path, auth=False)
    finally:
        os.umask(old)
    assert (tmp_path / "artifacts").stat().st_mode & 0o777 == 0o700


def _run_probe(tmp_path, code: str) -> dict:
    """Run ``code`` against MLflow's real basic-auth app configured by the ini the server writes
    (``Auth.write_config``, its database made SQLite here); the probe's ``RESULT`` line."""
    pytest.importorskip("flask_wtf", reason="Flask-WTF (mlflow's auth extra) missing: pip install -e '.[test]'")
    auth = Auth(tmp_path)
    auth.ensure()
    auth.write_config(db_port=5432, db_user="unused")
    ini = auth.config_file.read_text()
    assert "authorization_function = impostor_bench.tracking.serverauth:authenticate_request" in ini
    auth.config_file.write_text("\n".join(f"database_uri = sqlite:///{tmp_path}/auth.db"
                                          if line.startswith("database_uri") else line for line in ini.splitlines()))
    env = dict(os.environ, **auth.server_env(), _MLFLOW_SERVER_FILE_STORE=f"sqlite:///{tmp_path}/mlflow.db",
               _MLFLOW_SERVER_ARTIFACT_ROOT=str(tmp_path / "artifacts"),
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code, auth.password()], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    lines = [line for line in r.stdout.splitlines() if line.startswith("RESULT ")]
    assert r.returncode == 0 and lines, r.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.slow
def test_a_read_only_user_cannot_create_experiments_or_models(tmp_path):
    """The ini the server writes (``Auth.write_config``, its database made SQLite here): the admin
    creates, the reader gets HTTP 403 on every create and 200 on a read; no login or a wrong
    password is 401 as before."""
    got = _run_probe(tmp_path, PROBE)
    assert got == {
        "admin api experiments/create": 200, "admin ajax-api experiments/create": 200,
        "admin registered-models/create": 200, "admin experiments/get-by-name": 200,
        "reader api experiments/create": 403, "reader ajax-api experiments/create": 403,
        "reader registered-models/create": 403, "reader experiments/get-by-name": 200,
        "wrong password": 401, "no login": 401,
    }


ROUTE_PROBE = textwrap.dedent(r'''
    import base64, json, re, sys
    from mlflow.server import app as flask_app
    from mlflow.server.auth import create_app, store
    app = create_app(flask_app)
    store.create_user("reader", "reader-password-1234")
    client = app.test_client()
    def login(user, password):
        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}
    admin, reader = login("admin", sys.argv[1]), login("reader", "reader-password-1234")
    granted = client.post("/api/2.0/mlflow/experiments/create", json={"name": "granted"}, headers=admin).json["experiment_id"]
    store.create_experiment_permission(granted, "reader", "EDIT")
    readonly = client.post("/api/2.0/mlflow/experiments/create", json={"name": "readonly"}, headers=admin).json["experiment_id"]
    # every list/search a reader could change, read back by the admin before and after
    lists = sorted({r.rule for r in app.url_map.iter_rules() if "GET" in r.methods and "<" not in r.rule
                    and r.rule.startswith("/api/") and re.search(r"/(list|search)$", r.rule)})
    def state():
        out = {}
        for path in lists:
            r = client.get(path, headers=admin)
            out[path] = r.get_data(as_text=True) if r.status_code == 200 else r.status_code
        return out
    before = state()
    writes = {}
    for rule in app.url_map.iter_rules():  # MLflow's own route table, whatever its version holds
        for method in sorted(rule.methods - {"GET", "HEAD", "OPTIONS"}):
            path = re.sub(r"<[^>]+>", "x1", rule.rule)
            r = client.open(path, method=method, json={"name": "gateway/ep1", "experiment_id": readonly},
                            headers=reader)
            writes[f"{method} {rule.rule}"] = r.status_code
    # the red team's calls, with bodies MLflow would accept from the admin
    for path, body in (("/api/3.0/mlflow/gateway/secrets/create", {"secret_name": "k1", "secret_value": {"api_key": "sk-x"},
                                                                  "provider": "openai"}),
                       ("/api/3.0/mlflow/gateway/model-definitions/create", {"name": "md1", "secret_id": "x",
                                                                            "provider": "openai", "model_name": "gpt"}),
                       ("/api/3.0/mlflow/gateway/endpoints/create", {"name": "ep1", "usage_tracking": True}),
                       ("/api/2.0/mlflow/experiments/create", {"name": "mine"})):
        writes[f"red-team {path}"] = client.post(path, json=body, headers=reader).status_code
    after = state()
    run = client.post("/api/2.0/mlflow/runs/create", json={"experiment_id": granted}, headers=reader)
    logged = client.post("/api/2.0/mlflow/runs/log-metric", headers=reader, json={
        "run_id": run.json["run"]["info"]["run_id"], "key": "m", "value": 1.0, "timestamp": 0}) if run.status_code == 200 else run
    search = client.post("/api/2.0/mlflow/runs/search", json={"experiment_ids": [granted]}, headers=reader)
    admin_create = client.post("/api/2.0/mlflow/experiments/create", json={"name": "admin-2"}, headers=admin)
    print("RESULT " + json.dumps({"writes": writes, "changed": [p for p in lists if before[p] != after[p]],
                                  "lists": len(lists), "granted_run": run.status_code, "granted_log": logged.status_code,
                                  "search": search.status_code, "admin_create": admin_create.status_code}))
''')


@pytest.mark.slow
def test_a_reader_writes_nothing_through_any_route_mlflow_serves(tmp_path):
    """Deny by default, checked against MLflow's own route table (``app.url_map``: REST, UI,
    gateway, artifacts, GraphQL, every route this MLflow version serves), not a list of known
    creates: a READ user's write to each route (dummy ids, a body naming an experiment it may only read) changes
    nothing any list or search shows, and none succeeds except the reads MLflow serves as POST;
    the gateway creates the red team made are 403.  A user granted EDIT still logs a run."""
    got = _run_probe(tmp_path, ROUTE_PROBE)
    writes = got["writes"]
    assert len(writes) > 200 and got["lists"] > 10  # the table was really walked
    assert got["changed"] == []
    succeeded = sorted(k for k, v in writes.items() if 200 <= v < 300)
    assert all(re.search(r"/(search|graphql)\b", k) for k in succeeded), [k for k in succeeded if "search" not in k]
    gateway = {k: v for k, v in writes.items() if "/gateway/" in k and "create" in k}
    assert gateway and set(gateway.values()) == {403}, gateway
    assert writes["red-team /api/2.0/mlflow/experiments/create"] == 403
    assert (got["granted_run"], got["granted_log"], got["search"], got["admin_create"]) == (200, 200, 200, 200)
