"""The shipped word-pair dataset (paper A.4) and the loader's validation."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from impostor.errors import ImpostorError
from impostor.wordpairs import (
    PAIRS_PER_TIER,
    TIERS,
    WordPair,
    WordPairError,
    default_word_pairs_path,
    load_word_pairs,
    word_pairs_sha256,
)

PAPER_EXAMPLES = {
    "easy": [("elephant", "democracy"), ("pizza", "gravity")],
    "medium": [("dog", "cat"), ("piano", "guitar")],
    "hard": [("smart", "intelligent"), ("river", "stream")],
    "expert": [("start", "begin"), ("flower", "rose")],
}


# --------------------------------------------------------------------------- shipped file


def test_default_path_is_repo_configs_file():
    path = default_word_pairs_path()
    assert path.parts[-2:] == ("configs", "word_pairs.json")
    assert path.is_file()


def test_shipped_file_has_300_pairs_75_per_tier():
    pairs = load_word_pairs()
    assert list(pairs) == list(TIERS) == ["easy", "medium", "hard", "expert"]
    assert {t: len(v) for t, v in pairs.items()} == {t: PAIRS_PER_TIER for t in TIERS}
    assert sum(len(v) for v in pairs.values()) == 300


def test_shipped_file_raw_format_matches_paper():
    data = json.loads(default_word_pairs_path().read_text(encoding="utf-8"))
    assert sorted(data) == sorted(TIERS)
    for tier, entries in data.items():
        assert len(entries) == 75
        for entry in entries:
            assert isinstance(entry, list) and len(entry) == 2
            assert all(isinstance(w, str) and re.fullmatch(r"[a-z]+", w) for w in entry)


def test_paper_examples_come_first_in_their_tiers():
    pairs = load_word_pairs()
    for tier, examples in PAPER_EXAMPLES.items():
        got = [(p.majority, p.impostor) for p in pairs[tier][:2]]
        assert got == examples, tier


def test_pair_ids_are_stable_and_1_based():
    pairs = load_word_pairs()
    first = pairs["easy"][0]
    assert first == WordPair("easy-001", "easy", "elephant", "democracy")
    assert pairs["hard"][1] == WordPair("hard-002", "hard", "river", "stream")
    assert pairs["expert"][74].pair_id == "expert-075"
    for tier, tier_pairs in pairs.items():
        assert [p.pair_id for p in tier_pairs] == [f"{tier}-{i:03d}" for i in range(1, 76)]
        assert all(p.difficulty == tier for p in tier_pairs)


def test_shipped_file_word_hygiene():
    pairs = load_word_pairs()
    for tier, tier_pairs in pairs.items():
        words = [w for p in tier_pairs for w in (p.majority, p.impostor)]
        assert len(words) == len(set(words)) == 150, tier
        for p in tier_pairs:
            assert p.majority != p.impostor
            assert p.majority not in p.impostor and p.impostor not in p.majority, p


def test_word_pair_is_frozen():
    pair = load_word_pairs()["medium"][0]
    with pytest.raises(AttributeError):
        pair.majority = "wolf"  # type: ignore[misc]


def test_sha256_is_hash_of_file_bytes(tmp_path):
    expected = hashlib.sha256(default_word_pairs_path().read_bytes()).hexdigest()
    assert word_pairs_sha256() == expected
    assert word_pairs_sha256(str(default_word_pairs_path())) == expected
    other = tmp_path / "p.json"
    other.write_text('{"easy": [["pizza", "gravity"]]}')
    assert word_pairs_sha256(other) != expected
    assert len(expected) == 64


def test_error_is_an_impostor_error():
    assert issubclass(WordPairError, ImpostorError)


# --------------------------------------------------------------------------- helpers


def full_data() -> dict[str, list[list[str]]]:
    return json.loads(default_word_pairs_path().read_text(encoding="utf-8"))


def write(tmp_path, data, name="pairs.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def load_error(path, **kwargs) -> WordPairError:
    with pytest.raises(WordPairError) as info:
        load_word_pairs(path, **kwargs)
    return info.value


# --------------------------------------------------------------------------- custom files


def test_copy_of_full_file_loads_from_tmp(tmp_path):
    path = write(tmp_path, full_data())
    assert load_word_pairs(path) == load_word_pairs()


def test_require_full_false_allows_subset_and_small_tiers(tmp_path):
    path = write(tmp_path, {"hard": [["lake", "pond"]], "easy": [["pizza", "gravity"], ["dog", "tax"]]})
    pairs = load_word_pairs(path, require_full=False)
    assert list(pairs) == ["easy", "hard"]
    assert pairs["easy"][1] == WordPair("easy-002", "easy", "dog", "tax")
    assert pairs["hard"] == [WordPair("hard-001", "hard", "lake", "pond")]
    # The same file is rejected when the full dataset is required.
    err = load_error(path)
    assert 'tier "easy" has 2 pairs' in str(err) and "exactly 75" in str(err)
    assert '"medium"' in str(err) and '"expert"' in str(err) and "missing tier" in str(err)


# --------------------------------------------------------------------------- bad files


def test_missing_file(tmp_path):
    err = load_error(tmp_path / "nope.json")
    assert "nope.json" in str(err) and "not found" in str(err)
    with pytest.raises(WordPairError, match="not found"):
        word_pairs_sha256(tmp_path / "nope.json")


def test_directory_instead_of_file(tmp_path):
    err = load_error(tmp_path)
    assert "directory" in str(err)


def test_invalid_json_reports_line_and_column(tmp_path):
    path = write(tmp_path, '{\n  "easy": [["pizza", "gravity"],]\n}')
    err = load_error(path, require_full=False)
    msg = str(err)
    assert "pairs.json" in msg and "invalid JSON" in msg
    assert "line 2, column" in msg


def test_not_utf8(tmp_path):
    path = tmp_path / "pairs.json"
    path.write_bytes(b'{"easy": [["caf\xe9", "gravity"]]}')
    assert "UTF-8" in str(load_error(path, require_full=False))


def test_top_level_must_be_object(tmp_path):
    path = write(tmp_path, [["dog", "cat"]])
    msg = str(load_error(path, require_full=False))
    assert "top level must be a JSON object" in msg and "got an array" in msg


def test_duplicate_tier_key(tmp_path):
    path = write(tmp_path, '{"easy": [["pizza", "gravity"]], "easy": [["dog", "tax"]]}')
    msg = str(load_error(path, require_full=False))
    assert '"easy"' in msg and "more than once" in msg


def test_unknown_and_missing_tiers_are_named(tmp_path):
    data = full_data()
    data["Expert"] = data.pop("expert")
    data["extreme"] = [["dog", "wolf"]]
    msg = str(load_error(write(tmp_path, data)))
    assert 'unknown tier "Expert"' in msg and 'did you mean "expert"' in msg
    assert 'unknown tier "extreme"' in msg
    assert 'missing tier(s) "expert"' in msg
    # Unknown tiers are errors even for custom files.
    msg = str(load_error(write(tmp_path, {"easy": [["pizza", "gravity"]], "extreme": []}, "c.json"), require_full=False))
    assert 'unknown tier "extreme"' in msg


def test_empty_object_has_no_tiers(tmp_path):
    assert "no tiers found" in str(load_error(write(tmp_path, {}), require_full=False))


def test_tier_must_be_array(tmp_path):
    data = full_data()
    data["medium"] = {"dog": "cat"}
    msg = str(load_error(write(tmp_path, data)))
    assert 'tier "medium" must be an array' in msg and "got an object" in msg


def test_wrong_count_with_require_full(tmp_path):
    data = full_data()
    data["hard"] = data["hard"][:74]
    data["expert"].append(["glad", "cheerful"])
    msg = str(load_error(write(tmp_path, data)))
    assert 'tier "hard" has 74 pairs' in msg and "add 1" in msg
    assert 'tier "expert" has 76 pairs' in msg and "remove 1" in msg
    assert "require_full=False" in msg


def test_empty_tier_custom_file(tmp_path):
    path = write(tmp_path, {"easy": [["pizza", "gravity"]], "hard": []})
    assert 'tier "hard" is empty' in str(load_error(path, require_full=False))


def test_uppercase_word_names_tier_index_and_id(tmp_path):
    data = full_data()
    data["hard"][16] = ["River", "creek"]
    path = write(tmp_path, data)
    err = load_error(path)
    assert str(err) == (
        f'{path}: tier "hard", pair 17 (hard-017): word "River" must be lowercase '
        'letters a-z only; write it as "river"'
    )
    assert err.problems == [
        'tier "hard", pair 17 (hard-017): word "River" must be lowercase letters a-z only; write it as "river"'
    ]


@pytest.mark.parametrize("word", ["ice cream", "t-shirt", "r2d2", "café", ""])
def test_non_single_lowercase_words_rejected(tmp_path, word):
    path = write(tmp_path, {"medium": [["dog", "cat"], [word, "soup"]]})
    msg = str(load_error(path, require_full=False))
    assert 'tier "medium", pair 2 (medium-002)' in msg
    assert json.dumps(word) in msg and "lowercase letters a-z only" in msg


@pytest.mark.parametrize(
    "entry, expected",
    [
        ("dog", "must be a two-element array"),
        ({"majority": "dog"}, "must be a two-element array"),
        (["dog"], "has 1 element(s)"),
        (["dog", "cat", "cow"], "has 3 element(s)"),
        (["dog", 7], "impostor word must be a string, got a number"),
        ([None, "cat"], "majority word must be a string, got null"),
    ],
)
def test_entry_shape_problems(tmp_path, entry, expected):
    path = write(tmp_path, {"easy": [["pizza", "gravity"], ["lamp", "tax"], entry]})
    msg = str(load_error(path, require_full=False))
    assert 'tier "easy", pair 3 (easy-003)' in msg
    assert expected in msg


def test_words_must_differ(tmp_path):
    path = write(tmp_path, {"expert": [["dog", "dog"]]})
    msg = str(load_error(path, require_full=False))
    assert 'tier "expert", pair 1 (expert-001)' in msg and "must differ" in msg


def test_word_containing_the_other_rejected(tmp_path):
    path = write(tmp_path, {"hard": [["lake", "pond"], ["star", "starfish"]]})
    msg = str(load_error(path, require_full=False))
    assert 'tier "hard", pair 2 (hard-002)' in msg
    assert 'word "starfish" contains the other word "star"' in msg


def test_duplicate_pair_in_either_order(tmp_path):
    path = write(tmp_path, {"medium": [["dog", "cat"], ["lion", "tiger"], ["cat", "dog"]]})
    err = load_error(path, require_full=False)
    msg = str(err)
    assert 'tier "medium", pair 3 (medium-003): duplicates pair 1 (medium-001)' in msg
    # Reported once as a duplicate pair, not again as two repeated words.
    assert len(err.problems) == 1


def test_repeated_word_within_tier(tmp_path):
    path = write(tmp_path, {"medium": [["dog", "cat"], ["lion", "tiger"], ["wolf", "dog"]]})
    msg = str(load_error(path, require_full=False))
    assert 'tier "medium", pair 3 (medium-003): word "dog" is already used in pair 1 (medium-001)' in msg


def test_same_word_in_different_tiers_is_fine(tmp_path):
    path = write(tmp_path, {"medium": [["dog", "cat"]], "expert": [["dog", "puppy"]]})
    pairs = load_word_pairs(path, require_full=False)
    assert pairs["expert"][0].majority == pairs["medium"][0].majority == "dog"


def test_many_problems_collected_and_capped(tmp_path):
    data = full_data()
    for i in range(12):
        data["easy"][i] = [data["easy"][i][0].upper(), data["easy"][i][1]]
    data["hard"][0] = ["dog", "dog"]
    data["bogus"] = []
    path = write(tmp_path, data)
    err = load_error(path)
    msg = str(err)
    lines = msg.splitlines()
    assert len(err.problems) == 14
    assert lines[0] == f"{path}: 14 problems in word-pair file; fix them and reload:"
    assert len([line for line in lines if line.startswith("  - ")]) == 10
    assert lines[-1] == "  ... and 4 more"
    assert 'unknown tier "bogus"' in lines[1]
    assert 'tier "easy", pair 1 (easy-001): word "ELEPHANT"' in msg
    # Problems past the cap are still available programmatically.
    assert any("hard-001" in p and "must differ" in p for p in err.problems)
