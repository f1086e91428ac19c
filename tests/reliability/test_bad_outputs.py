"""Every bad output of the corpus ends in a recorded game with the documented handling."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from inspect_ai.log import read_eval_log

from impostor_bench.core.parsing import parse_vote
from impostor_bench.core.records import BALLOT_CLASSES, INVALID_BALLOT_CLASSES, PlayerRow

from .bad_outputs import CASES, Case, Ctx, Re
from .corpus_game import play_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("corpus")
    log, games = play_corpus(tmp)
    assert log.status == "success", log.error
    # Read back from disk: the recorded game is what counts, not the in-memory object.
    log = read_eval_log(log.location)
    by_case = {}
    for sample in log.samples or []:
        game = games[str(sample.id)]
        assert sample.error is None, (game.case.id, sample.error)
        by_case[game.case.id] = (game, sample.scores["impostor_winner"].metadata)
    return log, by_case


def test_corpus_size():
    phases = {p: sum(c.phase == p for c in CASES) for p in ("describe", "vote")}
    assert len(CASES) >= 50 and min(phases.values()) >= 25, phases


@pytest.mark.slow
def test_every_case_recorded(corpus):
    log, by_case = corpus
    assert sorted(by_case) == sorted(c.id for c in CASES)
    assert len(log.samples) == len(CASES)


def _expected(value: Any, ctx: Ctx) -> Any:
    return value(ctx) if callable(value) and not isinstance(value, Re) else value


def _check(field: str, got: Any, want: Any, ctx: Ctx, case: Case) -> None:
    want = _expected(want, ctx)
    where = f"{case.id}: seat {ctx.target} field {field}"
    if isinstance(want, Re):
        assert isinstance(got, str) and re.search(want.pattern, got), f"{where}: {got!r} !~ {want.pattern!r}"
    elif isinstance(want, float):
        assert got is not None and math.isclose(got, want), f"{where}: {got!r} != {want!r}"
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_handling(corpus, case: Case):
    _, by_case = corpus
    game, md = by_case[case.id]
    row, players = md["game"], md["players"]
    base = game.ctx_base
    targets = range(1, 5) if case.target == "all" else [base["target"]]
    for label in targets:
        ctx = Ctx(own=label, word="", **(base | {"target": label}))
        player = players[label - 1]
        for field, want in case.expect.items():
            _check(field, player[field], want, ctx, case)
    # The untouched seats played a clean game.
    for player in players:
        if case.target == "all" or player["seat"] + 1 == base["target"]:
            continue
        assert player["description_valid"] and player["description_attempts"] == 1, (case.id, player)
        assert player["ballot_valid"] and player["ballot_attempts"] == 1, (case.id, player)
    assert row["win_condition"] == case.win_condition, (case.id, row["win_condition"])
    assert row["n_invalid_ballots"] == sum(p["ballot_class"] in INVALID_BALLOT_CLASSES for p in players)
    assert row["n_invalid_ballots"] == sum(not p["ballot_valid"] for p in players)
    assert row["n_invalid_descriptions"] == sum(not p["description_valid"] for p in players)


def test_others_see_placeholder_not_raw(corpus):
    """The transcript (what later players are shown) never holds an invalid description's text."""
    log, by_case = corpus
    samples = {s.scores["impostor_winner"].metadata["game"]["game_id"]: s for s in log.samples}
    for _, md in by_case.values():
        sample = samples[md["game"]["game_id"]]
        shown = "\n".join(m.text for m in sample.messages if m.role == "assistant")
        for p in md["players"]:
            if not p["description_valid"] and p["description_raw"].strip():
                assert p["description_raw"].strip() not in shown
                assert f"(speaks {p['speaking_position'] + 1}): [no valid description]" in shown


