"""The report's tables read one way: one interval format ("est [lo, hi]"), captions that name a
method briefly (the full text once, in "About this report"), headings without Markdown marks,
one interval per estimate."""

from __future__ import annotations

import html

from impostor_bench.analysis.report.paper_tables import methods_text, pm, short_method

FALLBACK = ("ratio of totals; CR1 by experiment, logit scale, t(G-1) (fallback from the composition-adjusted "
            "interval: 24 experiments for the design logit's 24 parameters (G - K < 6))")
MODERATED = ("design bootstrap (wild by experiment) SD; residuals about model x mode + tier + the game's model "
             "composition, design effect moderated across models (empirical Bayes), t(d0 + G - K)")


def test_a_symmetric_interval_prints_as_an_interval_too():
    assert pm(50.0, 37.5, 62.5) == "50.0 [37.5, 62.5]"  # was "50.0 ± 12.5"
    assert pm(57.3, 43.5, 70.0) == "57.3 [43.5, 70.0]"
    assert pm(0.111, 0.062, 0.160, 3) == "0.111 [0.062, 0.160]"


def test_a_caption_names_a_method_briefly_and_points_to_the_full_text():
    assert short_method(FALLBACK) == "ratio of totals; CR1 by experiment, logit scale, t(G-1)"
    assert short_method(MODERATED) == "design bootstrap (wild by experiment) SD"
    long = ("logit, two-way cluster-robust by experiment and word pair (CR1 each, negative eigenvalues clipped), "
            "t(min(G)-1) of the two tiers' experiments and pairs")
    assert short_method(long) == "logit, two-way cluster-robust by experiment and word pair"
    two = FALLBACK.replace("24 parameters", "25 parameters")
    text = methods_text([FALLBACK, two, MODERATED])
    assert text == ("ratio of totals; CR1 by experiment, logit scale, t(G-1); design bootstrap (wild by experiment) SD"
                    "; in full: About this report")
    assert methods_text(["not computed: one experiment"]).startswith("not computed")


def test_the_team_figure_keeps_its_legend_off_the_bars_and_names_no_missing_panel(tmp_path, monkeypatch):
    """One panel (no coordination language): the caption began "Left:", and the legend sat inside
    the axes over a model's bar."""
    import numpy as np
    import pandas as pd

    from impostor_bench.analysis.figures import team

    models = ["m1", "m2", "m3"]
    tb = pd.DataFrame([{"kind": "all", "mode": mode, "model": m, "teammate_premium_pp": 5.0 + i,
                        "ci_low": 1.0 + i, "ci_high": 9.0 + i}
                       for mode in team.TEAM_MODES for i, m in enumerate(models)])
    drawn = {}
    monkeypatch.setattr(team, "save_figure", lambda fig, path: drawn.update(fig=fig))
    out = team.fig_team_contrasts(None, {"team_ballots": tb}, tmp_path, [])
    assert out is not None and not out["caption"].startswith("Left") and "Right:" not in out["caption"]
    fig = drawn["fig"]
    ax = fig.axes[0]
    assert ax.get_legend() is None and len(fig.legends) == 1
    fig.canvas.draw()
    box, axbox = fig.legends[0].get_window_extent(), ax.get_window_extent()
    assert box.y1 <= axbox.y0 + 1e-6 or box.y0 >= axbox.y1 - 1e-6  # outside the panel, not over a bar
    assert np.isfinite(box.y0)


def test_paper_tex_forces_no_page_break_so_a_figure_can_fill_the_space_above_a_tall_table():
    """A \\clearpage before the figures left the page above Table 12 half blank (Table 12 too tall
    for it, nothing allowed to fill it)."""
    from impostor_bench.analysis.report.paper_out import _paper_tex

    tex = _paper_tex({"data": {"games": 10, "experiments": 2, "models": ["a"]}, "config": {}}, [], 3)
    assert "\\input{fig1}" in tex and "\\clearpage" not in tex and "\\newpage" not in tex
    assert "About this report" in tex  # where a caption's "in full: About this report" is, for a reader of the PDF


