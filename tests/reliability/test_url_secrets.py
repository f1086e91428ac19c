"""Credentials in a URL never reach MLflow (issue 30, finding 2).

A model base URL with a password in its userinfo and a key in its query string
(``http://user:PASSWORD@host/v1?api-key=KEY``) used to reach MLflow: the password stayed
in the uploaded Inspect log, the query key in the ``model_base_url`` param,
``resolved.json`` and the log.  One redaction pass over every URL-shaped value
(``impostor_bench.tracking.redact.redact_urls``) now masks both wherever they appear.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from impostor_bench.tracking.redact import REDACTED, redact_mapping, redact_text, redacted_log_copy, secret_values, url_secrets

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "URLPASS-7f3e9a1c"
QUERY_KEY = "QUERYKEY-2b8d4e6f"
SHORT = "pw"
OPENAI_SHAPED = "sk-proj-Zx8Qp2Lm7Rt5Vn3Kc9Wb4Hy6"  # not a real key: the shape of one
RANDOM_TOKEN = "Zx8Qp2Lm7Rt5Vn3Kc9Wb4Hy6Jd1Fg0Ae"


@pytest.mark.parametrize("url, kept, gone", [
    (f"http://alice:{PASSWORD}@example.org/v1", "example.org/v1", [PASSWORD, "alice"]),
    (f"https://h/v1?api-key={QUERY_KEY}&model=x", "model=x", [QUERY_KEY]),
    (f"https://h/v1?foo=1&token={QUERY_KEY}", "foo=1", [QUERY_KEY]),
    (f"https://h/v1?sig={QUERY_KEY}", "https://h/v1?sig=", [QUERY_KEY]),
    (f"postgresql://impostor:{PASSWORD}@db:5432/mlflow", "db:5432/mlflow", [PASSWORD]),
    (f"http://{QUERY_KEY}@h/", "http://", [QUERY_KEY]),  # a bare token as the user name
])
def test_every_url_credential_is_masked(url: str, kept: str, gone: list[str]):
    for text in (url, f"see {url} there", json.dumps({"base_url": url})):
        out = redact_text(text, [])
        assert kept in out and REDACTED in out
        assert not [g for g in gone if g in out], out


def test_urls_without_credentials_are_unchanged():
    for text in ("http://127.0.0.1:8000/v1", "https://h/v1?model=x&temperature=0.7", "no url here"):
        assert redact_text(text, []) == text


def test_the_credential_pre_check_changes_nothing_the_full_pass_would_mask():
    """``redact_urls`` skips its full pattern on texts where no "://" is followed by "@" or "?"
    before a URL's end: on texts built from URL fragments, stop characters and attachment
    references it answers exactly what the full pattern alone does."""
    import random

    from impostor_bench.tracking import redact

    pieces = ["http://", "attachment://0f3a9c", "x://", "://", "1abc://", "a.b-c://", "user:pw@", "@", "?",
              "?api-key=K&x=1", ";token=T", "&sig=S", "host/v1", "/p?q", " ", "\"", "'", "<", ">", "\\", "`",
              "\n", "word", "=", "#frag", "é", "ftp://u@h"]
    rng = random.Random(7)
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert redact.redact_urls(text) == redact._URL.sub(redact._redact_url, text), text


def test_the_byte_pre_check_of_a_log_member_finds_every_credential_the_text_check_does():
    """A log member is tested on its bytes before any decoding; on bytes built from URL
    fragments, stop characters, Unicode spaces and invalid UTF-8 it answers what decoding the
    member and running the full pattern answer."""
    import random

    from impostor_bench.tracking import redact

    pieces = [b"http://", b"attachment://0f3a9c", b"://", b"1abc://", b"user:pw@", b"@", b"?", b"?api-key=K&x=1",
              b";token=T", b"host/v1", b" ", b"\"", b"'", b"<", b">", b"\\", b"`", b"\n", b"\t", b"word", b"=",
              "\u00a0".encode(), "\u2003".encode(), "\u0085".encode(), "\x1c".encode(), "é".encode(), b"\xff",
              b"\xc3", b"\xe2\x80", b"ftp://u@h", b"#", b"#token=", b"Bearer", b"sk-", b"api_key: ", b"AKIA",
              b"a1b2c3d4e5f6", b"Authorization"]
    rng = random.Random(11)
    for _ in range(5000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        text = data.decode("utf-8", "replace")
        full = redact.redact_tokens(redact._URL.sub(redact._redact_url, text))  # URLs, then token shapes
        assert redact._dirty(data, []) == (full != text), data


def test_url_credentials_are_secret_values_with_context_when_short():
    assert url_secrets(f"http://u:{PASSWORD}@h/?api-key={QUERY_KEY}") == {f"u:{PASSWORD}", PASSWORD, QUERY_KEY}
    assert url_secrets(f"http://u:{SHORT}@h/?key=abc") == {"//u:pw@", "key=abc"}  # "pw" alone would mask too much
    found = secret_values({"model_base_url": f"http://u:{PASSWORD}@h/"}, env={"OPENAI_BASE_URL": f"http://h/?key={QUERY_KEY}"})
    assert {PASSWORD, QUERY_KEY} <= found


def test_mapping_and_log_copy_are_scrubbed(tmp_path):
    url = f"http://u:{PASSWORD}@h/v1?api-key={QUERY_KEY}"
    red = redact_mapping({"model_base_url": url, "nested": [url]})
    assert PASSWORD not in json.dumps(red) and QUERY_KEY not in json.dumps(red)
    log = tmp_path / "x.json"
    log.write_text(json.dumps({"eval": {"model_base_url": url}, "text": f"the key {QUERY_KEY} again"}))
    (tmp_path / "out").mkdir()
    copy = redacted_log_copy(log, secret_values({"model_base_url": url}), tmp_path / "out")
    text = Path(copy).read_text()
    assert copy != log and PASSWORD not in text and QUERY_KEY not in text


@pytest.mark.slow
def test_url_credentials_reach_no_mlflow_record(tmp_path):
    """``inspect eval`` against the fault server through a base URL holding a password (from the
    environment: a credential on the command line is refused, see the next test), tracked to a
    SQLite store: no param, tag, artifact (resolved.json, the log) holds it."""
    from mlflow.tracking import MlflowClient

    from .fault_server import FaultServer

    (tmp_path / "tasks").symlink_to(REPO / "tasks")
    exe = Path(sys.executable).parent / "inspect"
    with FaultServer() as server:
        env = dict(os.environ, IMPOSTOR_MLFLOW="1", LITELLM_LOCAL_MODEL_COST_MAP="True", FAULT_API_KEY="k" * 12,
                   MLFLOW_TRACKING_URI=f"sqlite:///{tmp_path}/mlruns.db",
                   FAULT_BASE_URL=server.base_url.replace("http://", f"http://alice:{PASSWORD}@"),
                   PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        r = subprocess.run([str(exe), "eval", "tasks/impostor.py", "--model", "openai-api/fault/maj",
                            "-T", "n_games=1", "--log-dir", "logs0", "--display", "none"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        assert server.app.requests, "the provider was not called through the URL"
    client = MlflowClient(f"sqlite:///{tmp_path}/mlruns.db")
    runs = [run for exp in client.search_experiments() for run in client.search_runs([exp.experiment_id])]
    assert runs
    for run in runs:
        records = json.dumps([run.data.params, run.data.tags, list(run.data.metrics)])
        assert PASSWORD not in records and QUERY_KEY not in records, records[:2000]
        dest = tmp_path / "artifacts" / run.info.run_id
        dest.mkdir(parents=True)
        client.download_artifacts(run.info.run_id, "", str(dest))
        assert any(dest.rglob("resolved.json")) and any(dest.rglob("*.eval"))
        for p in dest.rglob("*"):
            if p.is_file():
                for where, data in _members(p):
                    assert PASSWORD.encode() not in data and QUERY_KEY.encode() not in data, where


@pytest.mark.slow
def test_a_credential_inspect_would_log_refuses_the_run(tmp_path):
    """Issue 42: Inspect writes ``--model-base-url``, a role's base URL and ``-M`` args (all but
    api_key) into the local .eval log's header as given, so a password or key there, or a
    credential header, refuses the run with one line and the fix; no log is written."""
    from .fault_server import FaultServer

    exe = Path(sys.executable).parent / "inspect"
    role = json.dumps({"model": "litellm/openai/imp", "model_args": {"api_base": f"http://h/v1?api-key={QUERY_KEY}"}})
    with FaultServer() as server:
        env = dict(os.environ, IMPOSTOR_MLFLOW="0", FAULT_API_KEY="k" * 12, FAULT_BASE_URL=server.base_url,
                   PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        cases = {
            "--model: its base URL": ["--model-base-url", server.base_url.replace("http://", f"http://alice:{PASSWORD}@")],
            "--model: its base URL ": ["--model-base-url", server.base_url + f"?api-key={QUERY_KEY}"],
            "--model: -M default_headers holds the credential header 'Authorization'":
                ["-M", f'default_headers={{"Authorization": "Bearer {QUERY_KEY}"}}'],
            "--model-role impostor: -M api_base": ["-T", "mode=cross_play", "--model-role", f"impostor={role}"],
            # issue 42: a key under a header name that says nothing, matched by its value
            "--model: -M default_headers holds a header value shaped like an API key":
                ["-M", f'default_headers={{"X-Custom": "{OPENAI_SHAPED}"}}'],
        }
        for n, (said, args) in enumerate(cases.items()):
            r = subprocess.run([str(exe), "eval", "impostor_bench/impostor", "--model", "openai-api/fault/maj",
                                "-T", "n_games=1", "--log-dir", f"logs{n}", "--display", "none", *args],
                               cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
            lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
            assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
            assert lines[-1].startswith(f"impostor: {said.strip()}") and "fix: " in lines[-1], lines[-1]
            assert PASSWORD not in r.stderr and QUERY_KEY not in r.stderr and OPENAI_SHAPED not in r.stderr
            assert not list((tmp_path / f"logs{n}").glob("*.eval"))
        assert not server.app.requests  # no game was played
    # without the credential the same flags run
    r = subprocess.run([str(exe), "eval", "impostor_bench/impostor", "--model", "bot/random", "-T", "n_games=1",
                        "--model-base-url", "http://127.0.0.1:9/v1?model=x", "-M", 'default_headers={"X-Title": "impostor"}',
                        "--log-dir", "ok", "--display", "none"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and list((tmp_path / "ok").glob("*.eval")), r.stderr[-3000:]


def _members(path: Path) -> list[tuple[str, bytes]]:
    """A file's bytes, or each member's for a zip (an .eval log is a zip of JSON)."""
    try:
        import zipfile_zstd  # noqa: F401  (Inspect's logs use zstd members)
    except ImportError:  # pragma: no cover
        pass
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            return [(f"{path}!{n}", z.read(n)) for n in z.namelist()]
    return [(str(path), path.read_bytes())]


@pytest.mark.parametrize("base_url, args, said", [
    (f"http://alice:{PASSWORD}@h/v1", {}, "its base URL holds a credential"),
    (f"https://h/v1?api-key={QUERY_KEY}", {}, "its base URL holds a credential"),
    (None, {"api_base": f"http://u:{PASSWORD}@h/v1"}, "-M api_base holds a credential"),
    (None, {"base_url": f"https://h/v1?token={QUERY_KEY}"}, "-M base_url holds a credential"),
    (None, {"extra_headers": {"Authorization": f"Bearer {QUERY_KEY}"}}, "-M extra_headers holds the credential header 'Authorization'"),
    (None, {"default_headers": {"api-key": QUERY_KEY}}, "-M default_headers holds the credential header 'api-key'"),
    (None, {"headers": {"X-Goog-Api-Key": QUERY_KEY}}, "-M headers holds the credential header 'X-Goog-Api-Key'"),
    (None, {"extra_headers": '{"Cookie": "session=1"}'}, "-M extra_headers holds the credential header"),
    # issue 42: matched by value whatever the name (known key shapes; random tokens in headers)
    (None, {"default_headers": {"X-Custom": OPENAI_SHAPED}}, "-M default_headers holds a header value shaped like"),
    (None, {"extra_headers": {"X-Trace": RANDOM_TOKEN}}, "-M extra_headers holds a header value shaped like"),
    (None, {"extra_headers": {"X-Proxy": f"Bearer {QUERY_KEY}x"}}, "-M extra_headers holds a header value shaped like"),
    (None, {"organization": OPENAI_SHAPED}, "-M organization holds a value shaped like an API key"),
    (None, {"extra_body": {"metadata": ["AKIAABCDEFGHIJKLMNOP"]}}, "-M extra_body holds a value shaped like"),
    (None, {"extra_body": {"auth": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig"}}, "-M extra_body holds a value shaped"),
    (None, {"client_secret": "abc12345"}, "-M client_secret is a credential by its name"),
    (None, {"hf_token": "hf_" + "a1B2" * 9}, "-M hf_token is a credential by its name"),
    (f"http://h/v1/{OPENAI_SHAPED}/", {}, "its base URL holds a value shaped like an API key"),
])
def test_a_credential_inspect_would_log_is_named_with_the_fix(base_url, args, said):
    from impostor_bench.model_credentials import logged_credential

    line = logged_credential("--model", base_url, args)
    assert line is not None and line.startswith(f"--model: {said}") and "fix: " in line and "\n" not in line
    assert PASSWORD not in line and QUERY_KEY not in line


@pytest.mark.parametrize("base_url, args", [
    (None, {}), ("http://127.0.0.1:8000/v1", {}), ("https://h/v1?model=x", {"api_key": QUERY_KEY}),
    (None, {"api_base": "http://h:8080/v1", "extra_headers": {"X-Title": "impostor", "HTTP-Referer": "https://x"}}),
    (None, {"response_format": "json_object", "timeout": 30}),
    # not keys: a hex commit, a UUID header, a path, words, numbers, Inspect's own unlogged args
    (None, {"revision": "4d2b1b6e1b4a8e3f9c0d2e5a7b9c1d3e5f7a9b1c",
            "extra_headers": {"X-Request-Id": "123e4567-e89b-12d3-a456-426614174000"}}),
    (None, {"model_path": "/root/.cache/hub/models--HuggingFaceTB--SmolLM2-135M-Instruct/snapshots/model.gguf",
            "max_tokens": 100, "n_gpu_layers": -1, "structured": True}),
    (None, {"extra_headers": {"X-Title": "Impostor Bench run 2026-11-26 (paper grid, 756 experiments)"}}),
    (None, {"api_key": OPENAI_SHAPED, "aws_secret_access_key": RANDOM_TOKEN}),
])
def test_settings_without_a_logged_credential_pass(base_url, args):
    from impostor_bench.model_credentials import logged_credential

    assert logged_credential("--model", base_url, args) is None


def test_a_registry_alias_with_a_credentialed_base_url_is_refused(tmp_path, monkeypatch):
    """A registry alias's ``base_url`` reaches Inspect as the model's explicit base URL (logged):
    the task refuses it, naming the alias and the fix."""
    import yaml

    from impostor_bench.core.errors import ImpostorError
    from impostor_bench.tasks.impostor import impostor

    registry = tmp_path / "models.yaml"
    entry = {"model": "bot/random", "provider": "impostor-bench", "family": "bot"}
    registry.write_text(yaml.safe_dump({"models": {
        "leaky": entry | {"model_args": {"base_url": f"http://alice:{PASSWORD}@h/v1"}},
        "clean": entry | {"model_args": {"base_url": "http://h/v1"}},
    }}))
    monkeypatch.setenv("IMPOSTOR_MODELS", str(registry))
    with pytest.raises(ImpostorError) as info:
        impostor(models="leaky", n_games=1)
    assert str(info.value).startswith("-T models (leaky): its base URL holds a credential") and "fix: " in str(info.value)
    assert PASSWORD not in str(info.value)
    assert impostor(models="clean", n_games=1) is not None
