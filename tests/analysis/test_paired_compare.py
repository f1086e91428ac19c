"""``impostor compare``'s paired head-to-head (impostor_bench.analysis.stats.paired): the paired t
interval against scipy, its coverage and size under the design's real dependence (games of a
word pair share the pair's difficulty), the 'more games' size, and the command on an export."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit

from impostor_bench.analysis.stats.paired import head_to_head, paired_difference
from impostor_bench.cli import main


def test_paired_difference_is_scipys_paired_t():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(size=12), rng.uniform(size=12)
    d = paired_difference(a, b, alpha=0.1)
    ref = stats.ttest_rel(a, b)
    ci = ref.confidence_interval(0.9)
    assert d.diff == pytest.approx(np.mean(a - b)) and d.p == pytest.approx(ref.pvalue)
    assert (d.ci_low, d.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high)) and d.n_pairs == 12


def _simulate(rng, n_pairs: int, games: int, effect: float):
    """Per-pair win rates of two models whose logit differs by ``effect``, each pair with its own
    difficulty (SD 1 on the logit scale, shared by both models' games on it)."""
    u = rng.normal(0, 1, n_pairs)
    return rng.binomial(games, expit(u + effect)) / games, rng.binomial(games, expit(u)) / games


@pytest.mark.parametrize("effect", [0.0, 0.6])
def test_coverage_and_size_with_shared_pair_effects(effect):
    rng = np.random.default_rng(7)
    # the estimand: the mean over the pair population of P(win A) - P(win B)
    u = rng.normal(0, 1, 400_000)
    truth = float(np.mean(expit(u + effect) - expit(u)))
    sims, hits, rejections, widths = 2000, 0, 0, []
    for _ in range(sims):
        a, b = _simulate(rng, n_pairs=16, games=6, effect=effect)
        d = paired_difference(a, b)
        hits += d.ci_low <= truth <= d.ci_high
        rejections += d.p < 0.05
        widths.append(d.ci_high - d.ci_low)
    se = np.sqrt(0.95 * 0.05 / sims)
    assert abs(hits / sims - 0.95) < 3 * se + 0.01, hits / sims  # coverage
    if effect == 0:
        assert abs(rejections / sims - 0.05) < 3 * se + 0.01, rejections / sims  # size
    else:
        assert rejections / sims > 0.3  # a real effect is found often at this size
    assert 0.1 < np.mean(widths) < 0.5  # informative: about +-10 pp, as the binomial noise allows


def test_pairs_needed_gives_the_asked_power():
    rng = np.random.default_rng(3)
    pilot = paired_difference(*_simulate(rng, 400, 6, 0.3))
    need = pilot.pairs_needed(power=0.8)
    assert need is not None and 20 < need < 400
    rejections = sum(paired_difference(*_simulate(rng, need, 6, 0.3)).p < 0.05 for _ in range(600))
    assert 0.72 < rejections / 600 < 0.88, (need, rejections / 600)


def _tiny():
    """Two pairs; A impostor on p1 twice (won 1), on p2 once (won 1); B once on each (won 0, 1)."""
    g = pd.DataFrame({"game_id": ["g1", "g2", "g3", "g4", "g5"], "pair_id": ["p1", "p1", "p2", "p1", "p2"],
                      "impostor_model": ["A", "A", "A", "B", "B"], "impostor_seat": [0, 0, 0, 0, 0],
                      "winner": ["impostor", "majority", "impostor", "majority", "impostor"]})
    rows = []
    for gid, imp in zip(g["game_id"], g["impostor_model"]):
        other = "B" if imp == "A" else "A"
        rows.append({"game_id": gid, "model": imp, "role": "impostor", "vote": 1.0})
        for _seat in (1, 2, 3):  # the other model votes: seat 0 (correct) in g1/g4, else seat 1
            rows.append({"game_id": gid, "model": other, "role": "majority", "vote": 0.0 if gid in ("g1", "g4") else 1.0})
    return g, pd.DataFrame(rows)


def test_head_to_head_by_hand():
    g, p = _tiny()
    t = head_to_head(g, p, "A", "B").set_index("metric")
    imp = t.loc["impostor_win"]
    # A: p1 0.5, p2 1.0; B: p1 0, p2 1 -> differences 0.5, 0.0: mean 25 pp over 2 pairs
    assert imp["diff_pp"] == pytest.approx(25.0) and imp["n_pairs"] == 2 and (imp["n_a"], imp["n_b"]) == (3, 2)
    assert imp["rate_a_pct"] == pytest.approx(200 / 3) and imp["rate_b_pct"] == pytest.approx(50.0)
    ref = stats.ttest_rel([0.5, 1.0], [0.0, 1.0])
    assert imp["p"] == pytest.approx(ref.pvalue) and imp["verdict"].startswith("unresolved")
    det = t.loc["detection"]  # A votes in g4 (p1, all correct), g5 (p2, none); B in g1 (all), g2 (none) on p1, g3 (none) on p2
    assert det["diff_pp"] == pytest.approx(100 * ((1.0 - 0.5) + (0.0 - 0.0)) / 2)


def test_compare_command_on_an_export(capsys, sim_export, tmp_path):
    players = pd.read_parquet(sim_export / "players.parquet")
    a, b = sorted(players["model"].unique())[:2]
    assert main(["compare", a, b, "--parquet", str(sim_export), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{a} vs {b}, paired over the word pairs both played") and "impostor win" in out
    table = pd.read_csv(tmp_path / "compare.csv")
    games = pd.read_parquet(sim_export / "games.parquet")
    expected = head_to_head(games, players, a, b)
    assert np.allclose(table["diff_pp"], expected["diff_pp"]) and set(table["metric"]) == {"impostor_win", "detection"}


def test_compare_command_refuses_bad_input_in_one_line(capsys, sim_export, tmp_path):
    assert main(["compare", "x", "y", "--parquet", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a directory" in err and err.count("fix:") == 1
    assert main(["compare", "nosuch/model", "other", "--parquet", str(sim_export)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'nosuch/model' played no game in this export" in err
