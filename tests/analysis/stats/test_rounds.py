"""Issue 32 analysis: moves.parquet read, checked or derived; the round tables empty (with a
note) for one-round games; `impostor simulate --rounds N` then `impostor report` shows them;
their intervals hold coverage on the multi-round simulator with the design's dependence."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import Analysis
from impostor_bench.analysis.io import load_tables, write_tables
from impostor_bench.analysis.moves import moves_of
from impostor_bench.analysis.sim.rounds import simulate_rounds
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats import ROUND_TABLES
from impostor_bench.analysis.stats.rounds import ONE_ROUND
from impostor_bench.cli import main
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.records import MOVE_COLUMNS, MOVES_FILE



@pytest.fixture(scope="module")
def rounds_export(tmp_path_factory):
    d = tmp_path_factory.mktemp("rounds_export")
    g, p, mv, m = simulate_rounds(30, 12, 3, seed=4)
    write_tables(d, g, p, m, mv)
    return d


def test_one_round_export_derives_its_moves_from_players(sim_export):
    data = load_tables(sim_export)
    assert data.moves is None
    mv = moves_of(data)
    assert list(mv.columns) == MOVE_COLUMNS and len(mv) == 4 * len(data.games)
    assert (mv["round"] == 1).all() and not mv["eliminated"].any()
    joined = mv.merge(data.players, on=["game_id", "seat"], suffixes=("", "_p"))
    assert (joined["vote"].fillna(-1).astype(float) == joined["vote_p"].fillna(-1).astype(float)).all()


def test_one_round_data_gives_empty_round_tables_with_a_note(sim_small):
    data = Analysis(AnalysisData(*sim_small))
    for name in ROUND_TABLES:
        assert len(TABLES[name](data, StatsConfig())) == 0, name
    assert f"rounds_survival: not computed: {ONE_ROUND}" in data.notes


def test_moves_parquet_is_loaded_and_checked(rounds_export, tmp_path):
    data = load_tables(rounds_export)
    assert data.moves is not None and len(data.moves) == len(pd.read_parquet(rounds_export / MOVES_FILE))
    assert any(s["path"].endswith(MOVES_FILE) for s in data.sources)
    bad = tmp_path / "bad"
    bad.mkdir()
    for f in rounds_export.iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    mv = pd.read_parquet(rounds_export / MOVES_FILE)
    mv.loc[3, "round"] = 0
    mv.to_parquet(bad / MOVES_FILE)
    with pytest.raises(ImpostorError) as e:
        load_tables(bad)
    msg = str(e.value)
    assert MOVES_FILE in msg and "column 'round'" in msg and "fix:" in msg and "\n" not in msg
    mv.drop(columns=["seat"]).to_parquet(bad / MOVES_FILE)
    with pytest.raises(ImpostorError, match=r"moves.parquet: column 'seat' is missing"):
        load_tables(bad)


@pytest.mark.slow
def test_simulate_rounds_then_report_shows_the_round_tables(tmp_path, capsys):
    sim, out = tmp_path / "sim", tmp_path / "report"
    assert main(["simulate", "--rounds", "3", "--experiments", "20", "--games", "8", "--seed", "2",
                 "--out", str(sim)]) == 0
    printed = [p.rsplit("/", 1)[-1] for p in capsys.readouterr().out.split()]
    assert MOVES_FILE in printed
    games = pd.read_parquet(sim / "games.parquet")
    assert (games["max_rounds"] == 3).all() and games["rounds_played"].max() > 1
    assert main(["report", "--parquet", str(sim), "--out", str(out), "--seed", "3", "--bootstrap-reps", "40",
                 "--permutation-reps", "40"]) == 0
    for name in ROUND_TABLES:
        assert len(pd.read_csv(out / "tables" / f"{name}.csv")) > 0, name
    md = (out / "report.md").read_text()
    assert "## Longer games" in md and "rounds_survival" in md
    inf = pd.read_csv(out / "tables" / "inference.csv")
    from impostor_bench.analysis.stats.inference import SPECS

    with_inference = {t for t in ROUND_TABLES if t in {s.table for s in SPECS}}  # rounds_recovery prints none
    assert len(with_inference) >= 4 and with_inference <= set(inf["table"])
    assert inf[inf["table"].isin(ROUND_TABLES)]["calibrated"].any()


@pytest.mark.slow
def test_round_intervals_hold_coverage_under_the_design():
    """60 experiments x 16 games, 30 runs per scenario, strong pair and experiment effects (the full
    run at 120 x 40 is in benchmarks/calibration.csv and docs/analysis.md). The round measures have no
    closed form; their truth is the pooled-copies one (the table on many runs of the design pooled), so
    this checks bias and SE together: intervals cover that truth."""
    from scipy.stats import binom

    from impostor_bench.analysis.calibration_matrix import TRUTH_POOLED, calibrate

    raw: dict = {}
    res = calibrate(experiments=60, games=16, reps=30, tables=ROUND_TABLES,
                    config=StatsConfig(bootstrap_reps=50, permutation_reps=50), raw=raw)
    assert set(res["table"]) == set(ROUND_TABLES) - {"rounds_recovery"}  # M.4's shares print no interval
    r = pd.concat(raw, names=["scenario"]).reset_index(level=0)
    r = r[r["ci_low"].notna() & r["ci_high"].notna()]
    assert (r["truth_source"] == TRUTH_POOLED).mean() > 0.99 and r["truth"].notna().mean() > 0.99
    r = r.assign(covers=(r["ci_low"] <= r["truth"]) & (r["truth"] <= r["ci_high"]),
                 family=r["method"].str.split(";", n=1).str[0].str.slice(0, 80))
    ok = r.groupby(["scenario", "calibration", "family"])["covers"].agg(["mean", "size"])
    ok = ok[ok["size"] >= 50]
    assert len(ok) >= 8
    low = binom.ppf(0.005, ok["size"], 0.90) / ok["size"]
    assert (ok["mean"] >= low).all(), ok[ok["mean"] < low].to_string()
    shown = res[res["reps"].gt(0) & res["width_ratio"].notna()]  # the summary scores them too
    assert len(shown) and shown["n_intervals"].gt(0).all() and shown["coverage"].notna().all()
    assert shown["truth"].eq(TRUTH_POOLED).all() and np.isfinite(shown["bias"]).all()


def test_mlflow_runs_with_and_without_moves_load_together(rounds_export, sim_export):
    from impostor_bench.analysis.io import load_run_tables

    data = load_run_tables([("multi", rounds_export), ("single", sim_export)], "exp", "file:./mlruns")
    one_round = set(pd.read_parquet(sim_export / "games.parquet")["game_id"])
    mv = data.moves
    assert mv is not None and set(mv["game_id"]) == set(data.games["game_id"].astype(object))
    derived = mv[mv["game_id"].isin(one_round)]
    assert len(derived) == 4 * len(one_round) and (derived["round"] == 1).all()
    assert mv["round"].max() > 1
