"""``rag check --gpu``: the rented CUDA box checks itself in a few minutes, before competition day.

Contract: ``main(argv) -> exit code`` prints ONE table (part | status | result) and writes the same rows,
with their numbers, atomically to ``outputs/gpu-check.json`` (``--out``). Every row is one line:
- ``ok``: measured here; ``missing``: cannot run here, the row says how to get it; ``FAILED``: present but
  it raised (the first line of the error); ``info``: nothing to do.
- machine: GPU name and memory, torch / CUDA / sentence-transformers versions, CPU cores.
- embedder (``embed.backend = local``), ``long_text`` truncate and mean: chunks/s on the GPU (``--chunks``
  texts) and on the CPU (at most ``--cpu-chunks``, within ``--cpu-seconds`` per mode), and the GPU vectors
  against the CPU ones on the CPU's texts (min cosine; nearest neighbour inside the sample identical).
  No GPU: the CPU speeds alone.
- cross-encoder (first of ``rerank.cross_encoder_models``, when configured): pairs/s per device (the CPU
  within ``--cpu-seconds``), scores compared.
- docling's full pipeline (layout + TableFormer), when torchvision imports and its weights are present:
  pages/s on the first ``--pages`` pages of ``--pdf`` (default: the demo corpus's first report).
- vLLM (``llm.backend = vllm``, its executable found, not ``--no-vllm``): server start seconds, one
  structured answer (``rag.models.__main__.PROMPT``) and its completion tokens/s.
The embedder and cross-encoder parts are :mod:`rag.gpu_compare`.
Exit code: 0 = a GPU is seen and nothing present failed; 1 = a part failed; 2 = torch sees no GPU (the
table is still printed and written). Texts: distinct ~``gpu_compare.CHUNK_CHARS``-character chunks of the demo
corpus's prose (``rag.demo_content``), embedding cache off (every chunk is computed, nothing cached).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

# The embedder and cross-encoder parts (GPU vs CPU), the table's Row.
from .gpu_compare import CPU_SECONDS, Row, _first_line, cross_encoder_rows, embedder_rows

# Docling pages run (and discarded) before timing: its models load on the first page.
WARMUP_PAGES = 1


def machine_rows() -> tuple[list[Row], bool]:
    """GPU name/memory and versions; (rows, a GPU is seen)."""
    import torch

    from .models.device import cuda_available

    versions = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
                "cpu_cores": os.cpu_count()}
    try:
        import sentence_transformers
        import transformers

        versions.update({"sentence_transformers": sentence_transformers.__version__,
                         "transformers": transformers.__version__})
    except Exception as e:  # noqa: BLE001 - reported in the embedder row
        versions["sentence_transformers"] = f"does not import: {str(e)[:80]}"
    text = ", ".join(f"{k} {v}" for k, v in versions.items())
    if not cuda_available():
        build = f"CUDA {torch.version.cuda} build, no GPU or driver visible" if torch.version.cuda \
            else "a CPU-only torch build"
        return [Row("gpu", "missing", f"NO GPU: torch sees none ({build}); on a CUDA box run `make gpu`", versions),
                Row("versions", "info", text, versions)], False
    gpus = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        free, _total = torch.cuda.mem_get_info(i)  # another process on the GPU shows as less free memory
        gpus.append({"index": i, "name": p.name, "memory_gib": round(p.total_memory / 2**30, 1),
                     "free_gib": round(free / 2**30, 1), "capability": f"{p.major}.{p.minor}"})
    names = "; ".join(f"cuda:{g['index']} {g['name']} {g['memory_gib']} GiB ({g['free_gib']} free)" for g in gpus)
    return [Row("gpu", "ok", names, {"gpus": gpus}), Row("versions", "info", text, versions)], True


def docling_rows(cfg, gpu: bool, pdf: str | None, pages: int) -> list[Row]:
    from .parse import artifacts_dir
    from .parse.setup_check import parse_problems

    found = parse_problems(cfg)
    if found:
        return [Row("docling full pipeline", "missing", "; ".join(found) + ": `make gpu` (torchvision) / "
                    "`make gpu-weights` (layout + TableFormer into data/models/docling)")]
    from .parse.docling_pages import WINDOWS

    if pdf is None:
        from .core.config import PROJECT_ROOT
        from .demo import ensure_demo

        pdf = str(sorted((ensure_demo(PROJECT_ROOT / "data" / "demo")).rglob("*.pdf"))[0])
    d = "cuda" if gpu else "cpu"
    pcfg = cfg.parse.model_copy(update={"device": d, "artifacts_path": str(artifacts_dir(cfg.parse))})
    try:
        t0 = time.perf_counter()
        WINDOWS["standard"](Path(pdf), 1, WARMUP_PAGES, pcfg)
        load = time.perf_counter() - t0
        t0 = time.perf_counter()
        got = WINDOWS["standard"](Path(pdf), 1, pages, pcfg)
        s = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001
        return [Row(f"docling full pipeline {d}", "FAILED", _first_line(e))]
    n = len(got)
    return [Row(f"docling full pipeline {d}", "ok", f"{n} pages of {Path(pdf).name} in {s:.2f} s = {n / s:.2f} pages/s "
                f"(first page incl. model load {load:.1f} s)", {"pages": n, "seconds": round(s, 3),
                                                                "pages_per_s": round(n / s, 3), "load_s": round(load, 1)})]


def vllm_rows(cfg, skip: bool) -> list[Row]:
    if cfg.llm.backend != "vllm":
        return [Row("vllm", "info", f"llm.backend={cfg.llm.backend} (not vllm): no managed vLLM server in this preset")]
    if skip:
        return [Row("vllm", "info", "skipped (--no-vllm)")]
    from .models import get_llm, shutdown_all
    from .models.__main__ import PROMPT, CheckAnswer
    from .models.base import ModelUnavailable
    from .models.vllm_server import get_vllm_server

    try:
        get_vllm_server(cfg).check_installed()
    except ModelUnavailable as e:
        return [Row("vllm", "missing", f"{_first_line(e)}")]
    try:
        t0 = time.perf_counter()
        get_vllm_server(cfg).start()
        start = time.perf_counter() - t0
        t0 = time.perf_counter()
        r = get_llm(cfg).complete(PROMPT, schema=CheckAnswer)
        s = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001
        return [Row("vllm", "FAILED", _first_line(e))]
    finally:
        shutdown_all()
    toks = r.usage.completion_tokens
    return [Row("vllm server start", "ok", f"{cfg.llm.model} ready in {start:.1f} s", {"start_s": round(start, 1)}),
            Row("vllm structured answer", "ok", f"{r.value.model_dump_json()} ({toks} tokens in {s:.2f} s = "
                f"{toks / s:.1f} tokens/s)", {"completion_tokens": toks, "seconds": round(s, 3),
                                              "tokens_per_s": round(toks / s, 1)})]


def format_table(rows: list[Row]) -> str:
    w1 = max(len(r.part) for r in rows)
    w2 = max(len(r.status) for r in rows)
    return "\n".join(f"{r.part:<{w1}}  {r.status:<{w2}}  {r.result}" for r in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="rag check --gpu", description="The CUDA box checks itself: one table, "
                                 "also written to outputs/gpu-check.json (exit 0 ok, 1 a part failed, 2 no GPU).")
    ap.add_argument("--preset", default="gpu")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    ap.add_argument("--chunks", type=int, default=4096, help="chunks embedded on the GPU per long-text mode")
    ap.add_argument("--cpu-chunks", type=int, default=512, help="at most this many chunks embedded on the CPU per mode "
                    "(and compared with the GPU's)")
    ap.add_argument("--cpu-seconds", type=float, default=CPU_SECONDS, help="CPU time budget per mode (0: none)")
    ap.add_argument("--pairs", type=int, default=512, help="cross-encoder pairs scored per device")
    ap.add_argument("--pdf", default=None, help="PDF for docling's full pipeline (default: a demo report)")
    ap.add_argument("--pages", type=int, default=5, help="pages of --pdf parsed by docling's full pipeline")
    ap.add_argument("--no-vllm", action="store_true", help="skip the vLLM server (a 32B model takes minutes to start)")
    ap.add_argument("--out", default=None, help="JSON file (default: <outputs_dir>/gpu-check.json)")
    a = ap.parse_args(argv)
    from .core.artifacts import write_json_atomic
    from .core.config import load_config
    from .core.config import parse_set

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the check never reaches a model hub
    cfg = load_config(a.preset, overrides={"embed.cache": False, "llm.cache": False, **parse_set(a.set)})
    t0 = time.perf_counter()
    rows, gpu = machine_rows()
    rows += embedder_rows(cfg, gpu, a.chunks, a.cpu_chunks, a.cpu_seconds or None)
    rows += cross_encoder_rows(cfg, gpu, a.pairs, a.cpu_seconds or None)
    rows += docling_rows(cfg, gpu, a.pdf, a.pages)
    rows += vllm_rows(cfg, a.no_vllm)
    seconds = time.perf_counter() - t0
    print(format_table(rows))
    code = 1 if any(r.status == "FAILED" for r in rows) else 0 if gpu else 2
    out = Path(a.out) if a.out else cfg.path("outputs_dir") / "gpu-check.json"
    write_json_atomic(out, {"preset": cfg.preset, "gpu": gpu, "exit_code": code, "seconds": round(seconds, 1),
                            "host": platform.node(), "rows": [asdict(r) for r in rows]})
    print(f"({seconds:.0f} s; written to {out})")
    return code


if __name__ == "__main__":
    sys.exit(main())
