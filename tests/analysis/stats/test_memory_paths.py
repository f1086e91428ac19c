"""The report's lower-memory paths (issue 41) give what the paths they replace gave, computed
independently here: the exposures' earlier-speaker pairs (was a self-merge), the Jaccard of content
words from a sparse matrix (was frozensets), rate intervals from a design kept as distinct rows
(was an (n, K) copy), per-table memos dropped when their table returns, and no moves frame derived
for a one-round export."""

from __future__ import annotations

import numpy as np
import pandas as pd

from _synth_stats import fast_config, make_ballot_games
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import _text as tx
from impostor_bench.analysis.stats._marginal import RowDesign
from impostor_bench.analysis.stats.language import _content_rows, _earlier_pairs
from impostor_bench.analysis.stats.rates import RateCells, rate_columns
from impostor_bench.analysis.stats.rounds import ONE_ROUND
from impostor_bench.analysis.stats.session import Analysis


def test_earlier_pairs_are_the_self_merge_rows_in_its_order():
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 5, 400)  # 1-4 described seats a game
    gi = np.repeat(np.arange(len(sizes)), sizes)
    pos = np.concatenate([rng.permutation(4)[:k] for k in sizes]).astype(float)
    twin = np.where(rng.random(len(gi)) < 0.2, -1, rng.integers(0, len(gi), len(gi)))
    base = pd.DataFrame({"index": np.arange(len(gi)), "gi": gi, "pos": pos, "twin": twin})
    m = base.merge(base, on="gi", suffixes=("", "_e"))
    m = m[(m["pos_e"] < m["pos"]) & (m["twin_e"] >= 0)]
    a, e = _earlier_pairs(gi, pos, twin)
    assert np.array_equal(a, m["index"].to_numpy()) and np.array_equal(e, m["index_e"].to_numpy())
    assert len(a) > 100


def test_sparse_content_jaccard_equals_the_sets():
    texts = np.array(["the red fox jumps over the dog", "a red dog sleeps", "foxes and dogs", "", "red red red"],
                     dtype=object)
    words = [("fox", "wolf"), ("dog", "cat")]
    rng = np.random.default_rng(1)
    codes, gi = rng.integers(0, len(texts), 300), rng.integers(0, 2, 300)
    rows = _content_rows(codes, texts, gi, words)
    i, j = rng.integers(0, 300, 500), rng.integers(0, 300, 500)
    sets = [tx.content_words(texts[c], words[g]) for c, g in zip(codes, gi)]
    want = np.array([tx.jaccard(sets[a], sets[b]) for a, b in zip(i, j)])
    got = rows.jaccard(i, j)
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])


def test_rate_cells_from_distinct_rows_equal_those_from_the_matrix():
    rng = np.random.default_rng(4)
    n_games, n = 600, 2400
    Xg = np.column_stack([np.ones(n_games), rng.integers(0, 2, (n_games, 3)), rng.integers(0, 4, (n_games, 2))])
    Xg = np.column_stack([Xg, Xg[:, 1] + Xg[:, 2]]).astype(float)  # a dependent column, dropped by both
    gi = rng.integers(0, n_games, n)
    groups, keys = gi // 20, rng.choice(["a", "b", "c"], n)
    y = (rng.random(n) < 0.4).astype(float)
    d = RowDesign.of(Xg)
    assert np.array_equal(d.take(gi).matrix(), Xg[gi])
    by_matrix = rate_columns("r", y, np.ones(n), groups, keys, 0.05, Xg[gi])
    by_rows = rate_columns("r", y, np.ones(n), groups, keys, 0.05, d.take(gi))
    pd.testing.assert_frame_equal(by_matrix, by_rows, rtol=1e-12)
    cells = RateCells(y, np.ones(n), groups, keys, d.take(gi))
    assert cells.X.shape[1] == 6  # the dependent column left out


def _data(seed: int = 5) -> AnalysisData:
    g = make_ballot_games(n_models=3, games_per_exp=8, seed=seed)
    return AnalysisData(g.games.copy(), g.players.copy(), g.models)


def test_a_per_table_memo_lives_only_while_its_table_runs():
    a = Analysis(_data(), fast_config())
    seen = {}

    def probe(key, per_table):
        return a.memo(key, lambda: object(), per_table=per_table)

    from impostor_bench.analysis.stats import _base

    orig = _base.REGISTRY["tie_sizes"].compute

    def compute(analysis, config):
        seen["inside"] = probe(("p",), True) is probe(("p",), True)  # shared while the table runs
        probe(("s",), False)
        return orig(analysis, config)

    _base.REGISTRY["tie_sizes"].compute = compute
    try:
        a.table("tie_sizes")
    finally:
        _base.REGISTRY["tie_sizes"].compute = orig
    assert seen["inside"] is True
    assert ("p",) not in a._misc and ("s",) in a._misc


def test_one_round_export_derives_no_moves_frame():
    a = Analysis(_data(), fast_config())
    assert len(a.table("rounds_survival")) == 0
    assert any(ONE_ROUND in n for n in a.notes)
    assert ("moves_from_players",) not in a._misc


def test_drop_memos_keeps_only_what_is_asked_and_recomputes_the_same():
    a = Analysis(_data(), fast_config())
    first = a.table("team_ballots")
    assert ("wild_multipliers", 0, fast_config().bootstrap_reps) in a._misc
    a.drop_memos(keep=[("prepared",)])
    assert list(a._misc) == [("prepared",)]
    a._tables.clear()
    pd.testing.assert_frame_equal(a.table("team_ballots"), first)
