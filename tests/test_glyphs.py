"""The word-leak rule as a reader sees the text: look-alike letters, invisible
characters and spelled-out words cannot evade it, and plain text keeps its rule.

Each evasion has its verdict (the leaked text as typed, or None) stated and tested;
docs/rules.md, "Descriptions", documents the same decisions.
"""

from __future__ import annotations

import pytest

from impostor_bench.core.glyphs import confusable_readings, has_visible_character, read_char, visible_length, visible_text
from impostor_bench.core.parsing import description_error_class, description_violation, find_word_leak, one_line

CGJ, ZWSP, ZWJ, VS16, HANGUL_FILLER = "\u034f", "\u200b", "\u200d", "\ufe0f", "\u3164"

# (description, word, the leak as typed or None, what it tries)
EVASIONS = [
    # homoglyphs from several scripts (Unicode confusables, UTS #39)
    ("My word is w\u0430ll\u0435t", "wallet", "w\u0430ll\u0435t", "Cyrillic a, e"),
    ("W\u0410LL\u0415T", "wallet", "W\u0410LL\u0415T", "Cyrillic capitals"),
    ("\u0455\u0430ndw\u0456\u0441h for lunch", "sandwich", "\u0455\u0430ndw\u0456\u0441h", "Cyrillic s, a, i, c"),
    ("An \u0391\u03a1\u03a1L\u0395 a day", "apple", "\u0391\u03a1\u03a1L\u0395", "Greek capitals"),
    ("a r\u03bf\u03c1e bridge", "rope", "r\u03bf\u03c1e", "Greek omicron, rho"),
    ("SH\u0399P ahoy", "ship", "SH\u0399P", "Greek capital iota read as I"),
    ("s\u0399lk scarf", "silk", "s\u0399lk", "Greek capital iota where a lowercase i stands"),
    ("\u0570\u0585me sweet", "home", "\u0570\u0585me", "Armenian ho, oh"),
    ("a t\u0585\u0578e", "tone", "t\u0585\u0578e", "Armenian oh, vo"),
    ("\U0001d42c\U0001d41a\U0001d427\U0001d41d\U0001d430\U0001d422\U0001d41c\U0001d421", "sandwich",
     "\U0001d42c\U0001d41a\U0001d427\U0001d41d\U0001d430\U0001d422\U0001d41c\U0001d421", "mathematical bold"),
    ("\U0001d4c8\U0001d4b6\U0001d4c3\U0001d4b9", "sand", "\U0001d4c8\U0001d4b6\U0001d4c3\U0001d4b9", "mathematical script"),
    ("\uff53\uff41\uff4e\uff44\uff57\uff49\uff43\uff48", "sandwich", "\uff53\uff41\uff4e\uff44\uff57\uff49\uff43\uff48", "fullwidth"),
    ("s\uff41ndwich", "sandwich", "s\uff41ndwich", "one fullwidth letter"),
    ("the \u217foon", "moon", "\u217foon", "small roman numeral m"),
    ("sandw\u0456ches", "sandwich", "sandw\u0456ches", "homoglyph in an inflection"),
    # invisible characters between letters (default-ignorable)
    (f"s{CGJ}a{CGJ}ndwich", "sandwich", "sandwich", "combining grapheme joiner"),
    (f"san{ZWSP}dwich", "sandwich", "sandwich", "zero-width space"),
    (f"sand{ZWJ}wich", "sandwich", "sandwich", "zero-width joiner"),
    (f"sa{VS16}nd{VS16}wich", "sandwich", "sandwich", "variation selector"),
    (f"sand{HANGUL_FILLER}wich", "sandwich", "sandwich", "Hangul filler"),
    ("sand\u115f\u1160\uffa0wich", "sandwich", "sandwich", "Hangul choseong/jungseong/halfwidth fillers"),
    ("sand\u202ewich", "sandwich", "sandwich", "bidi override"),
    ("sand\U000e0041wich", "sandwich", "sandwich", "tag character"),
    ("sand\u00adwich", "sandwich", "sandwich", "soft hyphen"),
    # diacritics and strike-through marks do not make another word
    ("a caf\u00e9 latte", "cafe", "caf\u00e9", "accent"),
    ("s\u0336a\u0336n\u0336d\u0336", "sand", "s\u0336a\u0336n\u0336d\u0336", "combining strike-through"),
    # spelled out: single letters, each separated by spaces or punctuation
    ("s a n d w i c h", "sandwich", "s a n d w i c h", "spaces"),
    ("s-a-n-d-w-i-c-h", "sandwich", "s-a-n-d-w-i-c-h", "hyphens"),
    ("s.a.n.d.w.i.c.h", "sandwich", "s.a.n.d.w.i.c.h", "dots"),
    ("S_A_N_D", "sand", "S_A_N_D", "underscores"),
    ("s|a|n|d", "sand", "s|a|n|d", "bars"),
    ("s:a:n:d", "sand", "s:a:n:d", "colons"),
    ("s - a . n , d", "sand", "s - a . n , d", "mixed separators"),
    ("s\u2022a\u2022n\u2022d", "sand", "s\u2022a\u2022n\u2022d", "bullets"),
    ("s\u2013a\u2013n\u2013d", "sand", "s\u2013a\u2013n\u2013d", "en dashes"),
    ("s\u3000a\u3000n\u3000d", "sand", "s\u3000a\u3000n\u3000d", "ideographic spaces"),
    ("s\u2800a\u2800n\u2800d", "sand", "s\u2800a\u2800n\u2800d", "braille blanks"),
    ("s \u0430 n d", "sand", "s \u0430 n d", "spelled out with a homoglyph"),
    # decided: not a leak (documented in docs/rules.md)
    ("s4ndw1ch", "sandwich", None, "leetspeak: digits are not letters"),
    ("w4ll3t", "wallet", None, "leetspeak"),
    ("d0g", "dog", None, "ASCII digit zero is read as typed"),
    ("sand wich", "sandwich", None, "split into two words that are not single letters"),
    ("sa nd wi ch", "sandwich", None, "pairs of letters"),
    ("\u03c3andwich", "sandwich", None, "Greek sigma is not a Unicode confusable of s"),
    ("a sandwitch", "sandwich", None, "misspelling"),
]


