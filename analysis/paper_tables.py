"""Tables 1-12 of the paper in its layout, built from a bundle's tables (``paper/tableNN.tex``).

Each builder takes the bundle's tables and a context (games, experiments, settings, notes)
and returns a :class:`PaperTable`: the paper's rows and columns (panels where the paper
has panels), numbers rounded as the paper rounds them, one interval per estimate (the one
:mod:`analysis.intervals` names, its method in the caption) and a caption that says the
method, n and what the interval is. A table whose data the bundle lacks keeps its place
with the reason in the caption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pandas as pd

from analysis.intervals import lookup
from analysis.report_format import latex_escape

__all__ = ["PaperTable", "PAPER_TABLES", "build_paper_tables", "paper_table_latex"]

DIFFS = [("easy", "Easy"), ("medium", "Medium"), ("hard", "Hard"), ("expert", "Expert")]
MODES = [("homogeneous", "homogeneous"), ("cross_play", "cross-play"), ("team_blind", "team-blind"),
         ("team_aware", "team-aware"), ("team_semi_aware", "team-semi-aware")]
MODE_LABEL = dict(MODES)
DASH = "--"


@dataclass
class PaperTable:
    number: int
    title: str
    caption: str
    panels: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)  # (title, header, rows)
    missing: Optional[str] = None  # what the bundle lacks (the table is a placeholder)

    @property
    def label(self) -> str:
        return f"table{self.number:02d}"


@dataclass
class Context:
    results: dict[str, pd.DataFrame]
    settings: dict
    games: int
    experiments: int
    notes: list[str]

    def reason(self, *tables: str) -> str:
        """Why a table is empty, from the notes (``NAME: not computed: why``), else 'no rows'."""
        for t in tables:
            for n in self.notes:
                if n.startswith(f"{t}: ") or n.startswith(f"Table {t} failed"):
                    return n
        return f"bundle table{'s' if len(tables) > 1 else ''} {', '.join(tables)} ha{'ve' if len(tables) > 1 else 's'} no rows"

    def n_text(self) -> str:
        return f"{self.games:,} games in {self.experiments:,} experiments"


# --------------------------------------------------------------------------- number formats


def num(v, d: int = 2, sign: bool = False) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return DASH
    if not math.isfinite(x):
        return DASH
    s = f"{x:+.{d}f}" if sign else f"{x:.{d}f}"
    return s


def pm(est, lo, hi, d: int = 1) -> str:
    """"est ± half-width" (the paper's Table 1 style); the half-width of [lo, hi]."""
    e = num(est, d)
    if e == DASH:
        return DASH
    h = (float(hi) - float(lo)) / 2 if np.isfinite(lo) and np.isfinite(hi) else np.nan
    return e if not np.isfinite(h) else f"{e} ± {h:.{d}f}"


def bracket(lo, hi, d: int = 2, sign: bool = False) -> str:
    a, b = num(lo, d, sign), num(hi, d, sign)
    return DASH if DASH in (a, b) else f"[{a}, {b}]"


def sci_p(p, floor: float = 1e-300) -> str:
    """p as the paper prints it in Tables 2-4: "< 10^-300", "6.82 × 10^-9", "0.418"."""
    try:
        x = float(p)
    except (TypeError, ValueError):
        return DASH
    if not math.isfinite(x):
        return DASH
    if x < floor:
        return "< 10^-300"
    if x >= 0.01:
        return f"{x:.3f}"
    m, e = f"{x:.2e}".split("e")
    return f"{m} × 10^{int(e)}"


def q_short(q) -> str:
    """Table 5's q: "1.5e-06" below 0.01, else 3 decimals."""
    try:
        x = float(q)
    except (TypeError, ValueError):
        return DASH
    if not math.isfinite(x):
        return DASH
    return f"{x:.1e}" if x < 0.01 else f"{x:.3f}"


def _rows(df: Optional[pd.DataFrame]) -> pd.DataFrame:
    return df if df is not None else pd.DataFrame()


def _get(ctx: Context, table: str, match: str, column: str) -> dict:
    return lookup(ctx.results, table, match, column, ctx.settings)


def _models(ctx: Context) -> list[str]:
    """Models in Table 1's order: by impostor win rate, best first (as Figures 1-2 order them)."""
    h = _rows(ctx.results.get("headline"))
    if not len(h):
        return []
    return list(h.sort_values("imp_win_pct", ascending=False)["model"].astype(str))


# --------------------------------------------------------------------------- the twelve tables


def _methods(ms, most: int = 2) -> str:
    """The distinct methods of a column's rows, the first ``most`` in words (per-row reasons, e.g.
    "not computed: ...", can be many: the CSV's method column has each row's)."""
    ms = [str(m) for m in dict.fromkeys(ms) if m and str(m) != "nan"]
    if not ms:
        return "no interval"
    fitted = [m for m in ms if not m.startswith("not ")] or ms
    extra = len(ms) - min(len(fitted), most)
    return "; ".join(fitted[:most]) + (f"; {extra} more (per row in the CSV's method column)" if extra > 0 else "")


def t01(ctx: Context) -> PaperTable:
    head = ["Model", "Imp Win (%)", "Maj Win (%)", "Det Acc (%)", "Centrality (rel.)", "Reach (out-degree)",
            "CoalEff (%)"]
    rows, methods = [], {c: [] for c in ("imp_win_pct", "maj_win_pct", "det_acc_pct")}
    for m in _models(ctx):
        cells = [m]
        for col in methods:
            g = _get(ctx, "headline", f"model={m}", col)
            methods[col].append(g["method"])
            cells.append(pm(g["estimate"], g["low"], g["high"], 1))
        for col, d in (("centrality", 3), ("reach", 3), ("coal_eff_pct", 1)):
            cells.append(num(_get(ctx, "headline", f"model={m}", col)["estimate"], d))
        rows.append(cells)
    h = _rows(ctx.results.get("headline"))
    n_imp = int(h["n_imp_games"].sum()) if "n_imp_games" in h else 0
    same = len({_methods(v) for v in methods.values()}) == 1
    how = (f"all three: {_methods(methods['imp_win_pct'])}" if same else
           "; ".join(f"{k}: {_methods(v)}" for k, v in zip(("Imp Win", "Maj Win", "Det Acc"), methods.values())))
    cap = (f"Headline results per model ({ctx.n_text()}). Percentages ± the half-width of a 95% interval with "
           f"experiments as the independent units ({how}). Imp Win over the {n_imp:,} games by the model playing the "
           "impostor; Maj Win over the model's majority seats; Det Acc over its majority seats' legal ballots. "
           "Centrality (degree centrality of the vote network), Reach (normalised out-degree) and CoalEff "
           "(coalition conversion given formation) are descriptive, without interval.")
    return PaperTable(1, "Headline results", cap, [("", head, rows)], None if rows else ctx.reason("headline"))


def _or_rows(ctx: Context) -> tuple[list[list[str]], list[str]]:
    o = _rows(ctx.results.get("odds_ratios"))
    label = {"size_per_10x": "Model size (per 10×)", **{f"seat{s}_vs_seat0": f"Seat {s} vs Seat 0" for s in (1, 2, 3)},
             **{f"{k}_vs_homogeneous": f"{v} vs homogeneous" for k, v in MODES}}
    rows, methods = [], []
    for key in label:
        if not len(o) or key not in set(o["comparison"].astype(str)):
            continue
        g = _get(ctx, "odds_ratios", f"comparison={key}", "or")
        methods.append(g["method"])
        p = o.loc[o["comparison"].astype(str) == key, "p"].iloc[0]
        rows.append([label[key], num(g["estimate"]), num(g["low"]), num(g["high"]), sci_p(p)])
    return rows, methods


def _t_or(number: int) -> Callable[[Context], PaperTable]:
    def build(ctx: Context) -> PaperTable:
        rows, methods = _or_rows(ctx)
        cap = (f"Key effects ({ctx.n_text()}): odds ratios of an impostor win, one 95% interval each, and p "
               f"({_methods(methods)}). Model size per 10× parameters; seat-index contrasts are descriptive (seats "
               "are counterbalanced); modes relative to homogeneous."
               + (" Same rows as Table 2 (the paper repeats them in Appendix B)." if number == 4 else ""))
        head = ["Comparison", "OR", "CI (2.5%)", "CI (97.5%)", "p"]
        return PaperTable(number, "Key effects" if number == 2 else "Odds ratios", cap, [("", head, rows)],
                          None if rows else ctx.reason("odds_ratios"))
    return build


def t03(ctx: Context) -> PaperTable:
    c = _rows(ctx.results.get("chi2"))
    label = {"model_x_outcome": "Model × Outcome", "mode_x_outcome": "Mode × Outcome",
             "difficulty_x_outcome": "Difficulty × Outcome", "seat_x_outcome": "Seat index × Outcome",
             "selfdecl_x_model": "Self-declaration × Model"}
    rows = [[label.get(str(r["test"]), str(r["test"])), num(r["chi2"]), num(r["df"], 0), sci_p(r["p"]),
             num(r["cramers_v"], 3), str(r["magnitude"]).capitalize()] for _, r in c.iterrows()]
    cap = (f"Chi-squared tests of independence with Cramér's V ({ctx.n_text()}; games independent). "
           "χ² to two decimals, V to three.")
    return PaperTable(3, "Chi-squared tests", cap, [("", ["Test", "χ²", "df", "p", "V", "Magnitude"], rows)],
                      None if rows else ctx.reason("chi2"))


def t05(ctx: Context) -> PaperTable:
    o = _rows(ctx.results.get("opponent_baseline"))
    panels = []
    how = _methods(o["method"].astype(str)) if "method" in o else "Wald, cluster-robust by experiment"
    for i, (d, dl) in enumerate(DIFFS):
        rows = []
        for _, r in (o[o["difficulty"].astype(str) == d] if len(o) else o).iterrows():
            q = r.get("q")
            bold = np.isfinite(float(q)) and float(q) < 0.05 if q is not None and q == q else False
            rows.append([str(r["model"]), num(r["or_per_10pp"]), num(r["ci_low"]), num(r["ci_high"]), q_short(q)]
                        + (["**"] if bold else []))
        if rows:
            panels.append((f"({'abcd'[i]}) {dl}", ["Model", "OR", "CI (2.5%)", "CI (97.5%)", "q"], rows))
    cap = ("Within-model × within-difficulty logits of an impostor win on the opponent detection baseline "
           f"(leave-experiment-out) with mode fixed effects ({ctx.n_text()}). OR per +10 percentage points, 95% "
           f"interval and p ({how}), BH-FDR q over all cells. Bold: q < 0.05; -- = cell not "
           "fitted (too few games, separation or no variation; the notes name each).")
    return PaperTable(5, "Opponent-baseline regressions", cap, panels, None if panels else ctx.reason("opponent_baseline"))


def t06(ctx: Context) -> PaperTable:
    s = _rows(ctx.results.get("speaking_itt"))
    panels = []
    for i, (d, dl) in enumerate(DIFFS):
        rows = []
        for m, ml in MODES:
            sel = s[(s["mode"].astype(str) == m) & (s["difficulty"].astype(str) == d)] if len(s) else s
            if not len(sel):
                continue
            r = sel.iloc[0]
            rows.append([ml, num(r["n"], 0), num(r["n_mid"], 0), num(r["mid_rand_pp"], 2, True),
                         bracket(r["ci_low"], r["ci_high"], 2), num(r["p"], 4)])
        if rows:
            panels.append((f"({'abcd'[i]}) {dl}", ["Mode", "n", "n (middle)", "Mid-Rand (pp)", "95% CI (pp)", "p"], rows))
    pooled = s[(s["mode"].astype(str) == "ALL") & (s["difficulty"].astype(str) == "ALL")] if len(s) else s
    extra = ""
    if len(pooled):
        r = pooled.iloc[0]
        extra = (f" Pooled over all cells: {num(r['mid_rand_pp'], 2, True)} pp "
                 f"{bracket(r['ci_low'], r['ci_high'], 2)}, p = {num(r['p'], 4)}.")
    g = _get(ctx, "speaking_itt", "mode=ALL;difficulty=ALL", "mid_rand_pp")
    cap = ("Speaking-order pseudo-arm ITT (impostor speaking at positions 2/3 vs the random mix), by mode and "
           f"difficulty ({ctx.n_text()}). Mid-Rand in percentage points; 95% interval from the "
           f"{g['method'] or 'experiment-level bootstrap'} (calibrated); p = Fisher randomisation p "
           f"({int(ctx.settings.get('permutation_reps') or 0):,} replicates)." + extra)
    return PaperTable(6, "Speaking-order ITT", cap, panels, None if panels else ctx.reason("speaking_itt"))


def t07(ctx: Context) -> PaperTable:
    t = _rows(ctx.results.get("tie_sizes"))
    rows = [[MODE_LABEL.get(str(r["mode"]), str(r["mode"])), num(r["ties"], 0), num(r["k2"], 0), num(r["k3"], 0),
             num(r["k4"], 0), num(r["impostor_in_tie_pct"], 1) + "%"] for _, r in t.iterrows()
            if str(r["mode"]) != "ALL"]
    cap = (f"Tie-size distribution (top-of-ballot ties) by mode ({ctx.n_text()}). k = number of top-tied "
           "candidates; Impostor-in-tie = share of tie games with the impostor among the tied. Counts, no interval.")
    return PaperTable(7, "Tie sizes", cap, [("", ["Mode", "Ties", "k=2", "k=3", "k=4", "Impostor-in-tie"], rows)],
                      None if rows else ctx.reason("tie_sizes"))


_TB_HEAD = ["Mode", "Default", "Sym-cand", "Sym-side", "Δ (cand)", "Δ (side)", "Ties"]


def _tb_row(r) -> list[str]:
    return [MODE_LABEL.get(str(r["mode"]), str(r["mode"])), num(r["default"], 1), num(r["sym_cand"], 1),
            num(r["sym_side"], 1), num(r["delta_cand"], 1), num(r["delta_side"], 1), num(r["ties"], 0)]


def t08(ctx: Context) -> PaperTable:
    t = _rows(ctx.results.get("tiebreak_mode"))
    rows = [_tb_row(r) for _, r in t.iterrows()]
    cap = (f"Symmetric tie-breakers by mode ({ctx.n_text()}): expected impostor win (%) under the default rule, "
           "Sym-candidate and Sym-side; Δ in percentage points vs default; Ties = games with a top-of-ballot tie. "
           "Exact recomputation from the ballots, no interval.")
    return PaperTable(8, "Symmetric tie-breakers", cap, [("", _TB_HEAD, rows)], None if rows else ctx.reason("tiebreak_mode"))


def t09(ctx: Context) -> PaperTable:
    t = _rows(ctx.results.get("tiebreak_mode_difficulty"))
    panels = []
    for i, (d, dl) in enumerate(DIFFS):
        sel = t[t["difficulty"].astype(str) == d] if len(t) else t
        rows = [_tb_row(r) for _, r in sel.iterrows()]
        if rows:
            panels.append((f"({'abcd'[i]}) {dl}", _TB_HEAD, rows))
    cap = (f"Symmetric tie-breakers by mode and difficulty ({ctx.n_text()}); as Table 8. Exact recomputation "
           "from the ballots, no interval.")
    return PaperTable(9, "Tie-breakers by difficulty", cap, panels,
                      None if panels else ctx.reason("tiebreak_mode_difficulty"))


def t10(ctx: Context) -> PaperTable:
    s = _rows(ctx.results.get("scaling"))
    label = {"overall_provider_fe": "Overall (provider FE)", "overall_no_provider": "Overall (no provider FE)"}
    rows = []
    for _, r in s.iterrows():
        fit = str(r["fit"])
        name = label.get(fit) or (f"Within {fit[len('within_'):].capitalize()} family" if fit.startswith("within_")
                                  else fit)
        if fit == "within_gpt":
            name = "Within GPT family"
        rows.append([name, num(r["or_per_10x"], 3), bracket(r["ci_low"], r["ci_high"], 3), sci_p(r["p"])])
    how = _methods(s["method"].astype(str)) if "method" in s else "Wald, cluster-robust by experiment"
    cap = (f"Size effects with provider control and within-family fits ({ctx.n_text()}): OR per 10× parameters, "
           f"95% interval and p ({how}); mode and difficulty fixed effects in every fit.")
    return PaperTable(10, "Scaling", cap, [("", ["Model", "OR per 10×", "95% CI", "p"], rows)],
                      None if rows else ctx.reason("scaling"))


def t11(ctx: Context) -> PaperTable:
    models = _models(ctx)
    c = _rows(ctx.results.get("coordination"))
    if not len(c):
        return PaperTable(11, "Coordination", "Coordination and impostor behaviour.", [], ctx.reason("coordination"))
    panels = []
    for i, (col, title, fmt) in enumerate((("brokerage", "Brokerage (information broker index)", lambda g: num(g["estimate"], 3)),
                                           ("vote_coord_pct", "VoteCoord (%, with 95% CI half-width)",
                                            lambda g: pm(g["estimate"], g["low"], g["high"], 1)),
                                           ("self_decl_pct", "SelfDecl (%)", lambda g: num(g["estimate"], 1)),
                                           ("guess_succ_pct", "GuessSucc (%)", lambda g: num(g["estimate"], 1)))):
        rows = [[m, fmt(_get(ctx, "coordination", f"model={m}", col))] for m in models]
        panels.append((f"({'abcd'[i]}) {title}", ["Model", title.split(" (")[0] if i != 1 else "VoteCoord (%)"], rows))
    g = _get(ctx, "coordination", f"model={models[0]}", "vote_coord_pct") if models else {"method": ""}
    cap = (f"Coordination and impostor behaviour ({ctx.n_text()}). VoteCoord: teammates' vote alignment ± 95% "
           f"half-width, {g['method']}; SelfDecl and GuessSucc are impostor-side rates; no interval for the others.")
    return PaperTable(11, "Coordination", cap, panels)


T12_A = [("coord_rate_pct", "Coord. Rate (%)", 1), ("vote_coord_pct", "Vote Coord. (%)", 1),
         ("implicit_coord_pp", "Implicit Coord. (pp)", 1), ("collab_success_pct", "Collab. Success (%)", 1),
         ("strategy_align_pct", "Strategy Align. (%)", 1), ("ling_mirror_pp", "Linguistic Mirror (pp)", 1),
         ("vocab_conv", "Vocab Conv.", 3)]
T12_B = [("trust_form_pct", "Trust Form. (%)", 1), ("betrayal_pct", "Betrayal Rate (%)", 1),
         ("trust_recovery_pct", "Trust Recovery (%)", 1), ("vulnerability_index", "Vulnerability Index", 2),
         ("resilience_factor", "Resilience Factor", 1), ("coord_gap_pp", "Coord. Gap (pp)", 1),
         ("alignment_gap_pp", "Alignment Gap (pp)", 1)]


def t12(ctx: Context) -> PaperTable:
    """Table 12 from ``team_dynamics`` (analysis/stats/table12.py): its fourteen columns in the
    paper's order, ± the half-width of each one's interval; undefined metrics as --."""
    t = _rows(ctx.results.get("team_dynamics"))
    if not len(t):
        return PaperTable(12, "Team dynamics", "Team dynamics across models.", [], ctx.reason("team_dynamics"))
    panels, methods, undefined = [], [], []
    for title, cols in (("(a) Coordination and convergence metrics", T12_A), ("(b) Trust dynamics and strategic gaps",
                                                                             T12_B)):
        rows = []
        for m in _models(ctx):
            cells = [m]
            for col, _, d in cols:
                g = _get(ctx, "team_dynamics", f"model={m}", col)
                methods.append(g["method"])
                cells.append(pm(g["estimate"], g["low"], g["high"], d))
            rows.append(cells)
        for i, (_col, head, _) in enumerate(cols, 1):
            if all(r[i] == DASH for r in rows):
                undefined.append(head.split(" (")[0])
        panels.append((title, ["Model"] + [h for _, h, _ in cols], rows))
    cap = (f"Team dynamics ({ctx.n_text()}), as defined in docs/analysis.md (Table 12) from ballots and descriptions; "
           f"± the half-width of a 95% interval ({_methods(methods)}). "
           + (f"Not defined for one-round games (--): {', '.join(undefined)}; the reasons are in "
              "tables/table12_undefined.csv." if undefined else ""))
    return PaperTable(12, "Team dynamics", cap, panels)


PAPER_TABLES: list[Callable[[Context], PaperTable]] = [t01, _t_or(2), t03, _t_or(4), t05, t06, t07, t08, t09, t10,
                                                       t11, t12]


def build_paper_tables(results: dict[str, pd.DataFrame], manifest: dict) -> list[PaperTable]:
    d = manifest.get("data", {})
    ctx = Context(results, manifest.get("config") or {}, int(d.get("games") or 0), int(d.get("experiments") or 0),
                  list(manifest.get("notes") or []))
    out = []
    for build in PAPER_TABLES:
        try:
            out.append(build(ctx))
        except Exception as exc:  # noqa: BLE001 - one table must not sink the paper
            n = len(out) + 1
            out.append(PaperTable(n, f"Table {n}", "", [], f"could not be laid out ({type(exc).__name__}: {exc})"))
    return out


# --------------------------------------------------------------------------- LaTeX


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
