"""The simulator: contract format, A.3 schedules, true effects recovered, ballots consistent
with the winner under the default rule (checked by an independent implementation here)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from impostor_bench.analysis.io import load_tables
from impostor_bench.analysis.sim.simulate import DEFAULT_MODELS, simulate_games
from impostor_bench.cli import main
from impostor_bench.core.records import GAME_COLUMNS, PLAYER_COLUMNS, GameRow, PlayerRow

NULL = dict(mode_or=1.0, difficulty_or=None, size_or_per_10x=1.0, position_effect_pp=0.0, opponent_or_per_10pp=1.0,
            seat_or=1.0)


# --------------------------------------------------------------------------- independent rule (A.1, App. F)


def _norm(w):
    return "" if w is None or (isinstance(w, float) and np.isnan(w)) else str(w).strip().lower()


def default_rule(votes, declared, guesses, imp, majority_word):
    """Winner, condition, tie k, impostor in tie, P(imp) under sym-candidate and sym-side.

    Written from the paper's text: majority wins if a non-impostor self-declares, if the
    impostor self-declares with a wrong guess, if >= 2 non-impostors vote the impostor, or if
    the impostor gets strictly more votes than all others combined; a correct self-declared
    guess wins for the impostor; otherwise (ties, no conviction) the impostor wins.
    """
    valid = [v for v in votes if v is not None]
    tally = Counter(valid)
    top = max(tally.values()) if tally else 0
    tied = sorted(s for s, c in tally.items() if c == top) if top else []
    k = len(tied) if len(tied) >= 2 else 0
    in_tie = k >= 2 and imp in tied
    if any(declared[s] for s in range(4) if s != imp):
        return "majority", "majority_self_declared", k, in_tie, 0.0, 0.0
    if declared[imp]:
        if _norm(guesses[imp]) == _norm(majority_word):
            return "impostor", "impostor_guess_correct", k, in_tie, 1.0, 1.0
        return "majority", "impostor_guess_wrong", k, in_tie, 0.0, 0.0
    if sum(1 for s in range(4) if s != imp and votes[s] == imp) >= 2:
        return "majority", "conviction", k, in_tie, 0.0, 0.0
    if tally.get(imp, 0) > len(valid) - tally.get(imp, 0):
        return "majority", "strict_plurality", k, in_tie, 0.0, 0.0
    if k >= 2:
        return "impostor", "tie", k, in_tie, (1 - 1 / k) if in_tie else 1.0, 0.5
    return "impostor", "no_conviction", k, in_tie, 1.0, 1.0


def _seat_arrays(players):
    p = players.sort_values(["game_id", "seat"])
    gids = p["game_id"].to_numpy()[::4]
    votes = p["vote"].astype("float64").to_numpy().reshape(-1, 4)
    decl = p["self_declared"].to_numpy().reshape(-1, 4)
    guess = p["word_guess"].astype(object).to_numpy().reshape(-1, 4)
    return gids, votes, decl, guess


@pytest.mark.parametrize("kw", [{}, {"invalid_vote_rate": 0.2, "self_decl_rate": 0.3, "tie_rate": 0.2}])
def test_ballots_decide_the_logged_winner(kw):
    games, players, _ = simulate_games(80, 40, seed=2, majority_self_decl_rate=0.02, **kw)
    gids, votes, decl, guess = _seat_arrays(players)
    g = games.set_index("game_id").loc[gids]
    got = []
    for i, r in enumerate(g.itertuples()):
        vs = [None if np.isnan(v) else int(v) for v in votes[i]]
        got.append(default_rule(vs, decl[i], guess[i], r.impostor_seat, r.majority_word))
    got = pd.DataFrame(got, columns=["winner", "win_condition", "tie_k", "impostor_in_tie", "p_cand", "p_side"],
                       index=g.index)
    assert (got["winner"] == g["winner"]).all()
    assert (got["win_condition"] == g["win_condition"]).all()
    assert (got["tie_k"] == g["tie_k"]).all()
    assert (got["impostor_in_tie"] == g["impostor_in_tie"]).all()
    assert np.allclose(got["p_cand"], g["p_imp_sym_candidate"]) and np.allclose(got["p_side"], g["p_imp_sym_side"])
    # every outcome class occurs, so the check above covers all rules
    assert {"conviction", "tie", "no_conviction", "impostor_guess_correct", "impostor_guess_wrong",
            "majority_self_declared"} <= set(g["win_condition"])


def test_agrees_with_game_engine_rules():
    rules = pytest.importorskip("impostor_bench.core.rules")
    games, players, _ = simulate_games(30, 40, seed=4, invalid_vote_rate=0.1)
    gids, votes, decl, guess = _seat_arrays(players)
    g = games.set_index("game_id").loc[gids]
    for i, r in enumerate(g.itertuples()):
        ballots = [rules.Ballot(None if np.isnan(votes[i, s]) else int(votes[i, s]), bool(decl[i, s]),
                                None if guess[i, s] is None or guess[i, s] != guess[i, s] else guess[i, s])
                   for s in range(4)]
        out = rules.decide(ballots, int(r.impostor_seat), r.majority_word)
        assert (out.winner, out.win_condition, out.tie_k) == (r.winner, r.win_condition, r.tie_k)
        assert out.p_imp_sym_candidate == pytest.approx(r.p_imp_sym_candidate)


def test_game_extras_consistent_with_players():
    games, players, _ = simulate_games(20, 24, seed=8, invalid_vote_rate=0.1)
    gids, votes, decl, _ = _seat_arrays(players)
    g = games.set_index("game_id").loc[gids]
    imp = g["impostor_seat"].to_numpy()
    valid = ~np.isnan(votes)
    assert (valid.sum(1) == g["n_valid_votes"]).all()
    assert (4 - valid.sum(1) == g["n_invalid_ballots"]).all()
    non_imp = np.arange(4)[None, :] != imp[:, None]
    assert (((votes == imp[:, None]) & non_imp).sum(1) == g["votes_on_impostor"]).all()
    p = players.sort_values(["game_id", "seat"])
    order = np.argsort(p["speaking_position"].to_numpy().reshape(-1, 4), axis=1)
    assert ["".join(map(str, o)) for o in order] == list(g["speaking_order"])


# --------------------------------------------------------------------------- format and schedules


def test_contract_columns_and_pydantic_rows(sim_small):
    games, players, models = sim_small
    assert list(games.columns[: len(GAME_COLUMNS)]) == GAME_COLUMNS
    assert list(players.columns) == PLAYER_COLUMNS
    # the contract's columns, then params_source: the sizes are the simulator's, illustrative, not published
    assert list(models.columns) == ["model", "provider", "family", "params_b", "params_source"]
    assert (models["params_source"] == "simulated").all()
    assert (players.groupby("game_id").size() == 4).all()
    assert (players.groupby("game_id")["role"].apply(lambda r: (r == "impostor").sum()) == 1).all()

    def clean(d):
        return {k: (None if (v is pd.NA or (isinstance(v, float) and np.isnan(v))) else v) for k, v in d.items()}

    for rec in games[GAME_COLUMNS].sample(100, random_state=0).to_dict("records"):
        GameRow.model_validate(clean(rec))
    for rec in players.sample(200, random_state=0).to_dict("records"):
        rec = clean(rec)
        rec["vote"] = None if rec["vote"] is None else int(rec["vote"])
        PlayerRow.model_validate(rec)


def test_schedules_follow_appendix_a3(sim_small):
    games, players, _ = sim_small
    p = players.sort_values(["game_id", "seat"])
    seat_models = p["model"].to_numpy().reshape(-1, 4)
    teams = p["team"].astype(object).to_numpy().reshape(-1, 4)
    g = games.set_index("game_id").loc[p["game_id"].to_numpy()[::4]].reset_index()
    for _exp, ge in g.groupby("experiment_id"):
        ge = ge.sort_values("game_index")
        mode = ge["mode"].iloc[0]
        seats = ge["impostor_seat"].to_numpy()
        idx = ge.index.to_numpy()
        for b in range(len(seats) // 4):  # every mode: 4-game blocks, each a permutation of the seats
            assert sorted(seats[4 * b: 4 * b + 4]) == [0, 1, 2, 3]
        if mode == "homogeneous":
            assert all(len(set(seat_models[i])) == 1 for i in idx)
        elif mode == "cross_play":
            for i, s in zip(idx, seats):
                maj = [seat_models[i][t] for t in range(4) if t != s]
                assert len(set(maj)) == 1 and seat_models[i][s] != maj[0]
        else:
            for b in range(len(seats) // 8):
                blk = slice(8 * b, 8 * b + 8)
                assert sorted(seats[blk][:4]) == [0, 1, 2, 3] and sorted(seats[blk][4:]) == [0, 1, 2, 3]
                hosts = [(s, teams[i][s]) for i, s in zip(idx[blk], seats[blk])]
                assert sorted(hosts) == [(s, t) for s in range(4) for t in "AB"]  # each seat once per team
            for i in idx:
                assert sorted(teams[i]) == ["A", "A", "B", "B"]
                a = {seat_models[i][t] for t in range(4) if teams[i][t] == "A"}
                b = {seat_models[i][t] for t in range(4) if teams[i][t] == "B"}
                assert len(a) == 1 and len(b) == 1 and a != b
        if mode not in ("team_blind", "team_aware", "team_semi_aware"):
            assert all(t is None or t != t for t in teams[idx].ravel())


def test_full_design_is_balanced():
    # its speed is measured in benchmarks/scale_bench.py, not timed here (a shared machine)
    games, players, models = simulate_games(756, 120, seed=0)
    assert len(games) == 90_720 and len(players) == 4 * 90_720
    per_mode = games.groupby("mode")["experiment_id"].nunique().to_dict()
    assert per_mode == {"homogeneous": 36, "cross_play": 288, "team_blind": 144, "team_aware": 144,
                        "team_semi_aware": 144}
    assert games["experiment_id"].nunique() == 756
    assert games.groupby("difficulty").size().nunique() == 1  # 22,680 per tier
    # each model is the impostor equally often within a mode
    assert games[games["mode"] == "cross_play"].groupby("impostor_model").size().nunique() == 1
    # uniform speaking order: impostor position and seat balanced
    counts = games["impostor_speaking_position"].value_counts().sort_index().to_numpy()
    assert stats.chisquare(counts).pvalue > 1e-3
    assert set(games["impostor_seat"].value_counts()) == {90_720 // 4}
    # the default tie rate is hit
    assert (games["win_condition"] == "tie").mean() == pytest.approx(0.117, abs=0.004)


# --------------------------------------------------------------------------- true effects


def _or_ci(fit, name, level=0.95):
    lo, hi = fit.conf_int(alpha=1 - level).loc[name]
    return np.exp(fit.params[name]), np.exp(lo), np.exp(hi)


def test_seat_or_recovered(sim_null_large):
    games, _, _ = sim_null_large
    df = pd.DataFrame({"y": (games["winner"] == "impostor").astype(int), "seat": games["impostor_seat"]})
    fit = smf.logit("y ~ C(seat)", df).fit(disp=0)
    for s in (1, 2, 3):
        est, lo, hi = _or_ci(fit, f"C(seat)[T.{s}]")
        assert lo < 0.8 < hi, f"seat {s}: OR {est:.3f} [{lo:.3f}, {hi:.3f}] misses 0.8"
        assert hi < 1.0  # and the effect is detected
    # pooled seats 1-3 vs 0, tighter
    df["s0"] = (df["seat"] == 0).astype(int)
    est, lo, hi = _or_ci(smf.logit("y ~ s0", df).fit(disp=0), "s0")
    assert lo < 1 / 0.8 < hi


def test_base_rate_matches_under_null():
    for base in (0.45, 0.3):
        games, _, _ = simulate_games(200, 60, base_imp_win=base, seed=7, **NULL)
        y = (games["winner"] == "impostor").to_numpy()
        se = np.sqrt(base * (1 - base) / y.size)
        assert abs(y.mean() - base) < 3.5 * se, (base, y.mean())
        assert np.allclose(games["p_true"], base)


def test_all_effects_recovered_jointly():
    seat_or = (0.8, 0.9, 1.25)
    mode_or = {"cross_play": 0.75, "team_blind": 0.9, "team_aware": 0.7, "team_semi_aware": 1.2}
    diff_or = {"easy": 0.6, "medium": 0.9, "hard": 1.3, "expert": 1.4}
    size_or, opp_or, pos_pp = 1.5, 0.7, -3.0
    games, players, models = simulate_games(
        336, 120, seed=21, seat_or=seat_or, mode_or=mode_or, difficulty_or=diff_or, size_or_per_10x=size_or,
        opponent_or_per_10pp=opp_or, position_effect_pp=pos_pp,
    )
    det = {m.model: m.det for m in DEFAULT_MODELS}
    params = dict(zip(models["model"], models["params_b"]))
    maj = players[players["role"] == "majority"]
    opp = maj.assign(det=maj["model"].map(det)).groupby("game_id")["det"].mean()
    df = pd.DataFrame({
        "y": (games["winner"] == "impostor").astype(int),
        "seat": games["impostor_seat"], "mode": games["mode"], "diff": games["difficulty"],
        "size": np.log10(games["impostor_model"].map(params)),
        "mid": (games["impostor_speaking_position"] >= 2).astype(int),
        "opp": 10 * games["game_id"].map(opp),
    })
    fit = smf.logit("y ~ C(seat) + C(mode, Treatment('homogeneous')) + C(diff, Treatment('easy')) + size + mid + opp",
                    df).fit(disp=0)
    truth = {f"C(seat)[T.{s}]": np.log(seat_or[s - 1]) for s in (1, 2, 3)}
    truth.update({f"C(mode, Treatment('homogeneous'))[T.{m}]": np.log(v) for m, v in mode_or.items()})
    truth.update({f"C(diff, Treatment('easy'))[T.{d}]": np.log(diff_or[d] / diff_or["easy"])
                  for d in ("medium", "hard", "expert")})
    truth["size"] = np.log(size_or)
    truth["opp"] = np.log(opp_or)
    truth["mid"] = 2 * pos_pp / 100 / (0.45 * 0.55)
    ci = fit.conf_int(alpha=0.01)
    for name, value in truth.items():
        lo, hi = ci.loc[name]
        assert lo < value < hi, f"{name}: truth {value:.3f} outside 99% CI [{lo:.3f}, {hi:.3f}]"


def test_speaking_position_itt_in_pp():
    games, _, _ = simulate_games(336, 120, seed=13, **{**NULL, "position_effect_pp": -3.0})
    y = (games["winner"] == "impostor").astype(float)
    cell = y.groupby(games["impostor_speaking_position"]).mean()
    itt = 100 * (cell[[2, 3]].mean() - cell.mean())
    assert itt == pytest.approx(-3.0, abs=0.8)


def test_rates_of_ties_self_declaration_and_invalid_ballots(sim_null_large):
    games, players, _ = sim_null_large
    assert (games["win_condition"] == "tie").mean() == pytest.approx(0.117, abs=0.006)
    g2, p2, _ = simulate_games(100, 100, seed=3, self_decl_rate=0.3, invalid_vote_rate=0.0, **NULL)
    imp = p2[p2["role"] == "impostor"]
    assert imp["self_declared"].mean() == pytest.approx(0.3, abs=0.015)
    assert p2["vote"].notna().all()
    # a self-declared impostor's guess is right exactly when it wins
    sd = g2.set_index("game_id").loc[imp.loc[imp["self_declared"], "game_id"]]
    assert set(sd["win_condition"]) == {"impostor_guess_correct", "impostor_guess_wrong"}
    g3, p3, _ = simulate_games(50, 40, seed=3, invalid_vote_rate=0.15, **NULL)
    assert 0.08 < p3["vote"].isna().mean() < 0.25


def test_detection_tracks_model_skill(sim_null_large):
    _, players, _ = sim_null_large
    maj = players[(players["role"] == "majority") & players["vote"].notna()]
    imp_seat = players[players["role"] == "impostor"].set_index("game_id")["seat"]
    acc = (maj["vote"].astype(int).to_numpy() == maj["game_id"].map(imp_seat).to_numpy())
    by_model = pd.Series(acc).groupby(maj["model"].to_numpy()).mean()
    det = pd.Series({m.model: m.det for m in DEFAULT_MODELS})
    assert stats.spearmanr(by_model.sort_index(), det.sort_index()).statistic > 0.8


def test_reproducible_by_seed():
    a = simulate_games(12, 10, seed=99)
    b = simulate_games(12, 10, seed=99)
    c = simulate_games(12, 10, seed=100)
    for x, y in zip(a, b):
        pd.testing.assert_frame_equal(x, y)
    assert not a[0]["winner"].equals(c[0]["winner"])


def test_bad_arguments():
    with pytest.raises(ValueError, match="mode"):
        simulate_games(2, 2, modes=["solo"])
    with pytest.raises(ValueError, match="two models"):
        simulate_games(2, 2, models=["only"])
    with pytest.raises(ValueError, match="base_imp_win"):
        simulate_games(2, 2, base_imp_win=1.2)


def test_cli_simulate_writes_a_loadable_export(tmp_path, capsys):
    out = tmp_path / "sim"
    rc = main(["simulate", "--out", str(out), "--experiments", "20", "--games", "8", "--seat-or", "0.8",
               "--seed", "3"])
    assert rc == 0
    printed = capsys.readouterr().out.split()
    assert sorted(p.rsplit("/", 1)[-1] for p in printed) == ["games.parquet", "models.csv", "players.parquet"]
    data = load_tables(out)
    assert len(data.games) == 160 and data.models is not None
    assert main(["simulate", "--out", str(out), "--seat-or", "a,b"]) == 2


def test_design_sharing_follows_the_runner():
    """Word pair of game i shared by every experiment of a difficulty; impostor seat and speaking
    order drawn independently per game of every experiment (issue 26: the seat used to be shared
    by every experiment of a mode)."""
    games, _, _ = simulate_games(189, 40, seed=6)
    for _, g in games.groupby("difficulty"):
        assert (g.groupby("game_index")["pair_id"].nunique() == 1).all()
    cell = games[(games["mode"] == "cross_play") & (games["difficulty"] == "easy")]
    seat = cell.pivot(index="experiment_id", columns="game_index", values="impostor_seat")
    assert (seat.iloc[:-1].to_numpy() == seat.iloc[1:].to_numpy()).mean() == pytest.approx(0.25, abs=0.06)
    old, _, _ = simulate_games(189, 40, seed=6, schedule="shared")  # the schedule before issue 26
    for _, g in old.groupby("mode"):
        assert (g.groupby("game_index")["impostor_seat"].nunique() == 1).all()
    # impostor positions of game i across the experiments of one cell: independent uniform draws
    cell = games[(games["mode"] == "cross_play") & (games["difficulty"] == "easy")]
    pos = cell.pivot(index="experiment_id", columns="game_index", values="impostor_speaking_position")
    assert pos.nunique().mean() > 3.5  # 18 experiments, 4 positions: almost every index sees all four
    same = (pos.iloc[:-1].to_numpy() == pos.iloc[1:].to_numpy()).mean()
    assert same == pytest.approx(0.25, abs=0.05)  # two experiments agree by chance only
    assert stats.chisquare(np.bincount(pos.to_numpy().ravel(), minlength=4)).pvalue > 1e-3


def test_pair_and_experiment_effects_and_design_seed():
    kw = dict(mode_or=1.0, seat_or=1.0, size_or_per_10x=1.0, position_effect_pp=0.0, opponent_or_per_10pp=1.0,
              difficulty_or=None)
    g0, _, _ = simulate_games(189, 40, seed=1, pair_effect_sd=1.0, experiment_effect_sd=0.6, **kw)
    # pair effects: p_design varies by game index (the pair) within a difficulty, not by experiment
    one = g0[g0["difficulty"] == "easy"]
    by_pair = one.groupby("pair_id")["p_design"]
    assert (by_pair.nunique() == 1).all() and one["p_design"].std() > 0.1
    # experiment effects: the realised probability varies between experiments of the same pair
    assert one.groupby("game_index")["p_true"].std().mean() > 0.08
    # the same design seed gives the same schedule and truth, another seed a new run of it
    g1, _, _ = simulate_games(189, 40, seed=2, design_seed=1, pair_effect_sd=1.0, experiment_effect_sd=0.6, **kw)
    np.testing.assert_array_equal(g0["pair_id"], g1["pair_id"])
    np.testing.assert_allclose(g0["p_design"], g1["p_design"])
    assert not np.array_equal(g0["impostor_speaking_position"], g1["impostor_speaking_position"])
    with pytest.raises(ValueError, match="experiment_effect_sd"):
        simulate_games(2, 2, experiment_effect_sd=-1)


def test_simulated_sizes_stay_simulated_through_validation_and_the_size_fits(sim_export):
    """models.csv's params_source = simulated passes validation and reaches size_fit_models as such
    (not relabelled published), and the size fits still use those sizes (the planted effect's truth)."""
    from impostor_bench.analysis.io import load_tables
    from impostor_bench.analysis.stats import TABLES
    from impostor_bench.analysis.stats.config import StatsConfig

    data = load_tables(sim_export)
    assert (data.models["params_source"] == "simulated").all()
    fits = TABLES["size_fit_models"](data, StatsConfig(bootstrap_reps=50, permutation_reps=50))
    assert len(fits) and set(fits["params_source"].dropna()) == {"simulated"} and fits["used"].any()
