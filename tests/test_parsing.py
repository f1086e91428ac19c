"""Vote parsing on malformed outputs and description enforcement (A.3)."""

import json

import pytest

from impostor_bench.core.parsing import (
    description_error_class,
    description_violation,
    find_word_leak,
    parse_player_id,
    parse_vote,
    vote_json_schema,
)

ME = 0  # parsing as Player 1 (seat 0)


def ballot(**kw):
    base = {"suspected_impostor_id": "3", "confidence": 0.7, "reasoning": "r", "self_declaration": False, "word_guess": None}
    base.update(kw)
    return json.dumps(base)


# (raw text, expected seat or None, expected self_declared, error fragment or None, retry)
CASES = [
    (ballot(), 2, False, None, False),
    (ballot(suspected_impostor_id=3), 2, False, None, False),
    (ballot(suspected_impostor_id="Player 3"), 2, False, None, False),
    (ballot(suspected_impostor_id="player3"), 2, False, None, False),
    (ballot(suspected_impostor_id="p3"), 2, False, None, False),
    (ballot(suspected_impostor_id="P 4"), 3, False, None, False),
    (ballot(suspected_impostor_id="three"), 2, False, None, False),
    (ballot(suspected_impostor_id="#2"), 1, False, None, False),
    (ballot(suspected_impostor_id=2.0), 1, False, None, False),
    ("```json\n" + ballot() + "\n```", 2, False, None, False),
    ("```\n" + ballot() + "\n```", 2, False, None, False),
    ("Sure! Here is my vote:\n" + ballot() + "\nGood luck everyone.", 2, False, None, False),
    ('{"suspected_impostor_id": "3", "confidence": 0.5, "reasoning": "r", "self_declaration": false, "word_guess": null,}', 2, False, None, False),
    ("{'suspected_impostor_id': '3', 'confidence': 0.5, 'reasoning': 'r', 'self_declaration': False, 'word_guess': None}", 2, False, None, False),
    ('{"vote": {"suspected_impostor_id": "4", "self_declaration": false}}', 3, False, None, False),
    ('{"suspected_impostor_id": "3", "suspected_impostor_id": "3"}', 2, False, None, False),  # same value twice
    (ballot(self_declaration="true"), 2, True, None, False),
    (ballot(self_declaration="yes"), 2, True, None, False),
    (ballot(self_declaration="no"), 2, False, None, False),
    (ballot(self_declaration=1), 2, True, None, False),
    (ballot(confidence="0.9"), 2, False, None, False),
    (ballot(reasoning="Player 2 said {curly} things"), 2, False, None, False),
    ('{"suspected_impostor_id": "2", "reasoning": "a } brace in a string", "self_declaration": false}', 1, False, None, False),
    # --- invalid: re-prompted ---
    ("", None, False, "empty", True),
    ("   \n\t ", None, False, "empty", True),
    ("I'm sorry, but I can't help with that.", None, False, "no JSON object", True),
    ("I think Player 3 is the impostor.", None, False, "no JSON object", True),
    ('{"suspected_impostor_id": "3", "confidence": 0.5', None, False, "no JSON object", True),  # truncated
    ('{"suspected_impostor_id": "3", "suspected_impostor_id": "4"}', None, False, "repeats the key", True),
    (ballot(suspected_impostor_id="7"), None, False, "no Player 7", True),
    (ballot(suspected_impostor_id=0), None, False, "no Player 0", True),
    (ballot(suspected_impostor_id="the quiet one"), None, False, "not a player number", True),
    (ballot(suspected_impostor_id=None), None, False, "not a player number", True),
    (ballot(suspected_impostor_id=True), None, False, "not a player number", True),
    (ballot(self_declaration="maybe"), None, False, "self_declaration", True),
    # issue 42: only 0/1 read as booleans; NaN, 2, -1, inf are unreadable (never a declaration)
    ('{"suspected_impostor_id": "3", "self_declaration": NaN}', None, False, "self_declaration", True),
    ('{"suspected_impostor_id": "3", "self_declaration": Infinity}', None, False, "self_declaration", True),
    (ballot(self_declaration=2), None, False, "self_declaration must be true or false, got 2", True),
    (ballot(self_declaration=-1), None, False, "self_declaration", True),
    (ballot(self_declaration=0.5), None, False, "self_declaration", True),
    (ballot(self_declaration=1.0), 2, True, None, False),
    (ballot(self_declaration=0), 2, False, None, False),
    # issue 42: an apostrophe is not a JSON string opener; prose braces do not hide the ballot
    ('Hmm {it\'s tricky}. My ballot: {"suspected_impostor_id": "2", "confidence": 0.5}', 1, False, None, False),
    ('Hmm {it\'s tricky}. ' + ballot(reasoning="Player 3's text {was} odd"), 2, False, None, False),
    ("{ 'tis so} then {'suspected_impostor_id': '3', 'reasoning': 'odd', 'self_declaration': False}",
     2, False, None, False),
    ('{he said "hi} then ' + ballot(), 2, False, None, False),
    ("{'suspected_impostor_id': '4', 'reasoning': 'it's {odd}', 'self_declaration': False}", None, False,
     "no JSON object", True),  # its braces are read right, but it's not JSON even once repaired
    ('Hmm {it\'s tricky}. ' + ballot() + " or {'suspected_impostor_id': '4'}", None, False, "several", True),
    ('[' + ballot() + ']', 2, False, None, False),  # array around the object: object still found
    (ballot() + "\n" + ballot(suspected_impostor_id="4"), None, False, "several different JSON ballots", True),
    ('Player 2 wrote {"suspected_impostor_id": "2"} but my answer is ' + ballot(), None, False, "several", True),
    ('{"answer": 3}', None, False, "no JSON object", True),
    ("x" * 10_000, None, False, "no JSON object", True),
    # --- own seat: recorded, not counted, not re-prompted ---
    (ballot(suspected_impostor_id="1"), None, False, "voted for itself", False),
    (ballot(suspected_impostor_id="1", self_declaration=True, word_guess="cat"), None, True, "voted for itself", False),
]


