"""A reading command run from any folder finds the experiments the demo wrote into the checkout's
``mlruns/`` (no ``mlruns/`` there, no URI given), says so in one line, and changes nothing else:
an explicit URI, ``MLFLOW_TRACKING_URI`` or a local ``./mlruns`` still win, and an experiment the
checkout's store does not hold keeps today's one-line refusal."""

from __future__ import annotations

import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.tracking import store


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A fake checkout (pyproject.toml + an MLflow store with one experiment) and an empty folder."""
    from mlflow import MlflowClient

    root = tmp_path / "repo"
    (root / "mlruns").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname='x'\n")
    MlflowClient(f"sqlite:///{root / 'mlruns' / 'mlflow.db'}").create_experiment("impostor-demo")
    elsewhere = tmp_path / "empty"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setattr(store, "_checkout_root", lambda: root)
    return root


def test_from_an_empty_folder_the_checkouts_store_is_read_and_named(checkout):
    uri, line = store.reading_uri("impostor-demo")
    assert uri == f"sqlite:///{checkout / 'mlruns' / 'mlflow.db'}"
    assert line is not None and str(checkout / "mlruns") in line and "no mlruns/" in line


def test_an_experiment_the_checkout_lacks_keeps_the_default(checkout):
    assert store.reading_uri("something-else") == (None, None)


def test_explicit_env_and_local_store_win(checkout, monkeypatch, tmp_path):
    assert store.reading_uri("impostor-demo", "sqlite:///x.db") == ("sqlite:///x.db", None)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://example.invalid")
    assert store.reading_uri("impostor-demo") == (None, None)
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    (tmp_path / "empty" / "mlruns").mkdir()
    (tmp_path / "empty" / "mlruns" / "mlflow.db").write_bytes(b"")
    assert store.reading_uri("impostor-demo") == (None, None)


def test_not_a_checkout_is_never_read(checkout):
    (checkout / "pyproject.toml").unlink()
    assert store.reading_uri("impostor-demo") == (None, None)


def test_read_experiment_reports_the_store_it_read(checkout):
    from impostor_bench.commands._source import read_experiment

    said: list[str] = []
    before = sorted(p.name for p in checkout.rglob("*"))
    with pytest.raises(ImpostorError):  # the experiment has no runs with tables: refused after the store is chosen
        read_experiment("impostor-demo", None, said.append)
    assert said and str(checkout / "mlruns") in said[0]
    assert "impostor-demo" in said[1]
    # nothing new but the store's setup lock (taken by every reader of a local store)
    assert sorted(p.name for p in checkout.rglob("*") if p.name != "mlflow.db.lock") == before
