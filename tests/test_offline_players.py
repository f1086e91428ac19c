"""Real games with the offline players through `inspect eval` (issue: runs with no key, no network)."""

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from scipy.stats import binomtest

ROOT = Path(__file__).resolve().parents[1]


def inspect_eval(tmp_path, *args, timeout=900):
    proc = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "tasks/impostor.py", *args,
         "--log-dir", str(tmp_path), "--display", "none"],
        capture_output=True, text=True, cwd=ROOT, timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success", log.error  # inspect exits 0 even when the log is an error
    return log


@pytest.mark.slow
def test_embedding_bot_detects_a_random_impostor_far_above_chance(tmp_path):
    log = inspect_eval(tmp_path, "--model", "bot/embedding", "--model-role", "impostor=bot/random",
                       "-T", "mode=cross_play", "-T", "n_games=40")
    assert len(log.samples) == 40
    games = [s.scores["impostor_winner"].metadata for s in log.samples]
    correct = valid = 0
    for g in games:
        for p in g["players"]:
            if p["role"] == "majority" and p["vote"] is not None:
                valid += 1
                correct += p["vote"] == g["game"]["impostor_seat"]
    # a majority voter picking among the three others at random is right 1/3 of the time
    assert correct / valid > 0.6
    assert binomtest(correct, valid, 1 / 3, alternative="greater").pvalue < 1e-6
    majority_wins = sum(g["game"]["winner"] == "majority" for g in games)
    assert majority_wins >= 30


@pytest.mark.slow
def test_full_game_with_the_real_local_model(tmp_path):
    log = inspect_eval(tmp_path, "--model", "local/smollm2", "-T", "n_games=1")
    [sample] = log.samples
    md = sample.scores["impostor_winner"].metadata
    players = md["players"]
    assert {p["model"] for p in players} == {"local/smollm2"}
    assert all(p["description_raw"] for p in players)  # the model really spoke
    assert md["game"]["vote_mode"] == "constrained"  # on by default for local models
    assert md["game"]["winner"] in ("impostor", "majority")
    usage = log.stats.model_usage["local/smollm2"]
    assert usage.output_tokens > 0 and usage.input_tokens > 0
