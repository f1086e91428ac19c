"""The Inspect task end to end with offline players: CLI and Python API."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log

from impostor_bench.core.records import GameRow, PlayerRow

ROOT = Path(__file__).resolve().parents[1]
TASK = "tasks/impostor.py"  # inspect wants a path relative to cwd


def records(log):
    out = []
    for s in log.samples:
        md = s.scores["impostor_winner"].metadata
        out.append((GameRow(**md["game"]), [PlayerRow(**p) for p in md["players"]]))
    return out


def run(tmp_path, **kw):
    from impostor_bench.tasks.impostor import impostor

    model = kw.pop("model", "bot/random")
    roles = kw.pop("model_roles", None)
    [log] = inspect_eval(impostor(**kw), model=model, model_roles=roles, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return log


@pytest.mark.slow
def test_registered_task_runs_from_an_empty_folder(tmp_path):
    """``inspect eval impostor_bench/impostor`` as an Inspect user runs an installed eval: by the
    name the package's ``inspect_ai`` entry point registers, from a folder that is not the
    repository (issue 29: only ``tasks/impostor.py`` from the root worked), with per-model
    metrics for every mode; the same task and its options as the file's."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"IMPOSTOR_MLFLOW": "0"}
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "inspect"), "eval", "impostor_bench/impostor", "--model", "bot/random",
         "-T", "n_games=2", "--log-dir", "logs", "--display", "none"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.status == "success" and log.eval.task == "impostor_bench/impostor" and len(log.samples) == 2
    metrics = log.results.scores[0].metrics
    assert metrics["impostor_games/bot/random"].value == 2 and metrics["majority_seats/bot/random"].value == 6
    assert metrics["impostor_win_rate/bot/random"].value == metrics["impostor_win_rate"].value
    assert not (tmp_path / "tasks").exists()


def test_registered_task_has_the_file_tasks_options():
    import inspect as pyinspect

    from impostor_bench._registry import impostor as registered
    from impostor_bench.tasks.impostor import impostor as from_file

    assert pyinspect.signature(registered) == pyinspect.signature(from_file)
    assert registered.__doc__ == from_file.__doc__


