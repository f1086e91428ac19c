"""A game reads in ``inspect view``'s samples list and Scores tab: who the impostor was, the
words, every player's description and ballot, and the rule that decided the game."""

import re

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

from impostor_bench.core.rules import Ballot, decide_played_round
from impostor_bench.core.schedule import GameSpec, PairRef
from impostor_bench.core.seat import SeatRecord
from impostor_bench.core.summary import ANSWER_MAX_CHARS, answer_line, explanation
from impostor_bench.scorers.winner import build_record

IMP = 2  # the impostor's seat: "Player 3"


def game(votes, *, declared=None, guess=None, tie_rule="default", descriptions=None, model="bot/x"):
    """A finished game from ballots (seat -> voted seat or None), through the scorer's own record."""
    spec = GameSpec(game_index=0, sample_id="g0", game_seed=7, mode="homogeneous", difficulty="easy",
                    pair=PairRef("easy-001", "tiger", "lion"), impostor_seat=IMP, speaking_order=(1, 0, 3, 2),
                    team_assignment=None)
    seats = []
    for seat, vote in enumerate(votes):
        self_vote = vote == seat
        seats.append(SeatRecord(
            model=model, description=(descriptions or {}).get(seat, f"clue of seat {seat}"), description_valid=True,
            vote=None if self_vote else vote, ballot_class="self_vote" if self_vote else (
                "valid" if vote is not None else "unparseable"),
            self_declared=seat == declared, word_guess=guess if seat == declared else None,
            reasoning=f"reason {seat}", vote_raw=["{}"], description_raw=["x"]))
    ballots = {seat: Ballot(s.vote, bool(s.self_declared), s.word_guess) for seat, s in enumerate(seats)}
    decision = decide_played_round(ballots, range(4), IMP, "tiger", round_no=1, max_rounds=1, tie_rule=tie_rule,
                                   game_seed=spec.game_seed)
    return build_record(spec, seats, [decision], experiment_id="e", seed=0, tie_rule=tie_rule)


def table_rows(text):
    return [line for line in text.splitlines() if line.startswith("| **")]


CASES = {  # win condition -> (ballots, extra, the winner, words the rule text must hold)
    "conviction": ([2, 2, 0, 2], {}, "majority", ["3 majority players voted for Player 3"]),
    "no_conviction": ([1, 0, 0, 2], {}, "impostor", ["Player 3 got 1 majority vote ", "no conviction"]),
    "tie": ([1, 0, 0, 1], {}, "impostor", ["tie between Player 1, Player 2", "2 votes each"]),
    "majority_self_declared": ([2, 2, 0, 2], {"declared": 0, "guess": "lion"}, "majority",
                               ["Player 1 (majority) self-declared"]),
    "impostor_guess_correct": ([2, 2, 0, 2], {"declared": IMP, "guess": "Tigers"}, "impostor",
                               ["guessed “Tigers”, the majority word “tiger”"]),
    "impostor_guess_wrong": ([2, 2, 0, 2], {"declared": IMP, "guess": "cat"}, "majority",
                             ["guessed “cat”, not the majority word “tiger”"]),
}


@pytest.mark.parametrize("condition", list(CASES))
def test_each_rule_is_named_with_its_facts(condition):
    votes, extra, winner, facts = CASES[condition]
    g, players = game(votes, **extra)
    assert g.win_condition == condition and g.winner_live == winner
    line = answer_line(g, players)
    assert line.startswith(f"{winner.capitalize()} wins ({condition.replace('_', ' ')})")
    assert "impostor Player 3, bot/x" in line
    # every ballot, as player numbers 1-4 (a legal self-vote or invalid ballot as "–")
    want = " ".join(f"P{s + 1}→{f'P{v + 1}' if v is not None and v != s else '–'}" for s, v in enumerate(votes))
    assert f"votes {want}" in line
    if extra.get("declared") is not None:
        assert f"Player {extra['declared'] + 1} self-declared, guessed “{extra['guess']}”" in line
    text = explanation(g, players)
    assert text.startswith(f"**The {winner} wins**")
    for fact in facts:
        assert fact in text
    assert "Impostor: **Player 3** (bot/x) with “lion”; majority word “tiger”" in text
    rows = table_rows(text)
    assert [int(re.match(r"\| \*\*(\d)", r).group(1)) for r in rows] == [2, 1, 4, 3]  # speaking order, 1-based
    for p, row in zip(sorted(players, key=lambda r: r.speaking_position), rows):
        assert p.description in row and p.word in row and f"{p.role}, bot/x" in row and p.reasoning in row


