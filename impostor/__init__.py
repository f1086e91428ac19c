"""impostor-bench: the pure game core (``impostor.core``) and the adapters around it.

``impostor.core`` holds the rules, records, schedules, prompts and parsing, free of
Inspect, MLflow, litellm and pandas.  The rest of this package adapts it: model
providers (``providers``), MLflow tracking (``tracking``), export, the model registry,
sweeps and the command line (``cli``, ``commands``).  docs/architecture.md.
"""

__version__ = "0.1.0"

import os as _os

# The working directory when impostor-bench was first imported. `inspect eval` loads our
# entry points at start-up, before it moves into the task file's folder to build the task,
# so relative -T paths can still be resolved as the user meant them.
LAUNCH_DIR = _os.getcwd()
