"""The pure game core: everything the rules of the Impostor Game are, and nothing that runs them.

Rules and winner logic (``rules``), the record schema of the data contract and the
ballot classes (``records``), schedules (``schedule``), the experiment identity and
mode → roles (``experiment``), prompts (``prompts``), parsing of descriptions and
ballots (``parsing``, ``glyphs``), word pairs (``wordpairs``), generation settings
(``generation``), call bounds (``call_limits``) and user-facing errors (``errors``).

Plain Python (pydantic for the schema; regex/ICU for Unicode): it imports none of
inspect_ai, mlflow, litellm or pandas, and nothing else of impostor-bench, so the rules
are testable alone.  ``tests/test_layering.py`` enforces it; ``docs/architecture.md``
has the layer picture.
"""