def test_live_tie_rule_and_odd_ballots_are_spelled_out():
    g, players = game([1, 1, 0, None], tie_rule="sym_candidate")  # seat 1 votes itself, seat 3 unreadable
    assert g.win_condition == "tie"
    line = answer_line(g, players)
    assert f"({'tie'}, sym_candidate rule)" in line and line.startswith(f"{g.winner_live.capitalize()} wins")
    text = explanation(g, players)
    assert f"under the sym_candidate rule this game was played with, the {g.winner_live} wins" in text
    assert "votes for itself" in text and "invalid ballot (unparseable)" in text


def test_table_survives_pipes_and_long_answers():
    g, players = game([2, 2, 0, 2], descriptions={0: "a | b\nc"}, model="openrouter/" + "x" * 300)
    rows = table_rows(explanation(g, players))
    assert all(len(re.findall(r"(?<!\\)\|", r)) == 7 for r in rows)  # 6 cells, pipes inside escaped
    assert "a \\| b c" in explanation(g, players)
    assert len(answer_line(g, players)) <= ANSWER_MAX_CHARS


def test_inspect_view_fields_of_a_real_eval(tmp_path):
    """What the log viewer reads: the samples list (sample summaries: input, score answer),
    the Scores tab (explanation) and the task's samples-list columns."""
    from impostor_bench.tasks.impostor import impostor

    [log] = inspect_eval(impostor(n_games=4, mode="cross_play"), model="bot/embedding",
                         model_roles={"impostor": "bot/random"}, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    full = read_eval_log(log.location)
    summaries = {s.id: s for s in read_eval_log_sample_summaries(log.location)}
    assert len(summaries) == 4
    for sample in full.samples:
        md = sample.scores["impostor_winner"].metadata
        g, players = md["game"], md["players"]
        summary = summaries[sample.id]
        imp = f"Player {g['impostor_seat'] + 1}"
        # the input (built before the game) has the words; the seat is the experiment's own draw,
        # named by the answer once the game is played (issue 26)
        assert f"majority “{g['majority_word']}”, impostor “{g['impostor_word']}”" in summary.input
        answer = summary.scores["impostor_winner"].answer
        assert answer.startswith(f"{g['winner_live'].capitalize()} wins ({g['win_condition'].replace('_', ' ')}")
        assert f"impostor {imp}, bot/random" in answer
        text = summary.scores["impostor_winner"].explanation  # thinned like the viewer gets it: still whole
        for p in players:
            assert p["description"] in text and p["word"] in text
    view = full.eval.viewer.task_samples_view
    shown = [c.id for c in view.columns if c.visible]
    assert shown[:4] == ["sampleStatus", "sampleId", "input", "answer"]
    assert "score__impostor_winner__impostor_winner" in shown and "target" not in shown


@pytest.mark.parametrize("condition", sorted(CASES))
def test_row_dicts_are_the_rows_dumps(condition):
    """The scorer's metadata reads the rows' fields (``row_dict``): what ``model_dump`` gives, in order,
    less the newer columns (``records.NEWER``) at their defaults, which validating the record fills back in."""
    from impostor_bench.core.records import row_dict

    def newer(row):
        return {k for k, f in type(row).model_fields.items() if (f.json_schema_extra or {}).get("omit_default")}

    votes, extra, _, _ = CASES[condition]
    g, players = game(votes, tie_rule="sym_side", **extra)
    assert {"length_budget", "truncate_to"} <= newer(g) and {"top_p", "description_full"} <= newer(players[0])
    for row in [g, *players]:
        assert list(row_dict(row).items()) == [(k, v) for k, v in row.model_dump().items() if k not in newer(row)]
        assert type(row).model_validate(row_dict(row)) == row
    rich = players[0].model_copy(update={"team": "A", "confidence": 0.25, "cost_usd": 0.5, "eliminated_round": 2,
                                         "top_p": 0.9, "description_full": "a long thing"})
    assert list(row_dict(rich).items()) == [(k, v) for k, v in rich.model_dump().items()
                                            if k not in newer(rich) or k in ("top_p", "description_full")]
