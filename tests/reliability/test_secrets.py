"""No API key reaches any output: Inspect logs, MLflow (store, params, tags, metrics, artifacts), exports.

Recognisable fake keys go into the environment and into model args (``-M
api_key=...``, a model role's ``model_args``).  The fault server is the
provider, so the keys are really used (the server sees them in its
Authorization headers).  Then an ``inspect eval`` (tracked by our hooks), a
small ``impostor sweep``, ``impostor sync --force`` and both ``impostor
export`` forms run, and everything written is searched: every file under the
working directory (zip members of ``.eval`` logs and Parquet cells included)
and every MLflow record read back through the client.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Optional

import pytest
import yaml

try:  # Inspect's .eval logs are zstd-compressed zips (stdlib zipfile reads them from 3.14)
    import zipfile_zstd  # noqa: F401
except ImportError:  # pragma: no cover
    pass

from .fault_server import FaultServer

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

ENV_SECRETS = {
    "OPENAI_API_KEY": "sk-FAKE-openai-5f1d0c9e7a3b4c2d",
    "ANTHROPIC_API_KEY": "sk-ant-FAKE-anthropic-8e2a6b1c",
    "OPENROUTER_API_KEY": "sk-or-FAKE-openrouter-3c7d9e0f",
    "FAULT_API_KEY": "sk-FAKE-fault-env-0a1b2c3d4e5f",  # the key the openai-api/fault provider uses
    "HF_TOKEN": "hf_FAKEhuggingface7g8h9i0j",
}
ARG_KEY = "sk-FAKE-model-arg-6d5c4b3a2f1e"
ROLE_KEY = "sk-FAKE-role-arg-9a8b7c6d5e4f"
SECRETS = list(ENV_SECRETS.values()) + [ARG_KEY, ROLE_KEY]

pytestmark = pytest.mark.slow


def _exe(name: str) -> list[str]:
    exe = Path(sys.executable).parent / name
    return [str(exe)] if exe.exists() else [sys.executable, "-m", {"impostor": "impostor_bench.cli", "inspect": "inspect_ai"}[name]]


def _scan_bytes(data: bytes, where: str, found: list[str], depth: int = 0, secrets: Optional[list[str]] = None) -> None:
    if data[:2] == b"PK" and depth < 3:
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                for name in z.namelist():
                    _scan_bytes(z.read(name), f"{where}!{name}", found, depth + 1, secrets)
            return
        except zipfile.BadZipFile:
            pass
    if data[:4] == b"PAR1":
        import pyarrow.parquet as pq

        table = pq.read_table(io.BytesIO(data))
        data = json.dumps(table.to_pylist(), default=str).encode() + " ".join(table.column_names).encode()
    for s in SECRETS if secrets is None else secrets:
        for needle in (s.encode(), s.encode("utf-16-le")):
            if needle in data:
                found.append(f"{where}: {s}")


def scan_tree(root: Path, secrets: Optional[list[str]] = None) -> list[str]:
    found: list[str] = []
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            _scan_bytes(p.read_bytes(), str(p.relative_to(root)), found, secrets=secrets)
    return found


def scan_mlflow(uri: str, tmp: Path, secrets: Optional[list[str]] = None, min_runs: int = 3) -> list[str]:
    """Every MLflow record: experiments, run names, params, tags, metric keys, inputs, artifacts."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    found: list[str] = []
    n_runs = 0
    for exp in client.search_experiments():
        texts = [exp.name, json.dumps(dict(exp.tags))]
        for run in client.search_runs([exp.experiment_id]):
            n_runs += 1
            d = run.data
            texts += [run.info.run_name or "", json.dumps(d.params), json.dumps(d.tags), json.dumps(list(d.metrics))]
            if run.inputs is not None:
                texts.append(str(run.inputs))
            dest = tmp / "artifacts" / run.info.run_id
            dest.mkdir(parents=True)
            client.download_artifacts(run.info.run_id, "", str(dest))
            found += [f"artifact {x}" for x in scan_tree(dest, secrets)]
        for t in texts:
            _scan_bytes(t.encode(), f"mlflow experiment {exp.name}", found, secrets=secrets)
    assert n_runs >= min_runs, "expected the eval's run, the sweep's runs"
    return found


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    work = tmp_path_factory.mktemp("secrets")
    (work / "tasks").symlink_to(REPO / "tasks")  # inspect eval wants a relative task path
    with FaultServer() as server:
        env = dict(os.environ)
        env.update(ENV_SECRETS)
        env.update(FAULT_BASE_URL=server.base_url, IMPOSTOR_MLFLOW="1", LITELLM_LOCAL_MODEL_COST_MAP="True",
                   PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]))
        env.pop("MLFLOW_TRACKING_URI", None)
        role = json.dumps({"model": "openai-api/fault/imp", "model_args": {"api_key": ROLE_KEY}})
        steps = [
            _exe("inspect") + ["eval", "tasks/impostor.py", "--model", "openai-api/fault/maj",
                               "-M", f"api_key={ARG_KEY}", "--model-role", f"impostor={role}",
                               "-T", "mode=cross_play", "-T", "n_games=2", "--log-dir", "logs/eval",
                               "--display", "none"],
        ]
        sweep = work / "sweep.yaml"
        sweep.write_text(yaml.safe_dump({
            "name": "secrets", "description": f"keys from the environment, e.g. {ENV_SECRETS['OPENAI_API_KEY']}",
            "models": ["openai-api/fault/a", "openai-api/fault/b"], "modes": ["homogeneous"],
            "difficulties": ["easy"], "games_per_experiment": 2, "retries": {"attempts": 1, "wait": 0},
        }, sort_keys=False))
        steps += [
            _exe("impostor") + ["sweep", str(sweep), "--log-dir", "logs/sweep", "--display", "none"],
            _exe("impostor") + ["sync", "logs", "--force"],
            _exe("impostor") + ["export", "--logs", "logs", "--out", "export-logs"],
            _exe("impostor") + ["export", "--experiment", "secrets", "--out", "export-mlflow"],
        ]
        said = []
        for cmd in steps:
            r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, (cmd, r.stdout[-3000:], r.stderr[-3000:])
            said.append(r.stdout + r.stderr)
        keys_seen = set(server.app.keys)
    return work, said, keys_seen


