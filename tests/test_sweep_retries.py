"""What a sweep passes to eval_set: bounded call retries (Inspect alone retries without limit), the live buffer."""

import inspect_ai
import pytest

from impostor.commands.sweep import run_sweep

CONFIG = """name: retries
models: [bot/random]
modes: [homogeneous]
difficulties: [easy]
games_per_experiment: 1
tracking: {enabled: false}
retries: {attempts: 0, wait: 0%s}
"""


def eval_set_kwargs(tmp_path, monkeypatch, config_text: str) -> dict:
    """What run_sweep hands to Inspect's eval_set for this config (stopped before any game)."""
    seen = {}

    def fake_eval_set(tasks, **kwargs):
        seen.update(kwargs)
        raise RuntimeError("stop here")

    monkeypatch.setattr(inspect_ai, "eval_set", fake_eval_set)
    cfg = tmp_path / "s.yaml"
    cfg.write_text(config_text)
    with pytest.raises(RuntimeError, match="stop here"):
        run_sweep(str(cfg), log_dir=str(tmp_path / "logs"), display="none")
    return seen


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
