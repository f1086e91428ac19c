"""The layers of docs/architecture.md, enforced: who may import whom (issue 14).

Every module is parsed with ``ast`` (imports inside functions included), so a lazy
import cannot slip past.  Layers, bottom up: core → adapters → command line.
Also (issue 31): no import cycles, no private name across modules, no private Inspect
module path outside impostor_bench/inspect_compat.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("inspect_ai", "mlflow", "litellm", "pandas")


# The top-level folders installed as sub-packages of impostor_bench (symlinks in impostor_bench/).
MAPPED = ("tasks", "solvers", "scorers", "analysis")


def _modules(*dirs: str) -> list[Path]:
    """The .py files under the given folders, each once under its real path (the symlinks in
    impostor_bench/ to the top-level folders are not walked twice)."""
    out = set()
    for d in dirs:
        for p in (ROOT / d).rglob("*.py"):
            rel = p.relative_to(ROOT).parts
            if rel[0] == "impostor_bench" and len(rel) > 2 and rel[1] in MAPPED:
                continue
            out.add(p)
    return sorted(out)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def _offending(paths: list[Path], allowed, forbidden) -> list[str]:
    bad = []
    for p in paths:
        for name in sorted(_imports(p)):
            if forbidden(name) and not allowed(name):
                bad.append(f"{p.relative_to(ROOT)} imports {name}")
    return bad


def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_core_is_pure():
    """The core imports no Inspect/MLflow/litellm/pandas and nothing of impostor-bench outside it."""
    bad = _offending(
        _modules("impostor_bench/core"), allowed=lambda n: _under(n, "impostor_bench.core"),
        forbidden=lambda n: _under(n, *HEAVY, "impostor_bench"),
    )
    assert not bad, "\n".join(bad)


def test_core_imports_alone():
    """Importing every core module loads none of the heavy libraries (checked in a fresh interpreter)."""
    import subprocess
    import sys

    mods = [f"impostor_bench.core.{p.stem}" for p in _modules("impostor_bench/core") if p.stem != "__init__"]
    code = ("import sys\n" + "".join(f"import {m}\n" for m in mods)
            + f"print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""


def test_analysis_reads_tables_and_core_only():
    bad = _offending(
        _modules("analysis"),
        allowed=lambda n: _under(n, "impostor_bench.core", "impostor_bench.analysis"),
        forbidden=lambda n: _under(n, "impostor_bench", "inspect_ai", "mlflow", "litellm"),
    )
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("layer", ["impostor_bench/core", "impostor_bench/providers", "impostor_bench/tracking", "solvers", "scorers",
                                   "tasks", "analysis"])
def test_no_lower_layer_imports_the_command_line(layer):
    bad = _offending(_modules(layer), allowed=lambda n: False,
                     forbidden=lambda n: _under(n, "impostor_bench.cli", "impostor_bench.commands"))
    assert not bad, "\n".join(bad)


def _private_path(name: str) -> bool:
    """Any dotted component that starts with ``_`` (``inspect_ai._util``, ``inspect_ai.model._model``)."""
    return any(part.startswith("_") for part in name.split("."))


def test_inspect_private_api_only_in_the_compat_module():
    """Inspect's private modules (any ``_``-component of the path, ``inspect_ai.model._model`` too)
    are reached through impostor_bench/inspect_compat.py only; what ``inspect_ai.model`` exports is public."""
    compat = ROOT / "impostor_bench" / "inspect_compat.py"
    paths = [p for p in _modules("impostor_bench", "solvers", "scorers", "tasks", "analysis") if p != compat]
    bad = []
    for p in paths:
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]  # `from inspect_ai import _x`
            else:
                continue
            bad += [f"{p.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                    if _under(n, "inspect_ai") and _private_path(n)]
    assert not bad, "\n".join(bad)


MOVED = ("rules", "records", "schedule", "parsing", "prompts", "wordpairs", "experiment", "glyphs", "errors",
         "generation", "call_limits")


def test_nothing_imports_the_core_by_its_old_paths():
    """The game modules live in impostor_bench.core only (issue 14): no impostor.<module> aliases."""
    old = {f"impostor_bench.{m}" for m in MOVED}
    bad = _offending(_modules("impostor_bench", "solvers", "scorers", "tasks", "analysis", "tests", "benchmarks"),
                     allowed=lambda n: False,
                     forbidden=lambda n: any(_under(n, o) for o in old))
    assert not bad, "\n".join(bad)
    assert not [m for m in MOVED if (ROOT / "impostor_bench" / f"{m}.py").exists()]


OLD_TOP_LEVEL = ("impostor", "tasks", "solvers", "scorers", "analysis", "configs")


def test_nothing_imports_the_old_top_level_names():
    """One installed name (issue 41): every import of the project is ``impostor_bench.…``."""
    bad = _offending(_modules("impostor_bench", "solvers", "scorers", "tasks", "analysis", "tests", "benchmarks",
                              "scripts"),
                     allowed=lambda n: False, forbidden=lambda n: _under(n, *OLD_TOP_LEVEL))
    assert not bad, "\n".join(bad)
    assert not (ROOT / "impostor").exists()


def test_the_impostor_package_does_not_import_the_task_layer():
    """tasks/, solvers/, scorers/ sit on top of impostor's core and adapters; only the command line
    (impostor_bench/cli.py, impostor_bench/commands/) wires them in (e.g. the sweep gets the task function)."""
    paths = [p for p in _modules("impostor_bench") if p.relative_to(ROOT).parts[1] not in ("commands", "cli.py",
                                                                                            "_registry.py")]
    bad = _offending(paths, allowed=lambda n: False,
                     forbidden=lambda n: _under(n, *(f"impostor_bench.{m}" for m in ("tasks", "solvers", "scorers"))))
    assert not bad, "\n".join(bad)


PACKAGES = ("impostor_bench", "tasks", "solvers", "scorers", "analysis")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    parts = ["impostor_bench", *parts] if parts[0] in MAPPED else parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(tree: ast.AST):
    """Every import statement that can run: module level and inside functions (a lazy import
    that closes a circle still fails when called first from the other side, and hides the circle
    from readers), but not those under ``if TYPE_CHECKING:``, which never run."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip:
            yield node


