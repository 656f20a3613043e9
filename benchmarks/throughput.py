"""Questions per minute through stages 05 + 06 at llm.concurrency 1, 4, 16 against an OpenAI-compatible endpoint.

Here the endpoint is tests/standin_vllm.py answering every chat request after a fixed delay (``--delay``,
seconds) and serving requests concurrently as vLLM batches them; the figure is the pipeline's own overhead
and parallelism, not a model's speed. On a GPU box point ``--base-url`` at the real server instead.

Stages 01-04 run once (offline preset: native parse, the packaged MiniLM embedder) into ``<out>/base``;
each concurrency gets a fresh run with 01-04 hard-linked and its own 05 + 06, with the LLM disk cache off
and every question answered by the model (``answer.table_candidates=false``, ``rerank.mode=llm``). A first
unreported pass warms the process (embedder loaded, indexes and pages read).

    python benchmarks/throughput.py                                # demo corpus, stand-in at 0.5 s
    python benchmarks/throughput.py --data ../shared/erc2-dev --seed-from outputs/devna-00-300
    python benchmarks/throughput.py --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-32B-Instruct-AWQ
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

UPSTREAM = ("01_parse", "02_clean", "03_chunk", "04_index")
READY_TIMEOUT_S = 60


def start_standin(delay: float, model: str) -> tuple[subprocess.Popen, str]:
    from rag.models.managed_server import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "standin_vllm.py"), "serve", model, "--port",
                             str(port), "--standin-delay", str(delay)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    t0 = time.monotonic()
    while time.monotonic() - t0 < READY_TIMEOUT_S:
        try:
            with urllib.request.urlopen(url + "/models", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the stand-in server did not start")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None, help="dataset folder (default: the generated demo corpus)")
    ap.add_argument("--seed-from", default=None, help="a run folder whose 01-04 are reused (else run here)")
    ap.add_argument("--out", default="outputs/throughput", help="folder for the benchmark's runs")
    ap.add_argument("--concurrency", default="1,4,16")
    ap.add_argument("--delay", type=float, default=0.5, help="stand-in seconds per chat answer")
    ap.add_argument("--base-url", default=None, help="a real OpenAI-compatible endpoint instead of the stand-in")
    ap.add_argument("--model", default="standin")
    a = ap.parse_args(argv)

    from rag.ablate import link_stage
    from rag.pipeline import prepare, run_direct

    out = Path(a.out).resolve()
    base_over = {"outputs_dir": str(out), "cache_dir": str(out / "cache")}
    cfg0, ds = prepare("offline", a.data, "base", base_over)
    src = Path(a.seed_from).resolve() if a.seed_from else cfg0.run_dir
    if not a.seed_from:
        run_direct(cfg0, ds, list(UPSTREAM), progress=False)
    proc, url = (None, a.base_url) if a.base_url else start_standin(a.delay, a.model)
    rows = []
    try:
        levels = [int(x) for x in a.concurrency.split(",")]
        # A first, unreported pass loads the embedder and reads the indexes and pages into the OS and
        # process caches, so the first measured level does not pay for what every later one reuses.
        for c in [max(levels)] + levels:
            over = {**base_over, "llm.backend": "openai_compatible", "llm.base_url": url, "llm.model": a.model,
                    "llm.api_key_env": "THROUGHPUT_NO_KEY", "llm.cache": False, "llm.concurrency": c,
                    "llm.requests_per_minute": 0, "llm.tokens_per_minute": 0,
                    "answer.table_candidates": False, "rerank.mode": "llm"}
            warm = len(rows) == 0 and not getattr(main, "_warmed", False)
            cfg, _ = prepare("offline", a.data, "warmup" if warm else f"c{c}", over)
            import shutil

            shutil.rmtree(cfg.run_dir, ignore_errors=True)
            for st in UPSTREAM:
                link_stage(src, cfg.run_dir, st)
            t0 = time.perf_counter()
            res = run_direct(cfg, ds, ["05_retrieve", "06_answer"], progress=False)
            secs = time.perf_counter() - t0
            n = len(ds.questions)
            failed = int(res["06_answer"].get("error", []).notna().sum()) if "error" in res["06_answer"] else 0
            if warm:
                main._warmed = True
                print(f"warm-up at concurrency {c}: {secs:.1f} s (not counted)", flush=True)
                continue
            rows.append((c, n, secs, 60 * n / secs, failed))
            print(f"concurrency {c:>2}: {n} questions in {secs:6.1f} s = {60 * n / secs:6.1f} questions/min"
                  f" ({failed} failed)", flush=True)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
    where = a.base_url or f"stand-in server, {a.delay} s per chat answer"
    print(f"\n05 + 06, {len(ds.questions)} questions of {ds.name}, {where}, LLM cache off:")
    print("| llm.concurrency | questions | seconds | questions/min | speed-up | failed |")
    print("|---|---|---|---|---|---|")
    for c, n, secs, qpm, failed in rows:
        print(f"| {c} | {n} | {secs:.1f} | {qpm:.1f} | {qpm / rows[0][3]:.1f}x | {failed} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
