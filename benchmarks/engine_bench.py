"""The offline player against its engine: llama.cpp alone vs whole games through Inspect.

    python benchmarks/engine_bench.py                     # everything, side by side, one run
    python benchmarks/engine_bench.py --only engine       # llama.cpp tokens/s only
    python benchmarks/engine_bench.py --games 4 --configs n_slots=1 n_slots=2
    python benchmarks/engine_bench.py --only harness --configs batched=false batched=true

1. ``engine``: llama.cpp alone (``llama_cpp.Llama``, SmolLM2-135M Q4_1): prompt tokens/s
   for a 250-token prompt, generation tokens/s for 50 tokens with and without the
   constrained vote grammar, and one vs two contexts working at once.
2. ``harness``: ``inspect eval tasks/impostor.py --model local/smollm2 -T n_games=N`` in a
   child process per provider configuration (``-M`` args, e.g. ``n_slots=1`` = the old
   single serialised context); wall time, games/min, log status, calls and tokens.
3. ``replay``: the *same work* as the last harness run, done by llama.cpp alone: every
   call of its log, in order, with its chat-formatted prompt and its completion tokens
   fed back (teacher forcing: the decode work of generating them, without sampling),
   (a) fresh context per call, (b) each game on one context reusing the common prompt
   prefix (the engine's prefix match), (c) as (b) with two contexts working at once.
   The harness/engine ratio is harness wall time over the best replay.

Prints markdown (paste into benchmarks/RESULTS.md) and the raw numbers as JSON (--json).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _llama(n_threads: int = 2):
    from llama_cpp import Llama

    from impostor_bench.providers.local import resolve_gguf

    return Llama(model_path=str(resolve_gguf("smollm2")), n_ctx=2048, n_threads=n_threads, n_threads_batch=n_threads,
                 n_batch=512, verbose=False)


def _vote_grammar():
    from llama_cpp import LlamaGrammar
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from impostor_bench.core.parsing import vote_json_schema
    from impostor_bench.core.records import seat_of_label

    schema = vote_json_schema(seat_of_label(2), reasoning_max=200)
    return LlamaGrammar.from_string(json_schema_to_gbnf(json.dumps(schema)), verbose=False)


def _decode_call(llm, prompt: list[int], completion: list[int], reuse: bool) -> int:
    """Evaluate a prompt (after the prefix already in the KV cache when ``reuse``), then
    feed the completion one token at a time as generation does. Returns tokens evaluated."""
    keep = 0
    if reuse and llm.n_tokens:
        for a, b in zip(llm._input_ids[: llm.n_tokens], prompt):
            if a != b:
                break
            keep += 1
        keep = min(keep, len(prompt) - 1)
    if keep:
        llm._ctx.kv_cache_seq_rm(-1, keep, -1)
        llm.n_tokens = keep
    else:
        llm.reset()
    llm.eval(prompt[keep:])
    for t in completion:
        llm.eval([t])
    return len(prompt) - keep + len(completion)


def engine(rounds: int) -> dict:
    """Raw tokens/s of llama.cpp on this machine for the game's call sizes."""
    llm = _llama(2)
    prompt = llm.tokenize(("The quick brown fox jumps over the lazy dog. " * 30).encode())[:250]
    grammar = _vote_grammar()

    def gen(n: int, g=None) -> float:
        llm.reset()
        llm.eval(prompt)
        start, k = time.perf_counter(), 0
        for _ in llm.generate(prompt, temp=0.3, top_k=40, grammar=g):  # prompt already cached
            k += 1
            if k >= n:
                break
        return n / (time.perf_counter() - start)

    def pp() -> float:
        llm.reset()
        start = time.perf_counter()
        llm.eval(prompt)
        return len(prompt) / (time.perf_counter() - start)

    out: dict = {"prompt_tok_s": [], "gen_tok_s": [], "gen_grammar_tok_s": []}
    for _ in range(rounds):  # interleaved so that load changes hit all three alike
        out["prompt_tok_s"].append(pp())
        out["gen_tok_s"].append(gen(50))
        out["gen_grammar_tok_s"].append(gen(50, grammar))

    def call(l) -> None:  # one game-sized call: 250 prompt + 50 generated tokens
        l.reset()
        l.eval(prompt)
        for t in prompt[:50]:
            l.eval([t])

    for k, threads in [(1, 2), (2, 1), (2, 2)]:
        ctxs = [llm] + [_llama(threads) for _ in range(k - 1)] if threads == 2 else [_llama(threads) for _ in range(k)]
        rates = []
        for _ in range(rounds):
            start = time.perf_counter()
            workers = [threading.Thread(target=lambda c=c: [call(c) for _ in range(2)]) for c in ctxs]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            rates.append(2 * k * 300 / (time.perf_counter() - start))
        out[f"{k}ctx_{threads}thr_tok_s"] = rates
    return out


