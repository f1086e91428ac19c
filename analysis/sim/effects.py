"""The simulated models and the true effects a simulation plants: ``SimModel``, the nine
paper-like default models, the paper's seat/mode/difficulty ORs and their log-OR terms of
the win logit (``impostor_bench.analysis.sim.design`` builds the linear predictor from them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, cast

import numpy as np

@dataclass(frozen=True)
class SimModel:
    """A simulated model: metadata for models.csv and its behaviour parameters."""

    model: str
    provider: str = "unknown"
    family: str = "unknown"
    params_b: Optional[float] = None
    det: float = 0.6  # P(a majority ballot of this model names the impostor), before conditioning
    self_decl: Optional[float] = None  # P(self-declares as impostor); None = simulate's self_decl_rate
    odds: float = 1.0  # extra impostor-win odds multiplier beyond the size effect
    # multiplier of the experiment-effect SD in the experiments it plays (an experiment takes the
    # largest of its models'): a model whose runs are noisier than the others' (a flaky provider, a
    # sampling temperature), which breaks the exchangeable design effects moderation assumes
    noise: float = 1.0


# Nine models in the spirit of the paper (sizes are illustrative, not facts about the models).
DEFAULT_MODELS: tuple[SimModel, ...] = (
    SimModel("gpt-4o", "openai", "gpt", 200.0, 0.77, 0.457),
    SimModel("claude-sonnet-4", "anthropic", "claude", 150.0, 0.51, 0.292),
    SimModel("deepseek-v3", "deepseek", "deepseek", 671.0, 0.69, 0.290),
    SimModel("llama-4-maverick", "meta", "llama", 400.0, 0.65, 0.212),
    SimModel("llama-4-scout", "meta", "llama", 109.0, 0.61, 0.249),
    SimModel("llama-3.1-70b", "meta", "llama", 70.0, 0.65, 0.355),
    SimModel("gpt-3.5-turbo", "openai", "gpt", 20.0, 0.56, 0.015),
    SimModel("llama-3.1-405b", "meta", "llama", 405.0, 0.60, 0.315),
    SimModel("llama-3.1-8b", "meta", "llama", 8.0, 0.34, 0.010),
)

PAPER_SEAT_OR = (1.12, 1.26, 1.22)
PAPER_MODE_OR = {"cross_play": 0.79, "team_blind": 0.90, "team_aware": 0.77, "team_semi_aware": 0.80}
PAPER_DIFFICULTY_OR = {"easy": 0.75, "medium": 0.85, "hard": 1.25, "expert": 1.25}


def coerce_models(models) -> list[SimModel]:
    """``SimModel``s from names (a default model's parameters where the name is one), dicts or models."""
    if models is None:
        return list(DEFAULT_MODELS)
    known = {m.model: m for m in DEFAULT_MODELS}
    out = []
    for m in models:
        if isinstance(m, SimModel):
            out.append(m)
        elif isinstance(m, str):
            out.append(known.get(m, SimModel(m)))
        elif isinstance(m, Mapping):
            out.append(SimModel(**m))
        else:
            raise TypeError(f"models: expected names, dicts or SimModel, got {type(m).__name__}")
    names = [m.model for m in out]
    if len(set(names)) != len(names):
        raise ValueError("models: duplicate model names")
    return out


def seat_logor(seat_or) -> np.ndarray:
    """Log-ORs of seats 0-3 (seat 0 the reference) from one OR or three."""
    if np.isscalar(seat_or):
        vals = [1.0, *[float(cast(float, seat_or))] * 3]
    else:
        vals = [1.0, *map(float, seat_or)]
        if len(vals) != 4:
            raise ValueError("seat_or: give one OR or three (seats 1, 2, 3 vs seat 0)")
    return np.log(np.array(vals))


def mode_logor(mode_or, modes) -> dict[str, float]:
    """Log-ORs of the modes vs homogeneous (default: the paper's)."""
    if mode_or is None:
        mode_or = PAPER_MODE_OR
    if np.isscalar(mode_or):
        return {m: (0.0 if m == "homogeneous" else float(np.log(mode_or))) for m in modes}
    out = {m: float(np.log(mode_or.get(m, 1.0))) for m in modes}
    out["homogeneous"] = 0.0 if "homogeneous" not in mode_or else float(np.log(mode_or["homogeneous"]))
    return out


def centred_logor(values, keys) -> dict[str, float]:
    """Log-ORs centred over ``keys`` (difficulty tiers); none given = all 0."""
    if values is None or np.isscalar(values):
        return {k: 0.0 for k in keys}
    logs = {k: float(np.log(values.get(k, 1.0))) for k in keys}
    mean = float(np.mean(list(logs.values())))
    return {k: v - mean for k, v in logs.items()}


def interaction_logit(rng: np.random.Generator, mode_g: np.ndarray, imp_model: np.ndarray, n_models: int,
                      pair_g: np.ndarray, modes, mode_model_sd: float, mode_pair_sd: float) -> np.ndarray:
    """(N,) logit shift of mode x impostor-model and mode x word-pair interactions: N(0, sd^2) effects
    fixed by the design, double-centred (over modes and over models or pairs) so the main effects keep
    their meaning: a model's or pair's advantage that differs by mode, which no additive model fits."""
    modes = list(modes)
    mi = np.array([modes.index(m) for m in mode_g])
    shift = np.zeros(len(mode_g))
    if mode_model_sd > 0:
        mm = rng.normal(0.0, mode_model_sd, (len(modes), n_models))
        mm = mm - mm.mean(0, keepdims=True) - mm.mean(1, keepdims=True) + mm.mean()
        shift += mm[mi, imp_model]
    if mode_pair_sd > 0:
        codes, pairs = np.unique(pair_g.astype(str), return_inverse=True)
        mp = rng.normal(0.0, mode_pair_sd, (len(modes), len(codes)))
        mp = mp - mp.mean(0, keepdims=True) - mp.mean(1, keepdims=True) + mp.mean()
        shift += mp[mi, pairs.ravel()]
    return shift
