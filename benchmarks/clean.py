"""Benchmark stage 02 (clean): garbled / text-less pages of a dataset, OCR seconds per page, clean time.

Usage (from the repository root)::

    .venv/bin/python benchmarks/clean.py --data ../shared/erc2-dev [--parse-dir outputs/<run>/01_parse]
                                         [--ocr-pages 4] [--scales 2.0,1.5] [--run-clean --run NAME]

1. Garbled scan: for every page, the letter similarity to English (``rag.clean.letter_similarity``: pages
   below ``clean.shifted_threshold`` are "shifted", a text layer decoding to substituted letters) and the garbled ratio = max(parse metric, ``rag.clean.garbled_ratio`` of its
   raw text) when ``01_parse`` outputs are given (``--parse-dir``), else ``garbled_ratio`` of the pypdfium2
   text layer. Prints the pages over ``clean.garbled_threshold`` per report, the text-less pages
   (``chars <= clean.textless_max_chars``) and which of those have a non-blank image (ink share).
2. OCR timing: rapidocr on up to ``--ocr-pages`` of the non-blank text-less (or garbled) pages, at each
   ``--scales`` value; seconds per page and lines read. The engine build is timed apart.
3. ``--run-clean``: ``run_clean`` on the dataset (needs ``outputs/<run>/01_parse``), wall seconds.
Prints numbers only; nothing is asserted. Timings depend on the machine's load (2 shared cores here).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag import clean  # noqa: E402
from rag.clean import ocr  # noqa: E402
from rag.core.config import load_config  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402


def page_ratios(ds, parse_dir: Path | None, cfg) -> dict[str, list[tuple[int, int, float, float | None]]]:
    """sha1 -> [(page, chars, garbled ratio, letter similarity to English or None)] from 01_parse outputs
    or the pypdfium2 text layer."""
    out: dict[str, list[tuple[int, int, float, float | None]]] = {}
    sim = lambda text: clean.letter_similarity(text, cfg.clean.shifted_min_letters)  # noqa: E731
    for r in ds.reports:
        src = parse_dir / f"{r.sha1}.json" if parse_dir else None
        if src is not None and src.exists():
            parsed = clean.load_parsed(src)
            out[r.sha1] = [(p.page, p.metrics.chars, max(p.metrics.garbled_ratio, clean.garbled_ratio(clean.raw_page_text(p))),
                            sim(clean.raw_page_text(p))) for p in parsed.pages]
            continue
        import pypdfium2 as pdfium

        doc = pdfium.PdfDocument(str(r.pdf))
        rows = []
        for i in range(len(doc)):
            text = doc[i].get_textpage().get_text_range()
            rows.append((i + 1, sum(1 for c in text if not c.isspace()), clean.garbled_ratio(text), sim(text)))
        doc.close()
        out[r.sha1] = rows
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="../shared/erc2-dev")
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--run", default="bench-clean")
    ap.add_argument("--parse-dir", default=None, help="folder with 01_parse/<sha1>.json (default: text layer)")
    ap.add_argument("--ocr-pages", type=int, default=4)
    ap.add_argument("--scales", default="2.0")
    ap.add_argument("--run-clean", action="store_true")
    a = ap.parse_args(argv)
    cfg = load_config(a.preset, data_dir=a.data, run=a.run)
    ds = load_dataset(cfg.path("data_dir"))
    c = cfg.clean
    t0 = time.perf_counter()
    ratios = page_ratios(ds, Path(a.parse_dir) if a.parse_dir else None, cfg)
    print(f"source: {'01_parse ' + a.parse_dir if a.parse_dir else 'pypdfium2 text layer'}; "
          f"scan {time.perf_counter() - t0:.1f}s; threshold {c.garbled_threshold}")
    total = garbled_total = shifted_total = 0
    candidates: list[tuple[str, int]] = []
    pdfs = {r.sha1: r.pdf for r in ds.reports}
    for r in ds.reports:
        rows = ratios[r.sha1]
        total += len(rows)
        garbled = [p for p, _, g, _ in rows if g > c.garbled_threshold]
        garbled_total += len(garbled)
        shifted = [p for p, _, _, s in rows if p not in garbled and s is not None and s < c.shifted_threshold]
        shifted_total += len(shifted)
        sims = sorted(s for *_, s in rows if s is not None)
        textless = [p for p, ch, _, _ in rows if ch <= c.textless_max_chars and p not in garbled and p not in shifted]
        inked = []
        for p in textless:
            ink = ocr.ink_share(ocr.render_page(pdfs[r.sha1], p, 0.5))
            if ink >= c.blank_ink_share:
                inked.append(p)
            print(f"    {r.sha1[:8]} p{p}: text-less, ink share {ink:.4f} -> {'OCR' if ink >= c.blank_ink_share else 'blank'}")
        worst = max((g for _, _, g, _ in rows), default=0.0)
        print(f"{r.sha1[:8]} {r.company[:38]:38s} pages {len(rows):4d} garbled {len(garbled):3d} {garbled[:8]} "
              f"max ratio {worst:.4f} shifted {len(shifted):3d} (letter similarity min "
              f"{sims[0] if sims else float('nan'):.3f} median {sims[len(sims) // 2] if sims else float('nan'):.3f}) "
              f"text-less {len(textless)} (non-blank {len(inked)})")
        candidates += [(r.sha1, p) for p in garbled + shifted + inked]
    print(f"TOTAL pages {total}, garbled > {c.garbled_threshold}: {garbled_total}, shifted (letter similarity < "
          f"{c.shifted_threshold}): {shifted_total}, OCR candidates: {len(candidates)}")

    if a.ocr_pages and candidates:
        t = time.perf_counter()
        ocr.get_engine(c.ocr_threads)
        print(f"OCR engine build {time.perf_counter() - t:.2f}s (threads {c.ocr_threads}, cpus {os.cpu_count()}, "
              f"load {os.getloadavg()[0]:.1f})")
        for scale in [float(x) for x in a.scales.split(",")]:
            secs = []
            for sha, p in candidates[: a.ocr_pages]:
                res = ocr.ocr_page(pdfs[sha], p, scale=scale, threads=c.ocr_threads, min_score=c.ocr_min_score,
                                   row_tolerance=c.ocr_row_tolerance)
                secs.append(res.seconds)
                print(f"  scale {scale} {sha[:8]} p{p}: {res.seconds:.2f}s, {len(res.lines)} lines, "
                      f"first: {res.lines[0][:60] if res.lines else ''!r}")
            print(f"OCR scale {scale}: {sum(secs) / len(secs):.2f} s/page over {len(secs)} pages "
                  f"(min {min(secs):.2f}, max {max(secs):.2f}; load {os.getloadavg()[0]:.1f})")

    if a.run_clean:
        from rag.clean import run_clean

        t = time.perf_counter()
        df = run_clean(cfg, ds, progress=False)
        print(df[["company", "pages", "tables", "tables_with_unit", "garbled_pages", "textless_pages", "ocr_pages",
                  "removed_blocks", "seconds", "ocr_seconds", "error"]].to_string())
        print(f"run_clean {time.perf_counter() - t:.1f}s for {int(df.pages.sum())} pages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