@pytest.mark.parametrize("raw, seat, declared, error, retry", CASES)
def test_parse_vote(raw, seat, declared, error, retry):
    parsed = parse_vote(raw, ME)
    assert parsed.vote == seat
    assert parsed.self_declared is declared
    assert parsed.retry is retry
    if error is None:
        assert parsed.error is None
    else:
        assert parsed.error is not None and error in parsed.error


BALLOT_CLASS_CASES = [
    (ballot(), "valid"),
    (ballot(self_declaration=True, suspected_impostor_id="2"), "valid"),  # declares, accuses another: counted
    (ballot(suspected_impostor_id="1"), "self_vote"),
    (ballot(suspected_impostor_id="1", self_declaration=True, word_guess="cat"), "self_vote"),
    (ballot(suspected_impostor_id=None, self_declaration=True, word_guess="cat"), "self_vote"),
    (ballot(suspected_impostor_id="none", self_declaration=True), "self_vote"),
    (json.dumps({"self_declaration": True, "word_guess": "cat"}), "self_vote"),
    (ballot(suspected_impostor_id=None), "unparseable"),  # no id and no declaration
    (ballot(suspected_impostor_id="the quiet one", self_declaration=True), "unparseable"),
    (ballot(self_declaration="maybe"), "unparseable"),
    ("I think Player 3 is the impostor.", "unparseable"),
    ('{"suspected_impostor_id": "3", "suspected_impostor_id": "4"}', "unparseable"),
    (ballot() + "\n" + ballot(suspected_impostor_id="4"), "unparseable"),
    (ballot(suspected_impostor_id="7"), "names_no_player"),
    (ballot(suspected_impostor_id=0), "names_no_player"),
    (ballot(suspected_impostor_id=-1), "names_no_player"),
    (ballot(suspected_impostor_id=2.5), "names_no_player"),
    (ballot(suspected_impostor_id="Player 2.5"), "names_no_player"),
    ("", "missing"),
    ("  \n ", "missing"),
]


@pytest.mark.parametrize("raw, cls", BALLOT_CLASS_CASES)
def test_ballot_class(raw, cls):
    """Each ballot gets its class; legal ones (valid, self_vote) are never re-prompted, and
    the class derived from the recorded error text alone (older records) is the same."""
    from impostor_bench.core.records import LEGAL_BALLOT_CLASSES, derive_ballot_class

    parsed = parse_vote(raw, ME)
    assert parsed.ballot_class == cls
    assert parsed.retry is (cls not in LEGAL_BALLOT_CLASSES)
    assert (parsed.vote is not None) is (cls == "valid")
    old_valid = parsed.vote is not None  # what older versions stored as ballot_valid
    assert derive_ballot_class(parsed.vote, ME, parsed.error, parsed.self_declared, old_valid, 1) == cls


@pytest.mark.parametrize("raw, seat, declared, error, retry", CASES)
def test_every_parse_case_has_a_consistent_class(raw, seat, declared, error, retry):
    from impostor_bench.core.records import BALLOT_CLASSES, LEGAL_BALLOT_CLASSES, derive_ballot_class

    parsed = parse_vote(raw, ME)
    assert parsed.ballot_class in BALLOT_CLASSES
    assert (parsed.ballot_class in LEGAL_BALLOT_CLASSES) is (error is None or "itself" in error)
    assert derive_ballot_class(parsed.vote, ME, parsed.error, parsed.self_declared, seat is not None, 1) == parsed.ballot_class


