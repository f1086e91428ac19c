"""eval.yaml and the README's evaluation report stay true: the task's sample count, the pinned
assets' hashes and versions, and (slow) the report table against a re-run of its command."""

from __future__ import annotations

import hashlib
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def _card() -> dict:
    return yaml.safe_load((REPO / "eval.yaml").read_text())


def test_card_has_the_fields_of_an_eval_yaml():
    card = _card()
    for key in ("title", "description", "paper", "version", "tasks", "assets"):
        assert card.get(key), key
    pyproject = (REPO / "pyproject.toml").read_text()
    assert f'version = "{card["version"]}"' in pyproject
    assert f'"inspect-ai{card["dependencies"]["inspect-ai"]}"' in pyproject


def test_task_sample_counts_are_the_tasks():
    from impostor_bench.core.options import GameOptions
    from impostor_bench.tasks.impostor import impostor
    from impostor_bench.core.wordpairs import load_word_pairs

    [task] = _card()["tasks"]
    assert task["name"] == "impostor_bench/impostor"
    assert task["dataset_samples"] == GameOptions().n_games == len(impostor().dataset)
    tiers = load_word_pairs(None)
    assert task["word_pairs_per_difficulty"] == {k: len(v) for k, v in tiers.items()}


def test_pinned_assets_match_the_files():
    for asset in _card()["assets"]:
        if "sha256" in asset:
            assert hashlib.sha256((REPO / asset["path"]).read_bytes()).hexdigest() == asset["sha256"], asset["path"]
        if "package" in asset:
            assert asset["package"] in (REPO / "scripts/install.sh").read_text()


def _readme_report() -> tuple[list[dict], list[str]]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"<!-- eval-report.*?-->\n(.*?)<!-- /eval-report -->\n\n```bash\n(.*?)\n```", text, re.S)
    assert block, "README: the evaluation report table and its command"
    lines = [ln for ln in block[1].splitlines() if ln.startswith("| bot/")]
    rows = [dict(zip(("model", "win", "stderr", "det", "games"), [c.strip() for c in ln.strip("|").split("|")]))
            for ln in lines]
    return rows, shlex.split(block[2])


@pytest.mark.slow
def test_readme_report_matches_a_rerun(tmp_path):
    from inspect_ai.log import list_eval_logs, read_eval_log

    rows, cmd = _readme_report()
    assert cmd[:2] == ["inspect", "eval"] and len(rows) == 3
    env_cmd = [sys.executable, "-m", "inspect_ai", *cmd[1:], "--log-dir", str(tmp_path), "--display", "none"]
    import os

    env = dict(os.environ, IMPOSTOR_MLFLOW="0", PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    subprocess.run(env_cmd, cwd=tmp_path, env=env, check=True, capture_output=True, timeout=900)
    got = {}
    for info in list_eval_logs(str(tmp_path)):
        log = read_eval_log(info, header_only=True)
        assert log.status == "success"
        m = {k: v.value for k, v in log.results.scores[0].metrics.items()}
        got[log.eval.model] = (f"{m['impostor_win_rate']:.3f}", f"{m['stderr']:.3f}", f"{m['detection_accuracy']:.3f}",
                               str(log.results.completed_samples))
    assert {r["model"]: (r["win"], r["stderr"], r["det"], r["games"]) for r in rows} == got
