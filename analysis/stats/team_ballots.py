"""Ballot measures of team dynamics (Table 12, Appendix M.2, M.4-M.6, M.8), with in-design controls.

Team modes seat two teams of two (docs/rules.md): the impostor and one majority player
(an *impostor-majority* team, kind ``im``) and two majority players (kind ``mm``). The
objectives of the two kinds differ, so every rate is also given per kind. Controls that the
design provides for free:

* **cross-team pairs in the same game** (same ballots, same words, not teammates) are the
  baseline of every teammate rate: ``mm`` teammates against the two ``mm`` cross pairs of
  the game, ``im`` teammates against the impostor's two cross pairs;
* **team_blind vs team_aware** (same models and word pairs; only disclosure differs).

Units: a seat pair (vote coordination), a ballot (betrayal), a team in a game
(collaboration, failure modes). Everything is credited to the model(s) of the seats
involved (teams are model-based). Definitions: docs/analysis.md "Team dynamics and language".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import N_SEATS, note, prepared, table
from impostor_bench.analysis.stats.declaration import WILD, infer, wide
from impostor_bench.analysis.stats._wild import Wild
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.core.records import TEAM_MODES as _TM

KINDS = ("mm", "im")


class SeatLabels:
    """The text columns (model, mode, kinds) of per-seat unit frames as categoricals (sorted
    categories: groupby gives the order of plain strings; pass ``observed=True``): Arrow strings
    copied into every unit frame and every subset of one took ~100 MB of team_dynamics' peak at
    90,720 games. Here and in ``language.seat_text``."""

    def __init__(self, prep):
        code, self.models = pd.factorize(prep.model.ravel(), sort=True)
        self.model_code = code.reshape(prep.model.shape)
        self.mode_code, self.modes = pd.factorize(pd.Series(prep.mode, dtype=object), sort=True)

    @classmethod
    def of_games(cls, prep) -> "SeatLabels":
        """The labels of these prepared games, coded once (``Prepared.derived``)."""
        if "seat_labels" not in prep.derived:
            prep.derived["seat_labels"] = cls(prep)
        return prep.derived["seat_labels"]

    def model(self, gi, seat) -> pd.Categorical:
        return pd.Categorical.from_codes(self.model_code[gi, seat], categories=self.models)

    def mode(self, gi) -> pd.Categorical:
        return pd.Categorical.from_codes(self.mode_code[gi], categories=self.modes)

    @staticmethod
    def of(values: np.ndarray, categories) -> pd.Categorical:
        return pd.Categorical(values, categories=sorted(categories))


def team_games(prep) -> np.ndarray:
    """Indices of games with two teams of two among four present seats."""
    if prep.team is None:
        return np.zeros(0, np.int64)
    t = prep.team
    ok = prep.present.all(1) & pd.notna(t).all(1)
    a = (t == "A").sum(1)
    return np.nonzero(ok & (a == 2) & ((t == "B").sum(1) == 2))[0]


def teammate_of(prep, gi: np.ndarray) -> np.ndarray:
    """(len(gi), 4) seat of each seat's teammate."""
    t = prep.team[gi]
    out = np.zeros((len(gi), N_SEATS), np.int64)
    for p in range(N_SEATS):
        for q in range(N_SEATS):
            if p != q:
                out[:, p] = np.where(t[:, p] == t[:, q], q, out[:, p])
    return out


def seat_pairs(prep) -> pd.DataFrame:
    """One row per (team game, seat pair, credited model): mate, kind, both_valid, aligned."""
    gi = team_games(prep)
    cols = ["gi", "p", "q", "mate", "kind", "model", "mode", "exp", "both_valid", "aligned"]
    if len(gi) == 0:
        return pd.DataFrame(columns=cols)
    frames = []
    lab = SeatLabels.of_games(prep)
    vote, imp, mode = prep.vote[gi], prep.is_imp[gi], lab.mode(gi)
    for p in range(N_SEATS):
        for q in range(p + 1, N_SEATS):
            both = np.isfinite(vote[:, p]) & np.isfinite(vote[:, q])
            kind = SeatLabels.of(np.where(imp[:, p] | imp[:, q], "im", "mm"), KINDS)
            base = dict(gi=gi, p=p, q=q, mate=prep.team[gi, p] == prep.team[gi, q], kind=kind, mode=mode,
                        exp=prep.exp_code[gi], both_valid=both, aligned=both & (vote[:, p] == vote[:, q]))
            mp, mq = lab.model_code[gi, p], lab.model_code[gi, q]
            frames.append(pd.DataFrame({**base, "model": lab.model(gi, p)}))
            diff = mp != mq
            if diff.any():
                frames.append(pd.DataFrame({k: (v[diff] if isinstance(v, (np.ndarray, pd.Categorical)) else v)
                                            for k, v in base.items()} | {"model": lab.model(gi[diff], q)}))
    return pd.concat(frames, ignore_index=True)[cols]


