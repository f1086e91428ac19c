"""The game's working state in the sample store: what a finished, an errored and a re-scored game keep."""

import copy
import json

import pytest
from inspect_ai import eval as inspect_eval, score as inspect_score

from impostor_bench.scorers.winner import impostor_winner
from impostor_bench.solvers.game_store import BALLOTS_KEY, SEATS_KEY, load_seats
from impostor_bench.solvers.game import shown_descriptions
from impostor_bench.core.schedule import GameSpec
from impostor_bench.tasks.impostor import impostor
from . import scripted

MODEL = "store"


def _play(tmp_path, script, n_games=4):
    scripted.SCRIPTS[MODEL] = script
    [log] = inspect_eval(impostor(n_games=n_games, tie_rule="default"), model=f"reliability/{MODEL}",
                         log_dir=str(tmp_path), display="none", fail_on_error=False)
    return log


def test_finished_game_store_matches_scored_record(tmp_path):
    log = _play(tmp_path, scripted.honest)
    assert log.status == "success"
    for sample in log.samples:
        assert isinstance(sample.store[SEATS_KEY], str)  # one JSON value, not a nested patch target
        assert isinstance(sample.store[BALLOTS_KEY], str)
        seats = load_seats(sample.store)
        players = sample.scores["impostor_winner"].metadata["players"]
        assert [s.vote for s in seats] == [p["vote"] for p in players]
        assert [s.description for s in seats] == [p["description"] for p in players]
        assert [s.vote_raw[-1] for s in seats] == [p["vote_raw"] for p in players]
        shown = shown_descriptions(GameSpec.from_metadata(sample.metadata), seats)
        order = sample.scores["impostor_winner"].metadata["game"]["speaking_order"]
        assert [label for label, _ in shown] == [int(seat) + 1 for seat in order]


def test_errored_game_keeps_its_partial_record(tmp_path):
    def fails_to_vote(call):
        if call.phase == "vote" and call.label == 3:
            raise RuntimeError("provider exploded at seat 3's ballot")
        return scripted.honest(call)

    log = _play(tmp_path, fails_to_vote, n_games=1)
    [sample] = log.samples
    assert sample.error is not None and "exploded" in sample.error.message
    assert not sample.scores  # never half-scored
    seats = load_seats(sample.store)  # what the game had when it failed survived the error
    assert all(s.description_valid and s.description for s in seats)
    assert seats[2].vote is None and seats[2].vote_raw == []  # Player 3's ballot never came
    assert all(s.vote_raw for s in seats if s.vote is not None)  # ballots that did come are kept
    assert BALLOTS_KEY in sample.store  # stored by the failing phase itself


def test_inspect_score_rescores_a_log_from_the_store(tmp_path):
    log = _play(tmp_path, lambda call: scripted.honest(call, impostor_label=None), n_games=8)
    before = [s.scores["impostor_winner"].metadata["game"] for s in log.samples]
    rescored = inspect_score(log, scorers=[impostor_winner(tie_rule="sym_side")], display="none", action="overwrite")
    after = [s.scores["impostor_winner"].metadata["game"] for s in rescored.samples]
    assert [a["winner"] for a in after] == [b["winner"] for b in before]  # rules unchanged
    assert [a["p_imp_sym_side"] for a in after] == [b["p_imp_sym_side"] for b in before]
    assert {a["tie_rule"] for a in after} == {"sym_side"}
    assert any(a["win_condition"] == "tie" for a in after)  # the honest ring votes 1->2->3->4->1: a 4-way tie


@pytest.mark.parametrize("stored", [
    [{"vote": 2, "description": "x"}],  # logs written before the records were JSON strings
    json.dumps([{"vote": 2, "description": "x"}]),
])
def test_load_seats_reads_both_forms(stored):
    [seat] = load_seats({SEATS_KEY: stored})
    assert (seat.vote, seat.description) == (2, "x")
    assert seat.ballot_class is None  # an old record without the class: the scorer derives it


def test_ballots_join_their_seats():
    seats = json.dumps([{"vote": None, "description": "x"}, {"vote": None, "description": "y"}])
    ballots = json.dumps([{"vote": 1}, {"vote": 0}])
    assert [(r.vote, r.description) for r in load_seats({SEATS_KEY: seats, BALLOTS_KEY: ballots})] == [
        (1, "x"), (0, "y")]


