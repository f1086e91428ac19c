"""The simulator's interactions and noisy model: mode x model and mode x word-pair effects that no
additive model fits, and one model whose experiments vary more (``SimModel.noise``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.sim.design import build_design
from impostor_bench.analysis.sim.effects import DEFAULT_MODELS, SimModel


def _shift(**kw):
    base = build_design(756, 4, design_seed=3, **kw)
    plain = build_design(756, 4, design_seed=3)
    return base, base.eta - plain.eta


def test_mode_by_model_interaction_is_one_double_centred_value_per_cell():
    d, shift = _shift(mode_model_sd=0.5)
    cell = pd.DataFrame({"mode": d.mode_g, "model": d.imp_model, "s": shift})
    per = cell.groupby(["mode", "model"])["s"]
    assert (per.max() - per.min()).max() < 1e-12  # one value per (mode, impostor model)
    table = per.first().unstack()
    assert np.abs(table.mean(axis=0)).max() < 1e-12 and np.abs(table.mean(axis=1)).max() < 1e-12  # main effects unchanged
    assert 0.25 < table.to_numpy().std() < 0.75


def test_mode_by_pair_interaction_is_one_value_per_mode_and_pair():
    d, shift = _shift(mode_pair_sd=0.5)
    cell = pd.DataFrame({"mode": d.mode_g, "pair": d.pair[:, 0], "s": shift})
    per = cell.groupby(["mode", "pair"])["s"]
    assert (per.max() - per.min()).max() < 1e-12
    assert np.abs(per.first().unstack().mean(axis=0)).max() < 1e-12  # each pair's mean over modes unchanged
    assert per.first().std() > 0.2


def test_no_interaction_leaves_the_design_bit_for_bit():
    d, shift = _shift(mode_model_sd=0.0, mode_pair_sd=0.0)
    assert (shift == 0).all() and d.exp_sd_scale is None


def test_a_noisy_model_has_k_times_the_experiment_effect_sd_in_its_experiments():
    models = (SimModel(DEFAULT_MODELS[0].model, det=0.7, noise=4.0), *DEFAULT_MODELS[1:])
    d = build_design(360, 4, design_seed=2, models=models, experiment_effect_sd=0.5)
    rng = np.random.default_rng(0)
    us = np.array([d.draw(rng, rng)["u"] for _ in range(60)])
    mine = (d.exp_a == 0) | (d.exp_b == 0)
    assert us[:, mine].std() == pytest.approx(2.0, rel=0.08)
    assert us[:, ~mine].std() == pytest.approx(0.5, rel=0.08)
    # the design's expected outcomes average over that wider effect (closer to 1/2 for its games)
    flat = build_design(360, 4, design_seed=2, models=(SimModel(models[0].model, det=0.7), *DEFAULT_MODELS[1:]),
                        experiment_effect_sd=0.5)
    gm = mine[d.ge]
    assert np.abs(d.marginal_win_prob()[gm] - 0.5).mean() < np.abs(flat.marginal_win_prob()[gm] - 0.5).mean()


def test_bad_interaction_arguments_are_refused():
    with pytest.raises(ValueError, match="mode_model_sd"):
        build_design(40, 4, mode_model_sd=-1.0)
    with pytest.raises(ValueError, match="noise"):
        build_design(40, 4, models=(SimModel("a", noise=0.0), SimModel("b")))
