"""Pooled-copies truths (``calibration_truth.pooled_truth``): a table run on many outcome draws of one
design pooled is the estimator's probability limit on that design. It must reproduce closed forms and
planted parameters within its own Monte-Carlo error, and differ from the Monte-Carlo mean of the
estimates where the estimator has finite-sample bias (so the mean cannot pass for it)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import impostor_bench.analysis.calibration_truth as ct
from impostor_bench.analysis.calibration_matrix import SCENARIOS, TRUTH_POOLED, design_truth, fill_pooled, summarise
from impostor_bench.analysis.sim.effects import SimModel
from impostor_bench.analysis.sim.rounds import vote_accuracy_truth
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats.config import StatsConfig

CONFIG = StatsConfig(bootstrap_reps=20, permutation_reps=20)
MODE_ORS = [f"or:{m}_vs_homogeneous" for m in ("cross_play", "team_blind", "team_aware", "team_semi_aware")]


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch):
    monkeypatch.setattr(ct, "_POOLED", {})
    monkeypatch.setattr(ct, "POOLED_GROUPS", 8)  # 7 df for each truth's Monte-Carlo SE


def test_pooled_copies_are_distinct_experiments_of_one_design():
    runs = [simulate_games(12, 4, design_seed=1, seed=s)[:2] for s in (1, 2, 3)]
    g, pl = ct.pooled_copies(runs)
    assert len(g) == 3 * len(runs[0][0]) and g["game_id"].is_unique
    assert g["experiment_id"].nunique() == 3 * runs[0][0]["experiment_id"].nunique()
    assert set(pl["game_id"]) == set(g["game_id"]) and len(pl) == 3 * len(runs[0][1])
    # the design is the same in every copy (cells, pairs, seats), the outcomes are not
    for col in ("mode", "difficulty", "pair_id", "impostor_model", "impostor_seat"):
        assert (g[col].to_numpy().reshape(3, -1) == runs[0][0][col].to_numpy()).all()
    assert not (g["winner"].to_numpy().reshape(3, -1) == runs[0][0]["winner"].to_numpy()).all()


@pytest.mark.slow
def test_pooled_truth_reproduces_closed_forms_and_the_monte_carlo_mean_does_not():
    """Design's marginal mode ORs and per-model win rates (closed forms from ``p_design``): the pooled truth
    is within 3.5 of its own Monte-Carlo SEs of each. At 30 x 6 (36 games a mode) the odds ratio of two
    sample rates is biased upward (Jensen: E exp(X) > exp(E X), by about var(log OR)/2 ~ 12%), so the
    Monte-Carlo mean of the estimates lies above the truth for every mode OR."""
    kw = SCENARIOS["planted"]
    truth = ct.pooled_truth(kw, 30, 6, 3, ["odds_ratios", "headline"], CONFIG, copies=32,
                            log_scale=lambda t, q: q.startswith("or:"))
    g, pl, _ = simulate_games(30, 6, design_seed=3, seed=0, **kw)
    closed = design_truth(g, pl)
    z = []
    for (_, q), (value, se) in truth.items():
        if q in closed and (q.startswith("or:") or q.startswith("imp_win:")):
            assert se > 0
            z.append((np.log(value / closed[q]) if q.startswith("or:") else value - closed[q]) / se)
    assert len(z) >= 4 + 9 and np.max(np.abs(z)) < 3.5, np.round(z, 2)

    est = []
    for r in range(60):
        frames, models = ct._draw(kw, 30, 6, 3, 555 + r, None)
        est.append(ct._estimates(frames, models, CONFIG, ["odds_ratios"]))
    mean = pd.concat(est).groupby("quantity")["estimate"].mean()
    excess = np.array([mean[q] / truth[("odds_ratios", q)][0] for q in MODE_ORS])
    assert (excess > 1).all() and excess.mean() > 1.05, excess


@pytest.mark.parametrize("batch", [None, 6])
def test_pooled_truth_reproduces_the_planted_vote_accuracy_of_the_rounds_simulator(batch):
    """With the game effects off, a majority ballot names the impostor in round r with probability
    expit(logit(det) + gain (r - 1)) whatever the selection of the rounds reached: the planted truth
    of ``rounds_votes``' per-model rows (two models, three rounds); one pool of 48 copies, or the
    mean over eight pools of 6 (the batched truth for designs too large to pool at once)."""
    kw = dict(models=(SimModel("a", det=0.55), SimModel("b", det=0.7)), hiding_scale=0.0, invalid_vote_rate=0.0,
              self_decl_rate=0.0, det_gain_per_round=0.5, modes=("homogeneous",), difficulties=("easy",))
    truth = ct.pooled_truth(kw, 40, 10, 3, ["rounds_votes"], CONFIG, copies=48, rounds=3, batch=batch)
    z = []
    for det, model in ((0.55, "a"), (0.7, "b")):
        for r in (1, 2, 3):
            value, se = truth[("rounds_votes", f"vote_acc:{model}/{r}")]
            z.append((value - vote_accuracy_truth(det, r, 0.5)) / se)
            assert value == pytest.approx(vote_accuracy_truth(det, r, 0.5), abs=0.02)
    assert np.max(np.abs(z)) < 3.5, np.round(z, 2)


def test_rows_without_a_truth_get_the_pooled_one_and_its_error_reaches_the_summary(monkeypatch):
    monkeypatch.setattr(ct, "POOLED_COPIES", 8)
    kw = SCENARIOS["planted"]
    rows = pd.DataFrame({"table": ["headline", "headline", "headline"],
                         "quantity": ["det_acc:gpt-4o", "imp_win:gpt-4o", "det_acc:gpt-4o"],
                         "calibration": ["headline:det_acc", "headline:imp_win", "headline:det_acc"],
                         "estimate": [0.5, 0.4, 0.5], "ci_low": [0.4, 0.3, np.nan], "ci_high": [0.6, 0.5, np.nan],
                         "truth": [np.nan, 0.41, np.nan], "truth_source": [None, "design", None]})
    fill_pooled(rows, kw, 20, 4, 2, CONFIG)
    pooled = ct.pooled_truth(kw, 20, 4, 2, ["headline"], CONFIG)  # cached: the same truths
    assert rows.loc[0, "truth"] == pooled[("headline", "det_acc:gpt-4o")][0]
    assert rows.loc[0, "truth_mc_se"] == pooled[("headline", "det_acc:gpt-4o")][1] > 0
    assert rows.loc[0, "truth_source"] == TRUTH_POOLED
    assert rows.loc[1, "truth"] == 0.41 and rows.loc[1, "truth_mc_se"] == 0  # a closed form is kept
    assert np.isnan(rows.loc[2, "truth"])  # no interval: no truth needed

    rng = np.random.default_rng(3)
    est = 0.5 + 0.02 * rng.standard_normal(50)
    rec = pd.DataFrame({"calibration": "headline:det_acc", "quantity": "det_acc:m1", "estimate": est,
                        "ci_low": est - 0.04, "ci_high": est + 0.04, "p": np.nan, "method": "ratio of totals",
                        "truth": 0.49, "truth_source": TRUTH_POOLED, "truth_mc_se": 0.004, "rep": np.arange(50)})
    s = summarise(rec, "planted", 120, 40).iloc[0]
    assert s["truth"] == TRUTH_POOLED and s["truth_mc_se"] == pytest.approx(0.004)
    assert s["truth_mc_se_sd"] == pytest.approx(0.004 / est.std(ddof=1))


def test_a_mistyped_scenario_or_table_is_one_line_before_any_simulation(capsys):
    """A typo in --scenarios was a KeyError traceback inside the first replicate (after the truths' minutes)."""
    import pytest

    from impostor_bench.analysis.calibration_matrix import main

    for args, said in ((["--scenarios", "planted,plantd"], "unknown plantd"), (["--tables", "headlin"], "headlin")):
        with pytest.raises(SystemExit) as e:
            main([*args, "--reps", "1", "--experiments", "10", "--games", "4"])
        err = capsys.readouterr().err
        assert e.value.code == 2 and said in err and "Traceback" not in err
