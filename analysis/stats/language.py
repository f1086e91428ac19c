"""Language measures of team dynamics (Table 12, Appendix M.1, M.3, M.8), from descriptions
and ballot reasoning with the shipped lexicon (``analysis/stats/_text.py``; no model calls).

* Coord. Rate -- % of a model's seats in team-mode games whose description or ballot
  reasoning has a coordination phrase; baseline: the same in homogeneous/cross-play games.
* Linguistic Mirror -- exposure-driven Language Style Matching: for every description the
  speaker saw (an earlier speaker of its game), LSM(speaker, seen) minus LSM(speaker, a
  matched unseen description: same word pair, same word, same model, another game), x 100.
* Vocab Conv. -- the same contrast on content words (function/stop words and forms of the
  pair's two words removed): Jaccard(seen) - Jaccard(matched unseen).
* Trust Form. -- % of a model's ballot reasonings that vouch for a named player.
* Suspicion (M.8 vigilance), hedging, "coordination theater" share, per mode.
Definitions: docs/analysis.md "Team dynamics and language".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats import _text as tx
from impostor_bench.analysis.stats._base import N_SEATS, StatsUnavailable, memo, note, prepared, table
from impostor_bench.analysis.stats.declaration import WILD_PERCENTILE, infer, wide
from impostor_bench.analysis.stats._wild import Wild
from impostor_bench.analysis.stats.team_ballots import SeatLabels, team_games
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.core.records import TEAM_MODES


def _reasoning(data, prep) -> np.ndarray:
    """(N, 4) ballot reasoning (None where absent): an extra players column, not in the prepared view."""
    out = np.full((prep.n, N_SEATS), None, dtype=object)
    p = data.players
    if p is None or "reasoning" not in p.columns:
        return out
    pos = pd.Index(prep.games["game_id"].astype(object)).get_indexer(p["game_id"].astype(object))
    seat = pd.to_numeric(p["seat"], errors="coerce").to_numpy(float)
    ok = (pos >= 0) & np.isin(seat, [0, 1, 2, 3])
    out[pos[ok], seat[ok].astype(int)] = p["reasoning"].astype(object).to_numpy()[ok]
    return out


def _features(uniq) -> np.ndarray:
    """(U, 5) text features of each distinct text (NaN rows for non-texts and placeholders)."""
    out = np.full((len(uniq), 5), np.nan)
    for k, t in enumerate(uniq):
        if tx.is_text(t):
            out[k] = tx.features(t)
    return out


def seat_text(data, prep) -> pd.DataFrame:
    """One row per present seat: text measures of its description and its ballot reasoning (memoised)."""
    return _memo_or_raise(data, "seat_text", lambda: _seat_text(data, prep))


def _memo_or_raise(data, key, fn, per_table: bool = False):
    def safe():
        try:
            return fn()
        except StatsUnavailable as e:
            return e

    out = memo(data, (key,), safe, per_table=per_table)
    if isinstance(out, StatsUnavailable):
        raise out
    return out.copy(deep=not _COPY_ON_WRITE)  # the caller's own frame (a deep copy: 30 MB a call at 90k games)


def _seat_text(data, prep) -> pd.DataFrame:
    if prep.description is None:
        raise StatsUnavailable("players.description is missing")
    reasoning = _reasoning(data, prep)
    gi, seat = np.nonzero(prep.present)
    desc, reas = prep.description[gi, seat], reasoning[gi, seat]
    dcode, duniq = pd.factorize(pd.Series(desc, dtype=object))
    rcode, runiq = pd.factorize(pd.Series(reas, dtype=object))
    duniq, runiq = np.asarray(duniq, dtype=object), np.asarray(runiq, dtype=object)  # element access: numpy, not Index
    fd, fr = _features(duniq), _features(runiq)
    nan5 = np.full(5, np.nan)
    fd = np.vstack([fd, nan5])[np.where(dcode >= 0, dcode, len(duniq))]  # code -1 (None) -> the NaN row
    fr = np.vstack([fr, nan5])[np.where(rcode >= 0, rcode, len(runiq))]
    vote = prep.vote[gi, seat]
    # vouching depends on the text and on whom the ballot suspects: once per distinct (text, vote)
    key = rcode * 5 + np.where(np.isfinite(vote), vote, 4).astype(np.int64)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    vals = np.array([float(tx.vouches(runiq[rcode[i]], vote[i])) if rcode[i] >= 0 and tx.is_text(runiq[rcode[i]])
                     else np.nan for i in first], dtype=float)
    vouch = vals[inv.ravel()] if len(vals) else np.full(len(reas), np.nan)
    lab = SeatLabels.of_games(prep)  # categoricals: a memo every language table copies and subsets
    df = pd.DataFrame({
        "gi": gi, "seat": seat, "model": lab.model(gi, seat), "mode": lab.mode(gi), "exp": prep.exp_code[gi],
        "role": SeatLabels.of(np.where(prep.is_imp[gi, seat], "impostor", "majority"), ("impostor", "majority")),
        "team_mode": np.isin(prep.mode[gi], TEAM_MODES),
        "words": fd[:, 0], "d_coord": fd[:, 1], "d_coord_share": fd[:, 2], "d_hedge": fd[:, 3], "d_susp": fd[:, 4],
        "r_coord": fr[:, 1], "r_susp": fr[:, 4], "vouch": vouch, "counted": np.isfinite(vote),
    })
    has_any = df["d_coord"].notna() | df["r_coord"].notna()
    df["coord_any"] = np.where(has_any, ((df["d_coord"].fillna(0) + df["r_coord"].fillna(0)) > 0).astype(float),
                               np.nan)
    df["hedge_per100"] = 100 * df["d_hedge"] / df["words"].where(df["words"] > 0)
    df["susp_any"] = np.where(df["r_susp"].notna(), (df["r_susp"] > 0).astype(float), np.nan)
    return df


def exposures(data, prep) -> pd.DataFrame:
    """One row per (game, speaker, earlier description it saw): LSM and content-word Jaccard with the
    seen description and with its matched unseen twin (same pair_id, word role and model, other game)."""
    return _memo_or_raise(data, "exposures", lambda: _exposures(data, prep), per_table=True)  # team_dynamics' only


def _exposures(data, prep) -> pd.DataFrame:
    g = prep.games
    if prep.description is None or prep.speak_pos is None or "pair_id" not in g.columns:
        raise StatsUnavailable("descriptions, speaking positions or games.pair_id are missing")
    words = list(zip(g.get("majority_word", pd.Series([None] * prep.n)).astype(object),
                     g.get("impostor_word", pd.Series([None] * prep.n)).astype(object)))
    gi, seat = (x.astype(np.int32) for x in np.nonzero(prep.present))  # int32 rows: half the index memory
    tcode, tuniq = pd.factorize(pd.Series(prep.description[gi, seat], dtype=object))
    is_t = np.array([tx.is_text(t) for t in tuniq] + [False], dtype=bool)
    ok = is_t[np.where(tcode >= 0, tcode, len(tuniq))] & np.isfinite(prep.speak_pos[gi, seat])
    # integer codes of the text, pair and model, not their strings: a frame of 362,880 Arrow strings
    # (and the Python strings read back from them) held ~60 MB at 90,720 games
    pcode = pd.factorize(g["pair_id"].astype(object))[0][gi]
    mcode, muniq = pd.factorize(pd.Series(prep.model[gi, seat], dtype=object), sort=True)
    ok &= (pcode >= 0) & (mcode >= 0)
    gi, seat, tcode, pcode, mcode = (x[ok].astype(np.int32) for x in (gi, seat, tcode, pcode, mcode))  # by game, seat
    d = pd.DataFrame({"gi": gi, "seat": seat, "pair": pcode, "imp": prep.is_imp[gi, seat], "model": mcode})
    pos = prep.speak_pos[gi, seat]
    twin = _twins(d).astype(np.int32)
    codes, first = pd.factorize(tcode)  # distinct texts in order of first appearance, as before
    codes = codes.astype(np.int32)
    uniq = np.asarray(tuniq, dtype=object)[first]
    prof = np.array([tx.fw_profile(s) for s in uniq]) if len(uniq) else np.zeros((0, 9))
    content = _content_rows(codes, uniq, gi, words)
    ia, ie = _earlier_pairs(gi, pos, twin)
    if len(ia) == 0:
        return pd.DataFrame(columns=["gi", "seat", "seat_e", "model", "lsm_seen", "lsm_unseen", "jac_seen",
                                     "jac_unseen"])
    iu = twin[ie]
    a, s, u = codes[ia], codes[ie], codes[iu]
    lsm = lambda x, y: lsm_rows(prof, x, y)  # noqa: E731
    js, ju = content.jaccard(ia, ie), content.jaccard(ia, iu)
    model = pd.Categorical.from_codes(mcode[ia], categories=muniq)
    return pd.DataFrame({"gi": gi[ia], "seat": seat[ia], "seat_e": seat[ie], "model": model,
                         "lsm_seen": lsm(a, s), "lsm_unseen": lsm(a, u), "jac_seen": js, "jac_unseen": ju})


#: pandas copies a shared column before it is written (Copy-on-Write: always from pandas 3), so a
#: shallow copy of a memoised frame is enough to keep the memo unchanged
_COPY_ON_WRITE = int(pd.__version__.split(".")[0]) >= 3 or pd.options.mode.copy_on_write is True

#: rows of function-word profiles compared at once by ``lsm_rows``
LSM_BLOCK = 1 << 14


class _ContentRows:
    """The content-word set of each description row as a sparse 0/1 matrix over the vocabulary
    (memory: a frozenset of Python strings per distinct description held ~250 MB at the
    paper's size), with ``tx.jaccard`` of row pairs computed from it a block at a time: the same
    integer counts, so the same float."""

    def __init__(self, matrix, row_of):
        self.matrix = matrix  # scipy CSR (distinct (text, pair) x vocabulary), 0/1
        self.row_of = row_of  # (rows,) matrix row of each description row
        self.size = np.diff(matrix.indptr)

    def jaccard(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        a, b = self.row_of[i], self.row_of[j]
        inter = np.empty(len(a))
        for s in range(0, len(a), LSM_BLOCK):
            inter[s:s + LSM_BLOCK] = np.asarray(
                self.matrix[a[s:s + LSM_BLOCK]].multiply(self.matrix[b[s:s + LSM_BLOCK]]).sum(axis=1)).ravel()
        union = self.size[a] + self.size[b] - inter
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(union > 0, inter / np.where(union > 0, union, 1), np.nan)


def _content_rows(codes: np.ndarray, uniq: np.ndarray, gi: np.ndarray, words: list) -> _ContentRows:
    """Content words of each row (``tx.content_words``), with its own game's pair removed (a twin plays
    the same pair), computed once per distinct (text, pair)."""
    from scipy import sparse

    vocab: dict = {}
    key_row: dict = {}
    row_of = np.empty(len(codes), np.int64)
    indptr: list[int] = [0]
    indices: list[int] = []
    for r, (code, gix) in enumerate(zip(codes, gi)):
        key = (code, words[gix])
        if key not in key_row:
            key_row[key] = len(key_row)
            indices.extend(vocab.setdefault(t, len(vocab)) for t in tx.content_words(uniq[code], words[gix]))
            indptr.append(len(indices))
        row_of[r] = key_row[key]
    matrix = sparse.csr_matrix((np.ones(len(indices)), np.asarray(indices, np.int64), np.asarray(indptr, np.int64)),
                               shape=(len(key_row), max(1, len(vocab))))
    matrix.sort_indices()  # canonical (a set has no duplicates): what the element-wise product expects
    return _ContentRows(matrix, row_of)


def lsm_rows(prof: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """LSM of profile rows ``x[i]`` and ``y[i]`` (``_text.lsm`` per row), ``LSM_BLOCK`` rows at a time:
    the formula's five (rows x 9) temporaries at once took ~190 MB on 90,720 games;
    each row's mean is over its own 9 values, so the blocks give the same bits."""
    out = np.empty(len(x))
    for i in range(0, len(x), LSM_BLOCK):
        px, py = prof[x[i:i + LSM_BLOCK]], prof[y[i:i + LSM_BLOCK]]
        out[i:i + LSM_BLOCK] = np.mean(1 - np.abs(px - py) / (px + py + tx.LSM_EPS), axis=1)
    return out