@pytest.mark.slow
def test_cli_inspect_eval_plays_eight_scored_games(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", TASK, "--model", "bot/random", "-T", "n_games=8",
         "--log-dir", str(tmp_path), "--display", "none"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success"  # inspect exits 0 even on error: check the log
    assert len(log.samples) == 8
    games = records(log)
    assert all(g.winner in ("impostor", "majority") for g, _ in games)
    seats = sorted(games, key=lambda r: r[0].game_index)
    # per-experiment seat blocks (issue 26): each 4-game block holds every seat once
    assert sorted(g.impostor_seat for g, _ in seats[:4]) == [0, 1, 2, 3] == sorted(g.impostor_seat for g, _ in seats[4:])
    metrics = log.results.scores[0].metrics
    assert metrics["impostor_win_rate"].value == pytest.approx(sum(g.winner == "impostor" for g, _ in games) / 8)
    # the header carries the metrics but not the games a second time as epoch reductions:
    # eval_set reads and keeps every log's header (a grid shard's memory and logs.json)
    header = read_eval_log(info, header_only=True)
    assert header.results.scores[0].metrics["impostor_win_rate"].value == metrics["impostor_win_rate"].value
    assert not header.reductions
    assert len(header.model_dump_json()) < 20_000
    # the game is readable in `inspect view`: descriptions and votes in the messages
    # (one message per phase, one line per player)
    texts = [m.text for m in log.samples[0].messages if m.role == "assistant"]
    assert len(texts) == 2
    assert texts[0].count("(speaks ") == 4 and texts[1].count(" votes ") == 4


def test_same_seed_same_games(tmp_path):
    a = records(run(tmp_path / "a", mode="cross_play", n_games=8, seed=3, model_roles={"impostor": "bot/random"}))
    b = records(run(tmp_path / "b", mode="cross_play", n_games=8, seed=3, model_roles={"impostor": "bot/random"}))
    assert [g.model_dump() for g, _ in a] == [g.model_dump() for g, _ in b]
    assert [[p.model_dump() for p in ps] for _, ps in a] == [[p.model_dump() for p in ps] for _, ps in b]


def test_team_mode_records_teams_and_roles(tmp_path):
    log = run(tmp_path, mode="team_aware", n_games=8, model_roles={"team_b": "bot/embedding"}, model="bot/random")
    for game, players in records(log):
        teams = game.team_assignment
        assert sorted(teams) == ["A", "A", "B", "B"]
        for p in players:
            assert p.team == teams[p.seat]
            assert p.model == ("bot/random" if p.team == "A" else "bot/embedding")
            assert (p.role == "impostor") == (p.seat == game.impostor_seat)
    hosts = sorted((g.impostor_seat, g.team_assignment[g.impostor_seat]) for g, _ in records(log))
    assert hosts == [(s, t) for s in range(4) for t in "AB"]  # each seat hosts once per team (issue 26)
    # the team-aware prompt names the teammate
    sample = log.samples[0]
    prompts = [sample.attachments.get(e.input[1].text.removeprefix("attachment://"), e.input[1].text)
               for e in sample.events if getattr(e, "event", "") == "model"]
    assert any("are teammates (paired together for this game)" in p for p in prompts)


def test_contradictory_roles_fail_before_any_game(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", TASK, "--model", "bot/random", "--model-role",
         "impostor=bot/random", "-T", "mode=team_aware", "--log-dir", str(tmp_path), "--display", "none"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert proc.returncode != 0 and "--model-role team_a" in proc.stdout + proc.stderr
    assert not list_eval_logs(str(tmp_path))  # nothing was played


def test_cross_play_without_roles_names_the_missing_role(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", TASK, "--model", "bot/random", "-T", "mode=cross_play",
         "--log-dir", str(tmp_path), "--display", "none"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "pass --model-role impostor=<model> and/or --model-role majority=<model>" in out
    assert "Traceback" not in out
    assert not list_eval_logs(str(tmp_path))  # refused before any game: nothing written


def test_bad_task_option_is_named(tmp_path):
    from impostor_bench.core.errors import ImpostorError
    from impostor_bench.tasks.impostor import impostor

    with pytest.raises(ImpostorError, match="-T difficulty='impossible'"):
        impostor(difficulty="impossible")
    with pytest.raises(ImpostorError, match="tie_rule"):
        impostor(tie_rule="coin")


@pytest.mark.parametrize("rule", ["sym_candidate", "sym_side"])
def test_live_tie_rule_recorded(tmp_path, rule):
    log = run(tmp_path, n_games=12, tie_rule=rule)
    for game, _ in records(log):
        assert game.tie_rule == rule
        if game.win_condition != "tie":
            assert game.winner_live == game.winner
    json.dumps(log.results.scores[0].metrics["tie_rate"].value)


def _cli_cross_play(tmp_path, impostor_model, majority_model, n_games=40, seed=0):
    proc = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", TASK, "--model", majority_model, "--model-role",
         f"impostor={impostor_model}", "-T", "mode=cross_play", "-T", f"n_games={n_games}", "-T", f"seed={seed}",
         "--log-dir", str(tmp_path), "--display", "none"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path))
    log = read_eval_log(info)
    assert log.status == "success"
    return [g for g, _ in records(log)]


@pytest.mark.slow
def test_experiments_of_one_cell_get_independent_speaking_positions(tmp_path):
    """Issue 12: two cross-play model assignments of the same cell and seed, run through
    `inspect eval`, play the same pairs (paired design) but draw the impostor's seat and
    speaking position independently per game; each game's order is the draw
    of its own experiment's identity, and re-running gives the identical games."""
    from impostor_bench.core.experiment import experiment_id
    from impostor_bench.core.schedule import speaking_order

    a = _cli_cross_play(tmp_path / "a", "bot/random", "bot/embedding")
    b = _cli_cross_play(tmp_path / "b", "bot/embedding", "bot/random")
    assert [g.pair_id for g in a] == [g.pair_id for g in b]
    # the seat is each experiment's own draw (issue 26): independent, 10 of 40 agree by chance
    assert sum(x.impostor_seat == y.impostor_seat for x, y in zip(a, b)) <= 20
    same = sum(x.impostor_speaking_position == y.impostor_speaking_position for x, y in zip(a, b))
    assert same <= 20  # independent: 10 of 40 expected (P(> 20) < 1e-3); the old schedule: 40 of 40
    for games, imp, maj in ((a, "bot/random", "bot/embedding"), (b, "bot/embedding", "bot/random")):
        exp = experiment_id("cross_play", "easy", {"impostor": imp, "majority": maj}, 0)
        assert {g.experiment_id for g in games} == {exp}
        for g in games:
            order = speaking_order(exp, g.game_index)
            assert g.speaking_order == "".join(map(str, order))
            assert g.impostor_speaking_position == order.index(g.impostor_seat)
    again = _cli_cross_play(tmp_path / "a2", "bot/random", "bot/embedding")
    assert [g.model_dump() for g in again] == [g.model_dump() for g in a]