def ballots_frame(prep) -> pd.DataFrame:
    """One row per counted ballot in a team game: voter kind, betrayal (names the teammate), cross share."""
    gi = team_games(prep)
    if len(gi) == 0:
        return pd.DataFrame(columns=["gi", "model", "mode", "exp", "voter", "betray", "cross_each"])
    mate = teammate_of(prep, gi)
    lab = SeatLabels.of_games(prep)
    rows = []
    for p in range(N_SEATS):
        v = prep.vote[gi, p]
        ok = np.isfinite(v)
        mimp = prep.is_imp[gi, mate[:, p]]
        voter = np.where(prep.is_imp[gi, p], "impostor", np.where(mimp, "majority_with_impostor", "majority_mm"))
        betray = v == mate[:, p]
        rows.append(pd.DataFrame({"gi": gi[ok], "model": lab.model(gi[ok], p), "mode": lab.mode(gi[ok]),
                                  "exp": prep.exp_code[gi[ok]],
                                  "voter": SeatLabels.of(voter[ok], ("impostor", "majority_with_impostor", "majority_mm")),
                                  "betray": betray[ok], "cross_each": (~betray[ok]) / 2.0}))
    return pd.concat(rows, ignore_index=True)


def team_outcomes(prep) -> pd.DataFrame:
    """One row per (team game, team): collaboration success and the four M.6 failure modes.

    * collab    -- mm team: both teammates' counted ballots name the impostor and the majority won;
    * failed    -- the team's majority member(s) lost (the impostor won);
    * trust_breakdown -- teammates' counted ballots differ, or one names the other (the majority
      member of an im team naming its impostor teammate is detection, not breakdown);
    * paralysis -- the game's counted ballots tie at the top (or fewer than two were cast);
    * misplaced -- im team: the majority member votes with (the same seat as) its impostor teammate;
    * groupthink -- the three players other than one majority seat all name that seat.
    The cross-team control of ``collab``: the game's two cross mm pairs under the same rule.
    """
    gi = team_games(prep)
    cols = ["gi", "team", "model", "mode", "exp", "kind", "collab", "collab_cross", "failed", "trust_breakdown",
            "paralysis", "misplaced", "groupthink"]
    if len(gi) == 0:
        return pd.DataFrame(columns=cols)
    v, imp, t = prep.vote[gi], prep.imp_seat[gi], prep.team[gi]
    n = len(gi)
    maj_won = prep.y[gi] == 0
    counts = np.stack([(v == s).sum(1) for s in range(N_SEATS)], 1)
    top = counts.max(1)
    paralysis = ((counts == top[:, None]).sum(1) >= 2) | (np.isfinite(v).sum(1) < 2)
    group = np.zeros(n, bool)
    for s in range(N_SEATS):
        others = [o for o in range(N_SEATS) if o != s]
        group |= (imp != s) & (counts[:, s] == 3) & np.isfinite(v[:, others]).all(1)
    on_imp = v == imp[:, None]
    lab = SeatLabels.of_games(prep)
    mode = lab.mode(gi)
    rows = []
    seats = np.arange(N_SEATS)[None, :]
    for team in ("A", "B"):
        members = np.argsort(np.where(t == team, 0, 1), axis=1, kind="stable")[:, :2]
        a, b = members[:, 0], members[:, 1]
        r = np.arange(n)
        va, vb = v[r, a], v[r, b]
        has_imp = (a == imp) | (b == imp)
        kind = SeatLabels.of(np.where(has_imp, "im", "mm"), KINDS)
        maj_m = np.where(a == imp, b, a)  # the (first) majority member
        names_mate = (va == b) | (vb == a)
        detect = has_imp & (v[r, maj_m] == imp)
        breakdown = ((np.isfinite(va) & np.isfinite(vb) & (va != vb)) | names_mate) & ~detect
        both_imp = on_imp[r, a] & on_imp[r, b]
        # cross mm pairs: each mm-team member with the other team's majority member
        other = (t != team) & (seats != imp[:, None])
        om = np.argmax(other, axis=1)
        cross = ((on_imp[r, a] & on_imp[r, om]).astype(float) + (on_imp[r, b] & on_imp[r, om])) / 2 * maj_won
        misplaced = has_imp & np.isfinite(v[r, maj_m]) & (v[r, maj_m] == v[r, imp])
        rows.append(pd.DataFrame({
            "gi": gi, "team": team, "model": lab.model(gi, a), "mode": mode, "exp": prep.exp_code[gi],
            "kind": kind, "collab": np.where(has_imp, np.nan, (both_imp & maj_won).astype(float)),
            "collab_cross": np.where(has_imp, np.nan, cross), "failed": ~maj_won,
            "trust_breakdown": breakdown, "paralysis": paralysis,
            "misplaced": np.where(has_imp, misplaced.astype(float), np.nan), "groupthink": group}))
    return pd.concat(rows, ignore_index=True)[cols]


