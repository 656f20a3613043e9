"""Scale-out benchmark (issue 15): stages 01-04 in pages/s and 05-06 in questions/min, local vs Ray at
1 and 2 workers, Ray's overhead per item, and a projection of a 100-report / 100-question round.

    .venv/bin/python benchmarks/scale.py --data ../shared/erc2-dev [--reports 2 --questions 4] [--workers 1,2]

Contract:
- A subset dataset (the ``--reports`` smallest PDFs by pages, the first ``--questions`` questions naming
  those companies) is written to a temp folder; every mode runs 01..06 on it in a fresh run folder:
  ``local`` (parse.workers / llm.concurrency = w) and ``ray`` (a local Ray cluster of w CPUs, one task per item).
- The LLM is a stand-in OpenAI-compatible server (tests/standin_llama.py, answers fit the schema) unless
  ``--real-llm``: 05-06 figures then measure the pipeline around the model, not a model's latency; the
  projection adds ``--llm-s-per-call`` (an assumption, printed) per model call and caps calls by ``--rpm``.
- Ray overhead per item: ``--overhead-items`` no-op items through RayExecutor vs a local loop.
- Projection (from the measured per-item costs of the Ray w=1 run): 100 reports x the dev set's mean pages
  and 100 questions on N CPU nodes of ``--cores-per-node`` (efficiency measured at w=2 applied), and on one
  GPU node from ``--gpu-pages-per-s`` / ``--gpu-s-per-question`` (ESTIMATES, not measured here); 05-06 also
  with the offline 1.5B per node (``--offline-s-per-question``, measured on dev: one llama.cpp server per 2 cores).
Prints numbers only; no thresholds asserted.
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.core.config import load_config  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402
from rag.core.loop import Item, Result  # noqa: E402

STAGES = ["01_parse", "02_clean", "03_chunk", "04_index", "05_retrieve", "06_answer"]
REPORT_STAGES, QUESTION_STAGES = STAGES[:4], STAGES[4:]
ROUND_REPORTS = ROUND_QUESTIONS = 100  # the round projected
SERVER_WAIT_S, SERVER_POLL_S = 10.0, 0.1  # the stand-in server's start


def page_count(pdf: Path) -> int:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    n = len(doc)
    doc.close()
    return n


def subset(data: Path, n_reports: int, n_questions: int, dst: Path) -> tuple[Path, int, float]:
    """A dataset folder of the ``n_reports`` smallest reports and up to ``n_questions`` of their questions;
    returns (folder, pages in it, mean pages per report of the whole source set)."""
    ds = load_dataset(data, check_hashes=False)
    pages = {r.sha1: page_count(r.pdf) for r in ds.reports}
    chosen = sorted(ds.reports, key=lambda r: pages[r.sha1])[:n_reports]
    (dst / "pdfs").mkdir(parents=True)
    for r in chosen:
        shutil.copy(r.pdf, dst / "pdfs" / f"{r.sha1}.pdf")
    with open(data / "subset.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    keep = {r.sha1 for r in chosen}
    with open(dst / "subset.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(x for x in rows if x["sha1"] in keep)
    names = [r.company for r in chosen]
    qs = [q for q in json.loads((data / "questions.json").read_text()) if any(n in q["text"] for n in names)]
    (dst / "questions.json").write_text(json.dumps(qs[:n_questions], indent=1))
    return dst, sum(pages[s] for s in keep), sum(pages.values()) / max(1, len(pages))


def standin_server() -> tuple[subprocess.Popen, str]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "standin_llama.py"), str(port), "ok", "0", "standin"])
    deadline = time.time() + SERVER_WAIT_S
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=SERVER_POLL_S).close()
            break
        except OSError:
            time.sleep(SERVER_POLL_S)
    return proc, f"http://127.0.0.1:{port}/v1"


def run_mode(a, data: Path, out: Path, executor: str, workers: int, llm_url: str | None) -> dict:
    """01..06 in a fresh run folder; {stage: seconds} plus the LLM calls of 05-06."""
    import ray

    from rag.pipeline import run_direct

    over = {"outputs_dir": str(out), "cache_dir": str(out / "cache"), "run.executor": executor,
            "parse.workers": workers, "llm.concurrency": workers, "llm.cache": False}
    if llm_url:
        over.update({"llm.backend": "openai_compatible", "llm.base_url": llm_url, "llm.model": "standin",
                     "llm.structured": "json_schema"})
    cfg = load_config(a.preset, overrides=over, data_dir=str(data), run=f"{executor}{workers}")
    ds = load_dataset(data, check_hashes=False)
    if executor == "ray":
        ray.init(num_cpus=workers, include_dashboard=False, namespace="enterprise-rag")
    try:
        secs = {}
        for st in STAGES:
            t0 = time.perf_counter()
            run_direct(cfg, ds, [st], progress=False)
            secs[st] = time.perf_counter() - t0
    finally:
        if executor == "ray":
            ray.shutdown()
    calls = 0
    for st in QUESTION_STAGES:
        m = json.loads((cfg.run_dir / st / "manifest.json").read_text())
        calls += int((m.get("usage") or {}).get("requests") or 0)
    return {"secs": secs, "calls": calls}


def _noop(item: Item) -> Result:
    return Result(info={"i": item.id})


def ray_overhead(n: int) -> tuple[float, float]:
    """Seconds per no-op item: (through RayExecutor on a 1-CPU local cluster, local serial loop)."""
    import ray

    from rag.core.loop import LocalExecutor
    from rag.core.ray_executor import RayExecutor

    cfg = load_config("offline", overrides={"run.executor": "ray"})
    items = [Item(f"n{i}") for i in range(n)]
    t0 = time.perf_counter()
    list(LocalExecutor("serial", 1).map(_noop, items))
    local = (time.perf_counter() - t0) / n
    ray.init(num_cpus=1, include_dashboard=False, namespace="enterprise-rag")
    try:
        list(RayExecutor(cfg).map(_noop, items[:2]))  # warm: the worker process exists
        t0 = time.perf_counter()
        list(RayExecutor(cfg).map(_noop, items))
        remote = (time.perf_counter() - t0) / n
    finally:
        ray.shutdown()
    return remote, local


def fmt_s(s: float) -> str:
    return f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "erc2-dev"))
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--reports", type=int, default=2, help="smallest reports of the set to run (all: a large number)")
    ap.add_argument("--questions", type=int, default=4)
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    ap.add_argument("--real-llm", action="store_true", help="the preset's LLM instead of the stand-in server")
    ap.add_argument("--overhead-items", type=int, default=40)
    ap.add_argument("--nodes", default="1,4,16", help="CPU node counts projected")
    ap.add_argument("--cores-per-node", type=int, default=16)
    ap.add_argument("--largest-report-pages", type=int, default=1000,
                    help="the round's largest report: one task, so 01-04 take at least its time on one worker")
    ap.add_argument("--llm-s-per-call", type=float, default=2.0, help="ASSUMED API latency per model call")
    ap.add_argument("--offline-s-per-question", type=float, default=18.4,
                    help="05-06 with the offline 1.5B on one 2-core llama.cpp server (measured: RESULTS.md, dev)")
    ap.add_argument("--offline-cores-per-server", type=int, default=2, help="llm.n_threads of one llama.cpp server")
    ap.add_argument("--rpm", type=int, default=500, help="the API key's requests/min (shared by all workers)")
    ap.add_argument("--gpu-pages-per-s", type=float, default=6.2,
                    help="ESTIMATE: docling + embeddings on one GPU (the round-2 winner: ~15,000 pages in ~40 min)")
    ap.add_argument("--gpu-s-per-question", type=float, default=3.0, help="ESTIMATE: 05-06 with a local model on one GPU")
    a = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="scale-"))
    proc, url = (None, None) if a.real_llm else standin_server()
    try:
        data, pages, mean_pages = subset(Path(a.data), a.reports, a.questions, tmp / "data")
        n_rep, n_q = len(list((data / "pdfs").glob("*.pdf"))), len(json.loads((data / "questions.json").read_text()))
        print(f"subset: {n_rep} reports, {pages} pages, {n_q} questions (source mean {mean_pages:.0f} pages/report); "
              f"LLM: {'preset' if a.real_llm else 'stand-in server'}", flush=True)
        rows = {}
        for ex in ("local", "ray"):
            for w in (int(x) for x in a.workers.split(",")):
                r = run_mode(a, data, tmp / "out" / f"{ex}{w}", ex, w, url)
                rows[(ex, w)] = r
                t_rep, t_q = sum(r["secs"][s] for s in REPORT_STAGES), sum(r["secs"][s] for s in QUESTION_STAGES)
                print(f"  {ex:5} w={w}: 01-04 {t_rep:7.1f} s = {pages / t_rep:6.2f} pages/s | 05-06 {t_q:6.1f} s = "
                      f"{n_q / t_q * 60:6.1f} questions/min | " + " ".join(f"{s[:2]}={v:.1f}" for s, v in r["secs"].items()),
                      flush=True)
        remote, local = ray_overhead(a.overhead_items)
        print(f"ray overhead: {remote * 1000:.1f} ms/item through RayExecutor vs {local * 1000:.3f} ms/item local "
              f"({a.overhead_items} no-op items, 1-CPU cluster)")

        ws = sorted({w for _, w in rows})
        base = rows[("ray", ws[0])]
        s_page = sum(base["secs"][s] for s in REPORT_STAGES) / pages * ws[0]  # one worker's seconds per page
        s_q = sum(base["secs"][s] for s in QUESTION_STAGES) / n_q * ws[0]
        calls_q = base["calls"] / max(1, n_q)
        eff = 1.0
        if len(ws) > 1:
            top = rows[("ray", ws[-1])]
            t1, t2 = (sum(r["secs"][s] for s in REPORT_STAGES) for r in (base, top))
            eff = min(1.0, (t1 / t2) / (ws[-1] / ws[0]))
        print(f"\nprojection: {ROUND_REPORTS} reports x {mean_pages:.0f} pages, {ROUND_QUESTIONS} questions; measured "
              f"{s_page:.2f} s/page and {s_q:.2f} s/question per worker (ray w={ws[0]}), parallel efficiency "
              f"{eff:.2f} (w={ws[-1]}), {calls_q:.1f} LLM calls/question at an ASSUMED {a.llm_s_per_call} s/call, "
              f"key budget {a.rpm} rpm; last column: the offline 1.5B at a measured {a.offline_s_per_question} s/question "
              f"per {a.offline_cores_per_server}-core llama.cpp server; 01-04 no shorter than one worker on a "
              f"{a.largest_report_pages}-page report ({fmt_s(a.largest_report_pages * s_page)})")
        tot_pages = ROUND_REPORTS * mean_pages
        print(f"  {'cluster':22} {'01-04':>10} {'05-06':>10} {'total':>10} {'05-06 offline 1.5B':>20}")
        for n in (int(x) for x in a.nodes.split(",")):
            slots = n * a.cores_per_node * eff
            # reports are the unit of 01-04: no more workers than reports
            t_rep = tot_pages * s_page / min(slots, ROUND_REPORTS) + ROUND_REPORTS * remote
            t_rep = max(t_rep, a.largest_report_pages * s_page)  # a report is one task: the largest bounds 01-04
            q_cpu = ROUND_QUESTIONS * (s_q + calls_q * a.llm_s_per_call) / min(slots, ROUND_QUESTIONS)
            q_rpm = ROUND_QUESTIONS * calls_q / a.rpm * 60
            t_q = max(q_cpu, q_rpm) + ROUND_QUESTIONS * remote
            # the offline model instead of an API: one llama.cpp server per n_threads cores, no key budget
            servers = max(1.0, n * a.cores_per_node / a.offline_cores_per_server * eff)
            t_off = ROUND_QUESTIONS * a.offline_s_per_question / min(servers, ROUND_QUESTIONS) + ROUND_QUESTIONS * remote
            print(f"  {n:3} CPU node(s) x {a.cores_per_node:<3}   {fmt_s(t_rep):>10} {fmt_s(t_q):>10} {fmt_s(t_rep + t_q):>10} "
                  f"{fmt_s(t_off):>20}")
        g_rep = tot_pages / a.gpu_pages_per_s
        g_q = ROUND_QUESTIONS * a.gpu_s_per_question
        print(f"  {'1 GPU node (ESTIMATE)':22} {fmt_s(g_rep):>10} {fmt_s(g_q):>10} {fmt_s(g_rep + g_q):>10}  "
              f"(assumed {a.gpu_pages_per_s} pages/s, {a.gpu_s_per_question} s/question: not measured)")
    finally:
        if proc:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
