"""Suite-wide test settings: offline, and no MLflow runs in the developer's ./mlruns.

Tests that exercise tracking set IMPOSTOR_MLFLOW (and MLFLOW_TRACKING_URI) themselves.
"""

import os

os.environ.setdefault("IMPOSTOR_MLFLOW", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
