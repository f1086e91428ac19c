"""Preflight of a sweep's models (issues 15 and 16): unknown providers and missing API keys
are refused before any game with one line per model; --dry-run lists the missing keys and
exits 0 (one plans before having them), an unknown provider still fails it (issue 29)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.preflight import check_models, problem_of

REPO = Path(__file__).resolve().parents[1]


def test_missing_key_names_model_variable_and_fix(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ImpostorError) as err:
        check_models({"gpt-4o": "openai/gpt-4o", "bot/random": "bot/random"}, "s.yaml: field 'models'")
    msg = str(err.value)
    assert "\n" not in msg and "[bold]" not in msg and "[blue]" not in msg
    assert "'gpt-4o' (openai/gpt-4o)" in msg and "export OPENAI_API_KEY=" in msg
    assert "bot/random" not in msg  # only the failing model is named


def test_unknown_provider_is_named():
    with pytest.raises(ImpostorError, match="provider 'nosuch' is not an installed Inspect model provider"):
        check_models({"nosuch/x": "nosuch/x"}, "where")


def test_offline_models_pass():
    check_models({"bot/random": "bot/random", "smollm2": "local/smollm2", "embedding": "bot/embedding"}, "where")


def test_unexpected_failure_keeps_the_first_words_on_one_line():
    line = problem_of("x/y", "x/y", RuntimeError("boom\nsecond line"))
    assert line.startswith("model x/y: cannot be created (boom second line)") and "\n" not in line


@pytest.mark.slow
def test_sweep_with_missing_key_fails_in_one_line_before_any_game(tmp_path):
    (tmp_path / "s.yaml").write_text("name: k\nmodels: [bot/random, gpt-4o]\nmodes: [cross_play]\n"
                                     "difficulties: [easy]\ngames_per_experiment: 2\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(IMPOSTOR_MLFLOW="1", PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "impostor_bench.cli", "sweep", "s.yaml"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and "OPENAI_API_KEY" in errors[0] and "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]  # no logs, no mlruns
    # a dry run is how one plans before having the keys: the plan, then what a real run would refuse, exit 0
    r = subprocess.run([sys.executable, "-m", "impostor_bench.cli", "sweep", "s.yaml", "--dry-run"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "a real run here would refuse" in r.stdout and "export OPENAI_API_KEY=" in r.stdout
    assert "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_dry_run_of_a_config_with_an_unknown_provider_still_exits_2(tmp_path):
    (tmp_path / "s.yaml").write_text("name: k\nmodels: [bot/random, nosuch/x]\nmodes: [cross_play]\n"
                                     "difficulties: [easy]\ngames_per_experiment: 2\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "impostor_bench.cli", "sweep", "s.yaml", "--dry-run"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "provider 'nosuch' is not an installed Inspect model provider" in r.stderr