def _earlier_pairs(gi: np.ndarray, pos: np.ndarray, twin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs (a, e) of the same game where e spoke before a and has a twin, in the order of
    ``merge(on="gi")`` (a, then e): the self-merge's rows without its 4 x 4 rows a game of every
    column (memory). Rows are sorted by game."""
    starts = np.r_[0, np.flatnonzero(gi[1:] != gi[:-1]) + 1]
    size = np.diff(np.r_[starts, len(gi)])
    parts_a, parts_e = [], []
    for oa in range(int(size.max()) if len(size) else 0):
        for oe in range(int(size.max())):
            if oa == oe:
                continue
            s = starts[size > max(oa, oe)]
            a, e = s + oa, s + oe
            keep = (pos[e] < pos[a]) & (twin[e] >= 0)
            parts_a.append(a[keep])
            parts_e.append(e[keep])
    if not parts_a:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a, e = np.concatenate(parts_a), np.concatenate(parts_e)
    order = np.lexsort((e, a))
    return a[order].astype(np.int32), e[order].astype(np.int32)


def _twins(d: pd.DataFrame) -> np.ndarray:
    """Row of each description's matched unseen twin: the first description of the next game (cyclic)
    in its (pair, word role, model) group; -1 when the group has a single game."""
    if len(d) == 0:
        return np.zeros(0, np.int64)
    key = d.groupby(["pair", "imp", "model"], sort=False).ngroup().to_numpy()
    gi = d["gi"].to_numpy()
    order = np.lexsort((d["seat"].to_numpy(), gi, key))
    k, g = key[order], gi[order]
    new_block = np.r_[True, (k[1:] != k[:-1]) | (g[1:] != g[:-1])]
    block = np.cumsum(new_block) - 1  # block (key, game) of each sorted row
    bfirst = order[new_block]  # first row of each block
    bkey = k[new_block]
    kstart = np.r_[0, np.nonzero(bkey[1:] != bkey[:-1])[0] + 1]  # first block of each key
    nblocks = np.diff(np.r_[kstart, len(bkey)])
    kb = np.repeat(np.arange(len(kstart)), nblocks)  # key index of each block
    pos_in_key = np.arange(len(bkey)) - kstart[kb]
    nxt = kstart[kb] + (pos_in_key + 1) % nblocks[kb]
    twin_of_block = np.where(nblocks[kb] >= 2, bfirst[nxt], -1)
    out = np.full(len(d), -1, np.int64)
    out[order] = twin_of_block[block]
    return out


def language_measures(data, config, models) -> tuple[pd.DataFrame, dict]:
    """Per-model Table 12 language columns with intervals, and their replicate arrays."""
    prep = prepared(data, need_players=True)
    w = Wild(data, prep, config, models)
    R = {}
    try:
        st = seat_text(data, prep)
    except StatsUnavailable as e:
        note(data, f"team dynamics: language columns not computed: {e}")
        return pd.DataFrame(index=pd.Index(models, name="model")), {}
    tm = st[st["team_mode"]]
    R["coord_rate_pct"] = w.mean(tm, "coord_any", 100)
    R["coord_rate_noteam_pct"] = w.mean(st[~st["team_mode"]], "coord_any", 100)
    R["trust_form_pct"] = w.mean(st[st["counted"]], "vouch", 100)
    R["suspicion_pct"] = w.mean(st[st["role"] == "majority"], "susp_any", 100)
    if st["vouch"].notna().sum() == 0:
        note(data, "team dynamics: no ballot reasoning text (players.reasoning); Trust Form. left empty")
    try:
        ex = exposures(data, prep)
        ex["exp"] = prep.exp_code[ex["gi"].to_numpy(np.int64)] if len(ex) else []
        ex["mirror"] = ex["lsm_seen"] - ex["lsm_unseen"]
        ex["vocab"] = ex["jac_seen"] - ex["jac_unseen"]
        R["ling_mirror_pp"] = w.mean(ex, "mirror", 100)
        R["lsm_seen_pct"] = w.mean(ex, "lsm_seen", 100)
        R["vocab_conv"] = w.mean(ex, "vocab")
        R["vocab_jaccard_seen"] = w.mean(ex, "jac_seen")
        if len(ex) == 0:
            note(data, "team dynamics: no description has a matched unseen twin (same word pair, word and model in "
                       "another game); Linguistic Mirror and Vocab Conv. left empty")
    except StatsUnavailable as e:
        note(data, f"team dynamics: mirroring and vocabulary convergence not computed: {e}")
    out = w.frame(R)
    w.note_not_computed("team_dynamics (language columns)")
    out["n_descriptions"] = st[st["words"].notna()].groupby("model", observed=True).size().reindex(out.index)
    return out, R


@table("team_language", columns=["model", "mode", "n_seats", "coord_rate_pct", "coord_share_pct",
                                 "suspicion_pct", "hedge_per100", "words_mean"],
    title=("Coordination, suspicion and hedging language per model and mode (Appendix M.8), from the shipped "
           "lexicon (analysis/lexicon/language.json)"),
    section="beyond",
    inference=(
        *wide(("model", "mode"), "coord_rate_pct", "coord_share_pct", "suspicion_pct", "hedge_per100",
               "words_mean"),
    ),
)
def team_language(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Coordination, suspicion and hedging language per model and mode (M.8 contrasts)."""
    prep = prepared(data, need_players=True)
    st = seat_text(data, prep)
    st = st[st["words"].notna()]
    models = sorted(set(st["model"].dropna().unique()), key=str)
    w = Wild(data, prep, config, models)
    rows = []
    for mode in sorted(set(st["mode"].dropna().unique()), key=str):
        s = st[st["mode"] == mode]
        f = w.frame({"coord_rate_pct": w.mean(s, "coord_any", 100), "coord_share_pct": w.mean(s, "d_coord_share", 100),
                     "suspicion_pct": w.mean(s[s["role"] == "majority"], "susp_any", 100),
                     "hedge_per100": w.mean(s, "hedge_per100"), "words_mean": w.mean(s, "words")})
        f["n_seats"] = s.groupby("model", observed=True).size().reindex(f.index)
        f["mode"] = mode
        rows.append(f.reset_index())
    out = pd.concat(rows, ignore_index=True)
    w.note_not_computed("team_language")
    return out[out["n_seats"].fillna(0) > 0]


@table("style_correlation", columns=["mode", "pairs", "n_pairs", "r", "ci_low", "ci_high", "note"],
    title=("Teammates' style correlation (Appendix M.8): Pearson r of log description length within teammate vs "
           "cross-team pairs, per mode; CI from the design bootstrap"),
    section="beyond",
    inference=(
        infer("r", ("mode", "pairs"), "r", ("ci_low", "ci_high"), method=WILD_PERCENTILE),
    ),
)
def style_correlation(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """M.8's teammates' style correlation: Pearson r of log description length within teammate pairs
    (double entry, so the order of a pair does not matter) vs cross-team pairs, per mode."""
    from impostor_bench.analysis.stats.design_boot import multipliers
    from impostor_bench.analysis.stats.resampling import replicate_matmul, percentile_ci

    prep = prepared(data, need_players=True)
    st = seat_text(data, prep)
    L = np.full((prep.n, N_SEATS), np.nan)
    ok = st["words"] > 0
    L[st.loc[ok, "gi"], st.loc[ok, "seat"]] = np.log(st.loc[ok, "words"])
    tg = np.zeros(prep.n, bool)
    tg[team_games(prep)] = True
    M = multipliers(data, prep, config)  # weights M + 1 = 0/2 per experiment
    rows = []
    for mode in sorted(set(prep.mode) - {None}, key=str):
        for kind in ("teammates", "cross_team"):
            xs, ys, es = [], [], []
            for p in range(N_SEATS):
                for q in range(N_SEATS):
                    if p == q:
                        continue
                    sel = prep.mode == mode
                    if prep.team is not None and tg.any():
                        same = (prep.team[:, p] == prep.team[:, q]) & tg
                        sel &= same if kind == "teammates" else ~same
                    elif kind == "teammates":
                        continue
                    sel &= np.isfinite(L[:, p]) & np.isfinite(L[:, q])
                    xs.append(L[sel, p])
                    ys.append(L[sel, q])
                    es.append(prep.exp_code[sel])
            if not xs or sum(len(x) for x in xs) < 8:
                continue
            x, y, e = np.concatenate(xs), np.concatenate(ys), np.concatenate(es)
            x, y = x - x.mean(), y - y.mean()  # centred: the moments below lose no digits to the mean
            E = len(prep.exp_names)
            S = np.stack([np.bincount(e, weights=v, minlength=E) for v in (np.ones_like(x), x, y, x * x, y * y, x * y)], 1)
            r0 = _corr(S.sum(0)[None, :])[0]
            row = {"mode": mode, "pairs": kind, "n_pairs": len(x) // 2, "r": r0, "ci_low": np.nan, "ci_high": np.nan}
            if not np.isfinite(r0):
                rows.append({**row, "note": "not estimable: description length does not vary in these pairs"})
                continue
            lo, hi = percentile_ci(_corr(replicate_matmul(M, S, shift=1.0))[:, None], config.alpha)
            rows.append({**row, "ci_low": lo[0], "ci_high": hi[0], "note": ""})
    return pd.DataFrame(rows)


def _corr(S: np.ndarray) -> np.ndarray:
    """Pearson r from (weighted) moment sums (n, sx, sy, sxx, syy, sxy) of centred values, one row per
    replicate; NaN where either variance is zero (to rounding), and inside [-1, 1]."""
    n, sx, sy, sxx, syy, sxy = S.T
    with np.errstate(invalid="ignore", divide="ignore"):
        vx, vy = sxx / n - (sx / n) ** 2, syy / n - (sy / n) ** 2
        flat = (vx <= 1e-12 * sxx / n) | (vy <= 1e-12 * syy / n) | ~(n > 0)
        r = (sxy / n - sx * sy / n ** 2) / np.sqrt(vx * vy)
    return np.where(flat, np.nan, np.clip(r, -1.0, 1.0))