def test_a_half_width_beside_its_interval_is_left_to_the_csv():
    """Appendix D printed "Impostor win 95% interval" and "Impostor win CI" (a half-width) side by side."""
    import pandas as pd

    from impostor_bench.analysis.report.sections import display_table

    df = pd.DataFrame({"model": ["a"], "imp_win_pct": [51.25], "imp_win_ci_low": [25.94], "imp_win_ci_high": [75.93],
                       "n": [80], "imp_win_ci": [24.99]})
    shown, left = display_table(df)
    assert list(shown.columns) == ["Model", "Impostor win (%)", "Impostor win 95% interval", "n"]
    assert shown.iloc[0]["Impostor win 95% interval"] == "[25.94, 75.93]" and "imp_win_ci" in left


def test_a_warning_in_a_note_left_to_the_csv_is_printed_beside_the_table_and_headings_show_no_backticks():
    import pandas as pd

    from impostor_bench.analysis.report import pages

    weak = "weak instrument (first-stage F = 0.03 < 10): read the AR set, not iv_se"
    cols = {f"c{i}": [float(i)] for i in range(9)}  # wider than the page: the note is left to the CSV
    results = {"iv_sensitivity": pd.DataFrame({**cols, "note": [f"exploratory; {weak}"]})}
    t = {"rows": 1, "seconds": 0.1}
    md = "\n".join(pages._md_table("iv_sensitivity", t, results))
    page = "\n".join(pages._html_table("iv_sensitivity", t, results))
    assert weak in md and html.escape(weak) in page and "Columns only in the CSV" in md
    many = {"x": pd.DataFrame({**{k: v * 5 for k, v in cols.items()}, "note": list("abcde")})}
    assert "Note:" not in "\n".join(pages._md_table("x", {"rows": 5, "seconds": 0.1}, many))
    assert pages._code_spans("from `ci_low`/`ci_high` <") == "from <code>ci_low</code>/<code>ci_high</code> &lt;"
    heading = pages._html_table("bootstrap", t, {"bootstrap": pd.DataFrame({"quantity": ["q"], "estimate": [1.0]})})[0]
    assert "`" not in heading and "<code>ci_low</code>" in heading


def test_table1_points_to_the_full_methods_once():
    """Table 1 names a method per column; each carried its own "in full: About this report"."""
    import numpy as np
    import pandas as pd

    from impostor_bench.analysis.report.paper_tables import build_paper_tables

    ci = {f"{c}_ci_{e}": [40.0 if e == "low" else 60.0] for c in ("imp_win", "maj_win", "det_acc") for e in ("low", "high")}
    head = pd.DataFrame({"model": ["a"], "imp_win_pct": [50.0], "maj_win_pct": [50.0], "det_acc_pct": [50.0],
                         "n_imp_games": [10], **ci, "centrality": [0.5], "reach": [0.2], "coal_eff_pct": [60.0],
                         "imp_win_ci_method": [FALLBACK], "maj_win_ci_method": [MODERATED],
                         "det_acc_ci_method": ["logit, CR2 by experiment, t(Bell-McCaffrey df)"]})
    inf = pd.DataFrame({"table": ["headline"] * 3, "key": ["model=a"] * 3,
                        "estimate_column": ["imp_win_pct", "maj_win_pct", "det_acc_pct"],
                        "estimate": [50.0] * 3, "ci_low": [40.0] * 3, "ci_high": [60.0] * 3, "p": [np.nan] * 3,
                        "method": [FALLBACK, MODERATED, "logit, CR2 by experiment, t(Bell-McCaffrey df)"]})
    manifest = {"data": {"games": 10, "experiments": 2, "models": ["a"]}, "config": {}}
    t1 = next(t for t in build_paper_tables({"headline": head, "inference": inf}, manifest) if t.number == 1)
    assert "Imp Win: ratio of totals" in t1.caption and "Det Acc: logit, CR2" in t1.caption, t1.caption
    assert t1.caption.count("About this report") == 1, t1.caption


def test_a_latex_table_prints_a_half_width_only_where_no_interval_is_printed():
    """tables/*.tex printed "36.59 ± 11.78" beside "[25.60, 49.16]" (an asymmetric interval)."""
    import pandas as pd

    from impostor_bench.analysis.report.formatting import to_latex

    both = pd.DataFrame({"model": ["a"], "imp_win_pct": [36.59], "imp_win_ci_low": [25.60],
                         "imp_win_ci_high": [49.16], "imp_win_ci": [11.78]})
    tex = to_latex(both, "t")
    assert r"\pm" not in tex and "11.78" not in tex and "{}[25.60, 49.16]" in tex
    alone = to_latex(both[["model", "imp_win_pct", "imp_win_ci"]], "t")
    assert r"36.59 $\pm$ 11.78" in alone
