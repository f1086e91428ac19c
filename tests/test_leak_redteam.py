"""The leak rule against the second outside red team's forms (issue 30) and new ones.

Every form below spells "cat" (or an inflection of it) in a way a reader reads as the
word; before issue 30 each of the ``LOOK_ALIKE`` and ``PUNCTUATION`` forms passed as a
valid description.  ``ALREADY_CAUGHT`` are the red team's forms that were caught before
(kept so that the one normalisation order keeps catching them), ``NEW`` are ours.
``NOT_LEAKS`` pin the plain-text rule that must not move (docs/rules.md, "Descriptions").
"""

from __future__ import annotations

import pytest

from impostor_bench.core.parsing import description_error_class, description_violation, find_word_leak

# The red team's look-alike forms that passed (11).
LOOK_ALIKE = [
    ("\uabaf\uab7a\uab72", "Cherokee small letters"),
    ("\u1d04\u1d00\u1d1b", "small capitals"),
    ("\u03f2at", "Greek lunate sigma (its NFKD form, sigma, hides the skeleton c)"),
    ("\u249e\u249c\u24af", "parenthesized letters"),
    ("\U0001f172\U0001f170\U0001f183", "negative squared letters"),
    ("\U0001f152\U0001f150\U0001f163", "negative circled letters"),
    ("\U0001f1e8\U0001f1e6\U0001f1f9", "regional indicators"),
    ("\u023c\u023a\u023e", "stroked letters"),
    ("c\uff0ca\uff0ct", "fullwidth commas between letters"),
    ("\uff43\uff01\uff41\uff01\uff54", "fullwidth letters and exclamation marks"),
    ("c\u3001a\u3001t", "ideographic commas between letters"),
]
# The red team's forms with ASCII punctuation between single letters that passed (10).
PUNCTUATION = [
    ("(c)(a)(t)", "parenthesized"),
    ("c!a!t", "exclamation marks"),
    ('"c" "a" "t"', "quoted letters"),
    ("c<b></b>a<b></b>t", "empty markup tags"),
    ("[c][a][t]", "brackets"),
    ("{c}{a}{t}", "braces"),
    ("c=a=t", "equals signs"),
    ("c#a#t", "hashes"),
    ("c^a^t", "carets"),
    ("c&a&t", "ampersands"),
]
# The red team's forms the rule already caught (15): the new order must keep them.
ALREADY_CAUGHT = [
    ("c-a-t", "hyphens"), ("C A T", "spaces"), ("c.a.t", "dots"), ("c*a*t", "asterisks"), ("c_a_t", "underscores"),
    ("c/a/t", "slashes"), ("c|a|t", "bars"), ("c~a~t", "tildes"), ("c+a+t", "pluses"), ("c:a:t", "colons"),
    ("\uff43\uff41\uff54", "fullwidth letters"), ("\u0441\u0430t", "Cyrillic es, a"),
    ("\U0001d41c\U0001d41a\U0001d42d", "mathematical bold"), ("c\u034fat", "grapheme joiner"),
    ("c\u200bat", "zero-width space"),
]
# Ours.
NEW = [
    ("\u13df\u13aa\u13a2", "Cherokee capitals"),
    ("\u24d2\u24d0\u24e3", "circled small letters"),
    ("\U0001f132\U0001f130\U0001f143", "squared capitals"),
    ("\u1d04-\u1d00-\u1d1b", "small capitals spelled out"),
    ("\u1d04\u1d00\u1d1bs", "small capitals, plural"),
    ("c<i>a</i>t", "a letter in markup"),
    ("c\u2192a\u2192t", "arrows between letters"),
    ("c\U0001f600a\U0001f600t", "emoji between letters"),
    ("c?a?t", "question marks"),
    ("c@a@t", "at signs"),
    ("c%a%t", "percent signs"),
    ("c\\a\\t", "backslashes"),
    ("c`a`t", "backticks"),
    ("c . a . t", "dots with spaces"),
    ("c<>a<>t", "empty angle brackets"),
    ("\U0001f1e8-\U0001f1e6-\U0001f1f9", "regional indicators, spelled out"),
    ("\u0188\u0251\u01ad", "Latin letters with hooks and the alpha"),
]
FORMS = LOOK_ALIKE + PUNCTUATION + ALREADY_CAUGHT + NEW


def test_the_red_team_forms_are_all_here():
    assert len(LOOK_ALIKE) == 11 and len(PUNCTUATION) == 10 and len(LOOK_ALIKE + PUNCTUATION + ALREADY_CAUGHT) == 36
    assert len(NEW) >= 15


@pytest.mark.parametrize("form, what", FORMS, ids=[f[1] for f in FORMS])
def test_every_form_is_a_leak(form: str, what: str):
    text = f"My pet is a {form} that purrs."
    assert find_word_leak(text, "cat") is not None, what
    assert description_error_class(description_violation(text, "cat")) == "leak", what


# Not leaks: the word inside a longer word, letters that do not stand alone, other words.
NOT_LEAKS = [
    "a category of pets", "scatter the seeds", "a c a tree", "the c-section at ten", "c4t", "ca t", "c at",
    "concatenate", "vacation", "ACT now", "tac toe", "c, a tree", "\u1d04\u1d00\u1d1bch a ball",
    "\U0001f1e8\U0001f1e6 flag", "c<b>at</b>", "ice cream (c) and tea",
]


@pytest.mark.parametrize("text", NOT_LEAKS)
def test_not_a_leak(text: str):
    assert find_word_leak(text, "cat") is None, text


def test_irregular_inflections_and_derivations_are_not_the_word():
    """The documented policy (docs/rules.md, "Inflections"): regular inflections are the
    word, irregular forms and derivations are other words."""
    assert find_word_leak("two mice", "mouse") is None
    assert find_word_leak("he ran home", "run") is None
    assert find_word_leak("pure happiness", "happy") is None
    assert find_word_leak("three cats", "cat") == "cats"
    assert find_word_leak("she was running", "run") == "running"
    assert find_word_leak("the happiest", "happy") is None
