"""The sweep's one live progress view (impostor_bench.sweep.progress) and what a sweep prints."""

from __future__ import annotations

import io

from impostor_bench.sweep.progress import MAX_LINES, ProgressView, SweepProgress

from test_sweep_helpers import write_config


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_line_counts_rate_and_time_left():
    clock = FakeClock()
    p = SweepProgress(experiments_total=4, games_total=40, clock=clock)
    assert "rate -" in p.line() and "time left -" in p.line()
    for _ in range(10):
        p.game_ended(errored=False)
    p.game_ended(errored=True)  # an errored attempt: an error, not a game done
    p.experiment_ended("t1", ok=True)
    clock.t += 5.0  # 10 games in 5 s: 2 games/s, 30 games left -> 15 s
    line = p.line()
    assert "experiments 1/4" in line and "games 10/40 (25%)" in line
    assert "errors 1," in line and "2.0 games/s" in line and "0:00:15 left" in line and "elapsed 0:00:05" in line


def test_a_retried_experiment_counts_once_with_its_last_attempt():
    p = SweepProgress(experiments_total=2, games_total=4, clock=FakeClock())
    p.experiment_ended("a", ok=False)
    assert p.experiments_done == 1 and p.experiments_failed == 1
    assert "1 experiment(s) failed" in p.line()
    p.experiment_ended("a", ok=True)  # eval_set's retry succeeded
    assert p.experiments_done == 1 and p.experiments_failed == 0


def test_slow_sweeps_show_games_per_minute():
    clock = FakeClock()
    p = SweepProgress(experiments_total=1, games_total=10, clock=clock)
    p.game_ended(errored=False)
    clock.t += 60.0
    assert "1.0 games/min" in p.line() and "0:09:00 left" in p.line()


def test_into_a_file_at_most_one_line_per_tenth():
    out = io.StringIO()
    p = SweepProgress(experiments_total=36, games_total=288, clock=FakeClock())
    view = ProgressView(p, out, live=False)
    for e in range(36):
        for _ in range(8):
            p.game_ended(errored=False)
            view.update()
        p.experiment_ended(f"t{e}", ok=True)
        view.update(force=True)
    view.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == MAX_LINES
    assert [ln.split("(")[1].split("%")[0] for ln in lines] == [str(10 * k) for k in range(1, 11)]
    assert "experiments 36/36, games 288/288 (100%)" in lines[-1]


def test_into_a_file_an_unfinished_sweep_still_ends_with_a_line():
    out = io.StringIO()
    p = SweepProgress(experiments_total=2, games_total=100, clock=FakeClock())
    view = ProgressView(p, out, live=False)
    for k in range(10):
        p.game_ended(errored=k % 2 == 0)
        view.update()
    assert out.getvalue() == ""  # not yet a tenth
    view.close()
    assert out.getvalue().count("\n") == 1 and "games 5/100 (5%), errors 5" in out.getvalue()


def test_on_a_terminal_one_line_redrawn_then_ended():
    out = io.StringIO()
    clock = FakeClock()
    p = SweepProgress(experiments_total=1, games_total=3, clock=clock)
    view = ProgressView(p, out, live=True)
    view.update(force=True)
    for _ in range(3):
        clock.t += 1.0
        p.game_ended(errored=False)
        view.update()
    view.close()
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")  # what follows starts on its own line
    assert text.count("\r") == 5  # the first draw, three games (1 s apart > REFRESH_S), the final line


def test_a_sweep_prints_progress_and_its_summary_not_inspect_panels(tmp_path, monkeypatch, capsys):
    from impostor_bench.commands.sweep import run_sweep

    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    cfg = write_config(tmp_path / "s.yaml", modes=["homogeneous"], models=["testplayer/a", "testplayer/b"])
    assert run_sweep(str(cfg), log_dir=str(tmp_path / "logs")) == 0
    cap = capsys.readouterr()
    text = cap.out + cap.err
    assert "impostor_win_rate" not in text and "╭" not in text  # no Inspect result panel
    assert "game settings: temperature 0.7, max_tokens 150, vote temperature 0.3 (every model)" in text
    progress = [ln for ln in cap.err.splitlines() if ln.startswith("progress:")]
    assert progress and "experiments 2/2, games 4/4 (100%), errors 0" in progress[-1]
    assert cap.out.rstrip().splitlines()[-1].startswith("  wall time")  # the summary ends the output
    assert "Sweep 't' shard 1/1: 2/2 experiments complete, 4/4 games" in cap.out


def test_display_flag_brings_inspect_panels_back(tmp_path, monkeypatch, capsys):
    from impostor_bench.commands.sweep import run_sweep

    import inspect_ai._display.core.active as active
    import inspect_ai.util._display as display_state

    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    # Inspect keeps one display per process (the first sweep's "none" in this test process); a
    # real `impostor sweep --display plain` is a fresh process, so start from none here too
    monkeypatch.setattr(active, "_active_display", None)
    monkeypatch.setattr(display_state, "_display_type", None)
    cfg = write_config(tmp_path / "s.yaml", modes=["homogeneous"], models=["testplayer/a"])
    assert run_sweep(str(cfg), log_dir=str(tmp_path / "logs"), display="plain") == 0
    cap = capsys.readouterr()
    assert "progress:" not in cap.err and "impostor_win_rate" in cap.out + cap.err  # the panel
