"""Appendix B.3 sensitivity analyses and negative controls (split from ``robustness``,
whose resampling they share through ``resampling``).

* sensitivity -- trimmed means of experiment-level win rates (5%, 10% cut at each end),
                 first vs second half of each experiment's games (by game_index), a seeded
                 50% subsample of games, and mode ORs when games with any invalid ballot
                 (class unparseable, names_no_player or missing; a self-vote is legal, so
                 self-declaration games stay) are excluded.
* negative_controls -- impostor-seat parity (within-experiment permutation, only when the
                 seat was drawn per experiment); game-index parity (the game index labels the
                 shared word-pair sequence, so the test permutes parity across game indices
                 within each difficulty, on the index's win rate over experiments: valid because
                 the pair sequence is a random permutation, and only with per-experiment seats,
                 since the old rotation ties seat to index); majority self-declaration rate
                 (cluster-robust Wald across modes) and team fields outside team modes (0).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.stats._base import StatsUnavailable, note, prepared, require_reps, table
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats._regress import PAPER_CHI2
from impostor_bench.analysis.stats.categorical import chi2_test, factor_wald
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.design_checks import seat_refusal
from impostor_bench.analysis.stats.odds import mode_ors
from impostor_bench.analysis.stats.resampling import exp_sums, perm_pvalue, within_experiment_perm
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.core.records import INVALID_BALLOT_CLASSES, TEAM_MODES


def valid_ballot_games(prep) -> np.ndarray:
    """(N,) True for games without an invalid ballot (a legal self-vote keeps its game)."""
    # asarray: numpy's stubs type any(axis=...) as a bool scalar or an array; here always an array
    return np.asarray(~np.isin(prep.ballot_class, INVALID_BALLOT_CLASSES).any(axis=1))


@table("sensitivity", columns=["analysis", "quantity", "estimate", "baseline", "delta"],
    title=("Sensitivity analyses (Appendix B.3): trimmed means, halves of each experiment, a subsample, invalid "
           "ballots excluded"),
    section="robustness",
)
def sensitivity(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data)
    rows = []
    overall = float(prep.y.mean())
    wins_e, n_e = exp_sums(prep, prep.y), exp_sums(prep, np.ones(prep.n))
    rate_e = wins_e / n_e
    base_e = float(rate_e.mean())
    for cut in (0.05, 0.10):
        t = float(stats.trim_mean(rate_e, cut))
        rows.append({"analysis": f"trim_{int(cut * 100)}pct", "quantity": "mean_experiment_imp_win_rate",
                     "estimate": t, "baseline": base_e, "delta": t - base_e, "n": len(rate_e)})
    if "game_index" in prep.games.columns:
        gidx = pd.to_numeric(prep.games["game_index"], errors="coerce").to_numpy(float)
        rank = pd.Series(gidx).groupby(prep.exp_code).rank(method="first").to_numpy()
        first = rank <= n_e[prep.exp_code] / 2
        r1, r2 = prep.y[first].mean(), prep.y[~first].mean()
        rows += [{"analysis": "first_half", "quantity": "imp_win_rate", "estimate": r1, "baseline": overall,
                  "delta": r1 - overall, "n": int(first.sum())},
                 {"analysis": "second_half", "quantity": "imp_win_rate", "estimate": r2, "baseline": overall,
                  "delta": r2 - overall, "n": int((~first).sum())},
                 {"analysis": "second_minus_first", "quantity": "imp_win_rate", "estimate": r2 - r1,
                  "baseline": 0.0, "delta": r2 - r1, "n": prep.n}]
    else:
        note(data, "sensitivity: games lack game_index; temporal split skipped")
    rng = np.random.default_rng([config.seed, 5])
    half = np.zeros(prep.n, bool)
    half[rng.choice(prep.n, prep.n // 2, replace=False)] = True
    r = float(prep.y[half].mean())
    rows.append({"analysis": "subsample_50pct", "quantity": "imp_win_rate", "estimate": r, "baseline": overall,
                 "delta": r - overall, "n": int(half.sum())})
    try:
        est = replace(config, paper_methods=True)  # point estimates only (the same MLE), no inference
        full = {d["comparison"]: d["or"] for d in mode_ors(prep, est)}
        variants = [("subsample_50pct", half)]
        if prep.has_players:
            variants.append(("exclude_invalid_ballots", valid_ballot_games(prep)))
        else:
            note(data, "sensitivity: no players table; invalid-ballot handling skipped")
        for name, mask in variants:
            for d in mode_ors(prep, est, mask=mask):
                rows.append({"analysis": name, "quantity": f"{d['comparison']}_or", "estimate": d["or"],
                             "baseline": full[d["comparison"]], "delta": d["or"] - full[d["comparison"]],
                             "n": d["n"]})
    except StatsUnavailable as e:
        note(data, f"sensitivity: mode ORs skipped: {e}")
    return pd.DataFrame(rows)


def _position_parity_perm(prep, gidx: np.ndarray, rng, reps: int):
    """Odd minus even game-index win rate and its null: parity labels permuted across the game
    indices of each difficulty (the unit is a (difficulty, game index) position, which holds one
    word pair in every experiment of that difficulty; the pair sequence is a random permutation)."""
    df = pd.DataFrame({"d": prep.difficulty, "gi": gidx, "y": prep.y})
    pos = df.groupby(["d", "gi"], sort=True)["y"].agg(["sum", "size"]).reset_index()
    odd = (pos["gi"].to_numpy() % 2).astype(bool)
    w, n = pos["sum"].to_numpy(float), pos["size"].to_numpy(float)
    obs = w[odd].sum() / n[odd].sum() - w[~odd].sum() / n[~odd].sum()
    null_odd = np.empty((reps, len(pos)), bool)
    for _, idx in pos.groupby("d").indices.items():
        null_odd[:, idx] = rng.permuted(np.tile(odd[idx], (reps, 1)), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        null = (null_odd @ w) / (null_odd @ n) - ((~null_odd) @ w) / ((~null_odd) @ n)
    return obs, null


@table("negative_controls", columns=["control", "estimate", "p", "method"],
    title=("Negative controls (Appendix B.3): seat and game-index parity, majority self-declaration, team fields "
           "outside team modes"),
    section="design",
    inference=(
        infer("control", ("control",), "estimate", p="p", family="negative_controls"),
    ),
)
def negative_controls(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    require_reps(config, permutation=True)
    prep = prepared(data)
    rng = np.random.default_rng([config.seed, 6])
    rows = []
    R = config.permutation_reps
    refusal = None if config.paper_methods else seat_refusal(prep)

    def single(name, par) -> bool:
        if len(np.unique(par)) < 2:
            note(data, f"negative_controls: {name} has a single parity")
            return True
        return False

    if refusal:
        note(data, f"negative_controls: impostor_seat_parity not computed: {refusal}")
    elif not single("impostor_seat_parity", prep.imp_seat % 2):
        obs, null = within_experiment_perm(prep, prep.imp_seat % 2, [0, 1], rng, R)
        d = obs[1] - obs[0]
        rows.append({"control": "impostor_seat_parity", "estimate": d,
                     "p": float(perm_pvalue(d, (null[:, 1] - null[:, 0])[:, None])[0]),
                     "method": "odd minus even impostor win rate; labels permuted within experiment", "reps": R})
    if "game_index" in prep.games.columns:
        gidx = pd.to_numeric(prep.games["game_index"], errors="coerce").fillna(0).to_numpy(np.int64)
        if config.paper_methods:
            if not single("game_index_parity", gidx % 2):
                obs, null = within_experiment_perm(prep, gidx % 2, [0, 1], rng, R)
                d = obs[1] - obs[0]
                rows.append({"control": "game_index_parity", "estimate": d,
                             "p": float(perm_pvalue(d, (null[:, 1] - null[:, 0])[:, None])[0]), "reps": R,
                             "method": "paper (labels permuted within experiment; the game index labels the "
                                       "shared word pairs, so this does not hold)"})
        elif refusal:
            note(data, f"negative_controls: game_index_parity not computed: {refusal} (the old rotation "
                       "also ties the seat to the game index)")
        elif not single("game_index_parity", gidx % 2):
            d, null = _position_parity_perm(prep, gidx, rng, R)
            rows.append({"control": "game_index_parity", "estimate": d,
                         "p": float(perm_pvalue(d, null[:, None])[0]), "reps": R,
                         "method": "odd minus even impostor win rate; parity permuted across game indices "
                                   "within difficulty"})
    if prep.has_players:
        assert prep.present is not None and prep.is_imp is not None and prep.self_decl is not None  # has_players
        maj = prep.present & ~prep.is_imp
        gi, seat = np.nonzero(maj)
        sd = prep.self_decl[gi, seat]
        row = {"control": "majority_self_declaration_pct", "estimate": 100 * sd.mean()}
        if config.paper_methods:
            row.update(p=chi2_test(prep.mode[gi], sd)["p"],
                       method=f"% of majority seats self-declaring; {PAPER_CHI2}")
        else:
            try:
                w = factor_wald(prep.mode[gi], sd.astype(float), prep.exp_code[gi], config,
                                "majority self-declaration by mode")
                row.update(p=w["p"], method=f"% of majority seats self-declaring; mode: {w['p_method']}",
                           n_clusters=w["n_clusters"])
            except StatsUnavailable as e:
                note(data, f"negative_controls: majority_self_declaration_pct p not computed: {e}")
                row.update(p=np.nan, method=f"% of majority seats self-declaring; p not computed: {e}")
        rows.append(row)
        if prep.team is not None:
            non_team = ~np.isin(prep.mode, TEAM_MODES)
            stray = int((pd.notna(prep.team) & prep.present)[non_team].sum())
            rows.append({"control": "team_fields_outside_team_modes", "estimate": stray, "p": np.nan,
                         "method": "player rows with a team outside team modes (expected 0)"})
    return pd.DataFrame(rows)