def _import_graph():
    """Project module → project modules it imports.  ``from pkg import name`` points at the
    submodule ``pkg.name`` when there is one, else at ``pkg`` (its ``__init__``).  Importing a
    submodule's parent packages implicitly is not an edge: Python runs them first, harmlessly."""
    import networkx as nx

    paths = {_module_name(p): p for p in _modules(*PACKAGES)}
    graph = nx.DiGraph()
    graph.add_nodes_from(paths)
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            for t in targets:
                while t and t not in paths:  # `import a.b.c` of a name inside a module: its module
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph.add_edge(name, t)
    return graph


def test_the_import_graph_has_a_cycle_detector_that_works():
    """The graph sees the edges this test relies on (a graph with no edges would pass anything)."""
    graph = _import_graph()
    assert graph.has_edge("impostor_bench.tracking.sync", "impostor_bench.tracking.store")
    assert graph.has_edge("impostor_bench.analysis.stats.odds", "impostor_bench.analysis.stats._base")


def test_no_import_cycles():
    """No circle among the project's modules (issue 31): a shared piece lives where both sides
    can import it one way.  Counts module-level and lazy (in-function) imports, not TYPE_CHECKING."""
    import networkx as nx

    cycles = sorted(" -> ".join(c + [c[0]]) for c in nx.simple_cycles(_import_graph()))
    assert not cycles, f"{len(cycles)} import cycle(s):\n" + "\n".join(cycles[:20])


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_crossings(name: str, path: Path, modules: set[str]) -> list[str]:
    """What ``name`` (at ``path``) reaches of another project module's private parts."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    where = str(path.relative_to(ROOT))
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad, module_aliases = [], set()

    def private_module(target: str) -> bool:
        parts = target.split(".")
        return any(_private(p) and not _under(package, ".".join(parts[:i])) for i, p in enumerate(parts))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in modules:
                    module_aliases.add(a.asname or a.name.split(".")[0])
                    if private_module(a.name):
                        bad.append(f"{where}:{node.lineno} imports the private module {a.name}")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            if base not in modules:
                continue
            if private_module(base):
                bad.append(f"{where}:{node.lineno} imports the private module {base}")
            for a in node.names:
                full = f"{base}.{a.name}"
                if full in modules:
                    module_aliases.add(a.asname or a.name)
                    if private_module(full):
                        bad.append(f"{where}:{node.lineno} imports the private module {full}")
                elif _private(a.name):
                    bad.append(f"{where}:{node.lineno} imports the private name {a.name} of {base}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in module_aliases):
            bad.append(f"{where}:{node.lineno} uses {node.value.id}.{node.attr}, private to its module")
    return bad


def test_no_private_names_cross_modules():
    """A ``_name`` is private to its module and a ``_module`` to its package (issue 31): what another
    module needs is public, so a rename or a move shows who depends on it."""
    paths = {_module_name(p): p for p in _modules(*PACKAGES)}
    bad = [b for name, path in sorted(paths.items()) for b in _private_crossings(name, path, set(paths))]
    assert not bad, "\n".join(bad)
