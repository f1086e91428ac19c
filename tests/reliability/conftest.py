"""Shared fixtures: no MLflow tracking unless a test asks for it, a fault server per module."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _no_tracking_by_default():
    """In-process evals must not log to ./mlruns of the checkout (tests that need
    tracking set IMPOSTOR_MLFLOW and MLFLOW_TRACKING_URI themselves)."""
    old = os.environ.get("IMPOSTOR_MLFLOW")
    os.environ["IMPOSTOR_MLFLOW"] = "0"
    yield
    if old is None:
        os.environ.pop("IMPOSTOR_MLFLOW", None)
    else:
        os.environ["IMPOSTOR_MLFLOW"] = old
