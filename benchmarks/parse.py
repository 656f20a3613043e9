"""Benchmark the model-free parse stage on a dataset (default: ../shared/erc2-dev).

    .venv/bin/python benchmarks/parse.py --data ../shared/erc2-dev [--workers N] [--page-batch N]

Parses every report into a temporary run folder with ``pipeline="native"`` through
``rag.parse.run_parse`` (process pool, like a notebook run), then prints pages/s overall and per
report, failures, the workers' peak RSS, and — as the reference — how long pypdfium2's plain text
extraction of the same pages takes in the same run. Prints numbers only; no thresholds asserted.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.core.config import load_config  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402
from rag.parse import run_parse  # noqa: E402
from rag.core.artifacts import read_json  # noqa: E402


def pdfium_text(pdfs: list[Path]) -> tuple[int, float]:
    import pypdfium2 as pdfium

    t0, n = time.perf_counter(), 0
    for p in pdfs:
        doc = pdfium.PdfDocument(str(p))
        for page in doc:
            tp = page.get_textpage()
            tp.get_text_range()
            tp.close()
            page.close()
            n += 1
        doc.close()
    return n, time.perf_counter() - t0


def _rss_one(pdf: str, sha1: str, pcfg) -> tuple[float, float, float]:
    """In a fresh process: (baseline RSS after imports, peak RSS after parsing, seconds), MiB."""
    import docling.document_converter  # noqa: F401  (imports counted in the baseline)
    from rag.parse import parse_pdf

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    parse_pdf(pdf, sha1, pcfg, "native")
    return base, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, time.perf_counter() - t0


def rss_largest(report, pcfg) -> tuple[float, float, float]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        return ex.submit(_rss_one, str(report.pdf), report.sha1, pcfg).result()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/erc2-dev")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--page-batch", type=int, default=None)
    ap.add_argument("--rss", action="store_true", help="also parse the largest report alone in a fresh "
                    "process with page_batch as configured and with all pages at once; print peak RSS")
    args = ap.parse_args()

    ds = load_dataset(Path(args.data).resolve())
    overrides = {"parse.pipeline": "native", "parse.workers": args.workers}
    if args.page_batch:
        overrides["parse.page_batch"] = args.page_batch
    with tempfile.TemporaryDirectory(prefix="parse-bench-") as tmp:
        cfg = load_config("offline", overrides=overrides, data_dir=str(ds.root), run="bench", outputs_dir=tmp)
        print(f"dataset {ds.root}: {len(ds.reports)} reports; workers={cfg.parse.workers} "
              f"page_batch={cfg.parse.page_batch} cpus={os.cpu_count()} load={os.getloadavg()[0]:.2f}")
        t0 = time.perf_counter()
        df = run_parse(cfg, ds, progress=False)
        wall = time.perf_counter() - t0
        report = read_json(cfg.run_dir / "01_parse" / "report.json")
        items = read_json(cfg.run_dir / "01_parse" / "manifest.json")["items"]
        garbled, empty = [], []
        for r in ds.reports:
            out = cfg.run_dir / "01_parse" / f"{r.sha1}.json"
            for p in (read_json(out)["pages"] if out.exists() else []):
                if p["metrics"]["garbled_ratio"] > cfg.clean.garbled_threshold:
                    garbled.append((r.sha1[:10], p["page"], p["metrics"]["garbled_ratio"]))
                if p["metrics"]["chars"] == 0:
                    empty.append((r.sha1[:10], p["page"]))
    pages = int(df.pages.sum())
    print(f"\n{'sha1':10} {'pages':>6} {'tables':>6} {'seconds':>8} {'pages/s':>8}  company")
    for r in df.itertuples():
        pps = r.pages / r.seconds if r.seconds else 0.0
        print(f"{r.sha1[:10]} {r.pages:>6} {r.tables:>6} {r.seconds:>8.2f} {pps:>8.1f}  {r.company[:40]}"
              + (f"  ERROR {r.error}" if r.error else ""))
    failed = df[df.error != ""]
    child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\nnative parse: {pages} pages in {wall:.1f} s wall = {pages / wall:.1f} pages/s "
          f"(includes worker start-up); tables: {int(df.tables.sum())}; failed: {len(failed)}")
    print(f"sum of per-report seconds: {df.seconds.sum():.1f} s")
    print(f"peak RSS of one worker: {report['peak_rss_mb']:.0f} MiB (largest report's worker), "
          f"RUSAGE_CHILDREN max: {child_rss:.0f} MiB, this process: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"pages with garbled_ratio > {cfg.clean.garbled_threshold}: {len(garbled)} {garbled[:8]}")
    print(f"pages with no text: {len(empty)} {empty[:8]}")
    big = max(ds.reports, key=lambda r: items.get(r.sha1, {}).get("pages", 0))
    print(f"largest report {big.sha1[:10]}: {items.get(big.sha1, {}).get('pages')} pages")
    if args.rss:
        for batch in (cfg.parse.page_batch, 100_000):
            pcfg = cfg.parse.model_copy(update={"page_batch": batch})
            base, peak, secs = rss_largest(big, pcfg)
            print(f"  largest alone, page_batch={batch}: RSS after imports {base:.0f} MiB, peak {peak:.0f} MiB, "
                  f"{secs:.1f} s")
    n, secs = pdfium_text([r.pdf for r in ds.reports])
    print(f"reference pypdfium2 plain text, one process: {n} pages in {secs:.1f} s = {n / secs:.1f} pages/s")


if __name__ == "__main__":
    main()
