"""Imported by a sweep under test (``imports: [slow_mlflow]``): stall MLflow logging.

When ``IMPOSTOR_TEST_MLFLOW_STALL`` names a file, the first ``MlflowClient.log_artifacts``
call (the run's tables, logged after its metrics) creates that file and then sleeps,
so a test can SIGKILL the sweep while a run is half logged.  Without the variable
this module does nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

_MARKER = os.environ.get("IMPOSTOR_TEST_MLFLOW_STALL")

if _MARKER:
    from mlflow.tracking import MlflowClient

    _original = MlflowClient.log_artifacts

    def _stalling_log_artifacts(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        marker = Path(_MARKER)
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            time.sleep(600)
        return _original(self, *args, **kwargs)

    MlflowClient.log_artifacts = _stalling_log_artifacts  # type: ignore[method-assign]
