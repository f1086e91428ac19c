"""impostor-bench: the one installed name of the benchmark.

Everything the distribution ships lives under ``impostor_bench``:

- ``impostor_bench.core``: the rules, records, schedules, prompts and parsing, free of
  Inspect, MLflow, litellm and pandas;
- the adapters around it: model providers (``providers``), the Inspect solvers, scorers and
  task (``solvers``, ``scorers``, ``tasks``: the repository's top-level ``solvers/``,
  ``scorers/`` and ``tasks/`` folders), MLflow tracking (``tracking``), export, the model
  registry and sweeps;
- ``analysis``: the tables, statistics and report (the top-level ``analysis/`` folder);
- the command line (``cli``, ``commands``), the top layer: it imports downwards only.

Inspect names the task ``impostor_bench/impostor`` (:mod:`impostor_bench._registry`).
docs/architecture.md.
"""

__version__ = "0.1.0"

import os as _os

# The working directory when impostor-bench was first imported. `inspect eval` loads our
# entry points at start-up, before it moves into the task file's folder to build the task,
# so relative -T paths can still be resolved as the user meant them.
LAUNCH_DIR = _os.getcwd()
