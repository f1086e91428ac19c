"""``rounds:`` in a sweep config: part of the games' identity, invisible at rounds=1."""

from __future__ import annotations

import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.sweep import load_config, plan
from impostor_bench.sweep.config import config_hash
from impostor_bench.sweep.plan import task_spec

from test_sweep_helpers import write_config



def test_rounds_one_keeps_hash_identity_and_task_args(tmp_path):
    plain = write_config(tmp_path / "a.yaml")
    explicit = write_config(tmp_path / "b.yaml", rounds=1, private_notes=False)
    assert config_hash(load_config(plain), plain) == config_hash(load_config(explicit), explicit)
    pa, pb = plan(plain), plan(explicit)
    assert [e.label for e in pa.experiments] == [e.label for e in pb.experiments]
    assert all(not e.label.endswith(("|r1", "|r1n")) and "|r" not in e.label for e in pa.experiments)
    spec = task_spec(pa.experiments[0], pa.config, pa.path, {})
    assert "rounds" not in spec["task_args"] and "private_notes" not in spec["task_args"]


def test_more_rounds_change_hash_identity_and_task_args(tmp_path):
    plain = write_config(tmp_path / "a.yaml")
    three = write_config(tmp_path / "b.yaml", rounds=3, private_notes=True)
    assert config_hash(load_config(plain), plain) != config_hash(load_config(three), three)
    p1, p3 = plan(plain), plan(three)
    assert [e.label + "|r3n" for e in p1.experiments] == [e.label for e in p3.experiments]
    spec = task_spec(p3.experiments[0], p3.config, p3.path, {})
    assert spec["task_args"]["rounds"] == 3 and spec["task_args"]["private_notes"] is True


@pytest.mark.parametrize("change, fix", [({"rounds": 0}, "rounds"), ({"rounds": 11}, "rounds"),
                                         ({"private_notes": True}, "private_notes needs rounds of 2 or more")])
def test_bad_rounds_fields_name_file_field_and_fix(tmp_path, change, fix):
    p = write_config(tmp_path / "bad.yaml", **change)
    with pytest.raises(ImpostorError) as ei:
        load_config(p)
    assert str(p) in str(ei.value) and fix in str(ei.value) and "fix" in str(ei.value)


def test_dry_run_says_the_rounds(tmp_path, capsys):
    from impostor_bench.sweep.run import print_plan

    for kw, said in (({}, None), ({"rounds": 3}, "of up to 3 rounds"),
                     ({"rounds": 2, "private_notes": True}, "of up to 2 rounds with private notes")):
        pl = plan(write_config(tmp_path / "c.yaml", **kw))
        pl.resolved = {m: m for m in pl.config.models}
        print_plan(pl, tmp_path, list_all=False)
        first = capsys.readouterr().out.splitlines()[0].split("): ", 1)[1]  # after the file name
        assert (said is None and "round" not in first) or (said is not None and first.endswith(said)), first