def harness(games: int, config: list[str], log_dir: Path) -> dict:
    """One ``inspect eval`` of homogeneous local/smollm2 in a child process."""
    cmd = [sys.executable, "-m", "inspect_ai", "eval", "tasks/impostor.py", "--model", "local/smollm2",
           "-T", f"n_games={games}", "--log-dir", str(log_dir), "--display", "none"]
    for arg in config:
        cmd += ["-M", arg]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # CPU time: fairer than wall on a crowded machine
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode:
        raise SystemExit(f"inspect eval failed ({' '.join(config)}):\n{proc.stderr[-2000:]}")
    from inspect_ai.log import list_eval_logs, read_eval_log

    log = read_eval_log(list_eval_logs(str(log_dir))[0].name, resolve_attachments=True)
    calls, games_out, failed = [], [], 0
    for sample in log.samples or []:
        for ev in sample.events:
            if ev.event == "model" and (ev.output is None or ev.output.usage is None):
                failed += 1  # an attempt that ended without an answer (timeout, retried): no work to replay
            elif ev.event == "model":
                calls.append({"game": sample.id, "messages": [{"role": m.role, "content": m.text} for m in ev.input],
                              "completion": ev.output.completion, "in": ev.output.usage.input_tokens,
                              "out": ev.output.usage.output_tokens})
        meta = (sample.scores or {})
        score = next(iter(meta.values())) if meta else None
        games_out.append((score.metadata or {}) if score else {})
    return {"config": " ".join(config) or "default", "status": log.status, "wall_s": wall, "cpu_s": cpu, "games": games,
            "games_per_min": games / wall * 60, "calls": calls, "failed_calls": failed, "games_meta": games_out}


