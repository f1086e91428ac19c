"""Vote-network closed forms against networkx, and the model-level aggregation against loops."""

from __future__ import annotations

from collections import defaultdict

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from _synth_stats import fast_config, shared_ballot
from impostor_bench.analysis.stats import TABLES, game_metrics, network_for_game
from impostor_bench.analysis.stats._base import prepared


def test_closed_forms_match_networkx_on_sampled_games():
    data = shared_ballot()
    prep = prepared(data, need_players=True)
    m = game_metrics(prep)
    by_game = dict(tuple(data.players.groupby("game_id")))
    rng = np.random.default_rng(0)
    checked_nonzero = 0
    for gi in rng.choice(prep.n, 300, replace=False):
        rows = by_game[prep.games.loc[gi, "game_id"]]
        G = network_for_game(rows)
        n = G.number_of_nodes()
        assert n == int((~np.isnan(prep.vote[gi])).sum())
        if n < 2:
            continue
        dc = nx.degree_centrality(G)
        bc = nx.betweenness_centrality(G)
        for seat in G.nodes:
            reach_nx = G.out_degree(seat) / (n - 1)
            assert m["reach"][gi, seat] == pytest.approx(reach_nx)
            assert m["centrality"][gi, seat] == pytest.approx(dc[seat])
            assert m["betweenness"][gi, seat] == pytest.approx(bc[seat])
            assert m["brokerage"][gi, seat] == pytest.approx((dc[seat] + bc[seat]) / 2)
            # eq. (3): co-voters with the same target / max(|V|-1, 1)
            same = sum(1 for q in G.nodes if q != seat and G.nodes[q]["vote"] == G.nodes[seat]["vote"])
            assert m["influence"][gi, seat] == pytest.approx(same / max(n - 1, 1))
            checked_nonzero += reach_nx > 0
        for seat in range(4):
            if seat not in G.nodes:
                assert np.isnan(m["reach"][gi, seat])
    assert checked_nonzero > 50


def test_network_for_game_edges():
    rows = pd.DataFrame({"seat": [0, 1, 2, 3], "vote": pd.array([1, 2, 1, None], dtype="Int64"),
                         "model": "a", "role": ["majority", "impostor", "majority", "majority"]})
    G = network_for_game(rows)
    assert set(G.nodes) == {0, 1, 2}
    assert set(G.edges) == {(0, 2), (2, 0)}


def test_model_level_aggregation_and_coalition_efficiency_against_loops():
    data = shared_ballot()
    h = TABLES["headline"](data, fast_config()).set_index("model")
    winner = dict(zip(data.games["game_id"], data.games["winner"]))
    per_game = defaultdict(lambda: defaultdict(list))  # model -> game -> reach values
    conv = defaultdict(lambda: defaultdict(list))
    seats = defaultdict(list)
    for r in data.players.itertuples():
        if not pd.isna(r.vote):
            seats[r.game_id].append((r.model, r.role, int(r.vote)))
    for gid, voters in seats.items():
        nv = len(voters)
        y_imp = winner[gid] == "impostor"
        for model, role, vote in voters:
            k = sum(1 for _, _, v in voters if v == vote) - 1
            per_game[model][gid].append(k / max(nv - 1, 1))
            if k >= 1:
                conv[model][gid].append(y_imp if role == "impostor" else not y_imp)
    for model in h.index:
        reach = np.mean([np.mean(v) for v in per_game[model].values()])
        assert h.loc[model, "reach"] == pytest.approx(reach)
        assert h.loc[model, "centrality"] == pytest.approx(2 * reach)
        ce = 100 * np.mean([np.mean(v) for v in conv[model].values()])
        assert h.loc[model, "coal_eff_pct"] == pytest.approx(ce)
    assert h["centrality_rel"].mean() == pytest.approx(1.0)


def test_single_voter_game_has_zero_metrics():
    from impostor_bench.analysis.stats.network import game_metrics as gm

    class P:  # minimal stand-in for Prepared
        vote = np.array([[2.0, np.nan, np.nan, np.nan], [1.0, 0.0, 1.0, 1.0]])

    m = gm(P)
    assert m["reach"][0, 0] == 0 and m["centrality"][0, 0] == 0
    assert m["reach"][1].tolist() == pytest.approx([2 / 3, 0, 2 / 3, 2 / 3])
    assert m["centrality"][1].tolist() == pytest.approx([4 / 3, 0, 4 / 3, 4 / 3])
