"""Ballot classes in the analysis: loading older exports, the invalid-output table, detection
accuracy and the "exclude invalid ballots" sensitivity check, on data with known counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _synth_stats import fast_config
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.io import load_tables, write_tables
from impostor_bench.analysis.stats import TABLES
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.records import BALLOT_CLASSES, INVALID_BALLOT_CLASSES

# What each class looks like in a record (error text as impostor_bench.core.parsing writes it).
ERRORS = {
    "valid": None,
    "self_vote": "voted for itself (Player 1)",
    "unparseable": "no JSON object with suspected_impostor_id was found",
    "names_no_player": "there is no Player 5 (players are 1-4)",
    "missing": "the response is empty",
}
DESC_ERRORS = {
    "leak": 'the description contains your word ("apple")',
    "too_long": "the description is 801 characters long; the limit is 750",
    "empty": "the description is empty",
}


@pytest.fixture(scope="module")
def labelled(sim_small):
    """sim_small with known ballot and description classes per seat: a fixed share of the
    impostors of every mode self-declare naming themselves; other classes are scattered."""
    games, players, models = (df.copy() for df in sim_small)
    rng = np.random.default_rng(7)
    players = players.reset_index(drop=True)
    cls = np.where(players["ballot_valid"], "valid", "unparseable").astype(object)  # the simulator's own
    is_imp = (players["role"] == "impostor").to_numpy()
    imp_rows = np.flatnonzero(is_imp)
    self_rows = rng.choice(imp_rows, size=len(imp_rows) // 5, replace=False)
    cls[self_rows] = "self_vote"
    rest = np.setdiff1d(np.flatnonzero(cls == "valid"), self_rows)
    for c, k in (("unparseable", 40), ("names_no_player", 25), ("missing", 15)):
        pick = rng.choice(rest, size=k, replace=False)
        cls[pick] = c
        rest = np.setdiff1d(rest, pick)
    players["ballot_class"] = cls
    players["ballot_valid"] = np.isin(cls, ["valid", "self_vote"])
    players["ballot_error"] = [ERRORS[c] for c in cls]
    players.loc[cls != "valid", "vote"] = pd.NA
    players.loc[self_rows, "self_declared"] = True
    dcls = np.where(players["description_valid"], None, "leak").astype(object)  # the simulator's own: leaks
    for c, k in (("leak", 30), ("too_long", 12), ("empty", 7)):
        pick = rng.choice(np.flatnonzero(dcls == None), size=k, replace=False)  # noqa: E711
        dcls[pick] = c
    players["description_valid"] = dcls == None  # noqa: E711
    players["description_error"] = [DESC_ERRORS.get(c) for c in dcls]
    assert set(cls) == set(BALLOT_CLASSES)
    players["_desc_truth"] = dcls
    return _decided_by_ballots(games, players), players, models


def _decided_by_ballots(games: pd.DataFrame, players: pd.DataFrame) -> pd.DataFrame:
    """``games`` with each game's winner and win condition decided again from its (changed)
    ballots by the rules, so that the tables agree (the loader refuses records that do not)."""
    from impostor_bench.core.rules import Ballot, decide

    games = games.copy()
    games["win_condition"] = games["win_condition"].astype(object)
    games["winner"] = games["winner"].astype(object)
    seats = players.sort_values("seat").groupby("game_id", sort=False)
    for i, row in games.iterrows():
        rows = seats.get_group(row["game_id"])
        ballots = [Ballot(vote=None if pd.isna(v) else int(v), self_declared=bool(d),
                          word_guess=g if isinstance(g, str) else None)
                   for v, d, g in zip(rows["vote"], rows["self_declared"], rows["word_guess"])]
        out = decide(ballots, int(row["impostor_seat"]), row["majority_word"])
        games.loc[i, ["winner", "win_condition"]] = [out.winner, out.win_condition]
    return games


def _data(games, players, models=None):
    return AnalysisData(games=games, players=players.drop(columns=["_desc_truth"], errors="ignore"), models=models)


def test_invalid_outputs_counts_match_groupby(labelled):
    games, players, models = labelled
    t = TABLES["invalid_outputs"](_data(games, players, models), fast_config()).set_index("model")
    ballots = players.groupby(["model", "ballot_class"]).size().unstack(fill_value=0)
    descs = players.dropna(subset=["_desc_truth"]).groupby(["model", "_desc_truth"]).size().unstack(fill_value=0)
    seats = players.groupby("model").size()
    assert sorted(t.index) == sorted([*seats.index, "ALL"])
    for model, n in seats.items():
        row = t.loc[model]
        assert row["n_seats"] == n
        for c in BALLOT_CLASSES:
            assert row[f"ballot_{c}"] == ballots.get(c, pd.Series(dtype=int)).get(model, 0), (model, c)
        for c in ("leak", "too_long", "empty"):
            assert row[f"desc_{c}"] == descs.get(c, pd.Series(dtype=int)).get(model, 0), (model, c)
        assert row["desc_other"] == 0
        invalid = players[(players["model"] == model) & players["ballot_class"].isin(INVALID_BALLOT_CLASSES)]
        assert row["ballot_invalid"] == len(invalid)
        assert row["ballot_invalid_pct"] == pytest.approx(100 * len(invalid) / n)
        assert row["desc_invalid_pct"] == pytest.approx(100 * (~players.loc[players["model"] == model,
                                                                              "description_valid"]).sum() / n)
    total = t.loc["ALL"]
    assert total["n_seats"] == len(players) and total["ballot_self_vote"] == (players["ballot_class"] == "self_vote").sum()
    assert total["ballot_invalid"] == players["ballot_class"].isin(INVALID_BALLOT_CLASSES).sum() >= 80
    assert total["desc_invalid"] == (~players["description_valid"]).sum() >= 49


def _old_style(players: pd.DataFrame) -> pd.DataFrame:
    """The same players as an export written before ballot_class existed: no class, and
    ballot_valid meaning "has a counted vote" (self-votes flagged invalid)."""
    old = players.drop(columns=["ballot_class", "_desc_truth"])
    old["ballot_valid"] = old["vote"].notna()
    return old


def test_older_export_loads_with_derived_classes(labelled, tmp_path):
    games, players, models = labelled
    write_tables(tmp_path, games, _old_style(players), models)
    data = load_tables(tmp_path)
    assert data.players["ballot_class"].tolist() == players["ballot_class"].tolist()
    assert data.players["ballot_valid"].tolist() == players["ballot_valid"].tolist()
    assert any("ballot_class was absent" in n for n in data.notes)


def test_contract_only_export_derives_classes(labelled, tmp_path):
    """Only contract columns: a counted vote is valid, a self-declaring seat with no vote
    named itself, any other missing vote is missing."""
    from impostor_bench.core.records import CONTRACT_PLAYER_COLUMNS

    games, players, models = labelled
    write_tables(tmp_path, games, players[CONTRACT_PLAYER_COLUMNS], models)
    got = load_tables(tmp_path).players["ballot_class"]
    want = np.where(players["vote"].notna(), "valid", np.where(players["self_declared"], "self_vote", "missing"))
    assert got.tolist() == want.tolist()


def test_bad_ballot_class_is_a_clear_error(labelled, tmp_path):
    games, players, models = labelled
    bad = players.drop(columns=["_desc_truth"])
    bad.loc[3, "ballot_class"] = "abstained"
    write_tables(tmp_path, games, bad, models)
    with pytest.raises(ImpostorError, match=r"players.parquet: column 'ballot_class': invalid value.*'abstained'.*fix"):
        load_tables(tmp_path)
    bad = players.drop(columns=["_desc_truth"])
    bad.loc[bad["ballot_class"] == "self_vote", "ballot_valid"] = False
    write_tables(tmp_path, games, bad, models)
    with pytest.raises(ImpostorError, match=r"column 'ballot_valid': \d+ value\(s\) disagree with ballot_class"):
        load_tables(tmp_path)


def _sensitivity_n(data) -> pd.Series:
    s = TABLES["sensitivity"](data, fast_config())
    return s[s["analysis"] == "exclude_invalid_ballots"].set_index("quantity")[["estimate", "n"]]


def test_exclude_invalid_ballots_keeps_self_declaration_games(labelled):
    """Known counts: the games dropped are exactly those with an invalid ballot; the games
    whose impostor self-declares naming itself all stay.  Old-style data gives the same."""
    games, players, models = labelled
    got = _sensitivity_n(_data(games, players, models))
    bad_games = set(players.loc[players["ballot_class"].isin(INVALID_BALLOT_CLASSES), "game_id"])
    self_games = set(players.loc[players["ballot_class"] == "self_vote", "game_id"])
    assert len(self_games - bad_games) > 40
    kept = games[~games["game_id"].isin(bad_games)].assign(y=lambda g: g["winner"] == "impostor")
    rates = kept.groupby("mode")["y"].agg(["sum", "size"])
    odds = rates["sum"] / (rates["size"] - rates["sum"])
    for mode in rates.index.drop("homogeneous"):
        row = got.loc[f"{mode}_vs_homogeneous_or"]
        assert row["n"] == rates.loc[[mode, "homogeneous"], "size"].sum(), mode
        assert row["estimate"] == pytest.approx(odds[mode] / odds["homogeneous"]), mode
    # the same export written by an older version: derived classes, same answer
    old = _sensitivity_n(_data(games, _old_style(players), models))
    pd.testing.assert_frame_equal(old, got)


def test_detection_accuracy_counts_majority_self_votes_as_misses(labelled):
    games, players, models = labelled
    p = players.copy()
    maj = np.flatnonzero((p["role"] == "majority").to_numpy() & (p["ballot_class"] == "valid").to_numpy())[:60]
    p.loc[maj, ["ballot_class", "ballot_error", "vote"]] = ["self_vote", ERRORS["self_vote"], pd.NA]
    head = TABLES["headline"](_data(games, p, models), fast_config()).set_index("model")
    imp_seat = p["game_id"].map(games.set_index("game_id")["impostor_seat"])
    m = p[(p["role"] == "majority") & p["ballot_class"].isin(["valid", "self_vote"])]
    correct = (m["vote"] == imp_seat[m.index]).fillna(False).groupby(m["model"]).agg(["sum", "size"])
    assert head["n_det_votes"].to_dict() == correct["size"].to_dict()
    assert (head["det_acc_pct"] / 100).to_dict() == pytest.approx((correct["sum"] / correct["size"]).to_dict())


def test_description_class_is_a_typed_field_derived_only_for_older_records():
    """A record keeps the class the rule check gave (``DescriptionViolation.kind``), whatever its message
    says; only a record without one (older logs, other tools) gets it from the message text."""
    from impostor_bench.core.descriptions import description_violation
    from impostor_bench.core.records import MoveRow, PlayerRow
    from impostor_bench.core.schedule import GameSpec, PairRef
    from impostor_bench.core.seat import SeatRecord
    from impostor_bench.scorers.winner import build_record

    violation = description_violation("x" * 900, "apple")
    assert violation is not None and violation.kind == "too_long"
    spec = GameSpec(game_index=0, sample_id="g0", game_seed=7, mode="homogeneous", difficulty="easy",
                    pair=PairRef("easy-001", "tiger", "lion"), impostor_seat=2, speaking_order=(1, 0, 3, 2),
                    team_assignment=None)
    seats = [SeatRecord(model="bot/x", description="clue", description_valid=True, vote=2, ballot_class="valid",
                        vote_raw=["{}"], description_raw=["clue"]) for _ in range(4)]
    # seat 0: a new record (class recorded, message reworded); seat 1: an old store (message only)
    seats[0].description_valid, seats[0].description_error = False, "a message in some future wording"
    seats[0].description_class = violation.kind
    seats[1].description_valid, seats[1].description_error = False, DESC_ERRORS["leak"]
    from impostor_bench.core.rules import Ballot, decide

    _, players = build_record(spec, seats, [decide([Ballot(s.vote) for s in seats], 2, "tiger")], experiment_id="e",
                              seed=0, tie_rule="default")
    assert [p.description_class for p in players] == ["too_long", "leak", None, None]

    row = dict(players[2].model_dump(), description_valid=False, description_error=DESC_ERRORS["empty"],
               description_class=None)
    assert PlayerRow(**row).description_class == "empty"
    assert PlayerRow(**{**row, "description_valid": True, "description_error": None}).description_class is None
    move = dict(game_id="g", experiment_id="e", round=1, seat=0, model="m", role="majority", speaking_position=0,
                description="", description_valid=False, description_error=DESC_ERRORS["too_long"])
    assert MoveRow(**move).description_class == "too_long"
    assert MoveRow(**move, description_class="leak").description_class == "leak"


def test_description_classes_read_the_recorded_class_before_the_text(labelled):
    """The analysis counts the recorded class; the text is read only where no class was recorded."""
    from impostor_bench.analysis.ballots import description_classes

    _, players, _ = labelled
    truth = players["_desc_truth"]
    typed = players.assign(description_class=truth,
                           description_error=np.where(truth.notna(), "a message in some future wording", None))
    assert (description_classes(typed).fillna("-") == truth.fillna("-")).all()
    # older export: no class column -> the text; a partly filled column -> the text where it is null
    older = players.drop(columns=["description_class"], errors="ignore")
    assert (description_classes(older).fillna("-") == truth.fillna("-")).all()
    partly = players.assign(description_class=truth.where(np.arange(len(truth)) % 2 == 0, None))
    assert (description_classes(partly).fillna("-") == truth.fillna("-")).all()
    with_other = typed.assign(description_error=typed["description_error"].where(truth.isna(), "unknown"))
    assert (description_classes(with_other.drop(columns=["description_class"])).dropna() == "other").all()
