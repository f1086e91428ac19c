"""Issue 43, the judge pass: coding-scheme functions, the bot judge, the ``strategy_judge`` scorer
through Inspect's own re-scoring (labels kept in the log and reused), ``impostor annotate``
(estimate first), the exported ``judge_*`` columns, agreement with the hand-coded sample, and
Table 12 on a bot tournament with a judge pass."""

from __future__ import annotations

import contextvars
import json
import os
import shutil
from pathlib import Path

import pytest

from impostor_bench.core.judging import (JudgeReplyError, judge_prompt, judge_record, load_scheme, parse_reply,
                                         record_of_prompt, rule_labels)

ROOT = Path(__file__).resolve().parents[1]


def _eval(log_dir: Path, mode: str, n_games: int, seed: int = 1) -> Path:
    from inspect_ai import eval

    from impostor_bench.tasks.impostor import impostor

    old = os.environ.get("IMPOSTOR_MLFLOW")
    os.environ["IMPOSTOR_MLFLOW"] = "0"
    try:
        task = contextvars.Context().run(impostor, mode=mode, n_games=n_games, seed=seed)
        log = eval(task, model="bot/embedding", model_roles={"team_b": "bot/random"}, log_dir=str(log_dir),
                   display="none")[0]
    finally:
        if old is None:
            os.environ.pop("IMPOSTOR_MLFLOW")
        else:
            os.environ["IMPOSTOR_MLFLOW"] = old
    assert log.status == "success"
    return Path(log.location.removeprefix("file://"))


@pytest.fixture(scope="module")
def team_log(tmp_path_factory) -> Path:
    return _eval(tmp_path_factory.mktemp("judge_logs"), "team_aware", 4)


def test_prompt_carries_the_record_and_the_reply_parse_refuses_bad_labels():
    rec = judge_record({"mode": "team_aware", "majority_word": "dog", "impostor_word": "wolf"},
                       [{"seat": s, "role": "majority", "team": "A", "speaking_position": 3 - s,
                         "description": f"d{s}", "description_valid": s != 2, "reasoning": "r"} for s in range(4)])
    assert [p["player"] for p in rec["players"]] == [4, 3, 2, 1]  # speaking order
    assert rec["players"][1]["description"] is None  # an invalid description is not shown as one
    prompt = judge_prompt(rec)
    assert record_of_prompt(prompt) == rec and all(k in prompt for k in load_scheme()["strategy"])
    ok = json.dumps({"players": [{"player": p, "strategy": "vague", "trust": "false", "coord_intent": False}
                                 for p in (1, 2, 3, 4)]})
    assert parse_reply("Sure! " + ok, [0, 1, 2, 3])[2] == {"strategy": "vague", "trust": False, "coord_intent": False}
    for bad, msg in ((ok.replace("vague", "sneaky", 1), "not one of"), ("no json here", "no JSON"),
                     (ok.replace('"player": 4', '"player": 5'), r"expected \[1, 2, 3, 4\]"),
                     (ok.replace('"false"', '"maybe"', 1), "true or false")):
        with pytest.raises(JudgeReplyError, match=msg):
            parse_reply(bad, [0, 1, 2, 3])


def test_the_asked_reply_format_is_keyed_by_player_and_its_schema_has_no_array():
    """The reply the prompt asks for and the bot gives ({"Player N": {labels}}) parses, and its JSON
    schema admits exactly one entry per player of the record: no arrays (a grammar may not hold
    maxItems), every key required, nothing else allowed."""
    import jsonschema

    from impostor_bench.core.judging import bot_reply, reply_json_schema

    sample = json.loads((ROOT / "configs" / "judge_sample.json").read_text(encoding="utf-8"))
    rec = sample["games"][0]["record"]
    schema = reply_json_schema(rec)
    assert "array" not in json.dumps(schema)
    reply = bot_reply(judge_prompt(rec))
    jsonschema.validate(json.loads(reply), schema)
    assert parse_reply(reply, [0, 1, 2, 3]) == rule_labels(rec)
    assert '{"Player ' in judge_prompt(rec)  # the prompt asks for the same format
    five = json.loads(reply) | {"Player 5": {"strategy": "vague", "trust": False, "coord_intent": False}}
    missing = {k: v for k, v in json.loads(reply).items() if k != "Player 2"}
    for bad in (five, missing):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
        with pytest.raises(JudgeReplyError, match="expected"):
            parse_reply(json.dumps(bad), [0, 1, 2, 3])


