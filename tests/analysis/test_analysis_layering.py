"""``analysis/`` depends on the data contract (the tables) and the game core's constants only
(issue 14): every import of every analysis module, those inside functions included, is checked
here, so reaching into tracking, providers, export, the commands or Inspect/MLflow cannot return.
What analysis needs from an adapter (MLflow tables, word vectors) the command layer passes in."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ANALYSIS = ROOT / "analysis"

# Third-party packages analysis may use: the statistics and plotting stack, pyarrow, the Parquet
# engine the tables are stored in, and threadpoolctl, which sets that stack's BLAS threads (the report
# runs BLAS on one: analysis/stats/engine.py).
THIRD_PARTY = {"pandas", "numpy", "scipy", "statsmodels", "pingouin", "networkx", "matplotlib", "pyarrow",
               "threadpoolctl"}
# The game core modules analysis may read constants and helpers from, and the core's one reader
# and one writer of files (a regular file within a cap; never through a link out of the folder).
CORE = {"records", "rules", "parsing", "errors", "wordpairs", "schedule", "experiment", "modes", "input_files",
        "output_files",
        "glyphs",  # a description's length counted as the length rule counts it (stats/length_normalised.py)
        "group",  # the paper's group size and the conviction threshold (validate.py, stats/groups.py, sim/groups.py)
        "installed_name"}  # the one guard that refuses a top-level folder's second name (analysis/__init__.py)


def _allowed(module: str) -> bool:
    parts = module.split(".")
    if parts[0] in sys.stdlib_module_names or parts[0] == "__future__":
        return True
    if parts[0] in THIRD_PARTY or parts[:2] == ["impostor_bench", "analysis"]:
        return True
    return parts[:2] == ["impostor_bench", "core"] and len(parts) >= 3 and parts[2] in CORE


def _imports(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, module) of every import in the tree: statements at any depth, and
    ``importlib.import_module("...")`` / ``__import__("...")`` with a literal name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against the module's package
                pkg = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            if base in ("impostor_bench.core", "impostor_bench"):
                found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, base))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in ("import_module", "__import__"):
                found.append((node.lineno, node.args[0].value))
    return found


def _violations(source: str, package: str = "impostor_bench.analysis") -> list[str]:
    return [f"line {line}: {mod}" for line, mod in _imports(ast.parse(source), package) if not _allowed(mod)]


def _modules() -> list[Path]:
    return sorted(ANALYSIS.rglob("*.py"))


def test_every_analysis_module_is_checked():
    names = {p.relative_to(ANALYSIS).as_posix() for p in _modules()}
    assert {"io.py", "validate.py", "report/build.py", "figures/__init__.py", "figures/words.py", "sim/simulate.py",
            "stats/_base.py"} <= names


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(ANALYSIS).as_posix())
def test_analysis_imports_only_the_contract_core_and_stats_stack(path: Path):
    package = ".".join(("impostor_bench", *path.relative_to(ROOT).with_suffix("").parts[:-1]))
    bad = _violations(path.read_text(encoding="utf-8"), package)
    assert not bad, (f"{path.relative_to(ROOT)} imports outside analysis' layer: {bad}; fix: take the value as an "
                     "argument from the command layer (impostor_bench/commands/), or import it from impostor_bench.core")


@pytest.mark.parametrize("source", [
    "def f():\n    from impostor_bench.tracking.store import shown_uri\n",
    "def f():\n    import mlflow\n",
    "from impostor_bench.providers.bots.vocab import shipped_table\n",
    "from impostor_bench import export\n",
    "from impostor_bench.commands.report import load_from_mlflow\n",
    "import inspect_ai.log\n",
    "import litellm\n",
    "from impostor_bench.core import generation\n",
    "def f():\n    import importlib\n    importlib.import_module('impostor_bench.sweep')\n",
    "import sentence_transformers\n",
])
def test_the_check_catches_forbidden_imports(source: str):
    assert _violations(source)


def test_the_check_allows_the_contract_and_the_stats_stack():
    ok = ("import json\nimport numpy as np\nfrom scipy.stats import norm\nimport matplotlib.pyplot as plt\n"
          "from impostor_bench.analysis.data import AnalysisData\nfrom impostor_bench.core.records import MODES\n"
          "from impostor_bench.core import rules\nfrom .stats import TABLES\n"
          "def f():\n    from impostor_bench.core.wordpairs import load_word_pairs\n")
    assert _violations(ok, "impostor_bench.analysis") == []
