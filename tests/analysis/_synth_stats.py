"""Synthetic game tables with known effects for the statistics tests (numpy only).

Two generators:

* ``make_ballot_games`` -- the paper's experimental layout (5 modes x 4 difficulties x
  model assignments x games per experiment; 9 models and 120 games per experiment give
  exactly 756 experiments / 90,720 games) with ballots drawn per seat and the winner
  decided from the ballots by the default rule (Appendix A.1), written here
  independently of impostor_bench.core.rules and impostor_bench.analysis.stats.
* ``make_logit_games`` -- games whose impostor win is drawn from a known logit model
  (seat, mode, speaking-position, size and experiment random effects), for checking
  that estimators recover known odds ratios / ITTs. No players table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.data import AnalysisData

MODES = ("homogeneous", "cross_play", "team_blind", "team_aware", "team_semi_aware")
TEAM_MODES = ("team_blind", "team_aware", "team_semi_aware")
DIFFS = ("easy", "medium", "hard", "expert")

DEFAULT_MODELS = pd.DataFrame({
    "model": [f"m{i}" for i in range(9)],
    "provider": ["OpenAI", "OpenAI", "Anthropic", "DeepSeek", "Meta", "Meta", "Meta", "Meta", "Meta"],
    "family": ["GPT", "GPT", "Claude", "DeepSeek", "Llama", "Llama", "Llama", "Llama4", "Llama4"],
    "params_b": [20.0, 200.0, 150.0, 670.0, 8.0, 70.0, 405.0, 109.0, 400.0],
})


def expit(x):
    return 1 / (1 + np.exp(-x))


def logit(p):
    return np.log(p / (1 - p))


def _layout(models, modes, diffs, games_per_exp):
    exps = []
    for d in diffs:
        for mode in modes:
            if mode == "homogeneous":
                pairs = [(a, a) for a in models]
            elif mode == "cross_play":
                pairs = [(a, b) for a in models for b in models if a != b]
            else:
                pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]
            exps += [(mode, d, a, b) for a, b in pairs]
    E = len(exps)
    G = games_per_exp
    e = np.repeat(np.arange(E), G)
    return exps, e, np.tile(np.arange(G), E)


def _seats(rng, modes_g, gidx):
    """Impostor seats: 0,1,2,3 cycling in homogeneous mode; elsewhere a fresh permutation of
    the four seats per block of four games (blocks align with experiments when the number
    of games per experiment is a multiple of 4)."""
    n = len(modes_g)
    perm = np.argsort(rng.random(((n + 3) // 4, 4)), axis=1).ravel()[:n]
    return np.where(modes_g == "homogeneous", gidx % 4, perm).astype(int)


# _OTHERS[i, p] = the two seats other than i and p (for p != i), ascending
_OTHERS = np.array([[[s for s in range(4) if s not in (i, p)][:2] if i != p else [(i + 1) % 4, (i + 2) % 4]
                     for p in range(4)] for i in range(4)])


def make_ballot_games(n_models=9, games_per_exp=8, seed=0, modes=MODES, diffs=DIFFS,
                      det=None, det_diff=(0.8, 0.3, -0.3, -0.6), det_pos=(0.0, 0.0, 0.25, 0.5),
                      imp_decl=None, guess_ok=None, maj_decl=0.003, invalid=0.02,
                      with_models=True) -> AnalysisData:
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(n_models)]
    if det is None:
        det = np.linspace(0.35, 0.8, n_models)
    if imp_decl is None:
        imp_decl = np.linspace(0.0, 0.3, n_models)
    if guess_ok is None:
        guess_ok = np.linspace(0.1, 0.9, n_models)
    det, imp_decl, guess_ok = (np.asarray(a, float) for a in (det, imp_decl, guess_ok))
    exps, e, gidx = _layout(models, list(modes), list(diffs), games_per_exp)
    n = len(e)
    mode = np.array([exps[i][0] for i in e], dtype=object)
    diff = np.array([exps[i][1] for i in e], dtype=object)
    ma = np.array([models.index(exps[i][2]) for i in e])
    mb = np.array([models.index(exps[i][3]) for i in e])
    imp = _seats(rng, mode, gidx)
    seats = np.arange(4)[None, :]
    is_imp = seats == imp[:, None]
    # teams (team modes): impostor's team hosts for the first 4 games of each 8-game block
    team_mode = np.isin(mode, TEAM_MODES)
    mate = (imp + 1 + rng.integers(0, 3, n)) % 4
    host_a = (gidx % 8) < 4
    in_imp_team = is_imp | (seats == mate[:, None])
    label_a = np.where(host_a[:, None], in_imp_team, ~in_imp_team)
    team = np.where(team_mode[:, None], np.where(label_a, "A", "B"), None).astype(object)
    seat_model = np.where(mode[:, None] == "homogeneous", ma[:, None],
                          np.where(mode[:, None] == "cross_play", np.where(is_imp, ma[:, None], mb[:, None]),
                                   np.where(label_a, ma[:, None], mb[:, None])))
    imp_model = seat_model[np.arange(n), imp]
    order = np.argsort(rng.random((n, 4)), axis=1)  # seats in speaking order
    speak_pos = np.argsort(order, axis=1)  # position of each seat
    imp_pos = speak_pos[np.arange(n), imp]
    dshift = np.array(det_diff)[np.array([list(diffs).index(d) if d in diffs else 0 for d in diff])]
    q = expit(logit(det[seat_model]) + dshift[:, None] + np.array(det_pos)[imp_pos][:, None])
    # ballots: majority seat names the impostor w.p. q, else one of the two other majority seats;
    # the impostor names one of the three others uniformly
    u = rng.random((n, 4))
    other = (seats + 1 + rng.integers(0, 3, (n, 4))) % 4  # uniform over seats != self
    other_maj = _OTHERS[imp[:, None], seats, rng.integers(0, 2, (n, 4))]
    vote = np.where(is_imp, other, np.where(u < q, imp[:, None], other_maj)).astype(float)
    vote[rng.random((n, 4)) < invalid] = np.nan
    decl = np.where(is_imp, rng.random((n, 4)) < imp_decl[seat_model], rng.random((n, 4)) < maj_decl)
    guess_right = rng.random(n) < guess_ok[imp_model]
    # default rule (A.1)
    valid = ~np.isnan(vote)
    maj_decl_any = (decl & ~is_imp).any(1)
    imp_decl_g = decl[np.arange(n), imp]
    on_imp = (valid & (vote == imp[:, None]) & ~is_imp).sum(1)
    votes_imp = (valid & (vote == imp[:, None])).sum(1)
    others = valid.sum(1) - votes_imp
    counts = np.stack([(valid & (vote == c)).sum(1) for c in range(4)], 1)
    top = counts.max(1)
    k = ((counts == top[:, None]) & (top[:, None] > 0)).sum(1)
    cond = np.select(
        [maj_decl_any, imp_decl_g & guess_right, imp_decl_g, on_imp >= 2, votes_imp > others, k >= 2],
        ["majority_self_declared", "impostor_guess_correct", "impostor_guess_wrong", "conviction",
         "strict_plurality", "tie"], "no_conviction")
    winner = np.where(np.isin(cond, ["majority_self_declared", "impostor_guess_wrong", "conviction",
                                     "strict_plurality"]), "majority", "impostor")
    pair_no = rng.integers(0, 75, n)
    games = pd.DataFrame({
        "experiment_id": [f"exp{i:04d}" for i in e], "game_id": [f"g{i:06d}" for i in range(n)],
        "game_index": gidx, "mode": mode, "difficulty": diff,
        "pair_id": [f"{d}-{p:03d}" for d, p in zip(diff, pair_no)],
        "majority_word": [f"maj{p}" for p in pair_no], "impostor_word": [f"imp{p}" for p in pair_no],
        "impostor_seat": imp, "impostor_model": np.array(models, dtype=object)[imp_model],
        "impostor_speaking_position": imp_pos, "winner": winner, "win_condition": cond,
    })
    vocab = np.array([f"w{i}" for i in range(25)], dtype=object)
    toks = vocab[rng.integers(0, 25, (n * 4, 3))]
    desc = toks[:, 0] + " " + toks[:, 1] + " " + toks[:, 2]
    gi = np.repeat(np.arange(n), 4)
    st = np.tile(np.arange(4), n)
    wg = np.where(guess_right[gi], games["majority_word"].to_numpy()[gi], "nope").astype(object)
    dflat = decl.ravel()
    players = pd.DataFrame({
        "game_id": games["game_id"].to_numpy()[gi], "seat": st,
        "model": np.array(models, dtype=object)[seat_model.ravel()],
        "role": np.where(is_imp.ravel(), "impostor", "majority"), "team": team.ravel(),
        "speaking_position": speak_pos.ravel(), "description": desc, "description_valid": True,
        "vote": pd.Series(vote.ravel()).astype("Int64"),
        "confidence": 0.5, "self_declared": dflat,
        "word_guess": np.where(dflat & is_imp.ravel(), wg, None),
        "experiment_id": games["experiment_id"].to_numpy()[gi],
    })
    # per-seat tokens and cost (a separate stream, so the draws above are unchanged)
    trng = np.random.default_rng([seed, 17])
    players["input_tokens"] = trng.integers(250, 600, len(players))
    players["output_tokens"] = trng.integers(20, 80, len(players))
    price = 1e-6 * (1 + seat_model.ravel())  # USD per token, by model
    players["cost_usd"] = (players["input_tokens"] + 4 * players["output_tokens"]) * price
    meta = DEFAULT_MODELS.iloc[:n_models].copy() if with_models and n_models <= 9 else None
    return AnalysisData(games=games, players=players, models=meta)


def make_logit_games(n_exp=200, games_per_exp=100, seed=0, b0=-0.2, seat_lor=(0, 0, 0, 0),
                     mode_lor=None, pos_lor=(0, 0, 0, 0), size_slope=0.0, model_params=None,
                     model_lor=None, re_sd=0.0, diffs=DIFFS, provider=None, family=None,
                     seats: str = "rotation") -> AnalysisData:
    """Games only: y ~ Bernoulli(expit(b0 + seat + mode + pos + slope*log10(params) + model + u_e)).
    ``seats``: "rotation" (game i has seat i mod 4 in every experiment, the old schedule) or
    "per_experiment" (each experiment's balanced seat sequence shuffled, the new one)."""
    rng = np.random.default_rng(seed)
    mode_lor = mode_lor or {"homogeneous": 0.0}
    modes = list(mode_lor)
    model_params = model_params or {"a": 10.0}
    models = list(model_params)
    model_lor = model_lor or {m: 0.0 for m in models}
    e = np.repeat(np.arange(n_exp), games_per_exp)
    gidx = np.tile(np.arange(games_per_exp), n_exp)
    exp_mode = np.array(modes, dtype=object)[np.arange(n_exp) % len(modes)]
    exp_diff = np.array(diffs, dtype=object)[(np.arange(n_exp) // len(modes)) % len(diffs)]
    exp_model = np.array(models, dtype=object)[rng.integers(0, len(models), n_exp)]
    u = rng.normal(0, re_sd, n_exp) if re_sd > 0 else np.zeros(n_exp)
    seat = gidx % 4
    if seats == "per_experiment":
        seat = rng.permuted(seat.reshape(n_exp, games_per_exp), axis=1).ravel()
    pos = rng.integers(0, 4, len(e))
    mdl = exp_model[e]
    eta = (b0 + np.asarray(seat_lor)[seat] + np.array([mode_lor[m] for m in exp_mode])[e]
           + np.asarray(pos_lor)[pos] + size_slope * np.log10(np.array([model_params[m] for m in mdl]))
           + np.array([model_lor[m] for m in mdl]) + u[e])
    p = expit(eta)
    y = rng.random(len(e)) < p
    games = pd.DataFrame({
        "experiment_id": [f"e{i:04d}" for i in e], "game_id": [f"g{i:07d}" for i in range(len(e))],
        "game_index": gidx, "mode": exp_mode[e], "difficulty": exp_diff[e],
        "pair_id": [f"p{i:03d}" for i in rng.integers(0, 60, len(e))],
        "majority_word": "x", "impostor_word": "y", "impostor_seat": seat, "impostor_model": mdl,
        "impostor_speaking_position": pos, "winner": np.where(y, "impostor", "majority"),
        "win_condition": np.where(y, "no_conviction", "conviction"),
    })
    games.attrs["p_true"] = p
    games.attrs["eta_without_pos"] = eta - np.asarray(pos_lor)[pos]
    meta = pd.DataFrame({"model": models, "provider": provider or ["P"] * len(models),
                         "family": family or ["F"] * len(models), "params_b": [model_params[m] for m in models]})
    return AnalysisData(games=games, players=None, models=meta)


_CACHE: dict = {}


def shared_ballot(n_models=5, games_per_exp=8, seed=0) -> Analysis:
    """A session over a ballot data set, shared by the tests of one pytest session (its tables are
    cached in it, and its notes collect every table's)."""
    key = ("ballot", n_models, games_per_exp, seed)
    if key not in _CACHE:
        _CACHE[key] = Analysis(make_ballot_games(n_models=n_models, games_per_exp=games_per_exp, seed=seed))
    return _CACHE[key]


def fast_config(**kw):
    from impostor_bench.analysis.stats import StatsConfig
    base = dict(bootstrap_reps=1000, permutation_reps=500, strict=True)
    base.update(kw)
    return StatsConfig(**base)
