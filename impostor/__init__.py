"""impostor-bench core: the game rules, schedules, prompts and record schema.

Everything in this package except ``impostor.providers``, ``impostor.tracking``
and the CLI is free of Inspect imports, so rules are testable on their own.
"""

__version__ = "0.1.0"

import os as _os

# The working directory when impostor-bench was first imported. `inspect eval` loads our
# entry points at start-up, before it moves into the task file's folder to build the task,
# so relative -T paths can still be resolved as the user meant them.
LAUNCH_DIR = _os.getcwd()