@pytest.mark.parametrize("text, word, leak, what", EVASIONS, ids=[e[3] for e in EVASIONS])
def test_evasion_verdicts(text, word, leak, what):
    assert find_word_leak(text, word) == leak
    verdict = description_violation(text, word)
    assert (description_error_class(verdict) == "leak") if leak else verdict is None


def test_evasion_corpus_covers_every_kind():
    kinds = " ".join(e[3] for e in EVASIONS)
    for kind in ("Cyrillic", "Greek", "Armenian", "mathematical", "fullwidth", "joiner", "Hangul",
                 "variation selector", "spaces", "hyphens", "dots", "leetspeak"):
        assert kind in kinds, kind
    assert sum(e[2] is not None for e in EVASIONS) >= 30


# Near misses that must stay valid: the plain-text rule (whole words, every letter of a
# spelled word standing alone) is unchanged, with or without non-ASCII text around it.
NEAR_MISSES = [
    ("a rt gallery", "art"), ("ar t", "art"), ("a r tistic", "art"), ("A. Rt", "art"),
    ("Smart art\u00e9fact", "arts"), ("a category \u2014 pets", "cat"), ("Education \u00e9", "cat"),
    ("the bum \u2014 of it", "burn"), ("a .com site \u2014 online", "corn"), ("I\u2019ll go", "ill"),
    ("I \u2764 a hotdog", "dog"), ("\u00e9l\u00e8ve", "eleve s"), ("na\u00efvet\u00e9 abounds", "naive"),
    ("b\u00e4r", "bar s"), ("\u03bb calculus", "lambda"), ("\u5bff\u53f8 rice", "rice s"),
]


