"""Loading and validating the game tables: every failure names the file, the column and the fix."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.io import load_tables, validate_tables, write_tables
from impostor_bench.cli import main
from impostor_bench.commands.report import load_from_mlflow
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.records import CONTRACT_GAME_COLUMNS, CONTRACT_PLAYER_COLUMNS, WINNER_OF


def _games(d):
    return pd.read_parquet(d / "games.parquet")


def _players(d):
    return pd.read_parquet(d / "players.parquet")


def _expect(d, *fragments):
    with pytest.raises(ImpostorError) as info:
        load_tables(d)
    msg = str(info.value)
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"
    assert "fix:" in msg
    assert "\n" not in msg
    return msg


# --------------------------------------------------------------------------- happy path


def test_load_roundtrip_types_and_hashes(sim_export, sim_small):
    games, players, models = sim_small
    data = load_tables(sim_export)
    assert len(data.games) == len(games) and len(data.players) == 4 * len(games)
    assert list(data.games.columns[: len(CONTRACT_GAME_COLUMNS)]) == CONTRACT_GAME_COLUMNS
    assert list(data.players.columns[: len(CONTRACT_PLAYER_COLUMNS)]) == CONTRACT_PLAYER_COLUMNS
    assert data.players["vote"].dtype == "Int64"
    assert data.players["self_declared"].dtype == bool
    assert data.games["impostor_seat"].dtype == np.int64
    assert data.models is not None and set(data.models["model"]) == set(models["model"])
    assert data.notes == []
    by_name = {s["path"].rsplit("/", 1)[-1]: s for s in data.sources}
    for name in ("games.parquet", "players.parquet", "models.csv"):
        assert by_name[name]["sha256"] == hashlib.sha256((sim_export / name).read_bytes()).hexdigest()


def test_coercible_types_are_accepted(export_copy):
    g = _games(export_copy)
    g["impostor_seat"] = g["impostor_seat"].astype(str)  # "2" -> 2
    g.to_parquet(export_copy / "games.parquet")
    p = _players(export_copy)
    p["self_declared"] = p["self_declared"].astype(int)  # 0/1 -> bool
    p["vote"] = p["vote"].astype("float64")  # NaN for invalid ballots
    p.to_parquet(export_copy / "players.parquet")
    data = load_tables(export_copy)
    assert data.games["impostor_seat"].dtype == np.int64
    assert data.players["self_declared"].dtype == bool
    assert data.players["vote"].dtype == "Int64"


def test_models_csv_optional_with_note(export_copy):
    (export_copy / "models.csv").unlink()
    data = load_tables(export_copy)
    assert data.models is None
    assert any("models.csv" in n for n in data.notes)


# --------------------------------------------------------------------------- files


def test_not_a_directory(tmp_path):
    with pytest.raises(ImpostorError, match="not a directory.*fix:"):
        load_tables(tmp_path / "nope")


def test_missing_games_file(export_copy):
    (export_copy / "games.parquet").unlink()
    _expect(export_copy, "games.parquet", "file not found")


def test_corrupt_bytes(export_copy):
    (export_copy / "players.parquet").write_bytes(b"PAR1 this is not really parquet" * 10)
    _expect(export_copy, "players.parquet", "not a readable Parquet file")


def test_truncated_parquet(export_copy):
    path = export_copy / "games.parquet"
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    _expect(export_copy, "games.parquet", "not a readable Parquet file")


def test_unreadable_models_csv(export_copy):
    (export_copy / "models.csv").write_bytes(b"\x00\xff\xfe garbage")
    with pytest.raises(ImpostorError, match="models.csv"):
        load_tables(export_copy)


# --------------------------------------------------------------------------- columns / values


def test_missing_column(export_copy):
    g = _games(export_copy).drop(columns=["impostor_seat"])
    g.to_parquet(export_copy / "games.parquet")
    _expect(export_copy, "games.parquet", "column 'impostor_seat'", "missing")


def test_bad_mode_value(export_copy):
    g = _games(export_copy)
    g.loc[3, "mode"] = "homogenous"
    g.to_parquet(export_copy / "games.parquet")
    msg = _expect(export_copy, "games.parquet", "column 'mode'", "'homogenous'", "row 3")
    assert "team_semi_aware" in msg  # the fix lists the valid values


def test_bad_difficulty_value(export_copy):
    g = _games(export_copy)
    g["difficulty"] = g["difficulty"].replace({"expert": "Expert"})
    g.to_parquet(export_copy / "games.parquet")
    _expect(export_copy, "games.parquet", "column 'difficulty'", "'Expert'")


def test_non_integer_seat(export_copy):
    g = _games(export_copy)
    g["impostor_seat"] = g["impostor_seat"].astype(str)
    g.loc[0, "impostor_seat"] = "two"
    g.to_parquet(export_copy / "games.parquet")
    _expect(export_copy, "games.parquet", "column 'impostor_seat'", "not integers", "'two'")


def test_seat_out_of_range(export_copy):
    p = _players(export_copy)
    p.loc[5, "seat"] = 4
    p.to_parquet(export_copy / "players.parquet")
    _expect(export_copy, "players.parquet", "column 'seat'", "outside 0-3")


def test_bad_role(export_copy):
    p = _players(export_copy)
    p.loc[p.index[p["role"] == "impostor"][0], "role"] = "imposter"
    p.to_parquet(export_copy / "players.parquet")
    _expect(export_copy, "players.parquet", "column 'role'", "'imposter'")


def test_vote_out_of_range(export_copy):
    p = _players(export_copy)
    p["vote"] = p["vote"].astype("Int64")
    p.loc[7, "vote"] = 7
    p.to_parquet(export_copy / "players.parquet")
    _expect(export_copy, "players.parquet", "column 'vote'", "not a seat 0-3")


def test_confidence_out_of_range(export_copy):
    p = _players(export_copy)
    p.loc[2, "confidence"] = 1.7
    p.to_parquet(export_copy / "players.parquet")
    _expect(export_copy, "players.parquet", "column 'confidence'", "[0, 1]")


def test_bad_bool(export_copy):
    p = _players(export_copy)
    p["description_valid"] = p["description_valid"].map({True: "yes", False: "no"})
    p.to_parquet(export_copy / "players.parquet")
    _expect(export_copy, "players.parquet", "column 'description_valid'", "true/false")


def test_bad_team(export_copy):
    p = _players(export_copy)
    idx = p.index[p["team"].notna()][0]
    p.loc[idx, "team"] = "C"
    p.to_parquet(export_copy / "players.parquet")
    _expect(export_copy, "players.parquet", "column 'team'", "'C'")


def test_duplicate_game_id(export_copy):
    g = _games(export_copy)
    g.loc[1, "game_id"] = g.loc[0, "game_id"]
    g.to_parquet(export_copy / "games.parquet")
    _expect(export_copy, "games.parquet", "column 'game_id'", "share a game_id")


# --------------------------------------------------------------------------- structure


def test_three_seats_in_a_game(export_copy):
    p = _players(export_copy)
    gid = p["game_id"].iloc[0]
    drop = p.index[(p["game_id"] == gid) & (p["role"] == "majority")][0]
    p.drop(index=drop).to_parquet(export_copy / "players.parquet")
    _expect(export_copy, "players.parquet", "column 'seat'", "four seats", gid)


def test_duplicated_seat(export_copy):
    p = _players(export_copy)
    gid = p["game_id"].iloc[0]
    rows = p.index[p["game_id"] == gid]
    maj = [i for i in rows if p.loc[i, "role"] == "majority"]
    p.loc[maj[0], "seat"] = p.loc[maj[1], "seat"]
    p.to_parquet(export_copy / "players.parquet")
    _expect(export_copy, "players.parquet", "column 'seat'", gid)


def test_two_impostors(export_copy):
    p = _players(export_copy)
    gid = p["game_id"].iloc[4]
    idx = p.index[(p["game_id"] == gid) & (p["role"] == "majority")][0]
    p.loc[idx, "role"] = "impostor"
    p.to_parquet(export_copy / "players.parquet")
    _expect(export_copy, "players.parquet", "column 'role'", "exactly one impostor", gid)


def test_players_of_unknown_games(export_copy):
    g = _games(export_copy)
    gone = g["game_id"].iloc[0]
    g.iloc[1:].to_parquet(export_copy / "games.parquet")
    _expect(export_copy, "players.parquet", "column 'game_id'", "belong to no game", gone)


def test_games_without_players(export_copy):
    p = _players(export_copy)
    gid = p["game_id"].iloc[-1]
    p[p["game_id"] != gid].to_parquet(export_copy / "players.parquet")
    _expect(export_copy, "column 'game_id'", "no player rows", gid)


def test_impostor_seat_disagrees_between_tables(export_copy):
    g = _games(export_copy)
    g.loc[0, "impostor_seat"] = (g.loc[0, "impostor_seat"] + 1) % 4
    g.to_parquet(export_copy / "games.parquet")
    _expect(export_copy, "games.parquet", "players.parquet", "impostor_seat", "disagree")


def test_winner_contradicting_win_condition_is_refused_naming_the_first_row(export_copy):
    """Issue 42: swapped winners with their tie / no_conviction kept were reported silently."""
    g = _games(export_copy)
    flip = {"impostor": "majority", "majority": "impostor"}
    rows = [int(i) for i in np.flatnonzero(g["win_condition"].isin(["tie", "no_conviction"]).to_numpy())[:3]]
    assert len(rows) == 3
    for i in rows:
        g.loc[i, "winner"] = flip[g.loc[i, "winner"]]
    g.to_parquet(export_copy / "games.parquet")
    gid, cond = g.loc[rows[0], "game_id"], g.loc[rows[0], "win_condition"]
    _expect(export_copy, "games.parquet", "column 'winner'", "3 game(s) contradict their win_condition",
            f"first row {rows[0]} ", repr(gid), f"winner 'majority' but win_condition {cond!r} is an impostor win")


@pytest.mark.parametrize("condition", sorted(WINNER_OF))
def test_every_win_condition_checks_its_winner(sim_small, condition):
    games, players, _ = sim_small
    g, players = games.copy(), players.copy()
    g["win_condition"] = g["win_condition"].astype(object)
    # a game whose ballots give the condition (whether a declared guess was right is not re-judged;
    # the multi-round conditions are not judged from the players rows, which hold round 1 only)
    guesses = ("impostor_guess_correct", "impostor_guess_wrong")
    like = guesses if condition in guesses else (condition,)
    rows = np.flatnonzero(g["win_condition"].isin(like).to_numpy())
    i = int(rows[0]) if len(rows) else 4
    if condition == "strict_plurality" and not len(rows):  # one valid ballot, on the impostor
        gid, imp = g.loc[i, "game_id"], int(g.loc[i, "impostor_seat"])
        mine = players.index[players["game_id"] == gid]
        players["ballot_class"] = players["ballot_class"].astype(object)
        players.loc[mine, ["vote", "ballot_class", "ballot_valid", "self_declared"]] = [None, "unparseable", False, False]
        voter = next(r for r in mine if int(players.loc[r, "seat"]) != imp)
        players.loc[voter, ["vote", "ballot_class", "ballot_valid"]] = [imp, "valid", True]
    g.loc[i, "win_condition"] = condition
    g.loc[i, "winner"] = WINNER_OF[condition]
    validate_tables(g, players)  # consistent: accepted
    g.loc[i, "winner"] = {"impostor": "majority", "majority": "impostor"}[WINNER_OF[condition]]
    with pytest.raises(ImpostorError, match=rf"^games.parquet: column 'winner': 1 game\(s\) .* first row {i} "):
        validate_tables(g, players)


@pytest.mark.parametrize("recorded, wanted", [
    ("conviction", "no_conviction"), ("strict_plurality", "no_conviction"), ("tie", "conviction"),
    ("no_conviction", "tie"), ("majority_self_declared", "conviction"), ("impostor_guess_wrong", "tie"),
])
def test_a_win_condition_the_ballots_do_not_give_is_refused(sim_small, recorded, wanted):
    """A game whose record says one thing and whose ballots another (a ``conviction`` whose
    majority ballots name no impostor) would make the win rates (from ``winner``) and the tie and
    detection tables (recounted from the ballots) disagree: refused in one line naming the game."""
    games, players, _ = sim_small
    g = games.copy()
    g["win_condition"] = g["win_condition"].astype(object)
    g["winner"] = g["winner"].astype(object)
    i = int(np.flatnonzero((g["win_condition"] == wanted).to_numpy())[0])
    g.loc[i, "win_condition"] = recorded
    g.loc[i, "winner"] = WINNER_OF[recorded]  # the winner agrees with the condition: only the ballots do not
    gid = g.loc[i, "game_id"]
    with pytest.raises(ImpostorError) as info:
        validate_tables(g, players)
    msg = str(info.value)
    assert msg.startswith("games.parquet/players.parquet: column 'win_condition': 1 one-round game(s) contradict")
    assert repr(gid) in msg and f"win_condition {recorded!r}" in msg and "fix:" in msg and "\n" not in msg


def test_a_conviction_with_no_ballot_on_the_impostor_is_refused(sim_small):
    """The red team's case: ``conviction`` recorded, the majority ballots name other players."""
    games, players, _ = sim_small
    g, p = games.copy(), players.copy()
    i = int(np.flatnonzero((g["win_condition"] == "conviction").to_numpy())[0])
    gid, imp = g.loc[i, "game_id"], int(g.loc[i, "impostor_seat"])
    rows = p.index[(p["game_id"] == gid) & (p["seat"] != imp)]
    assert len(rows) == 3
    for r in rows:  # every majority ballot names the next majority seat
        others = [s for s in range(4) if s not in (imp, int(p.loc[r, "seat"]))]
        p.loc[r, ["vote", "ballot_class", "self_declared"]] = [others[0], "valid", False]
    with pytest.raises(ImpostorError, match=rf"{gid!r}: win_condition 'conviction' but .* give "):
        validate_tables(g, p)


