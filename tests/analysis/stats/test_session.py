"""The analysis session (``impostor_bench.analysis.stats.session.Analysis``): its cache never serves a table of
frames that changed, its notes are its own (the input's are not appended to), and a table asked
for twice, or reused by another, is computed once."""

from __future__ import annotations

import gc

import pandas as pd
import pytest

from _synth_stats import fast_config, make_ballot_games
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.session import REGISTRY, Analysis, frame_fingerprint


def _data(seed: int = 5) -> AnalysisData:
    g = make_ballot_games(n_models=3, games_per_exp=8, seed=seed)
    return AnalysisData(g.games.copy(), g.players.copy(), g.models)


def _impostor_wins(a: Analysis) -> int:
    h = a.table("headline")
    return int(round((h["imp_win_pct"] * h["n_imp_games"] / 100).sum()))


def test_in_place_edit_of_a_frame_gives_the_fresh_table():
    data = _data()
    a = Analysis(data, fast_config())
    before = _impostor_wins(a)
    assert before == int((data.games["winner"] == "impostor").sum())
    flip = data.games.index[data.games["winner"] == "majority"][:7]
    data.games.loc[flip, "winner"] = "impostor"  # in place: same object, same id, same length
    after = _impostor_wins(a)
    assert after == before + 7 == int((data.games["winner"] == "impostor").sum())
    assert after == _impostor_wins(Analysis(data, fast_config()))  # what a new session computes


def test_a_new_frame_that_reuses_the_old_id_gives_the_fresh_table():
    data = _data()
    a = Analysis(data, fast_config())
    before = _impostor_wins(a)
    old_id = id(data.games)
    edited = data.games.copy()
    flip = edited.index[edited["winner"] == "majority"][:5]
    edited.loc[flip, "winner"] = "impostor"
    # free the old frame so its address may be handed to the next one (CPython reuses it often);
    # the result must be the fresh one whether the id is reused or not
    data.games = None
    gc.collect()
    for _ in range(50):
        data.games = edited.copy()
        if id(data.games) == old_id:
            break
    assert len(data.games) == len(edited)
    assert _impostor_wins(a) == before + 5


def test_stale_notes_go_with_the_stale_tables():
    data = _data()
    a = Analysis(data, fast_config())
    models = data.models
    data.models = None
    a.table("scaling")
    assert any("models.csv" in n for n in a.notes)
    data.models = models
    assert len(a.table("scaling")) > 0
    assert not any(n.startswith("scaling: not computed") for n in a.notes)


def test_notes_are_the_sessions_and_start_from_the_loaders():
    data = _data()
    data.notes.append("loader: something about the input")
    data.models = None
    a = Analysis(data, fast_config())
    a.table("scaling")
    assert a.notes[0] == "loader: something about the input" and len(a.notes) > 1
    assert data.notes == ["loader: something about the input"]  # the input is not appended to


@pytest.mark.slow
def test_tables_reused_by_others_are_computed_once(monkeypatch):
    a = Analysis(_data(), fast_config())
    calls = []
    compute = REGISTRY["odds_ratios"].compute

    def counted(analysis, config):
        calls.append(config)
        return compute(analysis, config)

    monkeypatch.setattr(REGISTRY["odds_ratios"], "compute", counted)
    first = a.table("odds_ratios")
    a.table("evalues")  # built from odds_ratios
    a.table("multiple_comparisons")
    pd.testing.assert_frame_equal(a.table("odds_ratios"), first)
    assert len(calls) == 1
    a.table("odds_ratios", fast_config(seed=3))  # another config is another table
    assert len(calls) == 2


def test_the_registered_function_uses_a_session_or_makes_one():
    data = _data()
    a = Analysis(data, fast_config())
    pd.testing.assert_frame_equal(TABLES["balance"](a), a.table("balance"))
    pd.testing.assert_frame_equal(TABLES["balance"](data, fast_config()), a.table("balance"))
    assert Analysis.of(a) is a and Analysis.of(data) is not a
    with pytest.raises(TypeError, match="already an Analysis"):
        Analysis(a)
    with pytest.raises(KeyError, match="no analysis table 'nope'"):
        a.table("nope")


def test_fingerprint_sees_cells_order_and_columns():
    g = _data().games
    base = frame_fingerprint(g)
    assert frame_fingerprint(g.copy()) == base
    assert frame_fingerprint(g.iloc[::-1]) != base
    assert frame_fingerprint(g.rename(columns={"winner": "w"})) != base
    h = g.copy()
    h.iloc[3, h.columns.get_loc("mode")] = "other"
    assert frame_fingerprint(h) != base
    assert frame_fingerprint(None) is None
    lists = pd.DataFrame({"x": [[1, 2], [3]]})  # cells pandas cannot hash
    assert frame_fingerprint(lists) != frame_fingerprint(pd.DataFrame({"x": [[1, 2], [4]]}))
