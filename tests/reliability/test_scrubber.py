"""One scrubber (``impostor_bench.tracking.redact``) for every table, export and console summary.

A provider that answers HTTP 401 "Incorrect API key provided: <key>", or a model that repeats its
bearer token, put the key into ``tables/players.parquet``, ``moves.parquet``, ``errors.csv``, an
export's ``errors.csv`` and the sweep's summary; a ``-M default_query={"code": ...}`` and a
``#token=`` fragment reached params and ``resolved.json``.  Unit checks of each form, then the real
path: the fault server answers 401 quoting the Authorization header (and a seat that repeats it),
an ``inspect eval`` runs under our MLflow hooks, ``impostor export`` writes, and every file, MLflow
record and console line is searched for the key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.tracking.redact import (
    REDACTED,
    is_secret_name,
    redact_mapping,
    redact_text,
    scrub_frame,
    secret_values,
)

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-FAKE-fault-401-9c8b7a6d5e4f3a2b"  # the shape of an OpenAI key; not a real one
UNKNOWN = "sk-proj-Qw3Er5Ty7Ui9Op1As3Df5Gh7"  # a key this process was never told


# ------------------------------------------------------------------ names


@pytest.mark.parametrize("name", ["PGPASSWORD", "MYSQL_PWD", "DB_PASS", "PASSPHRASE", "GITHUB_PAT", "db_passphrase",
                                  "SMTP_PASSWD", "AZURE_CREDENTIAL", "GOOGLE_APPLICATION_CREDENTIALS", "dbPass",
                                  "GH_TOKEN", "GHTOKEN", "MYSECRET", "x-api-key", "OPENAI_API_KEY", "hf_token"])
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["max_tokens", "TOKENIZERS_PARALLELISM", "PGPASSFILE", "PWD", "OLDPWD", "PATH",
                                  "PYTHONPATH", "HOSTNAME", "temperature", "bypass", "compass", "PATCH_LEVEL",
                                  "passes", "keyboard_layout", "n_games", "word_pairs"])
def test_harmless_names(name):
    assert not is_secret_name(name)


def test_the_environment_values_of_the_new_names_are_scrubbed():
    env = {"PGPASSWORD": "pg-secret-value-1", "MYSQL_PWD": "my-secret-value-2", "DB_PASS": "db-secret-value-3",
           "PASSPHRASE": "a long passphrase 4", "GITHUB_PAT": "github-pat-value-5", "PWD": "/home/someone/work",
           "PGPASSFILE": "/home/someone/.pgpass"}
    found = secret_values(env=env)
    assert found == {v for k, v in env.items() if k not in ("PWD", "PGPASSFILE")}


# ------------------------------------------------------------------ texts


@pytest.mark.parametrize("text, kept", [
    (f"Error code: 401 - {{'error': {{'message': 'Incorrect API key provided: {UNKNOWN}. You can find your API "
     f"key at https://platform.openai.com/account/api-keys.', 'code': 'invalid_api_key'}}}}", "Incorrect API key"),
    ("Incorrect API key provided: abcd1234efgh5678ijkl", "Incorrect API key provided: "),
    (f"my key is Bearer {UNKNOWN[3:]}", "my key is Bearer "),
    ('{"Authorization": "Bearer zz-9f8e7d6c5b4a39281706"}', '"Authorization": "Bearer '),
    ("hf_abcdefghijklmnopqrstuvwx and ghp_abcdefghijklmnopqrstuvwxyz0123 and AKIAABCDEFGHIJKLMNOP", " and "),
    ("see https://h/v1#token=FRAGMENTSECRET123&x=1", "https://h/v1#token="),
    ("see https://h/v1?q=1#access_token=FRAGMENTSECRET123", "?q=1#access_token="),
])
def test_credential_shapes_are_masked(text, kept):
    out = redact_text(text, [])
    assert kept in out and REDACTED in out
    for secret in (UNKNOWN, UNKNOWN[3:], "abcd1234efgh5678ijkl", "9f8e7d6c5b4a39281706", "FRAGMENTSECRET123",
                   "hf_abcdefghijklmnopqrstuvwx", "ghp_abcdefghijklmnopqrstuvwxyz0123", "AKIAABCDEFGHIJKLMNOP"):
        assert secret not in out, out


@pytest.mark.parametrize("text", [
    "The bearer of this word carries it every morning.",
    "The secret is something round; my word: pineapple.",
    "A basic understanding of the authorization process helps.",
    "skip-level meeting", "https://example.org/page#section-2", "api key management in general",
])
def test_game_texts_are_left_as_written(text):
    assert redact_text(text, []) == text


def test_query_mappings_are_masked_in_params_and_config():
    """``-M default_query={"code": ...}`` / ``{"sig": ...}``: masked as a URL's query parameters are,
    in the params (``model_args.default_query``) and in resolved.json's nested model args, also
    when the mapping comes as JSON text; a harmless query parameter stays."""
    params = {"model_args.default_query": {"code": "c0de-secret-1", "sig": "s1g", "api-version": "2024-10-21"},
              "model_args.extra_query": '{"code": "c0de-secret-2"}'}
    out = redact_mapping(params, secret_values(params))
    text = json.dumps(out)
    assert "c0de-secret-1" not in text and "s1g" not in text and "c0de-secret-2" not in text
    assert out["model_args.default_query"]["api-version"] == "2024-10-21"
    config = {"model_args": {"default_query": {"code": "c0de-secret-3"}}, "model_roles": {
        "impostor": {"args": {"default_query": {"sig": "s1gnature-4"}}}}}
    secrets = secret_values(config)
    assert {"c0de-secret-3", "s1gnature-4"} <= secrets  # so a log that repeats them is scrubbed too
    assert "c0de-secret-3" not in json.dumps(redact_mapping(config, secrets))
    assert "s1gnature-4" not in json.dumps(redact_mapping(config, secrets))


def test_every_text_cell_of_a_table_is_scrubbed():
    df = pd.DataFrame({"game_id": ["g1", "g2", "g3"],
                       "description": ["a round fruit", f"my key {KEY} ok", None],
                       "reason": [f"Incorrect API key provided: {UNKNOWN}.", "fine", "fine"],
                       "n": [1, 2, 3]})
    out = scrub_frame(df, [KEY])
    assert KEY not in out.to_json() and UNKNOWN not in out.to_json()
    assert list(out["description"][:1]) == ["a round fruit"] and out["description"].isna().iloc[2]
    assert list(out["n"]) == [1, 2, 3] and list(out["reason"][1:]) == ["fine", "fine"]
    assert KEY in df.to_json()  # a copy: the caller's frame is unchanged
    clean = pd.DataFrame({"a": ["x", "y"]})
    assert scrub_frame(clean, [KEY]) is clean


# ------------------------------------------------------------------ the real path


def _exe(name: str) -> list[str]:
    exe = Path(sys.executable).parent / name
    return [str(exe)] if exe.exists() else [sys.executable, "-m", {"impostor": "impostor_bench.cli",
                                                                   "inspect": "inspect_ai"}[name]]


@pytest.mark.slow
def test_a_401_quoting_the_key_reaches_no_output(tmp_path):
    """The fault server answers every request of one seat's model with 401 quoting its key (the
    way OpenAI words it) and lets the other model's seat repeat its bearer token as its description:
    no table, errors.csv, MLflow record or artifact, export or console line holds either key."""
    from .fault_server import FaultServer
    from .test_secrets import scan_mlflow, scan_tree

    (tmp_path / "tasks").symlink_to(REPO / "tasks")
    with FaultServer() as server:
        server.app.plans["bad"] = lambda n, body: "401echo"
        server.app.plans["echo"] = lambda n, body: "echo_key"
        env = dict(os.environ, FAULT_BASE_URL=server.base_url, FAULT_API_KEY=KEY, IMPOSTOR_MLFLOW="1",
                   MLFLOW_EXPERIMENT_NAME="scrub", LITELLM_LOCAL_MODEL_COST_MAP="True",
                   PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        env.pop("MLFLOW_TRACKING_URI", None)
        evals = [_exe("inspect") + ["eval", "tasks/impostor.py", "--model", f"openai-api/fault/{m}", "-T", "n_games=1",
                                    "-T", f"seed={seed}", "--log-dir", "logs", "--display", "none", "--max-retries", "0"]
                 for seed, m in enumerate(("echo", "bad"))]
        said = []
        for cmd in evals + [_exe("impostor") + ["export", "--logs", "logs", "--out", "export-logs"],
                            _exe("impostor") + ["export", "--experiment", "scrub", "--out", "export-mlflow"]]:
            r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
            said.append(r.stdout + r.stderr)
        assert f"Bearer {KEY}" in server.app.keys  # the key was really sent
    assert server.app.faults[("bad", "401echo")] and server.app.faults[("echo", "echo_key")]
    for out in ("export-logs", "export-mlflow"):
        errors = pd.read_csv(tmp_path / out / "errors.csv")
        assert "Incorrect API key provided" in " ".join(errors["reason"]), (out, errors)  # the message, less the key
        assert REDACTED in " ".join(errors["reason"])
    players = pd.read_parquet(tmp_path / "export-logs" / "players.parquet")
    assert players.to_json().count(REDACTED) >= 4  # every seat repeated its bearer token: masked
    for out in ("export-logs", "export-mlflow", "mlruns"):
        assert scan_tree(tmp_path / out, [KEY]) == [], out
    assert scan_mlflow(f"sqlite:///{tmp_path}/mlruns/mlflow.db", tmp_path / "scan", [KEY], min_runs=2) == []
    assert not [s for s in said if KEY in s], [s[-2000:] for s in said if KEY in s]
