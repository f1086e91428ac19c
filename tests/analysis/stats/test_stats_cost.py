"""Tokens and cost per model and role (analysis/stats/cost.py) against an independent pandas
computation; unknown prices stay unknown; older exports without token columns give an empty
table with the reason; the figure is drawn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.figures.cost import fig_cost
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import TABLES, StatsConfig

PRICE = {"gpt-4o": (2.5e-6, 1e-5), "llama-3.1-8b": (1e-7, 2e-7), "deepseek-v3": None}  # None = unknown


@pytest.fixture(scope="module")
def priced():
    g, p, m = simulate_games(60, 20, models=list(PRICE), seed=7)
    rng = np.random.default_rng(0)
    p = p.copy()
    p["input_tokens"] = pd.array(rng.integers(200, 900, len(p)), dtype="Int64")
    p["output_tokens"] = pd.array(rng.integers(5, 60, len(p)), dtype="Int64")
    pin = p["model"].map(lambda x: PRICE[x][0] if PRICE[x] else np.nan)
    pout = p["model"].map(lambda x: PRICE[x][1] if PRICE[x] else np.nan)
    p["cost_usd"] = p["input_tokens"].astype(float) * pin + p["output_tokens"].astype(float) * pout
    return g, p, m


def test_cost_matches_pandas(priced):
    g, p, m = priced
    r = TABLES["cost"](AnalysisData(g, p, m), StatsConfig(strict=True)).set_index(["model", "role"])
    x = p.merge(g[["game_id", "winner", "impostor_seat"]], on="game_id")
    x["ok"] = np.where(x["role"] == "impostor", x["winner"] == "impostor",
                       (x["vote"] == x["impostor_seat"]) & x["ballot_valid"])
    for (model, role), grp in x.groupby(["model", "role"]):
        row = r.loc[(model, role)]
        assert row["n_seats"] == len(grp)
        assert row["input_tokens_per_game"] == pytest.approx(grp["input_tokens"].astype(float).mean())
        assert row["output_tokens_per_game"] == pytest.approx(grp["output_tokens"].astype(float).mean())
        assert row["successes"] == grp["ok"].sum()
        if PRICE[model] is None:
            assert row["price"] == "unknown" and np.isnan(row["cost_per_game_usd"]) and np.isnan(row["cost_per_success_usd"])
        else:
            assert row["price"] == "known"
            assert row["cost_per_game_usd"] == pytest.approx(grp["cost_usd"].mean())
            assert row["cost_per_success_usd"] == pytest.approx(grp["cost_usd"].sum() / grp["ok"].sum())
    for role in ("impostor", "majority"):  # ALL mixes a priced and an unpriced model: unknown, not a partial sum
        assert r.loc[("ALL", role), "price"] == "partly unknown" and np.isnan(r.loc[("ALL", role), "cost_per_game_usd"])


def test_older_export_without_tokens(priced):
    g, p, m = priced
    data = Analysis(AnalysisData(g, p.drop(columns=["input_tokens", "output_tokens", "cost_usd"]), m))
    assert len(TABLES["cost"](data, StatsConfig())) == 0
    assert any(n.startswith("cost: not computed: players table lacks input_tokens") for n in data.notes)


def test_figure_drawn_with_unknown_price(priced, tmp_path):
    g, p, m = priced
    data = AnalysisData(g, p, m)
    notes: list[str] = []
    fig = fig_cost(data, {"cost": TABLES["cost"](data, StatsConfig())}, tmp_path, notes)
    assert fig and (tmp_path / fig["file"]).stat().st_size > 5000 and not notes
