"""Registry aliases where the package reads a model name itself (``-T models=``, sweep configs,
``impostor`` commands: ``solvers.bound_models.model_named``), while ``--model`` stays Inspect's:
the package does not wrap Inspect's ``get_model`` (docs/models.md, "Aliases")."""

from __future__ import annotations

import subprocess
import sys

import pytest

from test_sweep_helpers import cli_env

REGISTRY = """models:
  x:
    model: bot/random
    provider: bot
    family: bot
    params_b: null
    model_args: {a: 1, b: 2}
"""


def test_eval_with_an_alias_in_models_plays_its_model(tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval

    from impostor_bench.registry import load_registry
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    assert load_registry().entries["embedding"].model == "bot/embedding"
    [log] = inspect_eval(impostor(n_games=1, models="embedding"), log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.eval.model == "bot/embedding"
    assert log.eval.metadata["models"] == "embedding"  # the option as given


def test_alias_args_under_explicit_model_args(tmp_path, monkeypatch):
    import impostor_bench.solvers.bound_models as bound

    (tmp_path / "models.yaml").write_text(REGISTRY)
    monkeypatch.setenv("IMPOSTOR_MODELS", str(tmp_path / "models.yaml"))
    seen: dict = {}

    def fake_get_model(model=None, **kwargs):
        seen.update(model=model, kwargs=kwargs)
        return model

    monkeypatch.setattr(bound, "get_model", fake_get_model)
    bound.model_named("x", "here", b=3)
    assert seen == {"model": "bot/random", "kwargs": {"a": 1, "b": 3}}
    bound.model_named("openai/gpt-4o", "here", c=1)  # a model string passes through untouched
    assert seen == {"model": "openai/gpt-4o", "kwargs": {"c": 1}}


def test_unknown_bare_name_is_one_line_with_the_closest_alias():
    from impostor_bench.core.errors import ImpostorError
    from impostor_bench.solvers.bound_models import model_named

    with pytest.raises(ImpostorError) as err:
        model_named("gpt4o", "-T models (model)")
    said = str(err.value)
    assert "\n" not in said and "no model alias 'gpt4o'" in said and "did you mean gpt-4o" in said


def test_model_option_stays_inspects():
    """``--model gpt-4o`` is Inspect's to resolve: its own message, and its own get_model."""
    from inspect_ai.model import _model, get_model

    import impostor_bench._registry  # noqa: F401 - what the entry point loads

    assert _model.get_model is get_model and get_model.__module__ == "inspect_ai.model._model"
    with pytest.raises(ValueError, match="<api_name>/<model_name>"):
        get_model("embedding")


@pytest.mark.slow
@pytest.mark.parametrize("name, said", [("gpt-4o", "-T models (model): model 'gpt-4o' (openai/gpt-4o-2024-08-06): "
                                                   "OPENAI_API_KEY is not set; fix:"),
                                        ("gpt4o", "no model alias 'gpt4o' (did you mean gpt-4o?)")])
def test_inspect_eval_model_alias_without_key_is_one_message(tmp_path, name, said):
    env = cli_env(IMPOSTOR_MLFLOW="0")
    for k in [k for k in env if k.endswith("_API_KEY")]:
        env.pop(k)
    r = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "impostor_bench/impostor", "-T", f"models={name}",
                        "-T", "n_games=1", "--log-dir", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    out = " ".join((r.stdout + r.stderr).split())  # Inspect wraps its message at the terminal width
    assert r.returncode != 0 and said in out and "Traceback" not in out, out[-2000:]