@pytest.mark.slow
def test_local_judge_replies_parse_under_the_grammar():
    """local/smollm2 with the reply schema as a llama.cpp grammar: at temperature 1 and three seeds
    (so not one lucky greedy path) every reply is a complete label set for the record's players.
    The prompt is short (a long one only costs time: the grammar, not the prompt, holds the form)."""
    import asyncio

    from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

    from impostor_bench.scorers.judge import reply_schema

    sample = json.loads((ROOT / "configs" / "judge_sample.json").read_text(encoding="utf-8"))
    rec = sample["games"][1]["record"]
    model = get_model("local/smollm2")
    for seed in (1, 2, 3):
        config = GenerateConfig(temperature=1.0, seed=seed, max_tokens=200, response_schema=reply_schema(rec, load_scheme()))
        out = asyncio.run(model.generate([ChatMessageUser(content="Label the four players of a word game as JSON.")],
                                         config=config))
        labels = parse_reply(out.completion, [int(p["player"]) - 1 for p in rec["players"]])
        assert len(labels) == 4 and out.stop_reason == "stop", out.completion


def test_scorer_labels_games_through_inspect_score_and_reuses_them(team_log):
    from inspect_ai import score
    from inspect_ai.log import read_eval_log

    from impostor_bench.scorers.judge import strategy_judge

    log = read_eval_log(str(team_log))
    once = score(log, [strategy_judge(judge="bot/judge")], action="append", display="none")
    for s in once.samples:
        md = s.scores["strategy_judge"].metadata
        rec = s.scores["impostor_winner"].metadata
        expected = rule_labels(judge_record(rec["game"], rec["players"]))  # the rule coder, called directly
        assert md["judge"] == "bot/judge" and md["scheme_version"] == 1
        assert md["labels"] == {str(k): v for k, v in expected.items()}
    twice = score(once, [strategy_judge(judge="bot/judge")], action="append", display="none")
    for s in twice.samples:  # the second pass found the labels in the log: no judge call
        again = s.scores["strategy_judge1"]
        assert again.metadata["cached"] is True and again.metadata["labels"] == s.scores["strategy_judge"].metadata["labels"]


def test_annotate_estimates_first_then_labels_and_export_fills_the_columns(team_log, tmp_path, capsys):
    from impostor_bench.cli import main
    from impostor_bench.export import tables_from_logs

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(team_log, logs / team_log.name)
    assert main(["annotate", "--logs", str(logs), "--judge", "gpt-4o", "--plan"]) == 0
    out = capsys.readouterr().out
    assert "4 game(s) to label" in out and "4 calls" in out and "$" in out and "gpt-4o-2024-08-06" in out
    assert tables_from_logs(str(logs)).players["judge_strategy"].isna().all()  # --plan wrote nothing
    assert main(["annotate", "--logs", str(logs), "--judge", "bot/judge"]) == 0
    assert "labelled 4 game(s) with bot/judge" in capsys.readouterr().out
    players = tables_from_logs(str(logs)).players
    assert players["judge_strategy"].notna().all() and set(players["judge_model"]) == {"bot/judge"}
    assert set(players["judge_strategy"]) <= set(load_scheme()["strategy"])
    assert str(players["judge_trust"].dtype) == "boolean"
    assert main(["annotate", "--logs", str(logs), "--judge", "bot/judge"]) == 0
    again = capsys.readouterr().out
    assert "0 game(s) to label" in again and "4 already labelled by this judge" in again and "labelled 4" not in again


def test_agreement_with_the_hand_coded_sample_is_cohens_kappa():
    from sklearn.metrics import cohen_kappa_score

    from impostor_bench.commands.annotate import agreement, sample_path

    table, judged, failed = agreement("bot/judge", 400)
    assert failed == [] and len(judged) == 24
    sample = json.loads(sample_path().read_text(encoding="utf-8"))
    hand, bot = [], []
    for g in sample["games"]:
        labels = rule_labels(g["record"])
        for seat, codes in sorted(g["hand"].items()):
            hand.append(codes[0])
            bot.append(labels[int(seat) - 1]["strategy"])
    k = table.set_index("label")
    assert k.loc["strategy", "kappa"] == pytest.approx(cohen_kappa_score(hand, bot))
    assert 0.5 < k.loc["strategy", "kappa"] < 1  # the rule coder misses the codes that need judgement
    assert (k["kappa_ci_high"] <= 1).all() and k.loc["strategy", "n"] == 24


