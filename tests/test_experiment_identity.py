"""An experiment's identity, defined once (``core.experiment.identity_of``): the solver, the exporter,
the sweep's labels and its resume key all derive it from the options they hold, the ids of existing
experiments are what they were, and a sweep whose logs were written before resumes."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, write_eval_log

from impostor_bench.core.experiment import ABLATION_OPTIONS, IDENTITY_OPTIONS, experiment_id, identity_of
from impostor_bench.core.options import GameOptions
from impostor_bench.export import experiment_id_of
from impostor_bench.sweep.plan import experiment_key, experiments, plan, task_spec
from impostor_bench.sweep.run import left_to_play

GOLDEN = Path(__file__).parent / "golden" / "sweep_logs.json"

#: Option sets and the ids their experiments had before the identity was composed in one place
#: (the solver's, the exporter's and the sweep's alike; model bot/random).
PINNED = [
    ({}, "homogeneous|easy|bot/random|s0"),
    ({"language": "es"}, "homogeneous|easy|bot/random|s0|es"),
    ({"players": 6, "impostors": 2}, "homogeneous|easy|bot/random|s0|p6k2"),
    ({"length_budget": 200}, "homogeneous|easy|bot/random|s0|L200"),
    ({"temperature": 0.3}, "homogeneous|easy|bot/random|s0|T0.3"),
    ({"rounds": 3, "private_notes": True, "top_p": 0.9, "truncate_to": 120, "difficulty": "hard", "seed": 7},
     "homogeneous|hard|bot/random|s7|r3n|P0.9|C120"),
]


def test_identity_reads_absent_options_as_their_defaults():
    paper = experiment_id("homogeneous", "easy", {"all": "m"}, 0)
    assert identity_of({}, {"all": "m"}) == paper
    assert identity_of(GameOptions().model_dump(), {"all": "m"}) == paper  # every default written out
    assert identity_of({"players": None, "language": None, "rounds": None}, {"all": "m"}) == paper
    cross = identity_of({"mode": "cross_play", "players": 5, "impostors": 2, "language": "de", "temperature": 1.0},
                        {"impostor": "a", "majority": "b"})
    assert cross == "cross_play|easy|imp=a,maj=b|s0|p5k2|de|T1"


@pytest.mark.parametrize("option, value", [
    ("mode", "cross_play"), ("difficulty", "hard"), ("seed", 1), ("rounds", 2), ("private_notes", True),
    ("players", 6), ("impostors", 2), ("language", "es"), ("temperature", 0.3), ("top_p", 0.9),
    ("length_budget", 60), ("truncate_to", 60),
])
def test_every_axis_of_the_identity_is_in_the_resume_key(option, value):
    """The resume key is the identity of the task arguments: an axis of the identity cannot be left out."""
    assert option in IDENTITY_OPTIONS + ABLATION_OPTIONS
    base = {"mode": "homogeneous", "models": {"model": "x"}, "rounds": 3}
    models = {"impostor": "x", "majority": "y"} if option == "mode" else base["models"]
    changed = base | {option: value, "models": models}
    assert experiment_key(changed) != experiment_key(base)
    assert experiment_key(changed) == identity_of(changed, {"impostor": "x", "majority": "y"} if option == "mode"
                                                  else {"all": "x"})


@pytest.mark.parametrize("options, pinned", PINNED)
def test_the_exporters_and_the_sweeps_ids_are_as_before(tmp_path, options, pinned):
    header = SimpleNamespace(task_args=GameOptions(**options).task_args(), model="bot/random", model_roles=None)
    assert experiment_id_of(header) == pinned
    assert experiment_id_of(SimpleNamespace(task_args=options, model="bot/random", model_roles=None)) == pinned
    fields = {"language": [options["language"]]} if "language" in options else {}
    fields |= {k: [v] for k, v in options.items() if k in ("players", "impostors", "length_budget", "truncate_to")}
    fields |= {k: v for k, v in options.items() if k in ("rounds", "private_notes", "temperature", "top_p")}
    fields |= {"difficulties": [options.get("difficulty", "easy")], "seeds": [options.get("seed", 0)]}
    cfg = _config(tmp_path, models=["bot/random"], modes=["homogeneous"], **fields)
    [e] = plan(cfg).experiments
    assert e.label == pinned == experiment_key(task_spec(e, plan(cfg).config, cfg, {})["task_args"])


def test_the_solvers_ids_are_as_before(tmp_path, monkeypatch):
    """The identity the solver derives from the models it plays (its draws' seed) and records."""
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    logs = inspect_eval([impostor(n_games=1, **options) for options, _ in PINNED[:5]], model="bot/random",
                        log_dir=str(tmp_path), display="none", max_tasks=5)
    got = {}
    for log in logs:
        assert log.status == "success", log.error
        assert log.samples is not None
        [sample] = log.samples
        got[log.eval.task_args.get("language", ""), log.eval.task_args.get("players", 4),
            log.eval.task_args.get("length_budget"), log.eval.task_args.get("temperature")] = (
            sample.scores["impostor_winner"].metadata["game"]["experiment_id"], experiment_id_of(log.eval))
    assert sorted(got.values()) == sorted((pinned, pinned) for _, pinned in PINNED[:5])


def _config(tmp_path: Path, text: str | None = None, **fields) -> Path:
    import yaml

    p = tmp_path / "sweep.yaml"
    p.write_text(text if text is not None else yaml.safe_dump(
        {"name": "s", "difficulties": ["easy"], "games_per_experiment": 1, "tracking": {"enabled": False}, **fields}))
    return p


def _write_logs(folder: Path, logs: list[dict]) -> None:
    """Logs as Inspect writes and names them, holding what the resume reads: status and task arguments."""
    folder.mkdir()
    for i, log in enumerate(logs):
        spec = EvalSpec(created="2026-11-28T23:25:59+00:00", task="impostor", dataset=EvalDataset(),
                        model="bot/random", config=EvalConfig(), task_args=log["task_args"])
        write_eval_log(EvalLog(eval=spec, status=log["status"]), str(folder / f"2026-11-28T23-25-59-00-00_impostor_log{i:02d}.json"), format="json")


@pytest.mark.parametrize("which", [0, 1])
def test_a_sweep_started_before_resumes_its_unfinished_experiments(tmp_path, which):
    """The task arguments of logs the sweep wrote before (language and decoding axes; group sizes,
    rounds with notes and a length axis): the experiments they finished are found, the rest play."""
    recorded = json.loads(GOLDEN.read_text())["sweeps"][which]
    cfg = _config(tmp_path, recorded["config"])
    pl = plan(cfg)
    assert [e.label for e in pl.experiments] == recorded["labels"]
    keys = [experiment_key(task_spec(e, pl.config, cfg, {})["task_args"]) for e in pl.experiments]
    assert keys == recorded["labels"]  # the key is the identity
    assert sorted(experiment_key(log["task_args"]) for log in recorded["logs"]) == sorted(keys)  # one each
    finished = recorded["logs"][::2]
    crashed = [{"status": "error", "task_args": log["task_args"]} for log in recorded["logs"][1:6:2]]
    _write_logs(tmp_path / "logs", finished + crashed)
    left = left_to_play(pl, tmp_path / "logs")
    assert sorted(e.label for e in left.experiments) == sorted(experiment_key(log["task_args"])
                                                               for log in recorded["logs"][1::2])
    assert len(left.experiments) == len(pl.experiments) - len(finished)


def test_labels_and_keys_agree_over_every_axis(tmp_path):
    cfg = _config(tmp_path, models=["bot/random", "bot/vague"], modes=["homogeneous", "cross_play"],
                  seeds=[0, 1], players=[4, 6], impostors=[1, 2], language=["en", "es"], length_budget=[None, 60],
                  truncate_to=[None, 50], decoding=[{"temperature": 0.3}, {"top_p": 0.9}])
    pl = plan(cfg)
    labels = [e.label for e in experiments(pl.config)]
    assert labels == [experiment_key(task_spec(e, pl.config, cfg, {})["task_args"]) for e in pl.experiments]
    # (2 homogeneous + 2 cross-play) x 2 seeds x 3 group cells (4x1, 6x1, 6x2) x 2 languages x 2 x 2 x 2 decodings
    assert len(set(labels)) == len(labels) == 4 * 2 * 3 * 2 * 2 * 2 * 2