def ballot_measures(data, config, models) -> tuple[pd.DataFrame, dict]:
    """Per-model Table 12 ballot columns (with CIs) and the replicate arrays for combined columns."""
    prep = prepared(data, need_players=True)
    w = Wild(data, prep, config, models)
    pairs = seat_pairs(prep)
    if len(pairs) == 0:
        note(data, "team dynamics: no team-mode games with two teams of two; the ballot columns of Table 12 are empty")
        return pd.DataFrame(index=pd.Index(models, name="model")), {}
    pv = pairs[pairs["both_valid"].astype(bool)]
    mate, cross = pv[pv["mate"].astype(bool)], pv[~pv["mate"].astype(bool)]
    blind = (lambda d: d[d["mode"] == "team_blind"])
    R = {}
    R["vote_coord_pct"] = w.mean(mate, "aligned", 100)
    R["vote_coord_cross_pct"] = w.mean(cross, "aligned", 100)
    for k in KINDS:
        R[f"vote_coord_{k}_pct"] = w.mean(mate[mate["kind"] == k], "aligned", 100)
        R[f"vote_coord_cross_{k}_pct"] = w.mean(cross[cross["kind"] == k], "aligned", 100)
    # the paper's Implicit Coord. is a level (13-22%): teammates aligned where the team is undisclosed;
    # the premium over cross-team pairs of the same games is the estimand beside it
    R["implicit_coord_pct"] = w.mean(blind(mate), "aligned", 100)
    R["implicit_coord_pp"] = w.diff(R["implicit_coord_pct"], w.mean(blind(cross), "aligned", 100))
    R["coord_gap_pp"] = w.diff(R["vote_coord_pct"], R["implicit_coord_pp"])
    R["coord_gap_paper_pp"] = w.diff(R["vote_coord_pct"], R["implicit_coord_pct"])
    aware = (lambda d: d[d["mode"] == "team_aware"])
    prem_aware = w.diff(w.mean(aware(mate), "aligned", 100), w.mean(aware(cross), "aligned", 100))
    R["disclosure_effect_pp"] = w.diff(prem_aware, R["implicit_coord_pp"])
    b = ballots_frame(prep)
    bb = b[b["voter"] != "majority_with_impostor"]
    R["betrayal_pct"] = w.mean(bb, "betray", 100)
    R["betrayal_cross_pct"] = w.mean(bb, "cross_each", 100)
    teams = team_outcomes(prep)
    R["collab_success_pct"] = w.mean(teams.dropna(subset=["collab"]), "collab", 100)
    R["collab_cross_pct"] = w.mean(teams.dropna(subset=["collab_cross"]), "collab_cross", 100)
    fail = teams[teams["failed"].astype(bool)]
    for c in ("trust_breakdown", "paralysis", "groupthink"):
        R[f"fail_{c}_pct"] = w.mean(fail, c, 100)
    R["fail_misplaced_trust_pct"] = w.mean(fail.dropna(subset=["misplaced"]), "misplaced", 100)
    out = w.frame(R)
    w.note_not_computed("team_dynamics (ballot columns)")
    out["n_teammate_pairs"] = mate.groupby("model", observed=True).size().reindex(out.index)
    out["n_team_failures"] = fail.groupby("model", observed=True).size().reindex(out.index)
    return out, R


@table("team_ballots", columns=["model", "mode", "kind", "n_teammate_pairs", "vote_coord_pct",
                                "vote_coord_cross_pct", "teammate_premium_pp", "ci_low", "ci_high"],
    title=("Teammate vs cross-team vote alignment per model, team mode and pair kind (Table 12 Vote/Implicit "
           "Coord. controls); CI of the teammate premium from the design bootstrap"),
    section="beyond",
    inference=(
        infer("teammate_premium", ("model", "mode", "kind"), "teammate_premium_pp", ("ci_low", "ci_high"),
          method=WILD),
        *wide(("model", "mode", "kind"), "vote_coord_pct", "vote_coord_cross_pct"),
    ),
)
def team_ballots(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Teammate vs cross-team vote alignment per model x team mode x pair kind (both controls)."""
    prep = prepared(data, need_players=True)
    pairs = seat_pairs(prep)
    pv = pairs[pairs["both_valid"].astype(bool)]
    if len(pv) == 0:
        return None
    models = sorted(set(pv["model"].dropna().unique()), key=str)
    w = Wild(data, prep, config, models)
    rows = []
    present = set(pv["mode"].astype(object))
    for mode in [m for m in _TM if m in present] + ["ALL"]:
        for kind in KINDS + ("all",):
            s = pv if mode == "ALL" else pv[pv["mode"] == mode]
            s = s if kind == "all" else s[s["kind"] == kind]
            mt, cr = s[s["mate"].astype(bool)], s[~s["mate"].astype(bool)]
            a, c = w.mean(mt, "aligned", 100), w.mean(cr, "aligned", 100)
            d = w.diff(a, c)
            f = w.frame({"vote_coord_pct": a, "vote_coord_cross_pct": c, "teammate_premium_pp": d})
            f = f.rename(columns={"teammate_premium_pp_ci_low": "ci_low", "teammate_premium_pp_ci_high": "ci_high"})
            f["n_teammate_pairs"] = mt.groupby("model", observed=True).size().reindex(f.index)
            f["mode"], f["kind"] = mode, kind
            rows.append(f.reset_index())
    out = pd.concat(rows, ignore_index=True)
    w.note_not_computed("team_ballots")
    return out[out["n_teammate_pairs"].fillna(0) > 0]
