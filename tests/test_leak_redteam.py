"""The leak rule against the outside red teams' forms (issues 30 and 42) and new ones.

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
    "\U0001f1e8\U0001f1e6 flag", "ice cream (c) and tea",
    # camelCase joins need a case change at both ends; contractions are other words
    "CATegory", "SCATter", "concatEnate", "ca't", "c'at", "tac", "TacToe",
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
    assert find_word_leak("the happiest", "happy") == "happiest"  # issue 42: superlatives are regular


# ------------------------------------------------------------------ issue 42 (third red team)

# (text, word, the leaked form as typed): every one passed before issue 42.
INFLECTIONS_42 = [
    # the red team's: superlatives and the 14 shipped words it named
    ("The happiest day of the year.", "happy", "happiest"), ("She was lying again.", "lie", "lying"),
    ("He panicked at once.", "panic", "panicked"), ("Two pop quizzes a week.", "quiz", "quizzes"),
    ("The wolves howl.", "wolf", "wolves"), ("Sharp knives in a block.", "knife", "knives"),
    ("the saddest song", "sad", "saddest"), ("the smartest kid", "smart", "smartest"),
    ("the cleverest trick", "clever", "cleverest"), ("the biggest one", "big", "biggest"),
    ("the angriest face", "angry", "angriest"), ("the coldest night", "cold", "coldest"),
    ("the calmest sea", "calm", "calmest"), ("the loudest bang", "loud", "loudest"),
    ("the smallest part", "small", "smallest"), ("the fastest car", "fast", "fastest"),
    ("the quietest room", "quiet", "quietest"), ("the richest man", "rich", "richest"),
    ("the gloomiest day", "gloomy", "gloomiest"),
    # ours: e-dropping, -ie, -c, doubled consonants, -ves, agents and plurals of comparatives
    ("the largest box", "large", "largest"), ("the wisest owl", "wise", "wisest"),
    ("dying light", "die", "dying"), ("they are tying knots", "tie", "tying"),
    ("a panicking crowd", "panic", "panicking"), ("picnickers on the lawn", "picnic", "picnickers"),
    ("the runners", "run", "runners"), ("the hottest day", "hot", "hottest"), ("quizzed twice", "quiz", "quizzed"),
    ("autumn leaves", "leaf", "leaves"), ("two halves", "half", "halves"), ("nine lives", "life", "lives"),
    ("the funniest joke", "funny", "funniest"), ("the tiniest bug", "tiny", "tiniest"),
    ("the noisiest street", "noisy", "noisiest"), ("the prettiest garden", "pretty", "prettiest"),
]
# camelCase and word-internal joins (a case change splits the words).
CAMEL_42 = [
    ("myCatIsFluffy", "cat", "Cat"), ("#MyCatIsFluffy", "cat", "Cat"), ("bigRedCat", "cat", "Cat"),
    ("MYCatIsHere", "cat", "Cat"), ("theCATIsHere", "cat", "CAT"), ("CatsRule", "cat", "Cats"),
    ("myLittlePianoLesson", "piano", "Piano"), ("iPhone", "phone", "Phone"), ("SeaWorld", "sea", "Sea"),
    ("theHappiestDay", "happy", "Happiest"),
]
# Split into pieces by hyphens, punctuation or markup.
PIECES_42 = [
    ("a rock-et launch", "rocket", "rock-et"), ("a p-iano", "piano", "p-iano"),
    ("red tom<b></b>ato", "tomato", "tom<b></b>ato"), ("a c<b>at</b>", "cat", "c<b>at"),
    ("a sand.wich", "sandwich", "sand.wich"), ("ban/ana split", "banana", "ban/ana"),
    ("um_brel_la", "umbrella", "um_brel_la"), ("pia**no", "piano", "pia**no"),
    ("a gui-tar-ist", "guitar", "gui-tar"), ("ele<i>phant</i>s", "elephant", "ele<i>phant</i>s"),
    ("sCATter", "cat", "CATter"),  # a camelCase join, then the agent form of cat
    # inflected forms in pieces (issue 42, the last findings): the split plural, and the forms
    # whose stem changes (e dropped, y -> i, f -> ves, c -> ck, a doubled consonant)
    ("a rock-ets launch", "rocket", "rock-ets"), ("two ROCK_ETS", "rocket", "ROCK_ETS"), ("ba-king bread", "bake", "ba-king"),
    ("the hap-piest day", "happy", "hap-piest"), ("wol-ves howl", "wolf", "wol-ves"), ("kni.ves", "knife", "kni.ves"),
    ("pan-icked", "panic", "pan-icked"), ("big<b></b>gest", "big", "big"), ("ca-ts", "cat", "ca-ts"),
]
# Reversed.
REVERSED_42 = [
    ("an elcycib ride", "bicycle", "elcycib"), ("ELPPA pie", "apple", "ELPPA"), ("a yellow enohporcim", "microphone", "enohporcim"),
    ("the esuom ran", "mouse", "esuom"),
]
ISSUE_42 = INFLECTIONS_42 + CAMEL_42 + PIECES_42 + REVERSED_42


@pytest.mark.parametrize("text, word, leaked", ISSUE_42, ids=[f"{w}:{t}" for t, w, _ in ISSUE_42])
def test_issue_42_forms(text: str, word: str, leaked):
    assert find_word_leak(text, word) == leaked, (text, word)
    if leaked is not None:
        assert description_error_class(description_violation(text, word)) == "leak"
        # through the look-alike path too (a non-ASCII character elsewhere in the text)
        assert find_word_leak(text + " \u2014 caf\u00e9", word) == leaked


ISSUE_42_NOT_LEAKS = [
    ("We'll see you soon.", "well"), ("She'll be fine.", "shell"), ("It's a fine day.", "its"),
    ("a hotdog stand", "dog"), ("a rt", "art"), ("sand wich", "sandwich"), ("a god of thunder", "dog"),
    ("tac toe", "cat"), ("the category", "cat"), ("PLAYGROUND", "play"), ("dark caves", "cafe"),
    ("it saves time", "safe"), ("the happiness", "happy"), ("a catlike grace", "cat"), ("ran home", "run"),
    ("a c-section", "cat"), ("c4t", "cat"), ("pianist", "piano"), ("McDonald's fries", "mcdonald"),
    # joins without a case change are out of scope (docs/rules.md): a lexicon could not tell
    # "my|cat|is" from "cat|a|log"; split pieces of a longer word are that word
    ("mycatisfluffy", "cat"), ("the catalog", "cat"), ("concatenate", "cat"), ("bakery", "bake"),
    ("rock-etry", "rocket"), ("wolv-erine", "wolf"),
]


@pytest.mark.parametrize("text, word", ISSUE_42_NOT_LEAKS)
def test_issue_42_not_leaks(text: str, word: str):
    if (text, word) == ("McDonald's fries", "mcdonald"):
        assert find_word_leak(text, word) == "McDonald's"  # the word itself, with its possessive
        return
    assert find_word_leak(text, word) is None, (text, word)


# Ordinary descriptions: hyphenated compounds, contractions, brand names in camelCase,
# markup, abbreviations, numbers and URLs.  For every shipped word, the only leaks are the
# whole-word forms an independent tokenisation finds (letter runs, split at camelCase joins:
# "MacBook's" shows "Book's", so it leaks "book", as "iPhone" leaks "phone"); pieces and
# reversal never fire on them.
ORDINARY = [
    "A well-known thing that most people have seen at least once.",
    "It's something you'd find in a long-term, low-cost, easy-to-use kit.",
    "We'll use it after dinner; don't forget it's fragile!",
    "You can't miss it: bright, round, and about twenty-five centimetres wide.",
    "Often shown on YouTube, posted on eBay, or in a PowerPoint slide.",
    "My iPhone has a picture of one, and so does my MacBook's wallpaper.",
    "Kids at McDonald's would love it; it's a crowd-pleaser.",
    "Think <b>big</b>, <i>warm</i> and a little old-fashioned.",
    "Check www.example.com or e-mail info@example.org for a how-to guide.",
    "Used e.g. in the U.S. and the U.K. since the 1800s, i.e. for ages.",
    "It costs $5-$10, weighs 2.5 kg and lasts 3-4 years.",
    "Part of a self-driving, eco-friendly, state-of-the-art setup.",
    "Mother-in-law's favourite: a hand-me-down from the '60s.",
    "Not a do-it-yourself job; call a pro (or two).",
    "Something black-and-white, semi-transparent and re-usable.",
    "A so-called must-have for a rainy Sunday afternoon.",
    "It goes 'click', then 'whirr', then it's quiet again.",
    "She said: \"I'd rather not\" -- and left it on the table.",
    "JavaScript developers and LinkedIn users both talk about it.",
    "On WhatsApp and FaceTime people show it to their friends.",
    "A T-shirt, an X-ray and a U-turn walk into a bar.",
    "Found in a two-storey house next to a well-lit garden.",
    "Something a sci-fi fan or a hi-fi buff would admire.",
    "Best enjoyed at 5:30 p.m. with a cup of something hot.",
    "It runs on AA batteries/USB-C and has an on/off switch.",
    "Red, green & blue; small-ish; kind of like a co-op project.",
    "Everyone's got an opinion about it, isn't that right?",
    "An all-in-one, one-size-fits-all, plug-and-play gadget.",
    "Twenty-first-century people still can't live without it.",
    "It's a non-stop, round-the-clock, year-round favourite.",
]


def _plain_tokens(text: str) -> set[str]:
    """Lower-case words of ``text``: letter runs, also split where the case changes
    ("MacBook" -> "mac", "book"), each also with a following "'s"."""
    import re

    found = set()
    for run in re.finditer(r"[A-Za-z]+('s)?", text):
        found.add(run.group(0).lower())
        for part in re.finditer(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", run.group(0)):
            end = part.end() + run.start()
            found.add(part.group(0).lower() + ("'s" if text[end:end + 2] == "'s" else ""))
    return found


def test_ordinary_descriptions_stay_accepted_for_every_shipped_word():
    import json
    from pathlib import Path

    from impostor_bench.core.parsing import word_forms

    pairs = json.loads((Path(__file__).resolve().parents[1] / "configs" / "word_pairs.json").read_text())
    words = sorted({w for tier in pairs.values() for pair in tier for w in pair})
    assert len(words) > 400
    unexpected, plain_leaks = [], 0
    for text in ORDINARY:
        tokens = _plain_tokens(text)
        for word in words:
            expected = bool(tokens & set(word_forms(word)))
            got = find_word_leak(text, word)
            plain_leaks += expected
            if (got is not None) != expected:
                unexpected.append((text, word, got))
    assert not unexpected, unexpected[:10]
    assert plain_leaks > 0  # the corpus does hold some shipped words as plain words (e.g. "big", "hot")
    assert find_word_leak(ORDINARY[5], "book") == "Book's"  # the documented camelCase reading


# A word split by markup a page hides whatever its length, or by an HTML comment (the fourth red
# team's forms: a tag over 30 characters and a comment holding letters were read as text), and
# inflections whose stem changes, spelled out letter by letter (before, only the word itself was).
HIDDEN_SPLITS = [
    ("a ripe tom<span class='highlight-important-text'>ato</span> salad", "tomato", "tom<span class='highlight-important-text'>ato"),
    ("fluffy s<!--x-->heep graze", "sheep", "s<!--x-->heep"),
    ("fluffy s<!-- a long comment, with <b>tags</b> > and < inside -->heep", "sheep",
     "s<!-- a long comment, with <b>tags</b> > and < inside -->heep"),
    ("c<!--one-->a<!--two-->t naps", "cat", "c<!--one-->a<!--two-->t"),
    ("tom<" + "span data-x='" + "y" * 500 + "'>ato", "tomato", "tom<" + "span data-x='" + "y" * 500 + "'>ato"),
]
SPELLED_INFLECTIONS = [
    ("they howl: w o l v e s", "wolf", "w o l v e s"), ("the h a p p i e s t day", "happy", "h a p p i e s t"),
    ("b a k i n g bread", "bake", "b a k i n g"), ("k-n-i-v-e-s", "knife", "k-n-i-v-e-s"),
    ("r u n n i n g late", "run", "r u n n i n g"), ("c i t i e s", "city", "c i t i e s"),
    ("p.a.n.i.c.k.e.d", "panic", "p.a.n.i.c.k.e.d"),
]


@pytest.mark.parametrize("text, word, leaked", HIDDEN_SPLITS + SPELLED_INFLECTIONS,
                         ids=[f"{w}:{t[:30]}" for t, w, _ in HIDDEN_SPLITS + SPELLED_INFLECTIONS])
def test_hidden_splits_and_spelled_inflections_leak(text: str, word: str, leaked: str):
    assert find_word_leak(text, word) == leaked, (text, word)
    assert description_error_class(description_violation(text, word)) == "leak"
    assert find_word_leak(text + " \u2014 caf\u00e9", word) is not None  # through the look-alike path too


@pytest.mark.parametrize("text, word", [
    ("the w o l f and the w o l v e r i n e", "wolves"),  # spelled out: another word
    ("a <span class='very-long-class-name-for-styling'>tomato</span>", "potato"),
    ("s<!--x-->heep", "she"), ("h a p p e n s", "happy"), ("c a r t", "cat"), ("<!-- unclosed comment sheep", "ship"),
    ("x < y and z > w, then c-a-b", "cat"),
])
def test_markup_and_spelling_rules_add_no_other_word(text: str, word: str):
    assert find_word_leak(text, word) is None, (text, word)


def test_an_unclosed_comment_is_read_as_text():
    """An unclosed "<!--" hides nothing: the letters after it are text a page would show."""
    assert find_word_leak("<!-- sheep", "sheep") == "sheep"
    assert find_word_leak("s<!--x heep", "sheep") is None  # "x" stands between, shown