def test_invalid_rates_in_metrics(corpus):
    """The task metrics count exactly the invalid ballots/descriptions the corpus implies."""
    log, by_case = corpus
    n_games = len(by_case)
    expect_ballots = expect_desc = 0
    for case in CASES:
        seats = 4 if case.target == "all" else 1
        if case.phase == "vote" and case.expect.get("ballot_valid") is False:
            expect_ballots += seats
        if case.phase == "describe" and case.expect.get("description_valid") is False:
            expect_desc += seats
    metrics = log.results.scores[0].metrics
    assert metrics["invalid_ballot_rate"].value == pytest.approx(expect_ballots / (4 * n_games))
    classes = [p["ballot_class"] for _, md in by_case.values() for p in md["players"]]
    for cls in BALLOT_CLASSES:
        assert metrics[f"ballot_class_rate/{cls}"].value == pytest.approx(classes.count(cls) / (4 * n_games)), cls
    assert metrics["invalid_description_rate"].value == pytest.approx(expect_desc / (4 * n_games))
    # ... and per model they are in the player rows (one model here).
    models = {p["model"] for _, md in by_case.values() for p in md["players"]}
    assert models == {"reliability/corpus"}


@pytest.mark.parametrize("text", ["\uff43\uff41\uff4e\uff44\uff4c\uff45", "can\u200bdle", "can\u00addle", "c\u200da\u2060ndle"])
def test_leak_check_sees_through_unicode_disguises(text):
    from impostor_bench.core.parsing import find_word_leak

    assert find_word_leak(f"A {text} on the table.", "candle") is not None


# Disguises of a player's own word: look-alike letters of several scripts and invisible
# characters between the letters (every one must be rejected by the leak rule).
_LOOKALIKE = {"a": "\u0430", "c": "\u0441", "e": "\u0435", "i": "\u0456", "j": "\u0458", "o": "\u043e",
              "p": "\u0440", "s": "\u0455", "x": "\u0445", "y": "\u0443", "h": "\u0570", "n": "\u0578",
              "u": "\u057d", "g": "\u0581", "q": "\u0566", "v": "\u03bd"}  # Cyrillic, Armenian, Greek
DISGUISES = {
    "lookalike": lambda w: "".join(_LOOKALIKE.get(ch, ch) for ch in w),
    "math_bold": lambda w: "".join(chr(0x1D41A + ord(ch) - ord("a")) for ch in w),
    "fullwidth": lambda w: "".join(chr(0xFF41 + ord(ch) - ord("a")) for ch in w),
    "grapheme_joiner": lambda w: "\u034f".join(w),
    "zero_width_space": lambda w: "\u200b".join(w),
    "variation_selector": lambda w: "\ufe0f".join(w),
    "hangul_filler": lambda w: w[:1] + "\u3164" + w[1:],
    "spelled_bullets": lambda w: "\u2022".join(w),
}


def test_disguised_words_are_rejected_through_inspect_eval(tmp_path):
    """A scripted player that spells its word with look-alike letters or invisible
    characters has every description rejected in games played by ``inspect eval``, and
    no player is ever shown the disguised text."""
    from inspect_ai import eval as inspect_eval

    from impostor_bench.core.parsing import description_error_class
    from impostor_bench.core.prompts import INVALID_DESCRIPTION_PLACEHOLDER as PLACEHOLDER
    from impostor_bench.tasks.impostor import impostor

    from . import scripted

    kinds = list(DISGUISES)
    sent: list[str] = []
    played: list[str] = []
    prompts: list[str] = []

    def disguiser(call: scripted.Call) -> str:
        prompts.append(call.user)  # the first user prompt: what others said, never the own text
        if call.phase == "vote":
            return scripted.honest(call)
        kind = kinds[len(sent) % len(kinds)]
        played.append(kind)
        sent.append(DISGUISES[kind](call.word))
        return f"Think of a {sent[-1]} right here."

    scripted.SCRIPTS["disguiser"] = disguiser
    log = inspect_eval(impostor(mode="homogeneous", n_games=4), model="reliability/disguiser",
                       log_dir=str(tmp_path / "logs"), display="none", log_level="error")[0]
    assert log.status == "success", log.error
    log = read_eval_log(log.location)
    players = [p for s in log.samples for p in s.scores["impostor_winner"].metadata["players"]]
    assert len(players) == 16 and len(sent) == 32  # every seat asked twice
    for p in players:
        assert (p["description_valid"], p["description_attempts"]) == (False, 2), p
        assert description_error_class(p["description_error"]) == "leak", p["description_error"]
        assert p["description"] == PLACEHOLDER
    # Every disguise was played, and none reached another player's prompt.
    assert set(played) == set(kinds)
    shown = "\n".join(prompts)
    assert not [text for text in sent if text in shown]
    assert shown.count(PLACEHOLDER) > 0
    metrics = log.results.scores[0].metrics
    assert metrics["invalid_description_rate"].value == 1.0


