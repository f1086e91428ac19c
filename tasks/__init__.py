"""tasks package of impostor-bench: installed as ``impostor_bench.tasks`` (the one installed name).

From the repository root the folder could also be imported as ``tasks``, which would load its
files a second time as other modules (their own registries, classes that are not the
installed ones): that name is refused in one line (``core.installed_name``; docs/architecture.md, "One installed name").
"""

from impostor_bench.core.installed_name import refuse_second_name

refuse_second_name(__name__)
