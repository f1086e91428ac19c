"""No "issue N" references in the shipped code, scripts and configs.

The issue tracker is not part of the repository, so "(issue 41)" tells a reader nothing: a
comment says *why* (or points to the docs section that records the decision), not *when*.
The docs (docs/*.md) are a reference, not a diary: they say what is and why, never which issue
changed it, so they are checked too.  History belongs in benchmarks/RESULTS.md, which this check
leaves alone.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The code folders checked, and the top-level files outside them.
FOLDERS = ("impostor_bench", "analysis", "tasks", "solvers", "scorers", "scripts", "benchmarks", "configs")
SUFFIXES = (".py", ".sh", ".yaml", ".yml", ".toml", ".json")

#: "issue 41", "Issue 41's", "(issue 26, 39)", "issues 30/39", "issue-41", "issue #41".
ISSUE_REF = re.compile(r"\bissues?[ -]?#?\d+", re.IGNORECASE)


def _checked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                             timeout=60, check=True).stdout
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.SubprocessError):  # not a checkout (an unpacked sdist): walk the folders
        names = [str(p.relative_to(ROOT)) for f in FOLDERS for p in (ROOT / f).rglob("*") if p.is_file()]
        names += [p.name for p in ROOT.iterdir() if p.is_file()]
    files = []
    for name in names:
        top = name.split("/", 1)[0]
        if ("/" in name and top not in FOLDERS) or not name.endswith(SUFFIXES):
            continue  # tests/, docs/ and other folders; Markdown is checked below (docs) or is history (RESULTS.md)
        path = ROOT / name
        if path.is_file() and not path.is_symlink():
            files.append(path)
    return files


def issue_refs(files: list[Path]) -> list[str]:
    """``file:line: text`` for each line of ``files`` that cites an issue number."""
    hits = []
    for path in files:
        for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if ISSUE_REF.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()[:120]}")
    return hits


def test_the_pattern_finds_each_written_form(tmp_path):
    cited = ["# memory (issue 41)", '"""Issue 39\'s done-when."""', "# (issue 26, 39)", "# issues 30/39",
             "# see issue-41", "# issue #41", "key: 1  # ISSUE 7"]
    clean = ["# a tissue 41", "# the reissue 3 times", "# issues with the schedule", "x = 'issue'"]
    assert [t for t in cited if not ISSUE_REF.search(t)] == []
    assert [t for t in clean if ISSUE_REF.search(t)] == []


def test_the_walk_covers_the_code_folders_and_skips_tests_and_docs():
    rel = {str(p.relative_to(ROOT)) for p in _checked_files()}
    assert {"pyproject.toml", "impostor_bench/cli.py", "analysis/report/build.py", "tasks/impostor.py",
            "scripts/test.sh"} <= rel
    assert not any(r.startswith(("tests/", "docs/")) or r.endswith(".md") for r in rel)


def test_no_issue_numbers_in_code_comments():
    hits = issue_refs(_checked_files())
    assert hits == [], ("say why, not when: reword these (or point to the docs section that records "
                        "the decision):\n" + "\n".join(hits))


def _doc_files() -> list[Path]:
    return sorted(p for p in (ROOT / "docs").glob("*.md") if p.is_file() and not p.is_symlink())


def test_the_docs_walk_covers_every_doc():
    rel = {str(p.relative_to(ROOT)) for p in _doc_files()}
    assert {"docs/analysis.md", "docs/rules.md", "docs/reliability.md", "docs/architecture.md"} <= rel


def test_no_issue_numbers_in_the_docs():
    hits = issue_refs(_doc_files())
    assert hits == [], ("the docs are a reference: say what is and why, not which issue changed it:\n"
                        + "\n".join(hits))
