"""Live MLflow progress: counted per game, written at most every LIVE_INTERVAL_S seconds."""

from __future__ import annotations

import pytest

from impostor_bench.tracking.hooks import LIVE_INTERVAL_S, LiveProgress


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class Client:
    def __init__(self) -> None:
        self.batches: list[dict[str, tuple[float, int]]] = []

    def log_batch(self, run_id, metrics):
        assert run_id == "run"
        self.batches.append({m.key: (m.value, m.step) for m in metrics})


def test_one_write_per_interval_not_per_game():
    clock, client = Clock(), Client()
    live = LiveProgress(clock)
    wins = [1.0, 0.0, 0.0, 1.0] * 25
    due = [live.add(w) for w in wins]  # 100 games within one interval
    assert not any(due) and live.unlogged
    clock.t += LIVE_INTERVAL_S
    assert live.add(1.0) is True  # the first game past the interval asks for a write
    assert live.add(0.0) is False  # ... and no second one while it is under way
    live.log(client, "run")
    assert client.batches == [{"live/games_done": (102, 102), "live/impostor_win_rate": (pytest.approx(51 / 102), 102)}]
    assert not live.unlogged
    assert live.add(1.0) is False  # the interval starts again after the write
    clock.t += LIVE_INTERVAL_S
    assert live.add(1.0) is True


def test_failed_write_does_not_stop_later_ones():
    clock = Clock()
    live = LiveProgress(clock)

    class Down:
        def log_batch(self, run_id, metrics):
            raise ConnectionError("tracking server down")

    clock.t += LIVE_INTERVAL_S
    assert live.add(1.0)
    with pytest.raises(ConnectionError):
        live.log(Down(), "run")
    assert live.unlogged  # nothing was written
    clock.t += LIVE_INTERVAL_S
    assert live.add(0.0)  # not stuck "busy"
    client = Client()
    live.log(client, "run")
    assert client.batches[-1]["live/games_done"] == (2, 2)