def test_seat_record_round_trips_and_ignores_unknown_keys():
    from impostor_bench.core.seat import SeatRecord

    rec = SeatRecord(model="bot/random", description_raw=["a", "b"], vote=3, ballot_class="valid")
    assert SeatRecord.from_dict(rec.to_dict()) == rec
    assert SeatRecord.from_dict({**rec.to_dict(), "from_a_newer_version": 1}) == rec


def test_seat_record_dict_is_asdicts_in_order_with_its_own_lists():
    """to_dict skips asdict's recursive copy: the same keys in the same order (the stored JSON
    is byte for byte the same) and lists the record does not share."""
    from dataclasses import asdict

    from impostor_bench.core.seat import SeatRecord

    rec = SeatRecord(model="m", temperature=0.7, description_raw=["a"], vote_raw=["{}", "{"], vote=1, confidence=0.5,
                     word_guess="w", input_tokens=3, vote_output_tokens=4)
    d = rec.to_dict()
    assert list(d.items()) == list(asdict(rec).items())
    assert json.dumps(d) == json.dumps(asdict(rec))
    d["description_raw"].append("changed")
    assert rec.description_raw == ["a"]


def test_load_before_any_phase():
    assert load_seats({}) is None


def test_no_phase_replaces_another_phases_value(tmp_path):
    """A replaced store value is logged with a copy of the old one: each phase adds its own key."""
    log = _play(tmp_path, scripted.honest, n_games=1)
    ops = [(c.op, c.path) for e in log.samples[0].events if e.event == "store" for c in e.changes]
    assert ops and all(op == "add" for op, _ in ops), ops



def test_one_solver_step_per_game(tmp_path):
    """Both phases run in one solver step (one state snapshot pair and one store event per game)."""
    log = _play(tmp_path, scripted.honest, n_games=1)
    [sample] = log.samples
    steps = [e.name for e in sample.events if e.event == "span_begin" and e.type == "solver"]
    assert steps == ["impostor_game"]
    assert sum(1 for e in sample.events if e.event == "state") == 1
    assert [m.text.count("\n") for m in sample.messages if m.role == "assistant"] == [3, 3]  # two phases, 4 lines each


def _played_seats():
    from impostor_bench.core.seat import SeatRecord

    return [SeatRecord(model="m", temperature=0.7, description=f"d{s}", description_raw=[f"d{s}"], description_valid=True,
                       input_tokens=5, vote_raw=[f"v{s}"], vote=(s + 1) % 4, confidence=0.25, reasoning="r",
                       ballot_class="valid", vote_temperature=0.3, vote_output_tokens=2) for s in range(4)]


def _decoded(store):
    """What load_seats reads from the store's JSON alone (a fresh Store holding the same data)."""
    from inspect_ai.util import Store

    return load_seats(Store({k: json.loads(json.dumps(v)) for k, v in store.items()}))


def test_saved_records_load_as_their_json_reads():
    """load_seats reads exactly what the stored JSON holds, after each phase, and hands out
    records no later load shares."""
    from inspect_ai.util import Store

    from impostor_bench.solvers.game_store import save_ballots, save_seats

    store, seats = Store(), _played_seats()
    described = copy.deepcopy(seats)
    for s in described:
        s.vote_raw, s.vote, s.ballot_class = [], None, "missing"
    save_seats(store, described)
    assert load_seats(store) == _decoded(store) == described
    voted = load_seats(store)
    for v, s in zip(voted, seats):
        v.vote_raw.append(s.vote_raw[0])
        v.vote, v.confidence, v.reasoning, v.ballot_class = s.vote, s.confidence, s.reasoning, s.ballot_class
        v.vote_temperature, v.vote_output_tokens = s.vote_temperature, s.vote_output_tokens
    save_ballots(store, voted)
    first = load_seats(store)
    assert first == _decoded(store) == seats
    first[0].vote_raw.append("changed")
    first[1].description = "changed"
    assert load_seats(store) == seats


def test_a_store_holding_other_strings_is_decoded():
    """A store whose values are not the strings saved (replaced, or another store with equal
    data) reads its JSON."""
    from inspect_ai.util import Store

    from impostor_bench.solvers.game_store import save_ballots, save_seats

    store, seats = Store(), _played_seats()
    save_seats(store, seats)
    save_ballots(store, seats)
    other = json.loads(store.get(SEATS_KEY))
    other[0]["description"] = "edited"
    store.set(SEATS_KEY, json.dumps(other, ensure_ascii=False))
    assert load_seats(store)[0].description == "edited"
    assert load_seats(store) == _decoded(store)
