"""MLflow tracking of impostor evals: hooks (one run per experiment), sweep parent runs, ``impostor sync``.

Importing this package is cheap (no mlflow import); :mod:`impostor_bench.tracking.hooks`
is the module the ``inspect_ai`` entry point loads to register the hooks.
"""

from impostor_bench.tracking.store import (  # noqa: F401
    DEFAULT_EXPERIMENT,
    ENV_DISABLE,
    TrackingUnavailable,
    experiment_name,
    tracking_disabled,
    tracking_uri,
)
