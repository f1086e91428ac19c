"""Check that two report bundles hold the same statistics (the before/after check of a change meant to keep results).

    python benchmarks/compare_bundles.py BEFORE_BUNDLE AFTER_BUNDLE

Every ``tables/*.csv`` (full precision), ``*.md`` and ``*.tex`` must be byte-identical, and the
manifests' notes, errors and drawn figures equal; exits 1 and lists what differs otherwise.
Timings, dates and paths are not compared.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def compare(a: Path, b: Path) -> list[str]:
    problems = []
    for ext in ("csv", "md", "tex"):
        na = {p.name for p in (a / "tables").glob(f"*.{ext}")}
        nb = {p.name for p in (b / "tables").glob(f"*.{ext}")}
        if na != nb:
            problems.append(f"{ext}: tables only in one bundle: {sorted(na ^ nb)}")
        problems += [f"tables/{n} differs" for n in sorted(na & nb)
                     if (a / "tables" / n).read_bytes() != (b / "tables" / n).read_bytes()]
    ma, mb = (json.loads((d / "manifest.json").read_text()) for d in (a, b))
    for key in ("notes", "errors"):
        if ma.get(key) != mb.get(key):
            problems.append(f"manifest {key} differ: {sorted(set(ma.get(key) or []) ^ set(mb.get(key) or []))}")
    if [f["file"] for f in ma["figures"]] != [f["file"] for f in mb["figures"]]:
        problems.append("drawn figures differ")
    return problems


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    a, b = map(Path, args)
    problems = compare(a, b)
    n = len(list((a / "tables").glob("*.csv")))
    print(f"{n} tables (csv, md, tex) compared: " + ("identical" if not problems else f"{len(problems)} difference(s)"))
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