def test_the_keys_were_really_used(outputs):
    _, _, keys_seen = outputs
    assert f"Bearer {ARG_KEY}" in keys_seen and f"Bearer {ROLE_KEY}" in keys_seen
    assert f"Bearer {ENV_SECRETS['FAULT_API_KEY']}" in keys_seen


def test_no_secret_in_any_output_file(outputs):
    work, _, _ = outputs
    for d in ("logs", "mlruns", "export-logs", "export-mlflow"):
        assert (work / d).exists(), d
    assert list((work / "export-logs").glob("*.parquet")) and list((work / "export-mlflow").glob("*.parquet"))
    assert scan_tree(work.joinpath("logs")) == []
    assert scan_tree(work.joinpath("mlruns")) == []
    assert scan_tree(work.joinpath("export-logs")) == [] and scan_tree(work.joinpath("export-mlflow")) == []


def test_no_secret_in_mlflow_records(outputs, tmp_path):
    work, _, _ = outputs
    assert scan_mlflow(f"sqlite:///{work}/mlruns/mlflow.db", tmp_path) == []


def test_no_secret_printed(outputs):
    _, said, _ = outputs
    found: list[str] = []
    for text in said:
        _scan_bytes(text.encode(), "console", found)
    assert found == []


def test_the_scanner_finds_planted_secrets(tmp_path):
    """Negative control: a key inside a zstd-compressed zip member, a Parquet cell or a SQLite page is found."""
    import sqlite3

    import pandas as pd

    with zipfile.ZipFile(tmp_path / "x.eval", "w", compression=zipfile.ZIP_ZSTANDARD) as z:  # type: ignore[attr-defined]
        z.writestr("samples/1.json", json.dumps({"args": {"api_key": ARG_KEY}}))
    pd.DataFrame({"a": [f"x {ROLE_KEY} y"]}).to_parquet(tmp_path / "t.parquet", compression="snappy")
    with sqlite3.connect(tmp_path / "m.db") as db:
        db.execute("create table t (v text)")
        db.execute("insert into t values (?)", (ENV_SECRETS["HF_TOKEN"],))
    found = scan_tree(tmp_path)
    assert any(ARG_KEY in f and "x.eval!samples/1.json" in f for f in found), found
    assert any(ROLE_KEY in f and "t.parquet" in f for f in found), found
    assert any(ENV_SECRETS["HF_TOKEN"] in f and "m.db" in f for f in found), found
