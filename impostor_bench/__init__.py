"""The installed name of the benchmark for Inspect: ``inspect eval impostor_bench/impostor``.

Inspect names a task registered by an installed package ``<top-level package>/<task>`` and,
for a name it does not know yet, loads the ``inspect_ai`` entry point named like the package
(``impostor_bench``, pyproject.toml), which is :mod:`impostor_bench._registry`.  The game
itself is in ``tasks/impostor.py`` and ``impostor``; this package only names it.
"""
