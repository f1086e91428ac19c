"""What a sweep passes to eval_set: bounded call retries (Inspect alone retries without limit), the live buffer."""

import inspect_ai
import pytest

from impostor_bench.commands.sweep import run_sweep

CONFIG = """name: retries
models: [bot/random]
modes: [homogeneous]
difficulties: [easy]
games_per_experiment: 1
tracking: {enabled: false}
retries: {attempts: 0, wait: 0%s}
"""


def _eval_set_call(tmp_path, monkeypatch, config_text: str) -> tuple[list, dict]:
    """The tasks and keyword arguments run_sweep hands to Inspect's eval_set (stopped before any game)."""
    seen: dict = {}

    def fake_eval_set(tasks, **kwargs):
        seen.update(tasks=list(tasks), kwargs=kwargs)
        raise RuntimeError("stop here")

    monkeypatch.setattr(inspect_ai, "eval_set", fake_eval_set)
    cfg = tmp_path / "s.yaml"
    cfg.write_text(config_text)
    with pytest.raises(RuntimeError, match="stop here"):
        run_sweep(str(cfg), log_dir=str(tmp_path / "logs"), display="none")
    return seen["tasks"], seen["kwargs"]


def eval_set_kwargs(tmp_path, monkeypatch, config_text: str) -> dict:
    return _eval_set_call(tmp_path, monkeypatch, config_text)[1]


@pytest.mark.parametrize("extra, expected", [
    ("", {"max_retries": 10, "attempt_timeout": 300}),
    (", max_retries: 2, timeout: 60, attempt_timeout: 5", {"max_retries": 2, "timeout": 60, "attempt_timeout": 5}),
])
def test_call_retry_limits_reach_eval_set(tmp_path, monkeypatch, extra, expected):
    seen = eval_set_kwargs(tmp_path, monkeypatch, CONFIG % extra)
    for k, v in expected.items():
        assert seen[k] == v
    if "timeout" not in expected:
        assert "timeout" not in seen


@pytest.mark.parametrize("extra, expected", [("", False), ("concurrency: {log_realtime: true}\n", True)])
def test_live_sample_buffer_is_off_for_sweeps_unless_asked(tmp_path, monkeypatch, extra, expected):
    seen = eval_set_kwargs(tmp_path, monkeypatch, CONFIG % "" + extra)
    assert seen["log_realtime"] is expected


def eval_set_tasks(tmp_path, monkeypatch, config_text: str) -> list:
    return _eval_set_call(tmp_path, monkeypatch, config_text)[0]


@pytest.mark.parametrize("extra, expected", [("", 210), ("game_time_limit: 900\n", 900), ("game_time_limit: 0\n", None)])
def test_game_time_limit_reaches_every_task(tmp_path, monkeypatch, extra, expected):
    """The sweep's game_time_limit is the task option: Inspect's time limit of every game (issue 30, 7)."""
    tasks = eval_set_tasks(tmp_path, monkeypatch, CONFIG % "" + extra)
    assert tasks and all(t.time_limit == expected for t in tasks)


def test_a_changed_game_time_limit_is_refused_on_resume(tmp_path, monkeypatch):
    """Inspect counts the time limit in a task's identity: a changed budget would replay every game,
    so resuming with another one is refused like any other change of the games; 0 keeps the hash
    of a sweep started before the option existed."""
    from impostor_bench.core.errors import ImpostorError
    from impostor_bench.sweep.config import game_fields, load_config

    eval_set_tasks(tmp_path, monkeypatch, CONFIG % "")
    (tmp_path / "s.yaml").write_text(CONFIG % "" + "game_time_limit: 900\n")
    with pytest.raises(ImpostorError, match=r"game_time_limit: 210 -> 900"):
        run_sweep(str(tmp_path / "s.yaml"), log_dir=str(tmp_path / "logs"), display="none")
    (tmp_path / "s.yaml").write_text(CONFIG % "" + "game_time_limit: 0\n")
    assert "game_time_limit" not in game_fields(load_config(tmp_path / "s.yaml"), tmp_path / "s.yaml")
