"""The memory- and time-saving paths used at 10x the paper (benchmarks/scale_bench.py) give
exactly what the straightforward computations give."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from impostor_bench.analysis.ballots import description_classes
from impostor_bench.analysis.data import index_positions
from impostor_bench.analysis.io import compact_text, load_tables
from impostor_bench.analysis.stats._regress import unique_rows
from impostor_bench.analysis.stats.resampling import replicate_matmul, exp_sums
from impostor_bench.core.parsing import description_error_class


def test_text_columns_load_as_sorted_categoricals_with_the_same_values(sim_export):
    data = load_tables(sim_export)
    for name, df in (("games", data.games), ("players", data.players)):
        plain = pq.read_table(sim_export / f"{name}.parquet").to_pandas()
        for c in df.columns:
            if isinstance(df[c].dtype, pd.CategoricalDtype):
                cats = list(df[c].cat.categories)
                assert cats == sorted(cats), (name, c)
        for c in plain.columns:
            got = df[c].astype(object).where(df[c].notna(), None)
            want = plain[c].astype(object).where(plain[c].notna(), None)
            assert got.tolist() == want.tolist(), (name, c)
    assert not isinstance(data.games["game_id"].dtype, pd.CategoricalDtype)  # unique per row: plain text
    assert isinstance(data.players["model"].dtype, pd.CategoricalDtype)


def test_compact_text_leaves_numbers_and_kept_columns():
    df = pd.DataFrame({"a": ["x", "y", None, "x"], "b": [1, 2, 3, 4], "c": ["p", "q", "r", "s"],
                       "d": pd.Series([1, "x", None, 2], dtype=object)})
    compact_text(df, keep=("c",))
    assert isinstance(df["a"].dtype, pd.CategoricalDtype) and list(df["a"].cat.categories) == ["x", "y"]
    assert df["a"].isna().tolist() == [False, False, True, False]
    assert df["b"].dtype == np.int64 and not isinstance(df["c"].dtype, pd.CategoricalDtype)
    assert df["d"].dtype == object  # mixed values stay as they are


def test_index_positions_of_a_categorical_equals_get_indexer():
    index = pd.Index(["g3", "g1", "g2"], dtype=object)
    values = pd.Series(["g1", "g9", None, "g3", "g1"], dtype=object)
    want = index.get_indexer(values.to_numpy(dtype=object))
    assert index_positions(index, values).tolist() == want.tolist()
    assert index_positions(index, values.astype("category")).tolist() == want.tolist()


def test_replicate_matmul_is_bitwise_w_at_s():
    """Blocked (a small copy limit forces blocks, with a tail shorter than a block) and plain; with a
    shift, the product of ``W + shift`` (the paper bootstrap's weights less one, language's 0/2)."""
    rng = np.random.default_rng(3)
    for R, E, K in ((2500, 300, 17), (3000, 2000, 15), (2200, 600, 84), (1000, 64, 1), (10, 5, 3)):
        W = (2.0 * rng.integers(0, 2, size=(R, E)) - 1).astype(np.float32)
        S = rng.normal(size=(E, K))
        assert np.array_equal(replicate_matmul(W, S, max_copy_bytes=1 << 16), W @ S), (R, E, K)
        assert np.array_equal(replicate_matmul(W, S), W @ S)
        if K > 1:
            want = (W.astype(np.float64) + 1.0) @ S
            assert np.array_equal(replicate_matmul(W, S, max_copy_bytes=1 << 16, shift=1.0), want), (R, E, K)


def test_unique_rows_equals_numpy_unique_axis0():
    rng = np.random.default_rng(4)
    for shape, hi in (((5000, 9), 4), ((40, 3), 7), ((7, 1), 3)):
        a = rng.integers(0, hi, size=shape)
        u, inv = np.unique(a, axis=0, return_inverse=True)
        u2, inv2 = unique_rows(a)
        assert np.array_equal(u, u2) and np.array_equal(inv.ravel(), inv2)
    big = np.array([[0, 2**40], [1, 3], [0, 2**40]])  # keys would overflow: the plain path
    u2, inv2 = unique_rows(big)
    assert np.array_equal(u2, np.unique(big, axis=0)) and inv2.tolist() == [0, 1, 0]


def test_weighted_exp_sums_equal_the_product_they_replace():
    rng = np.random.default_rng(5)
    n, E = 3000, 40
    prep = SimpleNamespace(exp_code=rng.integers(0, E, size=n), exp_names=np.arange(E))
    x = (rng.random((n, 6)) < 0.3).astype(float)
    w = rng.random(n) - 0.5
    assert np.array_equal(exp_sums(prep, x, weights=w), exp_sums(prep, x * w[:, None]))
    assert np.array_equal(exp_sums(prep, x[:, 0], weights=w), exp_sums(prep, x[:, 0] * w))


def test_description_classes_per_distinct_text_equal_row_by_row():
    errors = ["your description contains the secret word", None, "", "something else", None, "too long: 40 words"]
    p = pd.DataFrame({"description_valid": [False, True, False, False, False, True], "description_error": errors})
    want = [None if ok else description_error_class(e) for ok, e in zip(p["description_valid"], errors)]
    assert description_classes(p).tolist() == want
    assert description_classes(p.astype({"description_error": "category"})).tolist() == want
    assert description_classes(p.drop(columns="description_error")).tolist() == [
        None if ok else description_error_class(None) for ok in p["description_valid"]]
