"""Length and decoding ablations: the length budget, the verbosity-matched cut, top_p and the
experiment identity they give (docs/rules.md, "Length and decoding")."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from impostor_bench.core.descriptions import description_violation
from impostor_bench.core.experiment import ablations_of, experiment_id, with_ablations
from impostor_bench.core.glyphs import visible_length
from impostor_bench.core.options import GameOptions, task_option_message
from impostor_bench.core.verbosity import description_limit, truncated


def test_budget_tightens_the_750_rule_counted_the_same_way():
    assert description_limit(None) == 750 and description_limit(120) == 120 and description_limit(900) == 750
    flag = "\U0001F1EB\U0001F1F7"  # one grapheme cluster, two code points
    text = flag * 10 + "   \n " + "a" * 9  # 10 flags, one space (a whitespace run), 9 letters = 20 characters
    assert visible_length(text) == 20
    assert description_violation(text, "cat", description_limit(20)) is None
    broken = description_violation(text + "b", "cat", description_limit(20))
    assert broken is not None and broken.kind == "too_long" and broken.message.endswith("the limit is 20")


@pytest.mark.parametrize("value, fix", [(0, "use 1 to 750 characters"), (751, "use 1 to 750 characters"),
                                        ("abc", "it must be a whole number")])
def test_bad_budget_is_one_line_with_a_fix(value, fix):
    with pytest.raises(ValidationError) as exc:
        GameOptions(length_budget=value)
    msg = task_option_message(GameOptions, exc.value.errors()[0])
    assert msg.startswith("-T length_budget=") and fix in msg and "\n" not in msg


@pytest.mark.parametrize("value", [0, 1.5, -0.1, "x", float("nan")])
def test_bad_top_p_is_refused(value):
    with pytest.raises(ValidationError) as exc:
        GameOptions(top_p=value)
    assert "\n" not in task_option_message(GameOptions, exc.value.errors()[0])


def test_truncation_keeps_whole_words_and_counts_graphemes():
    assert truncated("a fluffy pet that purrs", 8) == "a fluffy"
    assert truncated("a fluffy pet", 12) == "a fluffy pet"  # fits: unchanged
    assert truncated("a fluffy pet", 11) == "a fluffy"  # "pet" would not fit whole
    assert truncated("supercalifragilistic", 5) == "super"  # one word longer than the limit: cut in it
    cut = truncated("\U0001F1EB\U0001F1F7 drapeau   bleu blanc", 9)
    assert cut == "\U0001F1EB\U0001F1F7 drapeau" and visible_length(cut) == 9
    assert truncated("line one\n\nline   two", 100) == "line one line two"  # as the others see it


def test_identity_unchanged_by_default_and_distinct_per_setting():
    base = experiment_id("homogeneous", "easy", {"all": "bot/random"}, 0)
    assert with_ablations(base, **ablations_of(GameOptions().model_dump())) == base == "homogeneous|easy|bot/random|s0"
    ids = {with_ablations(base, **ablations_of(GameOptions(**kw).model_dump())) for kw in (
        {}, {"temperature": 0.3}, {"temperature": 1.0}, {"top_p": 0.9}, {"temperature": 0.3, "top_p": 0.9},
        {"length_budget": 200}, {"truncate_to": 200})}
    assert len(ids) == 7
    assert with_ablations(base, temperature=0.3, top_p=0.9, length_budget=200) == f"{base}|T0.3|P0.9|L200"
