"""Bounds on structured user input (a sweep config, a ``-T`` value) once parsed.

YAML aliases make a few bytes a cyclic or exponentially large value (``a: &a [*a]``, the
"billion laughs"): a reader that walks it recursively raises ``RecursionError`` or runs out
of memory. ``shape_problem`` walks it iteratively, counting an alias as often as it is
used, and stops at the first bound passed.

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

from typing import Any, Optional


def shape_problem(value: Any, max_values: int, max_depth: int) -> Optional[str]:
    """Why ``value`` (dicts, lists, tuples, scalars) is too big or too deep, else None."""
    count = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        count += 1
        if depth > max_depth:
            return f"nests deeper than {max_depth} levels (a recursive YAML anchor?)"
        if count > max_values:
            return f"holds more than {max_values:,} values (a recursive or repeated YAML anchor?)"
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for kv in v.items() for x in kv)
        elif isinstance(v, (list, tuple)):
            stack.extend((x, depth + 1) for x in v)
    return None
