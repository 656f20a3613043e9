"""Ablations: run the pipeline over a grid of config overrides and tabulate score, hit@k, time, tokens.

CLI::

    python -m rag.ablate --data ../shared/erc2-dev --preset offline --name dev-abl \\
        --grid rerank.mode=none,llm chunk.sizes=[300],[1000] [--set llm.max_tokens=512] [--notebooks]

``--grid KEY=V1,V2,...`` (repeatable, several per flag) gives one axis; the variants are the Cartesian
product of the axes, in the order given (the first variant is each axis's first value). Values are parsed
as JSON when they parse (``[300,1000]``, ``true``), ``on``/``off`` mean true/false, and commas inside
brackets do not split. A scalar given to a list field is wrapped (``chunk.sizes=1000`` -> ``[1000]``).
When a variant sets ``chunk.sizes`` but not ``retrieve.chunk_size``, retrieval reads the variant's first
size (otherwise it would ask for a size that was never indexed).

Sharing unchanged stages (the strategy). Each variant is its own run ``outputs/<name>-NN-<slug>/``.
A stage's output depends on the config sections of that stage *and every stage it reads*, as declared
once in :mod:`rag.core.deps` (``llm`` only where a stage calls the model: 02 serializing tables, 05
reranking with the LLM or expanding queries, 06 always) — the same declarations the stages' currency
keys use. Before running variant *v*, for each stage in order, if an
earlier variant *u* of this ablation has the same cumulative signature for it, *u*'s stage folder is
hard-linked (copied where links fail) into *v*'s run and the stage is not run; the first stage whose
signature is new, and every later one, run for real through the stage functions
(``rag.<stage>.run_<stage>(cfg, ds, progress)``). Hard links are safe: every artifact write is an
atomic replace (a new inode), so a later write in one run never changes another run's files. A shared
stage keeps its donor's ``manifest.json`` (its ``run`` field names the donor), so the table's time and
tokens are what the variant costs from scratch; ``ran_seconds`` is the time this invocation spent.
Re-running the same ablation resumes: stages skip items whose currency keys are current.

Outputs (``outputs/ablations/<name>/``): ``ablation.csv``, ``ablation.md``, ``ablation.png``, ``plan.json``.
With ``--notebooks`` the non-shared stages run as notebooks through ``rag.pipeline.run_notebooks``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from .ablate_grid import expand_grid, parse_axis, slug, variant_overrides
from .core.artifacts import STAGE_PACKAGES, hash_key, write_bytes_atomic, write_json_atomic, write_text_atomic
from .core.config import RunConfig, load_config
from .core import deps
from .core.stages import name_of, names
from .core.dataset import Dataset

PIPELINE = deps.PIPELINE


@dataclass
class Variant:
    index: int
    overrides: dict[str, Any]  # this variant's grid values
    applied: dict[str, Any]  # every override given to load_config (fixed --set + grid + linked keys)
    cfg: RunConfig
    shared: dict[str, str] = field(default_factory=dict)  # stage -> donor run name
    ran: list[str] = field(default_factory=list)  # stages run for real in this invocation
    done: list[str] = field(default_factory=list)  # stages linked or run without error
    ran_seconds: float = 0.0
    error: str = ""

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={json.dumps(v)}" for k, v in self.overrides.items()) or "(base)"


# ---- signatures and sharing ------------------------------------------------------------------
def stage_signature(cfg: RunConfig, stage: str) -> str | None:
    """Hash of everything ``stage``'s folder depends on from scratch (``rag.core.deps.lineage_signature``:
    run inputs + the config sections of it and every stage it reads, ``llm`` where a stage calls the
    model); None = never share. Item currency keys read the same declarations."""
    sig = deps.lineage_signature(cfg, stage)
    return None if sig is None else hash_key(sig)


def link_stage(src_run: Path, dst_run: Path, stage: str) -> None:
    """Make ``dst_run/stage`` a hard-linked copy of ``src_run/stage`` (copy when linking fails)."""
    src, dst = src_run / stage, dst_run / stage
    if not src.is_dir():
        raise FileNotFoundError(f"{src} does not exist: cannot share stage {stage}")
    tmp = dst_run / f".{stage}.linking"
    if tmp.exists():
        shutil.rmtree(tmp)
    dst_run.mkdir(parents=True, exist_ok=True)

    def _link(s: str, d: str) -> None:
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)

    shutil.copytree(src, tmp, copy_function=_link)
    if dst.exists():
        shutil.rmtree(dst)
    os.replace(tmp, dst)


def plan(base_preset: str, data_dir: str, name: str, fixed: Mapping[str, Any], grid: Sequence[Mapping[str, Any]],
         stages: Sequence[str] = PIPELINE, **top: Any) -> list[Variant]:
    """Configs of every variant and, per stage, the earlier variant whose folder it can share."""
    variants: list[Variant] = []
    seen: dict[tuple[str, str], str] = {}  # (stage, signature) -> donor run
    for i, g in enumerate(grid):
        ov = variant_overrides(fixed, g)
        cfg = load_config(base_preset, overrides=ov, data_dir=data_dir, run=f"{name}-{i:02d}-{slug(g)}", **top)
        v = Variant(index=i, overrides=dict(g), applied=ov, cfg=cfg)
        for st in stages:
            sig = stage_signature(cfg, st)
            if sig is not None and (st, sig) in seen:
                v.shared[st] = seen[(st, sig)]
            else:
                break  # this stage and every later one run for this variant
        for st in stages:
            sig = stage_signature(cfg, st)
            if sig is not None:
                seen.setdefault((st, sig), cfg.run)
        variants.append(v)
    return variants


# ---- running --------------------------------------------------------------------------------
def _stage_fns() -> dict[str, Callable[..., Any]]:
    from .pipeline import stage_functions

    return stage_functions()


def run_variant(v: Variant, ds: Dataset, stages: Sequence[str], stage_fns: Mapping[str, Callable[..., Any]] | None,
                notebooks: bool, progress: bool) -> None:
    runs_root = v.cfg.path("outputs_dir")
    t0 = time.perf_counter()
    try:
        for st, donor in v.shared.items():
            link_stage(runs_root / donor, v.cfg.run_dir, st)
            v.done.append(st)
        todo = [s for s in stages if s not in v.shared]
        if notebooks:
            from .pipeline import run_notebooks

            run_notebooks(v.cfg.preset, v.cfg.data_dir, v.cfg.run, v.applied, todo)
            v.ran, v.done = todo, v.done + todo
        else:
            fns = stage_fns or _stage_fns()
            for st in todo:
                fns[st](v.cfg, ds, progress=progress)
                v.ran.append(st)
                v.done.append(st)
    except Exception as e:  # noqa: BLE001 - one failed variant must not stop the others
        v.error = f"{type(e).__name__}: {e}"
        if progress:
            traceback.print_exc()
    v.ran_seconds = round(time.perf_counter() - t0, 2)


SEEDABLE = names(seedable=True)  # the per-report stages (rag.core.stages)
EVALUATE = name_of("evaluate")  # 07: the stage that scores a variant


def _seed(v: Variant, seed_run: str, stages: Sequence[str], progress: bool) -> None:
    """Hard-link ``seed_run``'s folders of the SEEDABLE stages into ``v``'s run where ``v`` has none yet."""
    src = v.cfg.path("outputs_dir") / seed_run
    if not src.is_dir():
        raise FileNotFoundError(f"--seed-from {seed_run}: {src} does not exist")
    for st in stages:
        if st in SEEDABLE and (src / st).is_dir() and not (v.cfg.run_dir / st).exists():
            link_stage(src, v.cfg.run_dir, st)
            if progress:
                print(f"[ablate] {v.cfg.run}: seeded {st} from {seed_run} (items re-checked by key)", flush=True)


def result_row(v: Variant) -> dict[str, Any]:
    from .evaluate import run_row

    row: dict[str, Any] = {"variant": v.label, "run": v.cfg.run,
                           "shared": ",".join(s[:2] for s in v.shared) or "-", "ran_seconds": v.ran_seconds,
                           "error": v.error}
    if EVALUATE not in v.done:  # no fresh score (a stale scores.json from an older run is not shown)
        row["error"] = row["error"] or f"{EVALUATE} did not run"
        return row
    try:
        r = run_row(v.cfg.run_dir)
        r.pop("run", None)
        row.update(r)
    except FileNotFoundError as e:
        row["error"] = row["error"] or str(e)
    return row


def markdown_table(df: pd.DataFrame) -> str:
    def fmt(x: Any) -> str:
        if isinstance(x, float):
            return "" if pd.isna(x) else f"{x:.4g}"
        return str(x).replace("|", "\\|")

    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r[c]) for c in cols) + " |" for _, r in df.iterrows()]
    return "\n".join(lines) + "\n"


TABLE_COLUMNS = ("variant", "score", "max_score", "G", "R", "answer_accuracy", "seconds", "tokens", "ran_seconds",
                 "shared", "run", "error")


def run_ablation(preset: str, data_dir: str, name: str, grid_specs: Sequence[str], fixed: Mapping[str, Any] | None = None,
                 stages: Sequence[str] = PIPELINE, notebooks: bool = False, progress: bool = True,
                 stage_fns: Mapping[str, Callable[..., Any]] | None = None, ds: Dataset | None = None,
                 seed_from: str | None = None, **top: Any) -> pd.DataFrame:
    """Run every variant (sharing unchanged stages), write the table + plot; return the table.

    ``seed_from``: an existing run (``outputs/<seed_from>``) whose stage folders up to 04_index seed the
    first variant's run (hard links) before it runs: its stages still run, so every item's currency key
    is checked and only items the seed does not have current are redone (a run of 01..04 made earlier is
    not parsed again for each ablation)."""
    from .core.dataset import load_dataset
    from .evaluate.plots import ablation_png

    axes = [parse_axis(s) for s in grid_specs]
    variants = plan(preset, data_dir, name, fixed or {}, expand_grid(axes), stages, **top)
    ds = ds or load_dataset(variants[0].cfg.path("data_dir"))
    out_dir = variants[0].cfg.path("outputs_dir") / "ablations" / name
    write_json_atomic(out_dir / "plan.json", [{"run": v.cfg.run, "overrides": v.overrides, "shared": v.shared}
                                              for v in variants])
    by_run = {v.cfg.run: v for v in variants}
    for v in variants:
        # Share only what the donor really finished (a donor that failed at a stage shares nothing from it on).
        keep = {}
        for st, donor in v.shared.items():
            if st not in by_run[donor].done:
                break
            keep[st] = donor
        v.shared = keep
        if seed_from and v.index == 0:
            _seed(v, seed_from, stages, progress)
        if progress:
            print(f"[ablate] {v.cfg.run}: {v.label}; shared {list(v.shared) or 'none'}", flush=True)
        run_variant(v, ds, stages, stage_fns, notebooks, progress)
    rows = [result_row(v) for v in variants]
    table = pd.DataFrame(rows)
    hit_cols = sorted((c for c in table.columns if c.startswith("hit@")), key=lambda c: int(c[4:]))
    cols = [c for c in TABLE_COLUMNS[:6] if c in table.columns] + hit_cols + \
        [c for c in TABLE_COLUMNS[6:] if c in table.columns]
    table = table[cols + [c for c in table.columns if c not in cols]]
    write_text_atomic(out_dir / "ablation.csv", table.to_csv(index=False))
    write_text_atomic(out_dir / "ablation.md", markdown_table(table[cols]))
    write_bytes_atomic(out_dir / "ablation.png", ablation_png(table))
    if progress:
        print(markdown_table(table[cols]))
        print(f"[ablate] wrote {out_dir}/ablation.csv, ablation.md, ablation.png", flush=True)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    from .pipeline import parse_set

    ap = argparse.ArgumentParser(prog="python -m rag.ablate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--data", required=True, help="dataset folder")
    ap.add_argument("--name", default=None, help="ablation name (default: <dataset>-ablation)")
    ap.add_argument("--grid", action="extend", nargs="+", required=True, metavar="KEY=V1,V2")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override for every variant")
    ap.add_argument("--stages", default=None, help="comma-separated stages (default 01_parse..07_evaluate)")
    ap.add_argument("--notebooks", action="store_true", help="run non-shared stages as notebooks (papermill)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    ap.add_argument("--seed-from", default=None, metavar="RUN",
                    help="existing run whose 01..04 folders seed the first variant (items re-checked by key)")
    a = ap.parse_args(argv)
    name = a.name or f"{Path(a.data).name}-ablation"
    stages = tuple(a.stages.split(",")) if a.stages else PIPELINE
    unknown = [s for s in stages if s not in STAGE_PACKAGES]
    if unknown:
        ap.error(f"unknown stage(s) {unknown}; known: {', '.join(PIPELINE)}")
    fixed = parse_set(a.set)
    if a.dry_run:
        for v in plan(a.preset, a.data, name, fixed, expand_grid([parse_axis(s) for s in a.grid]), stages):
            print(f"{v.cfg.run}: {v.label}; shared {v.shared or 'none'}")
        return 0
    table = run_ablation(a.preset, a.data, name, a.grid, fixed, stages, notebooks=a.notebooks, seed_from=a.seed_from)
    return 1 if table["error"].astype(bool).any() else 0


if __name__ == "__main__":
    sys.exit(main())
