"""A plain install works: ``pip install impostor-bench`` (no extras) into a fresh virtual
environment gives a working ``impostor`` and ``inspect eval impostor_bench/impostor`` for the
bots (and so for API models, which need no more than the package's own requirements), with no
compiler: every requirement is installed from a wheel (``--only-binary :all:``).

Offline and honest: the venv is new and does not see the project's ``.venv`` (no
``--system-site-packages``), pip resolves the package's declared requirements for real, from
the wheels ``scripts/install.sh`` downloaded into ``.cache/wheelhouse`` (``--no-index``), and
the package is built from this checkout as a wheel (not editable). So a requirement missing
from pyproject.toml, a module that imports an extra (llama-cpp-python, playwright, litellm) at
start-up, or a requirement without a wheel fails here. Not covered: what PyPI serves on the day
a user installs (newer releases within our bounds).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WHEELHOUSE = ROOT / ".cache" / "wheelhouse"
pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, env: dict, timeout: int = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_plain_install_in_a_fresh_venv_plays_a_game(tmp_path):
    assert (WHEELHOUSE / ".complete").exists(), (
        f"{WHEELHOUSE} is missing: bash scripts/install.sh --tests downloads the plain install's wheels there")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    bin_dir = env_dir / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "MLFLOW_TRACKING_URI")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
               LITELLM_LOCAL_MODEL_COST_MAP="True", IMPOSTOR_MLFLOW="0")
    _run([str(bin_dir / "pip"), "install", "-q", "--no-index", "--find-links", str(WHEELHOUSE),
          "--only-binary", ":all:", str(ROOT)], tmp_path, env)

    # one installed top-level name (issue 41): the distribution's files all live under impostor_bench/
    where = ("import importlib.metadata as m; d = m.distribution('impostor-bench'); "
             "print(' '.join(d.read_text('top_level.txt').split())); "
             "print(sorted({str(f).split('/')[0] for f in d.files if not str(f).startswith(('..', 'impostor_bench-'))}))")
    top_level, shipped = _run([str(bin_dir / "python"), "-c", where], tmp_path, env).stdout.strip().splitlines()
    assert top_level.split() == ["impostor_bench"] and shipped == "['impostor_bench']"
    data = ("from importlib import resources as r; p = r.files('impostor_bench'); "
            "print(all(p.joinpath(f).is_file() for f in ('configs/word_pairs.json', 'configs/models.yaml', "
            "'analysis/lexicon/language.json', 'tasks/impostor.py', 'py.typed', "
            "'deploy/slurm/impostor-array.sbatch', 'deploy/k8s/indexed-job.yaml', 'deploy/k8s/tracking-server.yaml')))")
    assert _run([str(bin_dir / "python"), "-c", data], tmp_path, env).stdout.strip() == "True"

    # nothing of the extras came along: the plain install is what is tested
    probe = "import importlib.util as u; print([m for m in ('llama_cpp', 'playwright', 'litellm', 'psycopg2') if u.find_spec(m)])"
    assert _run([str(bin_dir / "python"), "-c", probe], tmp_path, env).stdout.strip() == "[]"

    work = tmp_path / "empty"
    work.mkdir()
    help_text = _run([str(bin_dir / "impostor"), "--help"], work, env).stdout
    assert "impostor sweep" in help_text  # the examples of the command's help

    _run([str(bin_dir / "inspect"), "eval", "impostor_bench/impostor", "--model", "bot/random", "-T", "n_games=2",
          "--log-dir", "logs", "--display", "none"], work, env)
    check = ("from inspect_ai.log import list_eval_logs, read_eval_log; "
             "logs = [read_eval_log(i) for i in list_eval_logs('logs')]; "
             "print(len(logs), logs[0].status, logs[0].eval.task, len(logs[0].samples))")
    assert _run([str(bin_dir / "python"), "-c", check], work, env).stdout.split() == [
        "1", "success", "impostor_bench/impostor", "2"]
    assert not (work / "tasks").exists() and sys.prefix not in str(bin_dir)
