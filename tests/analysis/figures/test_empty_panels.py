"""No figure panel is drawn with nothing in it (issue 40): the cost panel needs a cost above 0,
the whole cost figure needs tokens; the caption says what was left out."""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.figures import cost as cost_fig


def _cost(cps: float, tokens: float = 500.0) -> pd.DataFrame:
    rows = [{"model": m, "role": r, "input_tokens_per_game": tokens, "output_tokens_per_game": tokens / 10,
             "cost_per_success_usd": cps, "price": "configs/models.yaml"} for m in ("a", "b") for r in
            ("impostor", "majority")]
    return pd.DataFrame(rows)


def _axes_drawn(monkeypatch, table: pd.DataFrame, tmp_path) -> tuple[int, dict | None, list[str]]:
    seen = {}

    def save(fig, path):  # count the panels instead of writing the file
        seen["axes"] = len(fig.axes)

    monkeypatch.setattr(cost_fig, "save_figure", save)
    notes: list[str] = []
    res = cost_fig.fig_cost(None, {"cost": table}, tmp_path, notes)
    return seen.get("axes", 0), res, notes


def test_free_players_get_no_cost_panel(monkeypatch, tmp_path):
    n, res, _ = _axes_drawn(monkeypatch, _cost(0.0), tmp_path)
    assert n == 1 and res is not None and "No cost panel" in res["caption"]


def test_a_priced_player_gets_both_panels(monkeypatch, tmp_path):
    n, res, _ = _axes_drawn(monkeypatch, _cost(0.02), tmp_path)
    assert n == 2 and res is not None and "No cost panel" not in res["caption"]


def test_no_tokens_no_figure(monkeypatch, tmp_path):
    n, res, notes = _axes_drawn(monkeypatch, _cost(np.nan, tokens=0.0), tmp_path)
    assert n == 0 and res is None and any("no model recorded tokens" in x for x in notes)