@pytest.mark.parametrize("text, word, cls", [
    ("", "cat", "empty"), ("   ", "cat", "empty"), ("x" * 751, "cat", "too_long"),
    ("A cat sat.", "cat", "leak"), ("It is c-a-t.", "cat", "leak"),
])
def test_description_error_class(text, word, cls):
    from impostor_bench.core.parsing import description_error_class

    assert description_error_class(description_violation(text, word)) == cls
    assert description_error_class("some other tool's message") == "other"


def test_malformed_corpus_is_large_enough():
    assert sum(1 for c in CASES if c[3] is not None or c[0] != ballot()) >= 30


@pytest.mark.parametrize("value, expected", [
    ("0.9", 0.9), (0.25, 0.25), ("80%", 0.8), (1.5, None), (-0.1, None), ("high", None), (True, None), (None, None),
])
def test_confidence_coercion(value, expected):
    parsed = parse_vote(ballot(confidence=value), ME)
    assert parsed.vote == 2  # a bad confidence never invalidates the vote
    assert parsed.confidence == (pytest.approx(expected) if expected is not None else None)


def test_word_guess_is_kept_without_self_declaration_but_flagged_by_rules():
    parsed = parse_vote(ballot(word_guess="dog"), ME)
    assert parsed.word_guess == "dog" and parsed.self_declared is False
    assert parse_vote(ballot(word_guess="null"), ME).word_guess is None
    assert parse_vote(ballot(word_guess=""), ME).word_guess is None


def test_reasoning_is_capped():
    parsed = parse_vote(ballot(reasoning="r" * 50_000), ME)
    assert parsed.vote == 2 and len(parsed.reasoning) == 2000


@pytest.mark.parametrize("raw, label", [
    (3, 3), ("3", 3), ("Player 3", 3), ("player_4", 4), ("P2", 2), ("player - 1", 1), ("two", 2), (" 4. ", 4),
    ("3.5", None), (3.5, None), ("", None), ([3], None),
])
def test_parse_player_id(raw, label):
    assert parse_player_id(raw) == label


# ------------------------------------------------------------- descriptions


@pytest.mark.parametrize("text, word, leak", [
    ("A loyal dog that barks.", "dog", "dog"),
    ("Loyal DOGS bark.", "dog", "DOGS"),
    ("It was dogged by fleas.", "dog", "dogged"),  # consonant-doubling inflection counts
    ("Hot-dog stands sell it.", "dog", "dog"),
    ("A hotdog is food.", "dog", None),  # compound word, not the word itself
    ("She was running late.", "run", "running"),
    ("Berries grow here.", "berry", "Berries"),
    ("We are baking bread.", "bake", "baking"),
    ("It spells D-O-G.", "dog", "D-O-G"),
    ("It spells c a t.", "cat", "c a t"),
    ("Describe the feline.", "cat", None),
    ("Education matters.", "cat", None),
    ("The piano's keys.", "piano", "piano's"),
])
def test_word_leak(text, word, leak):
    assert find_word_leak(text, word) == leak


def test_description_rules():
    assert description_violation("A loyal companion that barks.", "dog") is None
    empty = description_violation("   ", "dog")
    assert (empty.kind, empty.message) == ("empty", "the description is empty")
    long = description_violation("a" * 751, "dog")
    assert long.kind == "too_long" and "751 characters" in long.message and str(long) == long.message
    assert description_violation("a" * 750, "dog") is None
    leak = description_violation("My DOG is great", "dog")
    assert leak.kind == "leak" and leak.message == 'the description contains your word ("DOG")'
    # the class of a recorded text (tables keep the message only) agrees with the value's own
    for v in (empty, long, leak):
        assert description_error_class(v.message) == description_error_class(v) == v.kind


def test_constrained_vote_schema_lists_only_other_players():
    schema = vote_json_schema(2, reasoning_max=200)
    assert schema["properties"]["suspected_impostor_id"]["enum"] == ["1", "2", "4"]
    assert schema["properties"]["reasoning"]["maxLength"] == 200
    assert "enum" not in vote_json_schema()["properties"]["suspected_impostor_id"]


def _leak_by_patterns_alone(text, word):
    """The leak check without its ASCII pre-filter: the compiled patterns on every text."""
    from impostor_bench.core.descriptions import _patterns_search
    from impostor_bench.core.glyphs import visible_text

    text = visible_text(text)
    span = _patterns_search(text, word)
    return None if span is None else text[span[0] : span[1]]