def test_a_multi_round_game_is_not_judged_by_its_first_round(sim_small):
    """Players rows of a multi-round game hold its first round: its outcome is the whole game's."""
    games, players, _ = sim_small
    g = games.copy()
    g["win_condition"] = g["win_condition"].astype(object)
    i = int(np.flatnonzero((g["win_condition"] == "no_conviction").to_numpy())[0])
    g["max_rounds"] = 1
    g.loc[i, ["win_condition", "winner", "max_rounds"]] = ["conviction", "majority", 3]
    validate_tables(g, players)


# --------------------------------------------------------------------------- inputs that are not files


def test_a_fifo_for_a_table_is_refused_without_blocking(export_copy):
    import os

    (export_copy / "games.parquet").unlink()
    os.mkfifo(export_copy / "games.parquet")
    _expect(export_copy, "games.parquet", "named pipe (FIFO)", "not a regular file")


def test_models_csv_linked_to_dev_zero_is_refused(export_copy):
    (export_copy / "models.csv").unlink()
    (export_copy / "models.csv").symlink_to("/dev/zero")
    _expect(export_copy, "models.csv", "is a device, not a regular file")


def test_a_fifo_for_moves_and_a_dangling_models_link_are_one_line(export_copy, tmp_path):
    import os

    os.mkfifo(export_copy / "moves.parquet")
    _expect(export_copy, "moves.parquet", "named pipe (FIFO)")
    (export_copy / "moves.parquet").unlink()
    (export_copy / "models.csv").unlink()
    (export_copy / "models.csv").symlink_to(tmp_path / "nowhere.csv")
    _expect(export_copy, "models.csv", "file not found")


