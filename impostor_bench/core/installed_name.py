"""The one installed name of the top-level folders ``tasks/``, ``solvers/``, ``scorers/`` and
``analysis/``: each is the package ``impostor_bench.<folder>``. From the repository root the folder
could also be imported by its short name, which would load its files a second time as other
modules (their own registries, classes that are not the installed ones); each folder's
``__init__`` calls :func:`refuse_second_name` so that name fails in one line
(docs/architecture.md, "One installed name"). It lives in the core because every layer, the
analysis included, may import the core."""

from __future__ import annotations


def refuse_second_name(name: str) -> None:
    """Raise ImportError naming the installed name unless the package ``name`` (its ``__name__``)
    was imported as ``impostor_bench.<folder>``."""
    if not name.startswith("impostor_bench."):
        raise ImportError(f"import impostor_bench.{name}, not {name}: the folder {name}/ is the installed "
                          f"package impostor_bench.{name} and has no second name (docs/architecture.md)")
