"""The pure game core: everything the rules of the Impostor Game are, and nothing that runs them.

Rules and winner logic (``rules``), the record schema of the data contract, the seat
count and the ballot classes (``records``), what each mode is (``modes``), every game
option (``options``), schedules (``schedule``), the experiment identity (``experiment``),
prompts (``prompts``; in other languages ``translations``), the shipped languages (``languages``)
and their inflections (``inflections``), description rules (``descriptions``, ``glyphs``), ballot parsing
(``parsing``), model text bounds (``model_text``), word pairs (``wordpairs``), generation
settings (``generation``), call bounds (``call_limits``), user-facing errors (``errors``) and the
refusal of a top-level folder's second name (``installed_name``).

Plain Python (pydantic for the schema; regex/ICU for Unicode): it imports none of
inspect_ai, mlflow, litellm or pandas, and nothing else of impostor-bench, so the rules
are testable alone.  ``tests/test_layering.py`` enforces it; ``docs/architecture.md``
has the layer picture.
"""
