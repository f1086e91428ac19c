"""A registry alias wherever a model is expected, ``inspect eval --model gpt-4o`` included
(impostor_bench.inspect_compat.resolve_registry_aliases)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from test_sweep_helpers import cli_env


def test_eval_with_an_alias_plays_its_model(tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval

    from impostor_bench.registry import load_registry
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    assert load_registry().entries["embedding"].model == "bot/embedding"
    [log] = inspect_eval(impostor(n_games=1), model="embedding", log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.eval.model == "bot/embedding"


def test_alias_args_under_explicit_model_args(monkeypatch):
    import impostor_bench.inspect_compat as compat
    from inspect_ai.model import _model

    seen = {}

    def fake_original(model=None, *args, **kwargs):
        seen.update(model=model, kwargs=kwargs)
        return model

    monkeypatch.setattr(compat, "_alias_model", lambda name: ("prov/" + name, {"a": 1, "b": 2}))
    monkeypatch.setattr(compat, "_is_alias", lambda name: name == "x")
    monkeypatch.setattr(_model, "get_model", fake_original)
    compat.resolve_registry_aliases()
    _model.get_model("x", b=3)
    assert seen == {"model": "prov/x", "kwargs": {"a": 1, "b": 3}}
    _model.get_model("openai/gpt-4o", c=1)  # a model string passes through untouched
    assert seen == {"model": "openai/gpt-4o", "kwargs": {"c": 1}}
    _model.get_model("none")  # Inspect's own names without a '/' pass through too
    assert seen == {"model": "none", "kwargs": {}}


@pytest.mark.slow
@pytest.mark.parametrize("name, said", [("gpt-4o", "--model: model 'gpt-4o' (openai/gpt-4o-2024-08-06): OPENAI_API_KEY is not set; fix:"),
                                        ("gpt4o", "neither an Inspect model string (<api>/<model>) nor an alias")])
def test_inspect_eval_model_alias_without_key_is_one_message(tmp_path, name, said):
    env = cli_env(IMPOSTOR_MLFLOW="0")
    for k in [k for k in env if k.endswith("_API_KEY")]:
        env.pop(k)
    r = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "impostor_bench/impostor", "--model", name, "-T", "n_games=1",
                        "--log-dir", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = " ".join((r.stdout + r.stderr).split())  # Inspect wraps its message at the terminal width
    assert r.returncode != 0 and said in out and "Traceback" not in out, out[-2000:]
