"""The layers of docs/architecture.md, enforced: who may import whom (issue 14).

Every module is parsed with ``ast`` (imports inside functions included), so a lazy
import cannot slip past.  Layers, bottom up: core → adapters → command line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("inspect_ai", "mlflow", "litellm", "pandas")


def _modules(*dirs: str) -> list[Path]:
    return sorted(p for d in dirs for p in (ROOT / d).rglob("*.py"))


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
        _modules("impostor/core"), allowed=lambda n: _under(n, "impostor.core"),
        forbidden=lambda n: _under(n, *HEAVY, "impostor", "solvers", "scorers", "tasks", "analysis"),
    )
    assert not bad, "\n".join(bad)


def test_core_imports_alone():
    """Importing every core module loads none of the heavy libraries (checked in a fresh interpreter)."""
    import subprocess
    import sys

    mods = [f"impostor.core.{p.stem}" for p in _modules("impostor/core") if p.stem != "__init__"]
    code = ("import sys\n" + "".join(f"import {m}\n" for m in mods)
            + f"print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""


def test_analysis_reads_tables_and_core_only():
    bad = _offending(
        _modules("analysis"),
        allowed=lambda n: _under(n, "impostor.core", "analysis"),
        forbidden=lambda n: _under(n, "impostor", "solvers", "scorers", "tasks", "inspect_ai", "mlflow", "litellm"),
    )
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("layer", ["impostor/core", "impostor/providers", "impostor/tracking", "solvers", "scorers",
                                   "tasks", "analysis"])
def test_no_lower_layer_imports_the_command_line(layer):
    bad = _offending(_modules(layer), allowed=lambda n: False,
                     forbidden=lambda n: _under(n, "impostor.cli", "impostor.commands"))
    assert not bad, "\n".join(bad)


def test_inspect_private_api_only_in_the_compat_module():
    """Inspect's private modules (``inspect_ai._...``) are reached through one module only."""
    compat = ROOT / "impostor" / "inspect_compat.py"
    paths = [p for p in _modules("impostor", "solvers", "scorers", "tasks", "analysis") if p != compat]
    bad = _offending(paths, allowed=lambda n: False,
                     forbidden=lambda n: n.startswith("inspect_ai._"))
    assert not bad, "\n".join(bad)


MOVED = ("rules", "records", "schedule", "parsing", "prompts", "wordpairs", "experiment", "glyphs", "errors",
         "generation", "call_limits")


def test_nothing_imports_the_core_by_its_old_paths():
    """The game modules live in impostor.core only (issue 14): no impostor.<module> aliases."""
    old = {f"impostor.{m}" for m in MOVED}
    bad = _offending(_modules("impostor", "solvers", "scorers", "tasks", "analysis", "tests", "benchmarks"),
                     allowed=lambda n: False,
                     forbidden=lambda n: any(_under(n, o) for o in old))
    assert not bad, "\n".join(bad)
    assert not [m for m in MOVED if (ROOT / "impostor" / f"{m}.py").exists()]


def test_the_impostor_package_does_not_import_the_task_layer():
    """tasks/, solvers/, scorers/ sit on top of impostor's core and adapters; only the command line
    (impostor/cli.py, impostor/commands/) wires them in (e.g. the sweep gets the task function)."""
    paths = [p for p in _modules("impostor") if "commands" not in p.parts and p.name != "cli.py"]
    bad = _offending(paths, allowed=lambda n: False, forbidden=lambda n: _under(n, "tasks", "solvers", "scorers"))
    assert not bad, "\n".join(bad)
