"""How a sweep config's YAML is read: a key given twice is refused however YAML hides it (a
``<<:`` merge key), and ``1e-3`` is the number it looks like (YAML 1.2; PyYAML's 1.1 reads text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.sweep.config import load_config

HEAD = "name: s\nmodels: [bot/random]\nmodes: [homogeneous]\ndifficulties: [easy]\n"


def _cfg(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(HEAD + text)
    return p


@pytest.mark.parametrize("text, key", [
    # the merged value first, the written one after: YAML keeps 500 silently
    ("<<: {games_per_experiment: 2}\ngames_per_experiment: 500\n", "games_per_experiment"),
    # through an anchor defined elsewhere, and the written key before the merge
    ("defaults: &d {games_per_experiment: 2}\ngames_per_experiment: 500\n<<: *d\n", "games_per_experiment"),
    # a list of merged mappings, the key in the second
    ("games_per_experiment: 3\n<<: [{seeds: [0]}, {games_per_experiment: 9}]\n", "games_per_experiment"),
    # nested: a merge inside a merged mapping, in a nested field
    ("games_per_experiment: 2\nretries: {<<: {<<: {attempts: 1}}, attempts: 3}\n", "attempts"),
])
def test_a_key_merged_and_written_is_given_twice(tmp_path, text, key):
    with pytest.raises(ImpostorError, match=rf"s\.yaml: line \d+: key '{key}' is given twice .*fix: keep one"):
        load_config(_cfg(tmp_path, text))


def test_a_merge_without_a_repeat_still_reads(tmp_path):
    cfg = load_config(_cfg(tmp_path, "games_per_experiment: 2\nretries: {<<: {attempts: 4, wait: 0}}\n"))
    assert cfg.retries.attempts == 4 and cfg.games_per_experiment == 2


def test_exponent_numbers_are_numbers(tmp_path):
    cfg = load_config(_cfg(tmp_path, "games_per_experiment: 2\ntemperature: 1e-3\nvote_temperature: 2E-1\n"
                                      "retries: {wait: 5e-1}\n"))
    assert cfg.temperature == pytest.approx(0.001) and cfg.vote_temperature == pytest.approx(0.2)
    assert cfg.retries.wait == pytest.approx(0.5)
    with pytest.raises(ImpostorError, match=r"field 'temperature'.*fix"):  # still bounded
        load_config(_cfg(tmp_path, "games_per_experiment: 2\ntemperature: 3e0\n"))
    with pytest.raises(ImpostorError, match=r"field 'games_per_experiment'"):  # a whole number stays one
        load_config(_cfg(tmp_path, "games_per_experiment: 1e1\n"))
