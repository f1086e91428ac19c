"""The paper's tables as LaTeX floats (``paper/tableNN.tex``): booktabs, one block per panel."""

from __future__ import annotations

from impostor_bench.analysis.report.formatting import latex_escape
from impostor_bench.analysis.report.paper_tables import PaperTable

__all__ = ["paper_table_latex"]


def _tex_cell(s: str) -> str:
    s = str(s)
    s = s.replace("< 10^-300", "\x00LT300\x00")
    parts = s.split(" × 10^")
    if len(parts) == 2:
        return f"${latex_escape(parts[0])} \\times 10^{{{parts[1]}}}$"
    t = latex_escape(s).replace("±", "$\\pm$").replace("×", "$\\times$").replace("Δ", "$\\Delta$") \
        .replace("χ²", "$\\chi^2$").replace("é", "\\'e").replace("†", "$^\\dagger$")
    t = t.replace("\x00LT300\x00", "$<10^{-300}$")
    if t.startswith("-") and t[1:2].isdigit():
        t = "$-$" + t[1:]
    if t.startswith("["):
        t = "{}" + t
    return t.replace("[-", "[$-$").replace(", -", ", $-$")


TABLE_FONT = "\\footnotesize"  # one size for every table of paper.pdf (no table is scaled to fit)
WIDE = 6  # a panel with more columns than this stacks its headers on two lines and narrows the gaps


def _head_cell(h: str, wide: bool) -> str:
    """A header cell; in a wide panel a two-word header is stacked ("Coord." over "Rate (%)")."""
    words = str(h).split(" ")
    if not wide or len(words) < 2:
        return _tex_cell(h)
    cut = (len(words) + 1) // 2
    top, bottom = " ".join(words[:cut]), " ".join(words[cut:])
    return f"\\begin{{tabular}}[b]{{@{{}}c@{{}}}}{_tex_cell(top)}\\\\ {_tex_cell(bottom)}\\end{{tabular}}"


def paper_table_latex(t: PaperTable) -> str:
    """One ``table`` float (booktabs), a panel per block; a placeholder row where data is missing."""
    cap = t.caption + (f" Not computed from this bundle: {t.missing}." if t.missing else "")
    comment = f"% Table {t.number} of the paper, laid out from the report bundle (impostor report)"
    if t.missing or not t.panels:  # no empty float: one line saying why, in the text
        return "\n".join([comment, f"\\par\\noindent\\textit{{Table {t.number} ({latex_escape(t.title)}) is not shown: "
                                 f"{_tex_cell(t.missing or 'no rows')}.}}\\par", ""])
    out = [comment, "\\begin{table}[htbp]", f"\\setcounter{{table}}{{{t.number - 1}}}",  # the paper's number
           "\\centering", TABLE_FONT, f"\\caption{{{_tex_cell(cap)}}}", f"\\label{{tab:paper-{t.number:02d}}}"]
    for title, head, rows in t.panels:
        wide = len(head) > WIDE
        if title:
            out.append(f"\\par\\smallskip\\textit{{{_tex_cell(title)}}}\\par\\smallskip")
        out += ["{\\setlength{\\tabcolsep}{3pt}%" if wide else "{%",
                f"\\begin{{tabular}}{{l{'r' * (len(head) - 1)}}}", "\\toprule",
                " & ".join(_head_cell(h, wide) for h in head) + " \\\\", "\\midrule"]
        for r in rows:
            bold = len(r) > len(head)
            cells = [_tex_cell(c) for c in r[:len(head)]]
            if bold:
                cells = [f"\\textbf{{{c}}}" for c in cells]
            out.append(" & ".join(cells) + " \\\\")
        out += ["\\bottomrule", "\\end{tabular}}"]
    out.append("\\end{table}")
    return "\n".join(out) + "\n"
