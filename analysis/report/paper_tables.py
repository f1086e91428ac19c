"""Tables 1-12 of the paper in its layout, built from a bundle's tables (``paper/tableNN.tex``).

Each builder takes the bundle's tables and a context (games, experiments, settings, notes)
and returns a :class:`PaperTable`: the paper's rows and columns (panels where the paper
has panels), numbers rounded as the paper rounds them, one interval per estimate (the one
:mod:`impostor_bench.analysis.intervals` names, its method in the caption) and a caption that says the
method, n and what the interval is. A table whose data the bundle lacks keeps its place
with the reason in the caption. The pieces every table is laid out with come first (the
table and its context, the paper's number formats, the panels by difficulty of Tables 5, 6
and 9), then the twelve builders: one concept, past the 400-line smell threshold on purpose
(docs/architecture.md). Rendering is elsewhere: LaTeX in ``paper_latex``, Markdown and HTML
in ``sections``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.intervals import lookup
from impostor_bench.analysis.report.interval_check import ZERO_WIDTH, bounds_of, interval_problem
from impostor_bench.analysis.report.planted import planted, planted_value
from impostor_bench.analysis.stats.inference import estimand_sentence
from impostor_bench.core.modes import MODE_LABEL

__all__ = ["PAPER_TABLES", "build_paper_tables", "PaperTable", "DASH", "FLAG"]

DIFFS = [("easy", "Easy"), ("medium", "Medium"), ("hard", "Hard"), ("expert", "Expert")]
MODES = list(MODE_LABEL.items())  # (mode, label) in the core's order
DASH = "--"
FLAG = "†"  # an estimate whose interval is flagged (interval_check) and not printed
NOT_COMPUTED = "interval not computed (reason in the CSV's method column)"

#: One panel of a paper table: (title, header, rows of cells).
Panel = tuple[str, list[str], list[list[str]]]


@dataclass
class PaperTable:
    number: int
    title: str
    caption: str
    panels: list[Panel] = field(default_factory=list)
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
    #: reasons of the intervals left out of the table being built (interval_check), for its caption
    flagged: list[str] = field(default_factory=list)
    #: the effects ``impostor simulate`` planted ((table, match or "*", column) -> value; empty: real data)
    planted: dict = field(default_factory=dict)
    #: each looked-up column as text, made once (``intervals._select``: the frames do not change)
    texts: dict = field(default_factory=dict)

    def flag_caption(self) -> str:
        """The caption's sentence on the intervals not printed (and the flags cleared for the next table)."""
        if not self.flagged:
            return ""
        counts = {k: self.flagged.count(k) for k in dict.fromkeys(self.flagged)}
        self.flagged.clear()
        return (f" {FLAG} = estimate printed without an interval ("
                + "; ".join(f"{k}: {v}" for k, v in counts.items())
                + ("; a zero width means every experiment behind it had the same value" if ZERO_WIDTH in counts
                   else "") + ").")

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


