"""The sweep's language: axis: one experiment per language, each with its own identity and task
argument; a config without the axis keeps its plan and resume hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.sweep.config import config_hash, load_config
from impostor_bench.sweep.plan import plan, task_spec

BASE = """name: lang
models: [bot/random]
modes: [homogeneous]
difficulties: [easy]
games_per_experiment: 2
"""


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(BASE + extra, encoding="utf-8")
    return path


def test_the_language_axis_plans_one_experiment_per_language(tmp_path):
    path = _config(tmp_path, "language: [en, es, de]\n")
    pl = plan(path)
    assert [e.language for e in pl.experiments] == ["en", "es", "de"]
    assert [e.label for e in pl.experiments] == ["homogeneous|easy|bot/random|s0", "homogeneous|easy|bot/random|s0|es",
                                                 "homogeneous|easy|bot/random|s0|de"]
    args = [task_spec(e, pl.config, path, {})["task_args"] for e in pl.experiments]
    assert ["language" in a for a in args] == [False, True, True]
    assert [a.get("language") for a in args] == [None, "es", "de"]


def test_a_config_without_the_axis_keeps_its_hash(tmp_path):
    english = _config(tmp_path)
    h = config_hash(load_config(english), english)
    assert config_hash(load_config(_config(tmp_path, "language: en\n")), english) == h
    assert config_hash(load_config(_config(tmp_path, "language: [en, es]\n")), english) != h


def test_an_unshipped_language_in_a_sweep_is_one_line(tmp_path):
    with pytest.raises(ImpostorError) as err:
        load_config(_config(tmp_path, "language: [en, fr]\n"))
    assert "language" in str(err.value) and "'es'" in str(err.value) and "\n" not in str(err.value)


def test_resume_keys_tell_the_languages_apart_and_match_their_logs(tmp_path):
    """A finished English experiment must not count its Spanish and German cells as finished (the
    resume would skip them): one key per language, the same from the plan and from a log's task args."""
    from impostor_bench.sweep.plan import experiment_key

    path = _config(tmp_path, "language: [en, es, de]\n")
    pl = plan(path)
    keys = set()
    for e in pl.experiments:
        from_log = experiment_key(task_spec(e, pl.config, path, {})["task_args"])
        assert from_log == e.label  # the key is the experiment's identity
        keys.add(from_log)
    assert len(keys) == 3
    assert experiment_key({"mode": "homogeneous", "difficulty": "easy", "seed": 0,
                           "models": dict(pl.experiments[0].roles)}) in keys  # English as before