def _table12_after_a_judge_pass(logs: Path, judge: str, n_games: int):
    """Team-blind and team-aware bot games, labelled by ``judge`` through `impostor annotate`:
    (Table 12 of the team_dynamics table, the columns filled, the undefined list)."""
    from impostor_bench.analysis.data import AnalysisData
    from impostor_bench.analysis.stats import TABLES
    from impostor_bench.analysis.stats.config import StatsConfig
    from impostor_bench.analysis.stats.table12 import TABLE12
    from impostor_bench.cli import main
    from impostor_bench.export import tables_from_logs

    for i, mode in enumerate(("team_blind", "team_aware", "team_blind", "team_aware")):
        _eval(logs, mode, n_games, seed=10 + i)
    assert main(["annotate", "--logs", str(logs), "--judge", judge]) == 0
    t = tables_from_logs(str(logs))
    assert t.players["judge_strategy"].notna().all()  # every game labelled
    data = AnalysisData(t.games, t.players)
    cfg = StatsConfig(bootstrap_reps=50, permutation_reps=50)
    td = TABLES["team_dynamics"](data, cfg)
    filled = [c for c, _, _ in TABLE12 if td[c].notna().any()]
    return td, filled, TABLES["table12_undefined"](data, cfg).set_index("metric")


@pytest.mark.slow
def test_table12_on_a_bot_tournament_with_a_judge_pass(tmp_path):
    """Team-blind and team-aware bot games, judged by bot/judge: at least 12 of Table 12's 14 columns
    filled (Trust Recovery and Resilience need multi-round games: the undefined list says so)."""
    from impostor_bench.analysis.stats.table12 import TABLE12

    td, filled, und = _table12_after_a_judge_pass(tmp_path / "logs", "bot/judge", 12)
    assert len(filled) >= 12, sorted(set(c for c, _, _ in TABLE12) - set(filled))
    assert td["strategy_align_pct"].notna().any() and set(td["strategy_judge"].dropna()) == {"bot/judge"}
    assert "one round" in und.loc["trust_recovery_pct", "reason"]


@pytest.mark.heavy
def test_table12_with_the_local_model_as_the_judge(tmp_path):
    """The same with local/smollm2 as a real judge (12 games, one call each: ~10 min on 2 cores; run
    with --heavy): every game labelled under the grammar, and Strategy Align. and Alignment Gap
    filled from its labels. (With 8 games, Ling. Mirror and Vocab. Conv. had no unit yet.)"""
    from impostor_bench.analysis.stats.table12 import TABLE12

    td, filled, _und = _table12_after_a_judge_pass(tmp_path / "logs", "local/smollm2", 3)
    assert len(filled) >= 12, sorted(set(c for c, _, _ in TABLE12) - set(filled))
    assert {"strategy_align_pct", "alignment_gap_pp"} <= set(filled)
    assert set(td["strategy_judge"].dropna()) == {"local/smollm2"}


@pytest.mark.slow
def test_annotate_an_mlflow_experiment_then_export_it(tmp_path, monkeypatch, capsys):
    """--experiment finds the runs' logs (tag impostor.log_file), labels them and logs the runs'
    tables again, so `impostor export --experiment` carries the judge columns."""
    import pandas as pd

    from impostor_bench.cli import main

    uri = f"sqlite:///{tmp_path / 'm.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "judged")
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "1")
    from inspect_ai import eval

    from impostor_bench.tasks.impostor import impostor

    task = contextvars.Context().run(impostor, mode="team_aware", n_games=3, seed=3)
    assert eval(task, model="bot/embedding", model_roles={"team_b": "bot/random"}, log_dir=str(tmp_path / "logs"),
                display="none")[0].status == "success"
    assert main(["annotate", "--experiment", "judged", "--judge", "bot/judge", "--tracking-uri", uri]) == 0
    assert "re-logged the tables of 1 run(s)" in capsys.readouterr().out
    assert main(["export", "--experiment", "judged", "--tracking-uri", uri, "--out", str(tmp_path / "out")]) == 0
    players = pd.read_parquet(tmp_path / "out" / "players.parquet")
    assert len(players) == 12 and players["judge_strategy"].notna().all() and set(players["judge_model"]) == {"bot/judge"}
