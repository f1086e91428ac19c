"""Fig. 3: word-pair difficulty validated by embedding distance, offline (shipped MiniLM vectors)."""

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.figures import fig_difficulty_validation
from impostor_bench.commands.report import ShippedWordVectors, word_embedder
from impostor_bench.core.wordpairs import load_word_pairs


def _pairs_frame():
    rows = [dict(pair_id=p.pair_id, difficulty=t, majority_word=p.majority, impostor_word=p.impostor)
            for t, ps in load_word_pairs().items() for p in ps]
    return pd.DataFrame(rows)


def test_shipped_tiers_get_closer_with_difficulty():
    pairs = _pairs_frame()
    emb = ShippedWordVectors()
    a = emb.encode(pairs["majority_word"].tolist())
    b = emb.encode(pairs["impostor_word"].tolist())
    assert np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-3)
    pairs["distance"] = 1 - (a * b).sum(axis=1)
    means = pairs.groupby("difficulty")["distance"].mean()
    # The curated tiers must be ordered by semantic overlap (paper A.4.2): easy farthest, expert closest.
    assert means["easy"] > means["medium"] > means["hard"] > means["expert"]


def test_figure_drawn_without_sentence_transformers(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_st(name, *args, **kwargs):
        if name.startswith("sentence_transformers"):
            raise ModuleNotFoundError("No module named 'sentence_transformers'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_st)
    notes: list[str] = []
    embedder = word_embedder()  # the command layer falls back to the shipped vectors
    assert isinstance(embedder.model, ShippedWordVectors)
    info = fig_difficulty_validation(AnalysisData(games=_pairs_frame(), players=pd.DataFrame()), {}, tmp_path, notes,
                                     embedder=embedder)
    assert info is not None and (tmp_path / info["file"]).stat().st_size > 10_000
    assert notes == []
