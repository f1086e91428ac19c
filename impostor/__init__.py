"""impostor-bench core: the game rules, schedules, prompts and record schema.

Everything in this package except ``impostor.providers``, ``impostor.tracking``
and the CLI is free of Inspect imports, so rules are testable on their own.
"""

__version__ = "0.1.0"