def replay(calls: list[dict]) -> dict:
    """The harness's calls by llama.cpp alone: fresh, prefix reuse per game, two contexts."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llm = _llama(2)
    fmt = Jinja2ChatFormatter(llm.metadata["tokenizer.chat_template"], eos_token="<|im_end|>", bos_token="<|im_start|>",
                              stop_token_ids=[llm.token_eos()])
    work = []
    for c in calls:
        prompt = llm.tokenize(fmt(messages=c["messages"]).prompt.encode("utf-8"), add_bos=False, special=True)
        work.append((c["game"], prompt, llm.tokenize(c["completion"].encode("utf-8"), add_bos=False)[: max(c["out"], 1)]))
    logged = sum(c["in"] for c in calls)
    if abs(sum(len(p) for _, p, _ in work) - logged) > 0.02 * logged:
        raise SystemExit(f"replay prompts ({sum(len(p) for _, p, _ in work)} tokens) do not match the log ({logged})")
    games = sorted({g for g, _, _ in work}, key=str)
    out = {"prompt_tokens": sum(len(p) for _, p, _ in work), "completion_tokens": sum(len(c) for _, _, c in work)}

    start = time.perf_counter()
    out["evaluated_fresh"] = sum(_decode_call(llm, p, c, reuse=False) for _, p, c in work)
    out["fresh_s"] = time.perf_counter() - start
    start = time.perf_counter()
    out["evaluated_reuse"] = sum(_decode_call(llm, p, c, reuse=True) for g in games for gg, p, c in work if gg == g)
    out["reuse_s"] = time.perf_counter() - start
    second = _llama(2)
    halves = [games[0::2], games[1::2]]

    def run(ctx, mine) -> None:
        for g in mine:
            for gg, p, c in work:
                if gg == g:
                    _decode_call(ctx, p, c, reuse=True)

    def two(contexts) -> float:
        start = time.perf_counter()
        workers = [threading.Thread(target=run, args=(ctx, mine)) for ctx, mine in zip(contexts, halves)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return time.perf_counter() - start

    out["reuse_2ctx_s"] = two([llm, second])  # 2 threads each: four threads on two cores
    del llm, second
    from impostor_bench.providers.local import threads_per_context

    n = threads_per_context(2)  # the cores shared out, as the provider does: 1 thread each on 2 cores
    out["reuse_2ctx_split_s"] = two([_llama(n), _llama(n)])
    return out


def compare_games(before: list[dict], after: list[dict]) -> dict:
    """Game-level results of two harness runs of the same games: impostor wins, invalid
    ballots and invalid descriptions, each a 2x2 table tested with Fisher's exact test
    (scipy), plus how many games were played identically (same descriptions and ballots)."""
    from scipy.stats import fisher_exact

    def counts(games: list[dict]) -> dict:
        g = [m["game"] for m in games]
        return {"games": len(g), "impostor_wins": sum(x["winner"] == "impostor" for x in g),
                "invalid_ballots": sum(x["n_invalid_ballots"] for x in g),
                "invalid_descriptions": sum(x["n_invalid_descriptions"] for x in g), "seats": 4 * len(g)}

    def play(m: dict) -> list:
        return [(p.get("description_raw"), p.get("vote_raw")) for p in m["players"]]

    b, a = counts(before), counts(after)
    out = {"before": b, "after": a, "identical_games": sum(play(x) == play(y) for x, y in zip(before, after))}
    for key, total in [("impostor_wins", "games"), ("invalid_ballots", "seats"), ("invalid_descriptions", "seats")]:
        table = [[b[key], b[total] - b[key]], [a[key], a[total] - a[key]]]
        out[f"{key}_fisher_p"] = float(fisher_exact(table)[1])
    return out


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["engine", "harness"], help="one part (harness includes its replay)")
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--configs", nargs="*", default=["n_slots=1", ""], help="-M args per harness run, ';'-joined")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--no-replay", action="store_true", help="game results only (no engine replay of the calls)")
    args = ap.parse_args()
    res: dict = {"load_before": _load(), "nproc": os.cpu_count()}
    if args.only in (None, "engine"):
        res["engine"] = engine(args.rounds)
        e = res["engine"]
        print(f"\nload {_load()}\n\n| llama.cpp alone (median of {args.rounds}) | tokens/s |\n|---|---:|")
        for k, v in e.items():
            print(f"| {k} | {sorted(v)[len(v) // 2]:.1f} |")
    if args.only in (None, "harness"):
        res["harness"] = []
        for config in args.configs:
            with tempfile.TemporaryDirectory() as tmp:
                h = harness(args.games, [a for a in config.split(";") if a], Path(tmp))
            h["load"] = _load()
            res["harness"].append(h)
            print(f"harness {h['config']}: {h['status']} {h['wall_s']:.1f} s ({h['cpu_s']:.0f} s CPU), "
                  f"{h['games_per_min']:.2f} games/min, "
                  f"{len(h['calls'])} calls ({h['failed_calls']} failed attempts), load {h['load']}", flush=True)
        if not args.no_replay:
            last = res["harness"][-1]
            res["replay"] = r = replay(last["calls"])
            best = min(r["fresh_s"], r["reuse_s"], r["reuse_2ctx_s"], r["reuse_2ctx_split_s"])
            print(f"\n| same work ({args.games} games, {len(last['calls'])} calls, {r['prompt_tokens']} prompt + "
                  f"{r['completion_tokens']} completion tokens) | wall s | games/min |\n|---|---:|---:|")
            for h in res["harness"]:
                print(f"| harness, {h['config']} ({h['status']}) | {h['wall_s']:.1f} | {h['games_per_min']:.2f} |")
            for k in ("fresh_s", "reuse_s", "reuse_2ctx_s", "reuse_2ctx_split_s"):
                print(f"| llama.cpp alone, {k[:-2]} | {r[k]:.1f} | {args.games / r[k] * 60:.2f} |")
            print(f"\nharness ({last['config']}) / best engine replay: {last['wall_s'] / best:.2f}x; "
                  f"tokens evaluated fresh {r['evaluated_fresh']}, with prefix reuse {r['evaluated_reuse']}")
    if len(res.get("harness", [])) >= 2:
        res["games"] = cmp = compare_games(res["harness"][0]["games_meta"], res["harness"][-1]["games_meta"])
        print(f"\ngame results, {res['harness'][0]['config']} -> {res['harness'][-1]['config']}: {json.dumps(cmp)}")
    res["load_after"] = _load()
    print(f"load before {res['load_before']}, after {res['load_after']}")
    if args.json:
        for h in res.get("harness", []):
            h.pop("calls", None)
        args.json.write_text(json.dumps(res, indent=1, default=str))


if __name__ == "__main__":
    main()
