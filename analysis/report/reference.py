"""The table reference (``docs/tables.md``), generated from the tables' declarations so it cannot
drift from the code: every registered table with its title, report section, module, the group
sizes it is defined for, the tables it reads, and the columns it prints as inference.

Regenerate with ``python -m impostor_bench.analysis.report.reference > docs/tables.md``;
``tests/analysis/report/test_table_reference.py`` fails while the file differs.
"""

from __future__ import annotations

__all__ = ["table_reference"]

_SECTION_NAMES = {"paper": "Results in the paper's layout"}


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table_reference() -> str:
    """Markdown: one row per registered table, grouped by report section in page order."""
    from impostor_bench.analysis.report.sections import SECTION_TITLES
    from impostor_bench.analysis.stats import TABLES
    from impostor_bench.analysis.stats.declaration import SECTION_IDS

    titles = dict(SECTION_TITLES) | _SECTION_NAMES
    lines = ["# Table reference", "",
             "Generated from the tables' declarations (`@table(...)` in `analysis/stats/`) by",
             "`python -m impostor_bench.analysis.report.reference > docs/tables.md`; do not edit by hand.",
             "Definitions, estimands and calibration: `docs/analysis.md`.", "",
             f"{len(TABLES)} registered tables. *Groups*: `paper` = computed on the four-player, one-impostor",
             "games (other group sizes are left out with a note); `any` = every group size.", ""]
    for section in SECTION_IDS:
        specs = sorted((t for t in TABLES.values() if t.spec.section == section), key=lambda t: t.table_name)
        if not specs:
            continue
        lines += [f"## {titles.get(section, section)} (`{section}`)", "",
                  "| table | title | module | groups | reads | inference (estimate [interval] p) |",
                  "|---|---|---|---|---|---|"]
        for t in specs:
            spec = t.spec
            module = getattr(t, "__wrapped__", t).__module__.rsplit(".", 1)[-1]
            needs = spec.needs if isinstance(spec.needs, tuple) else ("(computed)",)
            inf = "; ".join(
                f"`{i.estimate}`" + (f" [`{i.ci[0]}`, `{i.ci[1]}`]" if i.ci else "") + (f" `{i.p}`" if i.p else "")
                for i in spec.inference)
            lines.append(f"| `{spec.name}` | {_cell(spec.title)} | `{module}.py` | {spec.groups} | "
                         f"{', '.join(f'`{n}`' for n in needs) or '–'} | {inf or '–'} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table_reference(), end="")
