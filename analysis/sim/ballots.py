"""Ballot profiles for the simulator: every 4^4 ballot profile of a game, its outcome
class under the default rule (Appendix A.1), and a vectorised draw of one profile per
game conditioned on the game's outcome class (see :mod:`impostor_bench.analysis.sim.simulate`)."""

from __future__ import annotations

import numpy as np

# Outcome classes of a ballot profile (no self-declarations).
CONVICTION, STRICT_PLURALITY, TIE, NO_CONVICTION = 0, 1, 2, 3
CLASS_NAMES = np.array(["conviction", "strict_plurality", "tie", "no_conviction"], dtype=object)


def profile_table() -> dict[str, np.ndarray]:
    """All 4^4 ballot profiles in *role* space (role 0 = impostor, roles 1-3 = majority).

    Profile index ``o0 + 4*o1 + 16*o2 + 64*o3`` where ``o_v`` is voter v's option:
    0 = invalid ballot, 1-3 = the 1st-3rd other role in increasing order (so for a
    majority voter option 1 is always the impostor).  Returns target roles (-1 =
    invalid), outcome class, tie size k, impostor-in-tie, votes on the impostor,
    valid votes, and P(impostor wins) under sym-candidate.
    """
    idx = np.arange(256)
    opts = np.stack([(idx // 4**v) % 4 for v in range(4)], axis=1)  # (256, 4)
    target = np.full((256, 4), -1)
    for v in range(4):
        others = [r for r in range(4) if r != v]
        for o in (1, 2, 3):
            target[opts[:, v] == o, v] = others[o - 1]
    counts = np.stack([(target == r).sum(1) for r in range(4)], axis=1)  # votes received per role
    valid = (target >= 0).sum(1)
    on_imp = (target[:, 1:] == 0).sum(1)  # non-impostor votes on the impostor
    votes_imp = counts[:, 0]
    top = counts.max(1)
    tied = (counts == top[:, None]) & (top[:, None] > 0)
    k = tied.sum(1)
    k = np.where(k >= 2, k, 0)
    in_tie = (k >= 2) & tied[:, 0]
    cls = np.full(256, NO_CONVICTION)
    cls[k >= 2] = TIE
    cls[votes_imp > valid - votes_imp] = STRICT_PLURALITY
    cls[on_imp >= 2] = CONVICTION
    p_cand = np.where(in_tie, 1.0 - 1.0 / np.maximum(k, 1), 1.0)
    return {
        "target": target,
        "cls": cls,
        "k": k,
        "in_tie": in_tie,
        "on_imp": on_imp,
        "valid": valid,
        "p_cand": p_cand,
    }


PROFILES = profile_table()
_MAJ_CLASSES = np.isin(PROFILES["cls"], [CONVICTION, STRICT_PLURALITY])


def sample_profiles(det: np.ndarray, r: float, want: np.ndarray, rng: np.random.Generator, chunk: int = 8192) -> np.ndarray:
    """One profile index per game.

    det: (n, 3) detection probability of the majority roles 1-3; want: (n,) code
    0 = any profile, 1 = majority win by ballots, 2 = tie, 3 = no conviction.
    """
    n = det.shape[0]
    masks = np.stack(
        [
            np.ones(256, bool),
            _MAJ_CLASSES,
            PROFILES["cls"] == TIE,
            PROFILES["cls"] == NO_CONVICTION,
        ]
    )
    det = np.clip(det, 0.01, 0.99)
    q = 1.0 - r
    out = np.empty(n, dtype=np.int64)
    p_imp = np.array([r, q / 3, q / 3, q / 3])
    for start in range(0, n, chunk):
        d = det[start : start + chunk]
        m = d.shape[0]
        voters = [np.broadcast_to(p_imp, (m, 4))]
        for j in range(3):
            dj = d[:, j]
            voters.append(np.stack([np.full(m, r), q * dj, q * (1 - dj) / 2, q * (1 - dj) / 2], axis=1))
        p = (
            voters[3][:, :, None, None, None]
            * voters[2][:, None, :, None, None]
            * voters[1][:, None, None, :, None]
            * voters[0][:, None, None, None, :]
        ).reshape(m, 256)
        p *= masks[want[start : start + chunk]]
        cum = np.cumsum(p, axis=1)
        total = cum[:, -1]
        if np.any(total <= 0):  # pragma: no cover - guarded by the clip above
            raise ValueError("a game has no ballot profile for its outcome; check invalid_vote_rate")
        u = rng.random(m) * total
        out[start : start + chunk] = np.minimum((cum < u[:, None]).sum(1), 255)
    return out
