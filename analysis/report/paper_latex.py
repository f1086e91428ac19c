"""The paper's tables as LaTeX floats (``paper/tableNN.tex``): booktabs, one block per panel."""

from __future__ import annotations

from impostor_bench.analysis.report.formatting import latex_escape
from impostor_bench.analysis.report.paper_cells import PaperTable

__all__ = ["paper_table_latex"]


def _tex_cell(s: str) -> str:
    s = str(s)
    s = s.replace("< 10^-300", "\x00LT300\x00")
    parts = s.split(" × 10^")
    if len(parts) == 2:
        return f"${latex_escape(parts[0])} \\times 10^{{{parts[1]}}}$"
    t = latex_escape(s).replace("±", "$\\pm$").replace("×", "$\\times$").replace("Δ", "$\\Delta$") \
        .replace("χ²", "$\\chi^2$").replace("é", "\\'e")
    t = t.replace("\x00LT300\x00", "$<10^{-300}$")
    if t.startswith("-") and t[1:2].isdigit():
        t = "$-$" + t[1:]
    if t.startswith("["):
        t = "{}" + t
    return t.replace("[-", "[$-$").replace(", -", ", $-$")


def paper_table_latex(t: PaperTable) -> str:
    """One ``table`` float (booktabs), a panel per block; a placeholder row where data is missing."""
    cap = t.caption + (f" Not computed from this bundle: {t.missing}." if t.missing else "")
    out = [f"% Table {t.number} of the paper, laid out from the report bundle (impostor report)",
           "\\begin{table}[htbp]", "\\centering", "\\small", f"\\caption{{{_tex_cell(cap)}}}",
           f"\\label{{tab:paper-{t.number:02d}}}"]
    if t.missing or not t.panels:
        out += ["\\begin{tabular}{l}", "\\toprule", f"Table {t.number} ({latex_escape(t.title)}): not computed \\\\",
                "\\bottomrule", "\\end{tabular}", "\\end{table}"]
        return "\n".join(out) + "\n"
    for title, head, rows in t.panels:
        wide = len(head) > 6
        if title:
            out.append(f"\\par\\smallskip\\textit{{{_tex_cell(title)}}}\\par\\smallskip")
        if wide:
            out.append("\\resizebox{\\linewidth}{!}{%")
        out += [f"\\begin{{tabular}}{{l{'r' * (len(head) - 1)}}}", "\\toprule",
                " & ".join(_tex_cell(h) for h in head) + " \\\\", "\\midrule"]
        for r in rows:
            bold = len(r) > len(head)
            cells = [_tex_cell(c) for c in r[:len(head)]]
            if bold:
                cells = [f"\\textbf{{{c}}}" for c in cells]
            out.append(" & ".join(cells) + " \\\\")
        out += ["\\bottomrule", "\\end{tabular}" + ("}" if wide else "")]
    out.append("\\end{table}")
    return "\n".join(out) + "\n"