def test_cli_report_on_a_fifo_exits_2_in_one_line(export_copy, tmp_path, capsys):
    import os

    (export_copy / "players.parquet").unlink()
    os.mkfifo(export_copy / "players.parquet")
    rc = main(["report", "--parquet", str(export_copy), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and "players.parquet" in err[-1] and "FIFO" in err[-1] and "fix:" in err[-1]
    assert not [line for line in err if "Traceback" in line]


def test_a_filtered_export_with_a_team_column_of_nulls_loads(sim_export, tmp_path):
    """An export filtered with pandas to one mode without teams: ``team`` is a string column of
    nulls only, read as a categorical with no categories (an IndexError before)."""
    g, p = _games(sim_export), _players(sim_export)
    keep = g[g["mode"] == g["mode"].iloc[0]].head(40)
    p = p[p["game_id"].isin(keep["game_id"])].copy()
    p["team"] = pd.Series([None] * len(p), index=p.index, dtype="string")
    d = tmp_path / "filtered"
    write_tables(d, keep, p)
    data = load_tables(d)
    assert len(data.games) == 40 and data.players["team"].isna().all()
    p.loc[p.index[0], "team"] = "C"  # a bad value is still found among the nulls
    write_tables(d, keep, p)
    _expect(d, "players.parquet", "column 'team'", "'C'")


def test_winner_of_matches_the_rules():
    """WINNER_OF names every win condition, and the rules decide winners by it (random ballots)."""
    import random

    from impostor_bench.core.records import WIN_CONDITIONS
    from impostor_bench.core.rules import Ballot, decide

    assert set(WINNER_OF) == set(WIN_CONDITIONS)
    rng = random.Random(7)
    seen = set()
    for _ in range(3000):
        ballots = [Ballot(vote=rng.choice([None, 0, 1, 2, 3]), self_declared=rng.random() < 0.1,
                          word_guess=rng.choice([None, "cat", "dog"])) for _ in range(4)]
        out = decide(ballots, impostor_seat=rng.randrange(4), majority_word="cat")
        assert out.winner == WINNER_OF[out.win_condition]
        seen.add(out.win_condition)
    assert len(seen) == 7


def test_cli_report_refuses_swapped_winner_one_line_exit_2(export_copy, tmp_path, capsys):
    g = _games(export_copy)
    i = int(np.flatnonzero((g["win_condition"] == "tie").to_numpy())[0])
    g.loc[i, "winner"] = "majority"
    g.to_parquet(export_copy / "games.parquet")
    rc = main(["report", "--parquet", str(export_copy), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert err[-1].startswith("impostor report: error: ") and "games.parquet" in err[-1]
    assert f"first row {i} " in err[-1] and "fix:" in err[-1]
    assert not [line for line in err if "Traceback" in line]
    assert not (tmp_path / "out").exists()


def test_models_csv_bad_params(export_copy):
    m = pd.read_csv(export_copy / "models.csv")
    m["params_b"] = m["params_b"].astype(object)
    m.loc[0, "params_b"] = "huge"
    m.to_csv(export_copy / "models.csv", index=False)
    _expect(export_copy, "models.csv", "column 'params_b'", "'huge'")


def test_models_csv_missing_column(export_copy):
    m = pd.read_csv(export_copy / "models.csv").drop(columns=["family"])
    m.to_csv(export_copy / "models.csv", index=False)
    _expect(export_copy, "models.csv", "column 'family'", "missing")


def test_validate_tables_in_memory_names(sim_small):
    games, players, _ = sim_small
    bad = games.copy()
    bad.loc[0, "winner"] = "nobody"
    with pytest.raises(ImpostorError, match=r"^mygames: column 'winner'"):
        validate_tables(bad, players, games_name="mygames")


def test_cli_report_bad_input_one_line_exit_2(export_copy, tmp_path, capsys):
    g = _games(export_copy)
    g.loc[0, "mode"] = "solo"
    g.to_parquet(export_copy / "games.parquet")
    rc = main(["report", "--parquet", str(export_copy), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert err[-1].startswith("impostor report: error: ") and "games.parquet" in err[-1] and "'mode'" in err[-1]
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- MLflow


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory, sim_small):
    """A sqlite tracking store: experiment 'sim' with a sweep parent (no tables) and two child
    runs holding halves of the simulated export; experiment 'empty' with one run without tables."""
    mlflow = pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("sim", artifact_location=(root / "artifacts").as_uri())
    empty = client.create_experiment("empty", artifact_location=(root / "artifacts_empty").as_uri())
    games, players, models = sim_small
    parent = client.create_run(exp, run_name="sweep")
    client.set_terminated(parent.info.run_id)
    exps = sorted(games["experiment_id"].unique())
    halves = [exps[: len(exps) // 2], exps[len(exps) // 2 :]]
    for i, half in enumerate(halves):
        run = client.create_run(exp, run_name=f"child{i}", tags={"mlflow.parentRunId": parent.info.run_id})
        d = root / f"tables{i}"
        g = games[games["experiment_id"].isin(half)]
        p = players[players["game_id"].isin(g["game_id"])]
        write_tables(d, g, p, models)
        for f in ("games.parquet", "players.parquet", "models.csv"):
            client.log_artifact(run.info.run_id, str(d / f), artifact_path="tables")
        client.set_terminated(run.info.run_id)
    r = client.create_run(empty, run_name="no-tables")
    client.set_terminated(r.info.run_id)
    del mlflow
    return uri


def test_load_from_mlflow_concatenates_runs(mlflow_store, sim_small):
    games, players, _ = sim_small
    data = load_from_mlflow("sim", tracking_uri=mlflow_store)
    assert sorted(data.games["game_id"]) == sorted(games["game_id"])
    assert len(data.players) == len(players)
    assert data.games["mlflow_run_id"].nunique() == 2
    assert data.models is not None and len(data.models) == len(sim_small[2])
    assert any("1 run(s) without tables" in n for n in data.notes)
    assert sum(s["path"].endswith("games.parquet") for s in data.sources) == 2
    assert all(len(s["sha256"]) == 64 for s in data.sources)


def test_load_from_mlflow_unknown_experiment(mlflow_store):
    with pytest.raises(ImpostorError, match="'nope' not found.*fix:"):
        load_from_mlflow("nope", tracking_uri=mlflow_store)


def test_load_from_mlflow_no_tables(mlflow_store):
    with pytest.raises(ImpostorError, match="none of its 1 run.*tables/games.parquet.*fix:"):
        load_from_mlflow("empty", tracking_uri=mlflow_store)


@pytest.mark.slow
def test_cli_report_from_mlflow(mlflow_store, tmp_path, capsys):
    import json

    out = tmp_path / "bundle"
    rc = main(["report", "--experiment", "sim", "--tracking-uri", mlflow_store, "--out", str(out),
               "--bootstrap-reps", "20", "--permutation-reps", "20", "--no-figures"])
    assert rc == 0
    assert capsys.readouterr().out.strip() == str(out / "report.html")
    m = json.loads((out / "manifest.json").read_text())
    assert m["source"] == {"kind": "mlflow", "experiment": "sim", "tracking_uri": mlflow_store}
    assert sum(i["path"].startswith("mlflow:") for i in m["inputs"]) == 6
    assert m["data"]["games"] == 1200
    assert main(["report", "--experiment", "nope", "--tracking-uri", mlflow_store, "--out", str(tmp_path / "x")]) == 2


@pytest.mark.slow
def test_report_from_mlflow_records_provenance(mlflow_store, tmp_path, monkeypatch):
    """manifest.json: the resolved tracking URI, the command line and the checkout's commit."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    argv = ["impostor", "report", "--experiment", "sim", "--tracking-uri", mlflow_store, "--out", str(tmp_path / "r"),
            "--no-figures", "--bootstrap-reps", "0", "--permutation-reps", "0"]
    monkeypatch.setattr(sys, "argv", argv)
    assert main(argv[1:]) == 0
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert m["tracking_uri"] == mlflow_store and m["source"]["tracking_uri"] == mlflow_store
    assert m["command_line"] == argv
    root = Path(__file__).resolve().parents[2]
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    expected = head.stdout.strip() if (root / ".git").exists() and head.returncode == 0 else None
    assert m["git_commit"] == expected
