"""The paper results that had no table (issue 27): Appendix D's win table, detection by
difficulty, B.3's negative control (iv) by speaking position and positive control (v).
Checked against an independent pandas computation and the experiment-clustered interval."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.io import load_tables
from impostor_bench.analysis.stats import TABLES, StatsConfig
from _dense_rates import dense_cr2_interval
from impostor_bench.analysis.stats._base import prepared
from impostor_bench.analysis.stats._marginal import design_matrix
from impostor_bench.analysis.stats.rates import METHOD_COMPOSITION, cluster_rate

CFG = StatsConfig(bootstrap_reps=50, permutation_reps=50, strict=True)


@pytest.fixture(scope="module")
def data(sim_export):
    return load_tables(sim_export)


def test_win_table_matches_the_games_and_clusters_by_experiment(data):
    t = TABLES["win_model_mode_difficulty"](data, CFG)
    g = data.games.astype({"impostor_model": object, "mode": object, "difficulty": object})
    won = (g["winner"].astype(str) == "impostor").astype(float)
    full = g.assign(w=won).groupby(["impostor_model", "mode", "difficulty"])["w"].agg(["mean", "size"])
    cells = t[(t["model"] != "ALL") & (t["mode"] != "ALL")].set_index(["model", "mode", "difficulty"])
    assert len(cells) == len(full)
    assert np.allclose(cells.loc[full.index, "imp_win_pct"], 100 * full["mean"])
    assert (cells.loc[full.index, "n"].to_numpy() == full["size"].to_numpy()).all()
    # the interval is the experiment-clustered one, never from games as independent draws
    m = t[(t["model"] != "ALL") & (t["mode"] == "ALL")].iloc[0]
    sel = (g["impostor_model"] == m["model"]) & (g["difficulty"] == m["difficulty"])
    codes = pd.factorize(g.loc[sel, "experiment_id"].astype(object))[0]
    ref = cluster_rate(won[sel].to_numpy(), np.ones(sel.sum()), codes)
    assert np.isclose(m["imp_win_pct"], 100 * ref["estimate"])
    if m["imp_win_ci_method"] == METHOD_COMPOSITION:  # issue 39: the design logit's residuals, written out densely
        prep = prepared(Analysis.of(data))
        inside = (prep.imp_model == m["model"]) & (prep.difficulty == m["difficulty"])
        lo, _ = dense_cr2_interval(prep.y, design_matrix(prep), prep.exp_code, inside)
        assert np.isclose(m["imp_win_ci_low"], 100 * lo)
    else:
        assert np.isclose(m["imp_win_ci_low"], 100 * ref["ci_low"], equal_nan=True)
    pooled = t[(t["model"] == "ALL") & (t["mode"] == "cross_play")]
    assert set(pooled["difficulty"]) == set(g["difficulty"])
    one = t[t["imp_win_n_exp"] == 1]
    assert one["imp_win_ci_low"].isna().all()  # no interval from one experiment


def test_detection_by_difficulty_counts_legal_majority_ballots(data):
    t = TABLES["detection_by_difficulty"](data, CFG)
    p = data.players.astype({"model": object, "role": object}).merge(
        data.games[["game_id", "impostor_seat", "difficulty"]].astype({"difficulty": object}), on="game_id")
    maj = p[(p["role"] == "majority") & p["ballot_class"].astype(str).isin(["valid", "self_vote"])]
    correct = pd.to_numeric(maj["vote"], errors="coerce") == maj["impostor_seat"]
    ref = correct.groupby(maj["difficulty"]).agg(["mean", "size"])
    pooled = t[t["model"] == "ALL"].set_index("difficulty")
    assert np.allclose(pooled.loc[ref.index, "det_acc_pct"], 100 * ref["mean"])
    assert (pooled.loc[ref.index, "n_votes"].to_numpy() == ref["size"].to_numpy()).all()
    ok = pooled["det_acc_ci_low"].notna()
    assert ok.any() and (pooled.loc[ok, "det_acc_ci_low"] < pooled.loc[ok, "det_acc_pct"]).all()


def test_negative_control_by_position(data):
    t = TABLES["negative_control_position"](data, CFG)
    assert list(t["position"]) == [0, 1, 2, 3]
    p = data.players.astype({"role": object})
    maj = p[p["role"] == "majority"]
    ref = maj["self_declared"].astype(bool).groupby(maj["speaking_position"].astype(int)).mean()
    assert np.allclose(t.set_index("position").loc[ref.index, "self_decl_pct"], 100 * ref)
    assert t["self_decl_ci_high"].notna().all() and (t["self_decl_pct"] < 5).all()


class _Vectors:
    """Seeded unit vectors per word (2-d), so distances differ by pair and are known here."""

    def __init__(self, words, tilt: float):
        rng = np.random.default_rng(0)
        self.vec = {w: np.array([np.cos(a), np.sin(a)]) for w, a in zip(sorted(words), rng.uniform(0, tilt, len(words)))}

    def encode(self, words, normalize_embeddings=True):
        return np.stack([self.vec[w] for w in words])


def _pairs(data) -> pd.DataFrame:
    g = data.games.astype({"difficulty": object, "majority_word": object, "impostor_word": object})
    return g.drop_duplicates("pair_id")


def test_positive_control_distance_detection_and_flags(data):
    pairs = _pairs(data)
    words = set(pairs["majority_word"]) | set(pairs["impostor_word"])
    for tilt in (1.0, 3.0):
        d = Analysis(type(data)(games=data.games, players=data.players, models=data.models,
                                embedder=_Vectors(words, tilt)))
        t = TABLES["positive_control"](d, CFG).set_index("difficulty")
        a, b = d.embedder.encode(pairs["majority_word"].tolist()), d.embedder.encode(pairs["impostor_word"].tolist())
        dist = pd.Series(1 - (a * b).sum(1), index=pairs.index).groupby(pairs["difficulty"])
        order = [x for x in ("easy", "medium", "hard", "expert") if x in t.index]
        assert np.allclose(t.loc[order, "distance_mean"], dist.mean().loc[order])
        assert (t.loc[order, "n_pairs"].to_numpy() == dist.size().loc[order].to_numpy()).all()
        half = t["distance_ci_high"] - t["distance_mean"]
        assert np.allclose(half.loc[order], (stats.t.ppf(0.975, dist.size() - 1) * dist.std() / np.sqrt(dist.size()))
                           .loc[order])
        det = TABLES["detection_by_difficulty"](d, CFG)
        det = det[det["model"] == "ALL"].set_index("difficulty")["det_acc_pct"].loc[order]
        assert np.allclose(t.loc[order, "det_acc_pct"], det)
        mono = bool(np.all(np.diff(dist.mean().loc[order]) < 0))
        falls = bool(np.all(np.diff(det.to_numpy()) < 0))
        assert t["distance_monotone"].all() == mono and t["detection_monotone"].all() == falls
        assert t["aligned"].all() == (mono and falls)


def test_positive_control_without_embedder_says_why(data):
    d = Analysis(type(data)(games=data.games, players=data.players, models=data.models))
    t = TABLES["positive_control"](d, StatsConfig(bootstrap_reps=50, permutation_reps=50))
    assert t.empty and any("no word embedder" in n for n in d.notes)


def test_shipped_word_vectors_make_the_word_list_monotone(data):
    """D.2 / B.3 (v) on the project's own word list and the vectors the report uses."""
    from impostor_bench.commands.report import ShippedWordVectors

    d = Analysis(type(data)(games=data.games, players=data.players, models=data.models, embedder=ShippedWordVectors()))
    t = TABLES["positive_control"](d, CFG)
    assert list(t["difficulty"]) == ["easy", "medium", "hard", "expert"]
    assert t["distance_monotone"].all() and (t["distance_ci_low"] < t["distance_mean"]).all()
