"""The shipped sweep configs are named from any folder (``impostor sweep smoke``), and a config
that is not found gets a fix that works from where the user stands."""

from __future__ import annotations

from pathlib import Path

import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.sweep.plan import config_path, plan, shipped_configs

from test_sweep_helpers import REPO, run_cli


def test_the_shipped_configs_are_the_package_sweep_configs():
    shipped = shipped_configs()
    assert {"smoke", "demo", "demo-llm", "paper"} <= shipped.keys() and "models" not in shipped
    assert shipped["smoke"].read_bytes() == (REPO / "configs" / "smoke.yaml").read_bytes()


@pytest.mark.parametrize("name", ["smoke", "smoke.yaml", "configs/smoke.yaml"])
def test_a_shipped_config_is_found_by_name_from_an_empty_folder(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert config_path(name) == shipped_configs()["smoke"]
    assert plan(name).config.name == plan(REPO / "configs" / "smoke.yaml").config.name


def test_a_file_in_the_current_folder_comes_before_the_shipped_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "smoke.yaml").write_text((REPO / "configs" / "smoke.yaml").read_text().replace("name: ", "name: mine-", 1))
    assert config_path("smoke.yaml") == Path("smoke.yaml")
    assert plan("smoke.yaml").config.name.startswith("mine-")


def test_an_unknown_config_names_the_shipped_ones_not_a_path_that_failed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("nosuch", "configs/nosuch.yaml", "elsewhere/smoke.yaml"):
        with pytest.raises(ImpostorError) as exc:
            config_path(name)
        message = str(exc.value)
        assert message.startswith(f"{name}: sweep config not found") and "configs/" not in message.split("fix:")[1]
        assert set(message.split("name of a shipped config: ")[1].split(", ")) == set(shipped_configs())
        assert str(tmp_path) in message  # where it looked


def test_sweep_dry_run_of_a_shipped_config_from_an_empty_folder(tmp_path):
    """The README's `impostor sweep smoke --dry-run`, run where there is no checkout: the plan,
    exit 0, and nothing written to the folder (a dry run)."""
    r = run_cli(["sweep", "smoke", "--dry-run"], cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "experiments" in r.stdout and str(shipped_configs()["smoke"]) in r.stdout
    assert list(tmp_path.iterdir()) == []
    r = run_cli(["sweep", "configs/nosuch.yaml", "--dry-run"], cwd=tmp_path, timeout=180)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "name of a shipped config: " in r.stderr and "smoke" in r.stderr
