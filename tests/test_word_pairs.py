"""The shipped word-pair dataset (paper A.4) and the loader's validation."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.wordpairs import (
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
    for entries in data.values():
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


@pytest.mark.parametrize("pair, form, base", [
    (["city", "cities"], "cities", "city"), (["wolves", "wolf"], "wolves", "wolf"),
    (["knife", "knives"], "knives", "knife"), (["happy", "happiest"], "happiest", "happy"),
    (["bake", "baking"], "baking", "bake"), (["flow", "wolf"], "wolf", "flow"),
])
def test_a_word_that_is_a_form_of_the_other_is_refused_in_one_line(tmp_path, pair, form, base):
    """The leak rule reads one as the other (an inflection, or the word reversed): describing one
    leaks the other, so the pair is refused at load, naming the file, the pair and the fix."""
    path = write(tmp_path, {"medium": [["lake", "pond"], pair]})
    msg = str(load_error(path, require_full=False))
    assert "\n" not in msg and "pairs.json" in msg
    assert 'tier "medium", pair 2 (medium-002)' in msg
    assert f'"{form}" is a form of "{base}"' in msg and "replace one of them" in msg


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


# --------------------------------------------------------------------------- provenance (docs/rules.md "Word pairs")

RULES_MD = default_word_pairs_path().parents[1] / "docs" / "rules.md"


def _documented_words(label: str) -> list[str]:
    text = " ".join(RULES_MD.read_text(encoding="utf-8").split())
    m = re.search(rf"{re.escape(label)} \((\d+)\): ([a-z, ]+)\.", text)
    assert m, f"docs/rules.md lacks the line '{label} (N): word, word, ...'"
    words = m.group(2).split(", ")
    assert len(words) == int(m.group(1)), label
    return words


def _tiers_of_each_word() -> dict[str, set[str]]:
    tiers: dict[str, set[str]] = {}
    for tier, pairs in load_word_pairs().items():
        for p in pairs:
            for w in (p.majority, p.impostor):
                tiers.setdefault(w, set()).add(tier)
    return tiers


def test_words_recurring_across_tiers_are_the_documented_ones():
    tiers = _tiers_of_each_word()
    several = sorted(w for w, t in tiers.items() if len(t) > 1)
    three = sorted(w for w, t in tiers.items() if len(t) == 3)
    assert len(tiers) == 476
    assert (len(several), len(three), sum(len(t) == 4 for t in tiers.values())) == (104, 20, 0)
    assert several == _documented_words("Words in two or more tiers")
    assert three == _documented_words("Words in three tiers")
    assert {"smart", "dog", "cat", "apple"} <= set(several)  # e.g. dog/cat (medium) and dog/puppy (expert)
    touched = {t: sum(p.majority in several or p.impostor in several for p in ps)
               for t, ps in load_word_pairs().items()}
    assert touched == {"easy": 47, "medium": 58, "hard": 45, "expert": 35}
    # ... but never the same pair twice, in any tier or order
    keys = [frozenset((p.majority, p.impostor)) for ps in load_word_pairs().values() for p in ps]
    assert len(set(keys)) == 300


def _documented_distance_table() -> dict[str, list[float]]:
    rows = {}
    for line in RULES_MD.read_text(encoding="utf-8").splitlines():
        m = re.fullmatch(r"\| (easy|medium|hard|expert) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)–([\d.]+) \|",
                         line.strip())
        if m:
            rows[m.group(1)] = [float(v) for v in m.groups()[1:]]
    assert list(rows) == list(TIERS), "docs/rules.md lacks the per-tier distance table"
    return rows


def test_shipped_tiers_validated_by_embedding_distance():
    """Paper D.2: semantic distance falls with difficulty (all-MiniLM-L6-v2 vectors shipped with the bots)."""
    import numpy as np
    from scipy import stats

    from impostor_bench.providers.bots.vocab import shipped_table

    table = shipped_table()
    dist = {}
    for tier, pairs in load_word_pairs().items():
        a = table.matrix[[table.index[p.majority] for p in pairs]]
        b = table.matrix[[table.index[p.impostor] for p in pairs]]
        assert np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-3)
        dist[tier] = 1 - (a * b).sum(axis=1)
    means = [dist[t].mean() for t in TIERS]
    assert means == sorted(means, reverse=True)  # easy farthest ... expert closest
    for easier, harder in zip(TIERS, TIERS[1:]):
        assert stats.mannwhitneyu(dist[easier], dist[harder], alternative="greater").pvalue < 1e-3, (easier, harder)
    tier_index = np.repeat(np.arange(4), PAIRS_PER_TIER)
    rho = stats.spearmanr(tier_index, np.concatenate([dist[t] for t in TIERS])).statistic
    assert rho == pytest.approx(-0.83, abs=0.005)
    for tier, (mean, median, sd, lo, hi) in _documented_distance_table().items():
        d = dist[tier]
        got = [d.mean(), np.median(d), d.std(ddof=1), d.min(), d.max()]
        assert got == pytest.approx([mean, median, sd, lo, hi], abs=0.0011), tier


# --------------------------------------------------------------------------- which file a run used


def test_word_pairs_file_is_the_absolute_path(tmp_path, monkeypatch):
    from impostor_bench.core.wordpairs import word_pairs_file

    assert word_pairs_file() == str(default_word_pairs_path())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.json").write_text('{"easy": [["pizza", "gravity"]]}')
    assert word_pairs_file("p.json") == str((tmp_path / "p.json").resolve())


def test_report_header_names_each_file_or_says_not_recorded():
    import pandas as pd

    from impostor_bench.analysis.report.build import _word_pair_files
    from impostor_bench.analysis.report.pages import _word_pairs_text

    old = pd.DataFrame({"game_id": ["a", "b"]})
    assert _word_pair_files(old) == []
    assert "not recorded" in _word_pairs_text([])
    g = pd.DataFrame({"word_pairs_file": ["/x/a.json", "/x/a.json", "/y/b.json", None],
                      "word_pairs_sha256": ["1" * 64, "1" * 64, "2" * 64, None]})
    files = _word_pair_files(g)
    assert files == [{"file": None, "sha256": None, "games": 1},
                     {"file": "/x/a.json", "sha256": "1" * 64, "games": 2},
                     {"file": "/y/b.json", "sha256": "2" * 64, "games": 1}]
    text = _word_pairs_text(files)
    assert f"`a.json` (sha256 `{'1' * 64}`, 2 games, /x/a.json)" in text
    assert "`b.json`" in text and "(name not recorded)" in text and "several files" in text


def test_custom_pair_file_is_named_and_hashed_from_task_to_report(tmp_path, monkeypatch):
    """-T word_pairs=<relative custom file> -> task metadata -> MLflow params and tables ->
    exported games.parquet -> report header and manifest, each naming the file and its SHA-256."""
    import contextvars

    from inspect_ai import eval as inspect_eval
    from mlflow.tracking import MlflowClient

    from impostor_bench.analysis.io import load_tables
    from impostor_bench.analysis.report import build_report
    from impostor_bench.analysis.stats import StatsConfig
    from impostor_bench.commands.report import load_from_mlflow
    from impostor_bench.export import tables_from_logs, write_tables
    from impostor_bench.tasks.impostor import impostor

    for var in ("IMPOSTOR_MLFLOW", "MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "IMPOSTOR_MLFLOW_EXPERIMENT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    monkeypatch.chdir(tmp_path)
    pairs = tmp_path / "my_pairs.json"
    pairs.write_text(json.dumps({"hard": [["lake", "pond"], ["cup", "mug"], ["road", "street"]]}))
    path, sha = str(pairs.resolve()), hashlib.sha256(pairs.read_bytes()).hexdigest()
    assert sha != word_pairs_sha256()

    task = contextvars.Context().run(impostor, difficulty="hard", n_games=4, word_pairs="my_pairs.json")
    [log] = inspect_eval(task, model="bot/random", log_dir="logs", display="none")
    assert log.status == "success", log.error
    assert (log.eval.metadata["word_pairs_file"], log.eval.metadata["word_pairs_sha256"]) == (path, sha)
    assert {s.metadata["pair_id"] for s in log.samples} <= {"hard-001", "hard-002", "hard-003"}

    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    [run] = client.search_runs([client.get_experiment_by_name("impostor").experiment_id])
    assert (run.data.params["word_pairs_file"], run.data.params["word_pairs_sha256"]) == (path, sha)
    [ds] = client.get_run(run.info.run_id).inputs.dataset_inputs
    assert ds.dataset.digest == sha[:16] and path in ds.dataset.source

    tables = tables_from_logs("logs")
    assert (tables.games["word_pairs_file"] == path).all() and (tables.games["word_pairs_sha256"] == sha).all()
    write_tables(tables, tmp_path / "export")
    cfg = StatsConfig(bootstrap_reps=20, permutation_reps=20)
    for data, out in ((load_tables(tmp_path / "export"), "rep_parquet"),
                      (load_from_mlflow("impostor", client.tracking_uri), "rep_mlflow")):
        m = build_report(data, tmp_path / out, cfg, figures=False)
        assert m["data"]["word_pairs"] == [{"file": path, "sha256": sha, "games": 4}]
        saved = json.loads((tmp_path / out / "manifest.json").read_text())
        assert saved["data"]["word_pairs"] == m["data"]["word_pairs"]
        report = (tmp_path / out / "report.md").read_text()
        assert f"Word pairs: `my_pairs.json` (sha256 `{sha}`, 4 games, {path})." in report
