"""A successful run prints no set-up error (issue 42, "Noise").

Inspect's ``get_model_info("bot/script")`` (called for each model event's usage update)
builds the provider again from its bare name, without the model args the run gave it:
``bot/script`` without its script, ``human/<participant>`` (an unknown transport).  Under
``--display none`` the set-up error of that construction was printed although the run
succeeded.  Our providers refuse that construction at once and quietly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model_info

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("model", ["bot/script", "bot/random", "human/rtx", "human/web", "local/smollm2",
                                   "litellm/acme/no-such-model"])
def test_model_info_lookup_builds_none_of_our_providers(model, capsys):
    from impostor_bench.providers import register  # noqa: F401 - registers the providers

    threads = threading.active_count()
    assert get_model_info(model) is None
    assert capsys.readouterr().err == ""
    assert threading.active_count() == threads  # no human page server was started


def test_model_info_inspect_knows_is_still_found():
    """Only the construction is refused: Inspect's own database still answers by name."""
    info = get_model_info("litellm/openai/gpt-4o-mini")
    assert info is not None and info.organization == "OpenAI"


def test_a_lookup_construction_is_refused_a_real_one_is_not():
    from inspect_ai.model import get_model

    from impostor_bench.inspect_compat import MODEL_INFO_LOOKUP_API_KEY
    from impostor_bench.providers.bots.api import BotAPI
    from impostor_bench.providers.register import ModelInfoLookupRefused, _plain_errors

    with pytest.raises(ModelInfoLookupRefused):
        _plain_errors(BotAPI)(model_name="script", api_key=MODEL_INFO_LOOKUP_API_KEY)
    model = get_model("bot/script", script={"description": {"*": "A thing."}})
    assert model.api.model_name == "script"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "IMPOSTOR_MLFLOW": "0"}


@pytest.mark.slow
def test_bot_script_eval_with_display_none_prints_no_setup_error(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"description": {"*": "A thing you might see at home."}}))
    proc = subprocess.run(
        [sys.executable, "-m", "inspect_ai._cli.main", "eval", "impostor_bench/impostor", "-T", "n_games=1",
         "--model", "bot/script", "-M", f"script={script}", "--display", "none", "--log-dir", str(tmp_path / "logs")],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "needs a script" not in proc.stderr and "impostor:" not in proc.stderr, proc.stderr
    [log_file] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file), header_only=True)
    assert log.status == "success"


@pytest.mark.slow
def test_impostor_play_prints_no_unknown_provider_and_takes_a_fractional_timeout(tmp_path):
    """Through the real command: nobody plays, each move times out after 0.3 s (a fractional
    --timeout made Inspect's attempt_timeout a float and the command a traceback)."""
    proc = subprocess.run(
        [sys.executable, "-m", "impostor_bench.cli", "play", "--model", "bot/random", "--as", "impostor",
         "--participant", "rtx", "--timeout", "0.3", "--linger", "0", "--seed", "5",
         "--log-dir", str(tmp_path / "logs")],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "unknown" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "you are human/rtx as the impostor" in proc.stderr
    assert "Player" in proc.stdout  # the outcome was printed
