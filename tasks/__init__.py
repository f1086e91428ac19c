"""tasks package of impostor-bench: installed as ``impostor_bench.tasks`` (the one installed name).

From the repository root the folder could also be imported as ``tasks``, which would load its
files a second time as other modules (their own registries, classes that are not the
installed ones): that name is refused in one line (docs/architecture.md, "One installed name").
"""

if not __name__.startswith("impostor_bench."):
    raise ImportError(f"import impostor_bench.{__name__}, not {__name__}: the folder tasks/ is the installed "
                      f"package impostor_bench.tasks and has no second name (docs/architecture.md)")
