"""analysis package of impostor-bench: installed as ``impostor_bench.analysis`` (the one installed name).

From the repository root the folder could also be imported as ``analysis``, which would load its
files a second time as other modules (their own registries, classes that are not the
installed ones): that name is refused in one line (docs/architecture.md, "One installed name").
"""

if not __name__.startswith("impostor_bench."):
    raise ImportError(f"import impostor_bench.{__name__}, not {__name__}: the folder analysis/ is the installed "
                      f"package impostor_bench.analysis and has no second name (docs/architecture.md)")