def _finite(v) -> Optional[float]:
    """``v`` as a finite float, else None (printed as the paper's dash)."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def num(v, d: int = 2, sign: bool = False) -> str:
    x = _finite(v)
    if x is None:
        return DASH
    return f"{x:+.{d}f}" if sign else f"{x:.{d}f}"


def pm(est, lo, hi, d: int = 1) -> str:
    """"est [lo, hi]": one interval format in every table of the report (a half-width would read
    as symmetric, and a logit or bootstrap interval is not)."""
    e = num(est, d)
    if e == DASH:
        return DASH
    a, b = _finite(lo), _finite(hi)
    if a is None or b is None:
        return e
    return f"{e} [{num(a, d)}, {num(b, d)}]"


def shown(ctx: "Context", g: dict, d: int = 1) -> str:
    """One cell from :func:`interval`'s dict: "est [lo, hi]", or "est†" where the
    interval is flagged (the reason goes to the table's caption through ``ctx.flagged``)."""
    if num(g["estimate"], d) == DASH:
        return DASH
    why = g.get("problem")
    if not why and g.get("method") and (_finite(g["low"]) is None or _finite(g["high"]) is None):
        why = NOT_COMPUTED  # the registry lists an interval here, but this row has none
    if why:
        ctx.flagged.append(why)
        return num(g["estimate"], d) + FLAG
    return pm(g["estimate"], g["low"], g["high"], d)


def bracket(lo, hi, d: int = 2, sign: bool = False) -> str:
    a, b = num(lo, d, sign), num(hi, d, sign)
    return DASH if DASH in (a, b) else f"[{a}, {b}]"


def sci_p(p, floor: float = 1e-300) -> str:
    """p as the paper prints it in Tables 2-4: "< 10^-300", "6.82 × 10^-9", "0.418"."""
    x = _finite(p)
    if x is None:
        return DASH
    if x < floor:
        return "< 10^-300"
    if x >= 0.01:
        return f"{x:.3f}"
    m, e = f"{x:.2e}".split("e")
    return f"{m} × 10^{int(e)}"


def q_short(q) -> str:
    """Table 5's q: "1.5e-06" below 0.01, else 3 decimals."""
    x = _finite(q)
    if x is None:
        return DASH
    return f"{x:.1e}" if x < 0.01 else f"{x:.3f}"


# --------------------------------------------------------------------------- reading the bundle's tables


def rows_of(df: Optional[pd.DataFrame]) -> pd.DataFrame:
    return df if df is not None else pd.DataFrame()


def interval(ctx: Context, table: str, match: str, column: str) -> dict:
    """The estimate, interval and method of one cell (``impostor_bench.analysis.intervals.lookup``), and
    ``problem``: why the interval is not a real one (``interval_check``), or None."""
    g = lookup(ctx.results, table, match, column, ctx.settings, ctx.texts)
    g["problem"] = interval_problem(g["estimate"], g["low"], g["high"], bounds_of(column))
    return g


def models_by_win(ctx: Context) -> list[str]:
    """Models in Table 1's order: by impostor win rate, best first (as Figures 1-2 order them)."""
    h = rows_of(ctx.results.get("headline"))
    if not len(h):
        return []
    return list(h.sort_values("imp_win_pct", ascending=False)["model"].astype(str))


def short_method(m: str, width: int = 60) -> str:
    """A method as a caption names it: without its parenthetical details of more than three words
    (a fallback's reason, a residual model) and, if still longer than ``width``, its first clause
    only, and of a long clause its leading comma-separated parts. "About this report" lists every
    method in full (from tables/inference.csv)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(m):
        if ch == "(":
            if depth == 0:
                out.append(m[start:i])
                start = i
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                group = m[start:i + 1]
                out.append(group if len(group.split()) <= 3 else "")
                start = i + 1
    out.append(m[start:])
    text = re.sub(r"\s+([;,])", r"\1", re.sub(r"\s{2,}", " ", "".join(out))).strip()
    if len(text) <= width:
        return text
    text = text.split(";")[0].strip()
    if len(text) <= width:
        return text
    kept = text.split(", ")[:1]  # still long: its leading comma-separated parts, up to 1.5 x width
    for part in text.split(", ")[1:]:
        if len(", ".join(kept + [part])) > 1.5 * width:
            break
        kept.append(part)
    return ", ".join(kept)


IN_FULL = "; in full: About this report"


def methods_text(ms, most: int = 2) -> str:
    """The distinct methods of the rows that printed a number, the first ``most`` in words, each
    as :func:`short_method` names it (rows "not computed: ..." print none, so they name no method
    here: each reason is in the CSV's method column and the table says where it left a cell out)."""
    ms = [str(m) for m in dict.fromkeys(ms) if m and str(m) != "nan"]
    if not ms:
        return "no interval"
    fitted = list(dict.fromkeys(short_method(m) for m in ms if not m.startswith("not ")))
    if not fitted:
        return "not computed; each row's reason is in the CSV's method column"
    extra = len(fitted) - most
    return ("; ".join(fitted[:most]) + (f"; {extra} more (per row in the CSV's method column)" if extra > 0 else "")
            + IN_FULL)


def at_difficulty(t: pd.DataFrame, difficulty: str) -> pd.DataFrame:
    """The rows of ``t`` at one difficulty (``t`` itself when it is empty)."""
    return t[t["difficulty"].astype(str) == difficulty] if len(t) else t


def difficulty_panels(head: list[str], rows_at: Callable[[str], list[list[str]]]) -> list[Panel]:
    """One panel per difficulty with rows, lettered (a), (b), ... in order (a difficulty without
    rows has no panel, and the letters do not skip)."""
    panels: list[Panel] = []
    for d, dl in DIFFS:
        rows = rows_at(d)
        if rows:
            panels.append((f"({'abcd'[len(panels)]}) {dl}", head, rows))
    return panels


# --------------------------------------------------------------------------- the paper's tables


def t01(ctx: Context) -> PaperTable:
    head = ["Model", "Imp Win (%)", "Maj Win (%)", "Det Acc (%)", "Centrality (rel.)", "Reach (out-degree)",
            "CoalEff (%)"]
    rows: list[list[str]] = []
    methods: dict[str, list] = {c: [] for c in ("imp_win_pct", "maj_win_games_pct", "det_acc_pct")}
    for m in models_by_win(ctx):
        cells = [m]
        for col in methods:
            g = interval(ctx, "headline", f"model={m}", col)
            methods[col].append(g["method"])
            cells.append(shown(ctx, g, 1))
        for col, d in (("centrality", 3), ("reach", 3), ("coal_eff_pct", 1)):
            cells.append(num(interval(ctx, "headline", f"model={m}", col)["estimate"], d))
        rows.append(cells)
    h = rows_of(ctx.results.get("headline"))
    n_imp = int(h["n_imp_games"].sum()) if "n_imp_games" in h else 0
    same = len({methods_text(v) for v in methods.values()}) == 1
    how = (f"all three: {methods_text(methods['imp_win_pct'])}" if same else  # the pointer to About once
           "; ".join(f"{k}: {methods_text(v).removesuffix(IN_FULL)}"
                     for k, v in zip(("Imp Win", "Maj Win", "Det Acc"), methods.values())) + IN_FULL)
    cap = (f"Headline results per model ({ctx.n_text()}). Percentages with a 95% interval [low, high] ({how}). "
           f"Imp Win over the {n_imp:,} games by the model playing the impostor; Maj Win over the games in which the model is in the majority (a homogeneous game "
           "once, as the paper defines it; the per-seat rate is maj_win_pct in tables/headline.csv); Det Acc over its "
           "majority seats' legal ballots. "
           "Centrality (degree centrality of the vote network), Reach (normalised out-degree) and CoalEff "
           "(coalition conversion given formation) are descriptive, without interval." + ctx.flag_caption())
    return PaperTable(1, "Headline results", cap, [("", head, rows)], None if rows else ctx.reason("headline"))


PLANTED_NOTE = " Planted: the true effect impostor simulate planted in these games (simulated.json)."
#: Table 5 prints no planted value: the simulator's opponent OR is per 10 pp of the models' planted
#: ballot accuracies, while the table's regressor is the accuracy the ballots show (conditioned on
#: the outcome, so not the planted one); its truth is a pseudo-population fit (analysis/calibration_truth.py).
OPPONENT_NOT_PLANTED = (" No planted column: the simulator's opponent OR is per 10 points of the models' planted "
                        "detection probabilities, not of the detection accuracy the ballots show, which is this "
                        "table's regressor; its truth has no closed form (the fit to the design's expected "
                        "outcomes: benchmarks/RESULTS.md measures the slope against it).")


def _or_rows(ctx: Context) -> tuple[list[list[str]], list[str]]:
    o = rows_of(ctx.results.get("odds_ratios"))
    label = {"size_per_10x": "Model size (per 10×)", **{f"seat{s}_vs_seat0": f"Player {s + 1} vs Player 1" for s in (1, 2, 3)},
             **{f"{k}_vs_homogeneous": f"{v} vs homogeneous" for k, v in MODES}}
    rows, methods = [], []
    for key in label:
        if not len(o) or key not in set(o["comparison"].astype(str)):
            continue
        g = interval(ctx, "odds_ratios", f"comparison={key}", "or")
        methods.append(g["method"])
        p = o.loc[o["comparison"].astype(str) == key, "p"].iloc[0]
        if g["problem"]:
            ctx.flagged.append(g["problem"])
            row = [label[key], num(g["estimate"]) + FLAG, DASH, DASH, sci_p(p)]
        else:
            row = [label[key], num(g["estimate"]), num(g["low"]), num(g["high"]), sci_p(p)]
        if ctx.planted:
            row.append(num(planted_value(ctx.planted, "odds_ratios", f"comparison={key}", "or")))
        rows.append(row)
    return rows, methods


def _t_or(number: int) -> Callable[[Context], PaperTable]:
    def build(ctx: Context) -> PaperTable:
        rows, methods = _or_rows(ctx)
        cap = (f"Key effects ({ctx.n_text()}): odds ratios of an impostor win, one 95% interval each, and p "
               f"({methods_text(methods)}). Model size per 10× parameters; speaking-seat contrasts (Player N = the "
               "N-th seat, 1-based) are descriptive (seats are counterbalanced); modes relative to homogeneous."
               + (" The same rows as Table 2: the paper prints them twice (Table 4, Appendix B)." if number == 4 else
                  " The paper prints these rows again as Table 4 (Appendix B); so does this report.")
               + ctx.flag_caption())
        head = ["Comparison", "OR", "CI (2.5%)", "CI (97.5%)", "p"] + (["Planted OR"] if ctx.planted else [])
        cap += PLANTED_NOTE if ctx.planted else ""
        return PaperTable(number, "Key effects" if number == 2 else "Odds ratios", cap, [("", head, rows)],
                          None if rows else ctx.reason("odds_ratios"))
    return build


def t03(ctx: Context) -> PaperTable:
    c = rows_of(ctx.results.get("chi2"))
    label = {"model_x_outcome": "Model × Outcome", "mode_x_outcome": "Mode × Outcome",
             "difficulty_x_outcome": "Difficulty × Outcome", "seat_x_outcome": "Seat index × Outcome",
             "difficulty_x_detection": "Difficulty × Detection", "selfdecl_x_model": "Self-declaration × Model"}
    rows = [[label.get(str(r["test"]), str(r["test"])), num(r["chi2"]), num(r["df"], 0), sci_p(r["p"]),
             num(r["cramers_v"], 3), str(r["magnitude"]).capitalize()] for _, r in c.iterrows()]
    how = methods_text(c["p_method"].astype(str)) if "p_method" in c else "Pearson, games independent"
    skipped = [label.get(str(r["test"]), str(r["test"])) for _, r in c.iterrows()
               if str(r.get("p_method", "")).startswith("not computed")] if len(c) else []
    pearson = all("Pearson" in str(m) or str(m).startswith("paper") for m in c.get("p_method", pd.Series(dtype=str)))
    cap = (f"Tests of independence with Cramér's V ({ctx.n_text()}). χ² (df) and V describe the table of games "
           "(Pearson, games as units, as in the paper); p is from "
           + (f"the same χ² ({how})." if pearson and len(c) else
              f"{how}, not the χ² tail probability, so χ² and p need not agree.")
           + (f" p not computed (-- ; the reason is in tables/chi2.csv's p_method): {', '.join(skipped)}."
              if skipped else "") + " χ² to two decimals, V to three.")
    return PaperTable(3, "Chi-squared tests", cap, [("", ["Test", "χ²", "df", "p", "V", "Magnitude"], rows)],
                      None if rows else ctx.reason("chi2"))


def t05(ctx: Context) -> PaperTable:
    o = rows_of(ctx.results.get("opponent_baseline"))
    how = methods_text(o["method"].astype(str)) if "method" in o else "Wald, cluster-robust by experiment"

    def row(r) -> list[str]:
        q = r.get("q")
        bold = np.isfinite(float(q)) and float(q) < 0.05 if q is not None and q == q else False
        return ([str(r["model"]), num(r["or_per_10pp"]), num(r["ci_low"]), num(r["ci_high"]), q_short(q)]
                + (["**"] if bold else []))

    fitted = o[np.isfinite(pd.to_numeric(o["or_per_10pp"], errors="coerce"))] if len(o) else o
    panels = difficulty_panels(["Model", "OR", "CI (2.5%)", "CI (97.5%)", "q"],
                               lambda d: [row(r) for _, r in at_difficulty(fitted, d).iterrows()])
    left = int(len(o) - len(fitted)) if len(o) else 0
    cap = ("Within-model × within-difficulty logits of an impostor win on the opponent detection baseline "
           "(cross-fitted: a game's baseline from the ballots of the other of two folds of experiments, with "
           "mode × fold fixed effects; the baseline is an estimate, its measurement error not corrected for, so "
           "the slope is biased toward OR 1 where a model's accuracy rests on few experiments: against the "
           "design's pseudo-population truth 0.6-0.75× at 120 experiments × 40 games, 0.9-0.95× at 378 × 40, "
           "0.96× at the paper's 756 × 120) "
           f"({ctx.n_text()}). OR per +10 percentage points, 95% "
           f"interval and p ({how}), BH-FDR q over all cells. Bold: q < 0.05."
           + (f" {left} model × difficulty cells not fitted and not shown (too few games or experiments, separation "
              "or no variation: tables/opponent_baseline.csv's method column names each)." if left else "")
           + (OPPONENT_NOT_PLANTED if ctx.planted else ""))
    missing = None if panels else (f"no model × difficulty cell could be fitted ({left} cells; each reason is in "
                                   "tables/opponent_baseline.csv's method column)" if left else
                                   ctx.reason("opponent_baseline"))
    return PaperTable(5, "Opponent-baseline regressions", cap, panels, missing)


def _ci(ctx: Context, est, lo, hi, column: str, d: int = 2, sign: bool = False) -> str:
    """"[lo, hi]", or -- where the interval is not a real one (the reason to the caption)."""
    why = interval_problem(est, lo, hi, bounds_of(column))
    if why:
        ctx.flagged.append(why)
        return FLAG
    return bracket(lo, hi, d, sign)


def t06(ctx: Context) -> PaperTable:
    s = rows_of(ctx.results.get("speaking_itt"))

    left: list[str] = []

    def rows_at(d: str) -> list[list[str]]:
        rows = []
        for m, ml in MODES:
            sel = s[(s["mode"].astype(str) == m) & (s["difficulty"].astype(str) == d)] if len(s) else s
            if not len(sel):
                continue
            r = sel.iloc[0]
            if num(r["mid_rand_pp"]) == DASH:  # no contrast in this cell (no game with the impostor in the middle)
                left.append(f"{ml} {d}")
                continue
            rows.append([ml, num(r["n"], 0), num(r["n_mid"], 0), num(r["mid_rand_pp"], 2, True),
                         _ci(ctx, r["mid_rand_pp"], r["ci_low"], r["ci_high"], "mid_rand_pp", 2), num(r["p"], 4)])
        return rows

    panels = difficulty_panels(["Mode", "n", "n (middle)", "Mid-Rand (pp)", "95% CI (pp)", "p"], rows_at)
    pooled = s[(s["mode"].astype(str) == "ALL") & (s["difficulty"].astype(str) == "ALL")] if len(s) else s
    extra = ""
    if len(pooled):
        r = pooled.iloc[0]
        truth = planted_value(ctx.planted, "speaking_itt", "mode=ALL;difficulty=ALL", "mid_rand_pp")
        extra = (f" Pooled over all cells: {num(r['mid_rand_pp'], 2, True)} pp "
                 f"{_ci(ctx, r['mid_rand_pp'], r['ci_low'], r['ci_high'], 'mid_rand_pp', 2)}, p = {num(r['p'], 4)}"
                 + (f" (planted by impostor simulate: {num(truth, 2, True)} pp)." if truth is not None else "."))
    g = interval(ctx, "speaking_itt", "mode=ALL;difficulty=ALL", "mid_rand_pp")
    cap = ("Speaking-order pseudo-arm ITT (impostor speaking at positions 2/3 vs the random mix), by mode and "
           f"difficulty ({ctx.n_text()}). Mid-Rand in percentage points with a 95% interval and p ("
           f"{g['method'] or 'no interval computed'}; "
           f"{int(ctx.settings.get('permutation_reps') or 0):,} randomisation replicates)." + extra
           + (f" Not shown, no contrast estimable (a pseudo-arm without games): {', '.join(left)}." if left else "")
           + ctx.flag_caption())
    return PaperTable(6, "Speaking-order ITT", cap, panels, None if panels else ctx.reason("speaking_itt"))


def t07(ctx: Context) -> PaperTable:
    t = rows_of(ctx.results.get("tie_sizes"))
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
    t = rows_of(ctx.results.get("tiebreak_mode"))
    rows = [_tb_row(r) for _, r in t.iterrows()]
    cap = (f"Symmetric tie-breakers by mode ({ctx.n_text()}): expected impostor win (%) under the default rule, "
           "Sym-candidate and Sym-side; Δ in percentage points vs default; Ties = games with a top-of-ballot tie. "
           "Exact recomputation from the ballots, no interval.")
    return PaperTable(8, "Symmetric tie-breakers", cap, [("", _TB_HEAD, rows)], None if rows else ctx.reason("tiebreak_mode"))


def t09(ctx: Context) -> PaperTable:
    t = rows_of(ctx.results.get("tiebreak_mode_difficulty"))
    panels = difficulty_panels(_TB_HEAD, lambda d: [_tb_row(r) for _, r in at_difficulty(t, d).iterrows()])
    cap = (f"Symmetric tie-breakers by mode and difficulty ({ctx.n_text()}); as Table 8. Exact recomputation "
           "from the ballots, no interval.")
    return PaperTable(9, "Tie-breakers by difficulty", cap, panels,
                      None if panels else ctx.reason("tiebreak_mode_difficulty"))


def t10(ctx: Context) -> PaperTable:
    s = rows_of(ctx.results.get("scaling"))
    label = {"overall_provider_fe": "Overall (provider FE)", "overall_no_provider": "Overall (no provider FE)"}
    rows = []
    for _, r in s.iterrows():
        fit = str(r["fit"])
        name = label.get(fit) or (f"Within {fit[len('within_'):].capitalize()} family" if fit.startswith("within_")
                                  else fit)
        if fit == "within_gpt":
            name = "Within GPT family"
        rows.append([name, num(r["or_per_10x"], 3), _ci(ctx, r["or_per_10x"], r["ci_low"], r["ci_high"], "or", 3),
                     sci_p(r["p"])])
    how = methods_text(s["method"].astype(str)) if "method" in s else "Wald, cluster-robust by experiment"
    cap = (f"Size effects with provider control and within-family fits ({ctx.n_text()}): OR per 10× parameters, "
           f"95% interval and p ({how}); mode and difficulty fixed effects in every fit." + ctx.flag_caption())
    return PaperTable(10, "Scaling", cap, [("", ["Model", "OR per 10×", "95% CI", "p"], rows)],
                      None if rows else ctx.reason("scaling"))


def t11(ctx: Context) -> PaperTable:
    """Table 11: the paper's four one-column panels (a)-(d) as the four columns of one table."""
    models = models_by_win(ctx)
    c = rows_of(ctx.results.get("coordination"))
    if not len(c):
        return PaperTable(11, "Coordination", "Coordination and impostor behaviour.", [], ctx.reason("coordination"))
    head, cols, empty = ["Model"], [], []
    for col, title, fmt in (("brokerage", "(a) Brokerage", lambda g: num(g["estimate"], 3)),
                            ("vote_coord_pct", "(b) VoteCoord (%)", lambda g: shown(ctx, g, 1)),
                            ("self_decl_pct", "(c) SelfDecl (%)", lambda g: num(g["estimate"], 1)),
                            ("guess_succ_pct", "(d) GuessSucc (%)", lambda g: num(g["estimate"], 1))):
        cells = [fmt(interval(ctx, "coordination", f"model={m}", col)) for m in models]
        if cells and all(x == DASH for x in cells):
            empty.append(title)
            continue
        head.append(title)
        cols.append(cells)
    rows = [[m, *(col[i] for col in cols)] for i, m in enumerate(models)]
    methods = [interval(ctx, "coordination", f"model={m}", "vote_coord_pct")["method"] for m in models]
    cap = (f"Coordination and impostor behaviour ({ctx.n_text()}); the paper's panels (a)-(d) as columns. Brokerage: "
           "information broker index. VoteCoord: teammates' vote alignment with a 95% interval "
           f"[low, high] ({methods_text(methods)}); the same number as Table "
           "12's Vote Coord. SelfDecl and GuessSucc are impostor-side rates; no interval for the others."
           + (f" Not shown, no data in this bundle: {', '.join(empty)}." if empty else "") + ctx.flag_caption())
    return PaperTable(11, "Coordination", cap, [("", head, rows)] if cols else [],
                      None if cols else ctx.reason("coordination"))


# The paper's columns under its names and definitions (Implicit Coord., Linguistic Mirror and Vocab
# Conv. are levels; Coord. Gap = Vote Coord. - Implicit Coord.; Resilience = Trust Recovery / Betrayal
# Rate as printed); our contrasts with an in-design baseline, under their own names, in a panel of their
# own (T12_C) beside them (a page table is at most eight columns wide).
T12_A = [("coord_rate_pct", "Coord. Rate (%)", 1), ("vote_coord_pct", "Vote Coord. (%)", 1),
         ("implicit_coord_pct", "Implicit Coord. (%)", 1), ("collab_success_pct", "Collab. Success (%)", 1),
         ("strategy_align_pct", "Strategy Align. (%)", 1), ("lsm_seen_pct", "Linguistic Mirror (%)", 1),
         ("vocab_jaccard_seen", "Vocab Conv.", 3)]
T12_B = [("trust_form_pct", "Trust Form. (%)", 1), ("betrayal_pct", "Betrayal Rate (%)", 1),
         ("trust_recovery_pct", "Trust Recovery (%)", 1), ("vulnerability_index", "Vulnerability Index", 2),
         ("resilience_factor", "Resilience Factor", 1), ("coord_gap_paper_pp", "Coord. Gap (pp)", 1),
         ("alignment_gap_pp", "Alignment Gap (pp)", 1)]
T12_C = [("implicit_coord_pp", "Implicit premium (pp)", 1), ("ling_mirror_pp", "Mirror contrast (pp)", 1),
         ("vocab_conv", "Vocab contrast", 3)]


#: Table 12 columns that are Table 11's numbers: read from that table so each is computed and printed once.
T12_FROM_T11 = {"vote_coord_pct": "coordination"}


def _undefined_reasons(ctx: Context) -> dict[str, str]:
    """metric -> why Table 12 cannot define it on this design (``table12_undefined``)."""
    u = rows_of(ctx.results.get("table12_undefined"))
    if not len(u) or not {"metric", "reason"} <= set(u.columns):
        return {}
    return {str(r["metric"]): str(r["reason"]) for _, r in u.iterrows()}


def t12(ctx: Context) -> PaperTable:
    """Table 12 from ``team_dynamics`` (analysis/stats/table12.py): its fourteen columns in the
    paper's order with each one's interval; a column without a value for any model is left out
    and the caption says why (undefined on this design, or no data in this bundle)."""
    t = rows_of(ctx.results.get("team_dynamics"))
    if not len(t):
        return PaperTable(12, "Team dynamics", "Team dynamics across models.", [], ctx.reason("team_dynamics"))
    panels: list = []
    methods: list[str] = []
    undefined: list[str] = []
    no_data: list[str] = []
    why = _undefined_reasons(ctx)
    for title, cols in (("Coordination and convergence metrics", T12_A), ("Trust dynamics and strategic gaps", T12_B),
                        ("Beyond the paper: the levels of (a) against an in-design baseline", T12_C)):
        models = models_by_win(ctx)
        cells = {m: [m] for m in models}
        head = ["Model"]
        for col, name, d in cols:
            src = T12_FROM_T11.get(col, "team_dynamics")
            gs = [interval(ctx, src, f"model={m}", col) for m in models]
            if all(num(g["estimate"], d) == DASH for g in gs):
                (undefined if col in why else no_data).append(name.split(" (")[0])
                continue
            head.append(name)
            methods += [g["method"] for g in gs]
            for m, g in zip(models, gs):
                cells[m].append(shown(ctx, g, d))
        if len(head) > 1:
            panels.append((f"({'abc'[len(panels)]}) {title}", head, [cells[m] for m in models]))
    judges = sorted({str(j) for j in t["strategy_judge"].dropna() if str(j)}) if "strategy_judge" in t.columns else []
    cap = (f"Team dynamics ({ctx.n_text()}), as defined in docs/analysis.md (Table 12) from ballots and descriptions"
           + (f"; Strategy Align. and Alignment Gap from the strategy labels of judge {', '.join(judges)}"
              if judges else "") + "; "
           f"95% intervals [low, high] ({methods_text(methods)}). Vote Coord. "
           "is Table 11's number. Implicit Coord. (team-blind teammates naming the same seat), Linguistic Mirror "
           "(style matching with a description seen) and Vocab Conv. (content-word Jaccard with it) are levels, as "
           "in the paper; panel (c) gives each one's contrast with the same measure on a baseline in the same design "
           "(cross-team pairs; an unseen description of the same pair, word and model). Coord. Gap = Vote Coord. - "
           "Implicit Coord.; Resilience Factor = Trust Recovery / Betrayal Rate, both as printed; Trust Recovery "
           "and Resilience come from games of more than one round."
           + (f" Not shown, undefined on this design (reasons in tables/table12_undefined.csv): {', '.join(undefined)}."
              if undefined else "")
           + (f" Not shown, no data for it in this bundle (e.g. no ballot reasoning text; see the notes): "
              f"{', '.join(no_data)}." if no_data else "") + ctx.flag_caption())
    return PaperTable(12, "Team dynamics", cap, panels, None if panels else "no Table 12 metric has a value")


PAPER_TABLES: list[Callable[[Context], PaperTable]] = [t01, _t_or(2), t03, _t_or(4), t05, t06, t07, t08, t09, t10,
                                                       t11, t12]


#: the bundle tables whose intervals and p-values each paper table prints (its caption states their estimand)
PAPER_SOURCES: dict[int, tuple[str, ...]] = {1: ("headline",), 2: ("odds_ratios",), 3: ("chi2",), 4: ("odds_ratios",),
                                             5: ("opponent_baseline",), 6: ("speaking_itt",), 10: ("scaling",),
                                             11: ("coordination",), 12: ("team_dynamics",)}


def build_paper_tables(results: dict[str, pd.DataFrame], manifest: dict) -> list[PaperTable]:
    d = manifest.get("data", {})
    ctx = Context(results, manifest.get("config") or {}, int(d.get("games") or 0), int(d.get("experiments") or 0),
                  list(manifest.get("notes") or []),
                  planted=planted(((manifest.get("source") or {}).get("simulated"))))
    out = []
    for build in PAPER_TABLES:
        try:
            out.append(build(ctx))
        except Exception as exc:  # noqa: BLE001 - one table must not sink the paper
            n = len(out) + 1
            out.append(PaperTable(n, f"Table {n}", "", [], f"could not be laid out ({type(exc).__name__}: {exc})"))
    for t in out:  # the estimand, from the inference table (inference.estimand_sentence: one definition)
        if not t.missing:
            t.caption += estimand_sentence(results.get("inference"), PAPER_SOURCES.get(t.number, ()))
    return out
