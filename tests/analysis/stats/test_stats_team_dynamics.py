"""Table 12 / Appendix M measures recover what scripted games planted (tests/analysis/_synth_team.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _synth_stats import fast_config
from _synth_team import make_team_games
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats import _text as tx
from impostor_bench.analysis.stats._base import prepared
from impostor_bench.analysis.stats.table12 import COLUMNS, TABLE12, UNDEFINED
from impostor_bench.analysis.stats.team_ballots import team_outcomes


@pytest.fixture(scope="module")
def planted():
    data = make_team_games(seed=1)
    cfg = fast_config()
    return data, cfg, TABLES["team_dynamics"](data, cfg).set_index("model")


def _inside(t, model, col, value):
    return t.loc[model, f"{col}_ci_low"] <= value <= t.loc[model, f"{col}_ci_high"]


def test_vote_coordination_controls_recover_planted_copying(planted):
    data, cfg, t = planted
    tb = TABLES["team_ballots"](data, cfg).set_index(["model", "mode", "kind"])
    # loyal majority-majority teams vote together in every team_aware game (copy prob 1.0)
    assert tb.loc[("loyal", "team_aware", "mm"), "vote_coord_pct"] == 100.0
    # half the time in team_blind: teammate rate = 0.5 + 0.5 * (chance alignment) -> well above cross-team pairs
    blind = tb.loc[("loyal", "team_blind", "mm")]
    assert blind["vote_coord_pct"] > blind["vote_coord_cross_pct"] + 25 and blind["ci_low"] > 0
    assert tb.loc[("loyal", "team_aware", "mm"), "teammate_premium_pp"] > blind["teammate_premium_pp"] + 10
    # implicit coordination = teammate premium when undisclosed: positive for loyal, its CI excludes 0
    assert t.loc["loyal", "implicit_coord_pp"] > 15 and t.loc["loyal", "implicit_coord_pp_ci_low"] > 0
    # Coord. Gap is Vote Coord. minus Implicit Coord. (the paper's nine rows)
    for m in t.index:
        assert t.loc[m, "coord_gap_pp"] == pytest.approx(t.loc[m, "vote_coord_pct"] - t.loc[m, "implicit_coord_pp"])
    # the paper's Implicit Coord. is a level (team_blind teammates aligned) and its Coord. Gap is Vote Coord.
    # minus that level; the premium over cross-team pairs stays beside it under its own name
    for m in t.index:
        tb_blind = tb.loc[(m, "team_blind", "all")]
        assert t.loc[m, "implicit_coord_pct"] == pytest.approx(tb_blind["vote_coord_pct"])
        assert t.loc[m, "implicit_coord_pp"] == pytest.approx(tb_blind["teammate_premium_pp"])
        assert t.loc[m, "coord_gap_paper_pp"] == pytest.approx(t.loc[m, "vote_coord_pct"] - t.loc[m, "implicit_coord_pct"])
    assert t.loc["loyal", "implicit_coord_pct"] > t.loc["loyal", "implicit_coord_pp"] > 15
    # the old quantity (team_blind minus team_aware alignment) is kept under its own name
    assert t.loc["loyal", "vote_coord_blind_minus_aware_pp"] == pytest.approx(
        t.loc["loyal", "vote_coord_team_blind_pct"] - t.loc["loyal", "vote_coord_team_aware_pct"])


def test_betrayal_recovers_planted_rate(planted):
    _, _, t = planted
    assert t.loc["loyal", "betrayal_pct"] == 0.0  # never votes for its teammate
    assert _inside(t, "loose", "betrayal_pct", 60.0)  # planted 60%
    assert t.loc["loose", "betrayal_cross_pct"] == pytest.approx((100 - t.loc["loose", "betrayal_pct"]) / 2)
    assert np.isnan(t.loc["loyal", "vulnerability_index"])  # trust / 0 betrayals: undefined, not inf
    assert t.loc["loose", "vulnerability_index"] == 0.0


def test_language_measures_recover_planted_phrases_trust_and_mirroring(planted):
    _, _, t = planted
    # coordination phrase in every team_aware description of loyal, none in team_blind: 50% of team-mode seats
    assert t.loc["loyal", "coord_rate_pct"] == 50.0 and t.loc["loose", "coord_rate_pct"] == 0.0
    assert t.loc["loyal", "coord_rate_noteam_pct"] == 0.0
    assert t.loc["loyal", "trust_form_pct"] == 100.0 and t.loc["loose", "trust_form_pct"] == 0.0
    # mirroring: loyal copies the style (and a content word) of the description before it
    assert t.loc["loyal", "ling_mirror_pp_ci_low"] > 5
    assert _inside(t, "loose", "ling_mirror_pp", 0.0)
    assert t.loc["loyal", "vocab_conv_ci_low"] > 0.03
    assert _inside(t, "loose", "vocab_conv", 0.0)


def test_team_language_and_style_correlation_by_mode(planted):
    data, cfg, _ = planted
    tl = TABLES["team_language"](data, cfg).set_index(["model", "mode"])
    assert tl.loc[("loyal", "team_aware"), "coord_rate_pct"] == 100.0
    assert tl.loc[("loyal", "team_blind"), "coord_rate_pct"] == 0.0
    assert tl.loc[("loyal", "team_aware"), "coord_share_pct"] > 0
    sc = TABLES["style_correlation"](data, cfg).set_index(["mode", "pairs"])
    assert sc.loc[("team_aware", "teammates"), "r"] > 0.8  # planted: same number of style blocks
    assert sc.loc[("team_aware", "teammates"), "ci_low"] > sc.loc[("team_aware", "cross_team"), "ci_high"]
    assert abs(sc.loc[("team_blind", "teammates"), "r"]) < 0.3


def _game(gid, imp, teams, votes, winner):
    g = {"experiment_id": "e", "game_id": gid, "game_index": 0, "mode": "team_aware", "difficulty": "easy",
         "pair_id": "p", "majority_word": "dog", "impostor_word": "wolf", "impostor_seat": imp, "impostor_model": "m",
         "impostor_speaking_position": 0, "winner": winner, "win_condition": "x"}
    p = [{"game_id": gid, "seat": s, "model": "m", "role": "impostor" if s == imp else "majority", "team": teams[s],
          "speaking_position": s, "description": "x", "description_valid": True, "vote": votes[s], "confidence": 0.5,
          "self_declared": False, "word_guess": None} for s in range(4)]
    return g, p


def test_failure_modes_are_rules_on_ballots():
    games = [
        # groupthink (three votes on majority seat 2), misplaced trust (seat 1 votes with its impostor teammate),
        # team B breaks down (seat 3 votes its teammate 2)
        _game("g1", 0, "AABB", [2, 2, 1, 2], "impostor"),
        # paralysis: 2-2 tie between seats 0 and 2; seat 1 votes its impostor teammate (detection, no breakdown)
        _game("g2", 0, "AABB", [2, 0, 0, 2], "majority"),
        # collaboration: both members of the mm team A vote the impostor and the majority wins
        _game("g3", 3, "AABB", [3, 3, 3, 0], "majority"),
    ]
    data = AnalysisData(pd.DataFrame([g for g, _ in games]), pd.DataFrame([r for _, p in games for r in p]))
    data.players["vote"] = data.players["vote"].astype("Int64")
    out = team_outcomes(prepared(data, need_players=True)).set_index(["gi", "team"])
    assert out.loc[(0, "A"), "groupthink"] and out.loc[(0, "A"), "misplaced"] == 1.0
    assert not out.loc[(0, "A"), "trust_breakdown"] and out.loc[(0, "B"), "trust_breakdown"]
    assert not out.loc[(0, "A"), "paralysis"] and out.loc[(1, "A"), "paralysis"]
    assert out.loc[(1, "A"), "misplaced"] == 0.0 and not out.loc[(1, "A"), "trust_breakdown"]
    assert out.loc[(2, "A"), "collab"] == 1.0 and out.loc[(2, "A"), "collab_cross"] == 1.0
    assert out.loc[(1, "B"), "collab"] == 0.0  # seat 3 did not vote the impostor
    assert np.isnan(out.loc[(0, "A"), "collab"])  # an impostor-majority team has no collaboration success
    assert list(out["failed"]) == [True, False, False, True, False, False]


def test_text_rules():
    from impostor_bench.core.prompts import INVALID_DESCRIPTION_PLACEHOLDER
    from impostor_bench.providers.bots.vocab import STOPWORDS

    assert tx.INVALID_DESCRIPTION_PLACEHOLDER == INVALID_DESCRIPTION_PLACEHOLDER  # the copy agrees with the game
    assert set(STOPWORDS) <= set(tx.lexicon()["stopwords"]["words"])
    assert tx.content_words("The dogs bark at a cat near the kennel", ("dog", "cat")) == {"bark", "kennel"}
    assert not tx.is_text("[no valid description]") and not tx.is_text("  ")
    assert tx.lexicon_hits("As my teammate mentioned, building on that point", "coordination") >= 2
    assert tx.vouches("Player 2 seems genuine. Player 3 is odd.", suspect=2.0)
    assert not tx.vouches("Player 3 is odd, I trust my instinct.", suspect=2.0)  # only the suspect is named
    prof = tx.fw_profile("i think we and you know it is ours")
    assert tx.lsm(prof, prof) == pytest.approx(1.0)
    # no category shared: only the 3 categories neither text uses count as matched (Ireland & Pennebaker)
    assert tx.lsm(prof, tx.fw_profile("the a the an of the in the on")) == pytest.approx(3 / 9, abs=1e-3)


def test_placeholders_do_not_converge():
    """The old vocab_conv scored two invalid neighbours ('[no valid description]') 1.0."""
    data = make_team_games(experiments_per_cell=1, games=12, seed=2)
    data.players["description"] = "[no valid description]"
    t = TABLES["team_dynamics"](data, fast_config()).set_index("model")
    assert t["vocab_conv"].isna().all() and t["ling_mirror_pp"].isna().all()


def test_table12_columns_and_undefined_list(planted):
    data, cfg, t = planted
    assert COLUMNS[1:] == list(t.columns[:14])  # the data contract's leading columns, kept
    # the paper's fourteen columns by its definitions: the levels of Implicit Coord., Linguistic Mirror and
    # Vocab Conv. (their contrasts are printed beside them), Coord. Gap over the level
    assert {"implicit_coord_pct", "lsm_seen_pct", "vocab_jaccard_seen", "coord_gap_paper_pp"} <= {c for c, _, _ in TABLE12}
    filled = [c for c, _, _ in TABLE12 if t[c].notna().any()]
    assert len(filled) == 10 and not set(filled) & set(UNDEFINED)
    und = TABLES["table12_undefined"](data, cfg)
    assert set(und["metric"]) >= {"strategy_align_pct", "trust_recovery_pct", "resilience_factor", "alignment_gap_pp"}
    assert und["reason"].str.len().min() > 20


def test_one_pass_features_equal_the_lexicon_functions():
    texts = ["As my teammate mentioned, maybe it is kind of odd; building on that, player 2 stands out.",
             "I think it seems off, perhaps. Let's vote together with my partner.", "plain words only"]
    for t in texts:
        n, coord, share, hedge, susp = tx.features(t)
        assert n == len(tx.tokens(t))
        assert (coord, hedge, susp) == (tx.lexicon_hits(t, "coordination"), tx.lexicon_hits(t, "hedges"),
                                        tx.lexicon_hits(t, "suspicion"))
        assert share == pytest.approx(tx.lexicon_share(t, "coordination"))


def test_unseen_twin_is_the_next_game_of_the_same_pair_role_and_model():
    from impostor_bench.analysis.stats.language import _twins

    d = pd.DataFrame({"gi": [0, 0, 1, 2, 2, 3], "seat": [0, 1, 0, 0, 1, 0], "pair": ["p", "p", "p", "p", "p", "q"],
                      "imp": [False] * 6, "model": ["m", "m", "m", "m", "m", "m"]})
    # games 0, 1, 2 share (p, majority, m): 0 -> first row of game 1, 1 -> game 2, 2 -> back to game 0
    assert list(_twins(d)) == [2, 2, 3, 0, 0, -1]


def test_style_adjustment_removes_a_model_effect_that_runs_through_length():
    """Impostor wins depend only on the impostor's description length, and 'loyal' writes longer
    descriptions: the raw model odds ratio is far from 1, the length-adjusted one is not (O.2)."""
    data = make_team_games(experiments_per_cell=4, games=48, seed=3)
    g, p = data.games, data.players
    rng = np.random.default_rng(0)
    imp = p["role"] == "impostor"
    n = np.where(p.loc[imp, "model"] == "loyal", rng.integers(15, 40, imp.sum()), rng.integers(3, 12, imp.sum()))
    p.loc[imp, "description"] = [" ".join(["stone"] * k) for k in n]
    win = rng.random(imp.sum()) < 1 / (1 + np.exp(-(-4.0 + 1.6 * np.log1p(n))))
    g["winner"] = g["game_id"].map(dict(zip(p.loc[imp, "game_id"], np.where(win, "impostor", "majority"))))
    out = TABLES["style_adjusted"](AnalysisData(g, p), fast_config()).set_index("term")
    m = out.loc["model=loyal"]
    assert m["ci_low_raw"] > 1.5  # raw: loyal impostors win far more often
    assert m["ci_low"] < 1 < m["ci_high"]  # adjusted for length: no model effect left
    assert out.loc["impostor_log_words", "ci_low"] > 1
    sm = TABLES["style_metrics"](AnalysisData(g, p), fast_config()).set_index("model")
    assert sm.loc["loyal", "words_mean"] > sm.loc["loose", "words_mean"]


def test_style_adjusted_names_a_separated_term_instead_of_warning():
    """A model whose impostors always win has no finite odds ratio: Newton does not converge. The
    table says so in a note naming the term, and statsmodels' ConvergenceWarning does not leak."""
    import warnings

    from impostor_bench.analysis.stats.session import Analysis

    data = make_team_games(experiments_per_cell=4, games=48, seed=3)
    g, p = data.games, data.players
    imp = p[p["role"] == "impostor"].set_index("game_id")["model"]
    g["winner"] = np.where(g["game_id"].map(imp) == "loyal", "impostor", g["winner"])
    session = Analysis(AnalysisData(g, p), fast_config())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a leaked warning fails the test
        out = session.table("style_adjusted").set_index("term")
    assert "model=loyal" in out.index
    notes = [n for n in session.notes if n.startswith("style_adjusted: the raw fit did not converge")]
    assert notes and "model=loyal" in notes[0], session.notes