@pytest.mark.parametrize("text, word", NEAR_MISSES)
def test_near_misses_with_unicode_stay_valid(text, word):
    assert find_word_leak(text, word.replace(" ", "")) is None, (text, word)


def test_an_accent_is_the_same_word():
    """Diacritics do not make another word: "rosé" leaks "rose" (documented decision)."""
    assert find_word_leak("a glass of ros\u00e9", "rose") == "ros\u00e9"


@pytest.mark.parametrize("text", [
    "", "   ", "\u200b\u200c\u200d\u2060\ufeff", HANGUL_FILLER * 3, "\u115f\u1160\uffa0",
    CGJ * 4, VS16 * 5, "\u2800\u2800", "\u3000 \u00a0", "\u202e\u202d", "\U000e0041\U000e0042", "\u0301\u0336",
])
def test_a_description_with_nothing_visible_is_empty(text):
    assert not has_visible_character(text)
    assert description_error_class(description_violation(text, "dog")) == "empty"


@pytest.mark.parametrize("text", ["...", "\U0001f34e", "\u5bff\u53f8", "7", "\u00e9"])
def test_anything_visible_is_not_empty(text):
    assert has_visible_character(text) and description_violation(text, "dog") is None


def test_invisible_padding_does_not_count_toward_the_length():
    assert description_violation("a" * 700 + ZWSP * 200, "dog") is None
    assert "751 characters" in description_violation("a" * 751 + ZWSP * 10, "dog").message


def test_shown_text_is_what_the_checker_saw():
    """Other players see the description without its invisible characters (as checked),
    and look-alike letters as typed (they were checked through their skeleton)."""
    typed = f"A sw{ZWSP}eet\n{CGJ}tr\u0435at{HANGUL_FILLER}!"
    assert one_line(typed) == "A sweet tr\u0435at!"
    assert visible_text(typed).replace("\n", " ") == one_line(typed)


def test_readings_keep_ascii_as_typed():
    """Only non-ASCII characters are folded: "m" is never read "rn", "0" never "O"."""
    (reading, source), = confusable_readings("m0 \u0430")
    assert reading == "m0 a" and source == [0, 1, 2, 3]
    assert read_char("\u0399") == ("l", "i")  # Greek capital iota: "l" or "I"
    assert read_char("\u0430") == ("a", "a") and read_char("\u2022") == (" ", " ")
    assert read_char("\u5bff") == ("\u5bff", "\u5bff")  # imitates no ASCII letter


def test_ascii_hot_path_never_loads_icu():
    """Plain ASCII descriptions (the usual case) are checked without ICU."""
    import subprocess
    import sys

    code = ("import sys; from impostor_bench.core.parsing import description_violation as d; "
            "assert d('A loyal dog.', 'dog') and d('A loyal pet.', 'dog') is None; "
            "print('icu' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


FLAG = "\U0001f1fa\U0001f1f8"  # one flag: two regional indicators, one character to a reader


@pytest.mark.parametrize("text, length", [
    (FLAG * 750, 750),  # 1,500 code points
    ("e\u0301" * 750, 750),  # e + combining acute: one letter each
    ("\U0001f44d\U0001f3fd" * 750, 750),  # thumbs up with a skin tone
    ("word " + " " * 5000 + "word", 9),  # a whitespace run is one space
    ("a\n\n\n\t\tb", 3),
    ("  padded  ", 6),
])
def test_length_counts_what_a_reader_sees(text, length):
    assert visible_length(text) == length
    assert description_violation(text, "dog") is None  # all within 750


def test_a_text_over_the_limit_as_read_is_too_long():
    long = description_violation(FLAG * 751, "dog")
    assert long.kind == "too_long" and "751 characters" in long.message
    assert description_violation(("a" + " " * 40) * 375, "dog") is None  # 749 as shown
    assert "751 characters" in description_violation("a " * 375 + "b", "dog").message
