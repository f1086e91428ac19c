"""Roles of ``impostor tracking-server``'s basic-auth app (issue 42, finding 11): a user who is not
the admin reads, and cannot create an experiment or a registered model (MLflow lets every logged-in
user create both, then MANAGE them). Checked at the WSGI layer: MLflow's real Flask app with its
real basic-auth ``create_app``, our ``authorization_function`` from the ini, SQLite stores, in a
subprocess (MLflow reads the auth config when ``mlflow.server.auth`` is imported)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from impostor_bench.tracking.serverauth import CREATE_PATH, Auth

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


def test_create_paths_are_the_rest_and_ui_creates_only():
    for path in ("/api/2.0/mlflow/experiments/create", "/ajax-api/2.0/mlflow/experiments/create",
                 "/api/2.0/mlflow/registered-models/create", "/api/3.0/mlflow/experiments/create/"):
        assert CREATE_PATH.search(path), path
    for path in ("/api/2.0/mlflow/runs/create", "/api/2.0/mlflow/experiments/search",
                 "/api/2.0/mlflow/experiments/create-thing", "/api/2.0/mlflow/model-versions/create"):
        assert not CREATE_PATH.search(path), path


@pytest.mark.slow
def test_a_read_only_user_cannot_create_experiments_or_models(tmp_path):
    """The ini the server writes (``Auth.write_config``, its database made SQLite here): the admin
    creates, the reader gets HTTP 403 on every create and 200 on a read; no login or a wrong
    password is 401 as before."""
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
    r = subprocess.run([sys.executable, "-c", PROBE, auth.password()], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=400)
    lines = [line for line in r.stdout.splitlines() if line.startswith("RESULT ")]
    assert r.returncode == 0 and lines, r.stderr[-3000:]
    got = json.loads(lines[-1][len("RESULT "):])
    assert got == {
        "admin api experiments/create": 200, "admin ajax-api experiments/create": 200,
        "admin registered-models/create": 200, "admin experiments/get-by-name": 200,
        "reader api experiments/create": 403, "reader ajax-api experiments/create": 403,
        "reader registered-models/create": 403, "reader experiments/get-by-name": 200,
        "wrong password": 401, "no login": 401,
    }