def test_leak_prefilter_never_changes_the_answer():
    """The pre-filter only skips compiling patterns that could not match: over thousands of
    texts built to sit near the word (inflections, case, spelled out, split, glued), the
    answer is the patterns' own."""
    import random

    from impostor_bench.core.parsing import word_forms

    rng = random.Random(7)
    words = ["dog", "berry", "bake", "run", "piano", "ox", "a", "umbrella", "Kiwi", "stop"]
    filler = ["the", "a", "it", "is", "very", "hot", "doge", "unbaked", "piano-", "ber ry", "x"]
    seps = [" ", "-", ".", "*", "_", ",", "'", "/", "  ", "- ", ""]
    checked = leaks = 0
    for word in words:
        near = word_forms(word) + [word.upper(), word.title(), word[:-1], word[1:], word + word]
        near += [rng.choice(seps).join(word) for _ in range(4)] + [rng.choice(seps).join(word.upper())]
        # issue 42: reversed, camelCase joins, split into two pieces
        near += [word[::-1], word[::-1].upper(), "my" + word.title() + "Is", "A" + word.upper() + "Was"]
        near += [word[:k] + rng.choice(["-", ".", "/", "*"]) + word[k:] for k in range(1, len(word))]
        for _ in range(300):
            parts = [rng.choice(near if rng.random() < 0.4 else filler) for _ in range(rng.randint(1, 5))]
            text = "".join(p + rng.choice(seps + ["! ", "2", "("]) for p in parts)
            expected = _leak_by_patterns_alone(text, word)
            assert find_word_leak(text, word) == expected, (text, word)
            # The same text next to non-ASCII characters (the path that reads look-alikes) keeps its answer.
            assert find_word_leak(text + " \u2014 caf\u00e9 \u5bff", word) == expected, (text, word)
            checked += 1
            leaks += expected is not None
    assert checked == 3000 and 300 < leaks < 2700  # both answers well represented


@pytest.mark.parametrize("body", [
    '{"suspected_impostor_id": "Player 3", "confidence": 0.7, "reasoning": "r", "self_declaration": false, "word_guess": null}',
    '  {"suspected_impostor_id": 2, "reasoning": "a } brace, a { brace, a \\" quote and \'single\' quotes"}\n',
    '{"vote": {"suspected_impostor_id": 1}, "note": "{not an object}"}',
    '{"suspected_impostor_id": 1} {"suspected_impostor_id": 2}',  # two objects: not one JSON value
    "{'suspected_impostor_id': 'p4', 'self_declaration': False,}",  # repaired, found by the scan
    '{"suspected_impostor_id": 1, "suspected_impostor_id": 2}',
])
def test_one_json_object_is_read_as_the_scan_reads_it(body):
    """The shortcut for a body that is one JSON object gives what the brace scan gives."""
    from impostor_bench.core.parsing import _DuplicateKey, _balanced_objects, _load_object, _whole_object

    def read(objects):
        try:
            return list(objects())
        except _DuplicateKey as dup:
            return f"duplicate {dup}"

    def shortcut():
        whole = _whole_object(body)
        return [whole] if whole is not None else [_load_object(c) for c in _balanced_objects(body)]

    assert read(shortcut) == read(lambda: (_load_object(c) for c in _balanced_objects(body)))


def test_a_python_repr_of_a_ballot_is_read():
    """The text ``repr()`` prints for a ballot dict: single quotes, and double quotes around a
    value holding an apostrophe (which the single-quote repair cannot read)."""
    ballot_dict = {"suspected_impostor_id": "Player 3", "confidence": 0.8, "reasoning": "it's odd",
                   "self_declaration": False, "word_guess": None}
    text = repr(ballot_dict)
    assert "\"it's odd\"" in text
    for shown in (text, f"My vote: {text} - good luck", f"```\n{text}\n```"):
        parsed = parse_vote(shown, ME)
        assert (parsed.vote, parsed.reasoning, parsed.ballot_class) == (2, "it's odd", "valid"), shown
    declared = parse_vote(repr({**ballot_dict, "self_declaration": True, "word_guess": "Tom's"}), 2)
    assert declared.self_declared and declared.word_guess == "Tom's"
    # a key repeated with different values stays ambiguous, as in JSON
    twice = "{'suspected_impostor_id': 'Player 3', 'reasoning': \"it's\", 'suspected_impostor_id': 'Player 4'}"
    assert parse_vote(twice, ME).ballot_class == "unparseable"
    # literals only: a call is not run, and is no ballot
    assert parse_vote("{'suspected_impostor_id': __import__('os').getpid(), 'reasoning': \"it's\"}", ME).vote is None


@pytest.mark.parametrize("raw", ["Player -2", "p-3", "Player-3", "player -1", "#-2", "-3", -2])
def test_a_negative_player_number_names_no_player(raw):
    parsed = parse_vote(ballot(suspected_impostor_id=raw), ME)
    assert parsed.vote is None and parsed.ballot_class == "names_no_player" and parsed.retry
