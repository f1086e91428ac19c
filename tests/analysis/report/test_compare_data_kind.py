"""compare.csv / compare.txt say first what the data are (simulated or played, rounds, models, word
pairs, schedule) and mark each row by it, so a planted or multi-round agreement cannot read as a
replication."""

from __future__ import annotations

import pandas as pd

from impostor_bench.analysis.report.paper_values import (PLANTED_NOTE, SIMULATED_NOTE, compare, comparison_text,
                                                         load_paper_values)

METHOD = "logit, CR2 by experiment, t(Bell-McCaffrey df)"


def _results() -> dict[str, pd.DataFrame]:
    ors = pd.DataFrame({"comparison": ["seat1_vs_seat0", "size_per_10x"], "or": [1.11, 1.5], "ci_low": [1.0, 1.2],
                        "ci_high": [1.3, 1.9], "p": [0.01, 0.01], "method": [METHOD, METHOD]})
    tb = pd.DataFrame({"mode": ["homogeneous"], "default": [40.0], "sym_cand": [38.0], "sym_side": [37.0],
                       "delta_cand": [-2.0], "delta_side": [-3.0], "ties": [10]})
    head = pd.DataFrame({"model": ["gpt-4o"], "det_acc_pct": [76.0], "imp_win_pct": [60.0]})
    return {"odds_ratios": ors, "tiebreak_mode": tb, "headline": head}


def _manifest(simulated: bool, rounds: int) -> dict:
    m = {"data": {"models": ["gpt-4o"], "games": 1200, "experiments": 30, "word_pairs": [],
                  "rounds": {"max_rounds": [rounds], "multi_round_games": 1200 if rounds > 1 else 0}}}
    if simulated:  # simulate's arguments (the command layer passes simulated.json's "args")
        m["source"] = {"simulated": {"experiments": 30, "games": 40, "rounds": rounds, "seed": 0,
                                     "seat_or": "1.12,1.26,1.22", "size_or": 1.0, "models": None}}
    return m


def _row(cmp: pd.DataFrame, quantity: str, model: str = "") -> pd.Series:
    sel = (cmp["quantity"] == quantity) & (cmp["model"].astype(str) == model)
    assert sel.sum() == 1, quantity
    return cmp[sel].iloc[0]


def test_simulated_multi_round_data_are_said_first_and_every_row_is_marked():
    man = _manifest(True, 3)
    cmp = compare(_results(), {}, load_paper_values(), man)
    # the seat OR the simulator planted at the paper's value agrees by construction; the size OR was
    # planted at 1.0 (not the paper's 1.71), so it is only "simulated"
    assert PLANTED_NOTE in _row(cmp, "OR: Player 2 vs Player 1")["data_note"]
    assert _row(cmp, "OR: size per 10x")["data_note"].startswith(SIMULATED_NOTE)
    assert PLANTED_NOTE in _row(cmp, "Detection accuracy (%)", "gpt-4o")["data_note"]  # default models plant Det Acc
    # Tables 7-9 use the first round (as the paper defines them); every other row compares another game
    tb = cmp[(cmp["paper_table"] == "Table 8") & cmp["estimate"].notna()]  # the homogeneous row here
    assert len(tb) == 6 and tb["data_note"].str.contains("first round of each multi-round game").all()
    assert "more than one round" in _row(cmp, "OR: Player 2 vs Player 1")["data_note"]
    assert (cmp["data"] == "simulated, 3 rounds").all()
    text = comparison_text(cmp, man)
    assert text.index("What these data are:") < text.index("What differs between")
    assert "THESE DATA ARE SIMULATED" in text and "1,200 games of more than one round" in text
    assert "planted by the simulator from the paper" in text and "THE DATA ARE SIMULATED; multi-round games" in text
    t8 = [ln for ln in text[text.index("\nTable 8 "):].split("\n\n")[0].splitlines() if "homogeneous" in ln]
    assert len(t8) == 6 and all(ln.rstrip().endswith("1st rd") for ln in t8)


def test_played_one_round_data_carry_no_mark():
    man = _manifest(False, 1)
    cmp = compare(_results(), {}, load_paper_values(), man)
    got = cmp[cmp["estimate"].notna()]
    assert len(got) and (got["data_note"] == "").all() and (cmp["data"] == "played, 1 round").all()
    text = comparison_text(cmp, man)
    assert "These data are played games" in text and "SIMULATED" not in text
    assert "one round per game, as the paper's" in text


def test_rows_without_an_estimate_say_why():
    am = pd.DataFrame({"item": ["vulnerability_score"], "model": [""], "estimate": [float("nan")],
                       "reason": ["the paper gives no formula for it"]})
    res = {**_results(), "appendix_m": am}
    cmp = compare(res, {}, load_paper_values(), _manifest(False, 1))
    row = _row(cmp, "Vulnerability score", "gpt-4o")
    assert row["reason"] == "the paper gives no formula for it"
    assert "Vulnerability score (gpt-4o): the paper gives no formula" in comparison_text(cmp, _manifest(False, 1))