def test_store_holds_only_the_game(corpus):
    """The sample store holds the game (impostor:*) and nothing stray (no SeatRecord:* copies)."""
    log, _ = corpus
    for sample in log.samples:
        assert set(sample.store) == {"impostor:seats", "impostor:ballots", "impostor:decisions"}, sorted(sample.store)


def test_invalid_rates_per_model_in_metrics(tmp_path):
    """Cross-play: the impostor's model answers nothing usable, the majority's model plays well.
    The task metrics carry the invalid ballot/description rates of each model, not only the mix."""
    from inspect_ai import eval as inspect_eval

    from impostor_bench.tasks.impostor import impostor

    from . import scripted

    scripted.SCRIPTS["silent"] = lambda call: ""
    scripted.SCRIPTS["steady"] = lambda call: scripted.honest(call)
    log = inspect_eval(impostor(mode="cross_play", n_games=4), model="reliability/steady",
                       model_roles={"impostor": "reliability/silent", "majority": "reliability/steady"},
                       log_dir=str(tmp_path / "logs"), display="none", log_level="error")[0]
    assert log.status == "success", log.error
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert metrics["invalid_ballot_rate"] == pytest.approx(0.25)
    assert metrics["invalid_description_rate"] == pytest.approx(0.25)
    assert metrics["invalid_ballot_rate/reliability/silent"] == 1.0
    assert metrics["invalid_ballot_rate/reliability/steady"] == 0.0
    assert metrics["invalid_description_rate/reliability/silent"] == 1.0
    assert metrics["invalid_description_rate/reliability/steady"] == 0.0


def test_every_ballot_class_from_a_real_game(corpus):
    """Each ballot class is produced by a game played through the task, and a
    self-declaring impostor who names itself casts a legal ballot, not an invalid one."""
    _, by_case = corpus
    seen = {p["ballot_class"] for _, md in by_case.values() for p in md["players"]}
    assert seen == set(BALLOT_CLASSES)
    _, md = by_case["v_impostor_declares_votes_self"]
    imp = md["players"][md["game"]["impostor_seat"]]
    assert (imp["ballot_class"], imp["ballot_valid"], imp["self_declared"], imp["vote"]) == ("self_vote", True, True, None)
    assert md["game"]["n_invalid_ballots"] == 0 and md["game"]["winner"] == "impostor"


def test_older_records_derive_the_same_class(corpus):
    """A record written before ``ballot_class`` existed (no class, ``ballot_valid`` meaning
    "has a counted vote") gets the class the live game gave, from its other fields."""
    _, by_case = corpus
    n = 0
    for _, md in by_case.values():
        for p in md["players"]:
            old = {k: v for k, v in p.items() if k != "ballot_class"} | {"ballot_valid": p["vote"] is not None}
            row = PlayerRow.model_validate(old)
            assert (row.ballot_class, row.ballot_valid) == (p["ballot_class"], p["ballot_valid"]), p
            n += 1
    assert n == 4 * len(by_case)


@pytest.mark.parametrize("case", [c for c in CASES if c.phase == "vote"], ids=lambda c: c.id)
def test_parse_vote_class_matches_its_error_text(case: Case):
    """The class parse_vote gives equals the one derived from its error text alone, for
    every ballot of the corpus (so exports without the column are classified alike)."""
    from impostor_bench.core.records import derive_ballot_class

    ctx = Ctx(own=2, imp=2, target=2, other=1, word="w", majority="apple", impostor="pear")
    for r in case.responses:
        text = r(ctx) if callable(r) else r
        v = parse_vote(text, own_seat=1)
        assert derive_ballot_class(v.vote, 1, v.error, v.self_declared, v.vote is not None, 1) == v.ballot_class
