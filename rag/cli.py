"""The ``rag`` console command: one entry point for everything the project runs.

    rag init DATASET --pdfs DIR      a dataset folder from a folder of PDFs (subset.csv guessed, to correct)
    rag ask "question" --data D      one question answered, with its cited pages and snippets
    rag import financebench SRC --out data/NAME   a dataset from another benchmark's layout
    rag run [--data D] [--preset P]  every stage (notebooks by papermill), as python -m rag.pipeline
    rag check [--preset P]           real calls through the configured models
    rag check --gpu                  a CUDA box checks itself: one table, outputs/gpu-check.json
    rag score --run R                score a run against gold answers (stage 07 without the notebook)
    rag ablate ...                   a grid of config variants, tabulated
    rag valgen ...                   validation-set questions and labels
    rag demo                         (re)generate the demo corpus
    rag lab                          JupyterLab on the project's kernel

Contract: ``main(argv) -> exit code``. ``python -m rag.<module>`` keeps working; these subcommands call
the same ``main`` functions. A user error (bad config, dataset or question, a model that cannot run)
prints its message after ``error:`` (no traceback) and exits 2; ``--debug`` (any subcommand) shows the traceback instead.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Callable, Sequence

KERNEL_NAME = "enterprise-rag"
_DEBUG = False  # --debug given to this invocation (main strips it before the subcommand parses)


def _init(argv: list[str]) -> int:
    from .init_data import main

    return main(argv) or 0


def _ask(argv: list[str]) -> int:
    from .ask import INDEX_STAGES, KINDS, ask, ensure_indexed, format_result, routed_companies
    from .pipeline import parse_set, prepare
    from .run_messages import print_damage, report_interrupt

    ap = argparse.ArgumentParser(prog="rag ask", description="Answer one question from a dataset's reports "
                                 "(indexes them first when needed) and print the cited pages.")
    ap.add_argument("question")
    ap.add_argument("--data", required=True, help="dataset folder (rag init makes one from PDFs)")
    ap.add_argument("--kind", choices=KINDS, default=None, help="answer kind (default: inferred from the wording)")
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--run", default=None, help="run whose indexes are used (default: the dataset folder's name)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    ap.add_argument("--quiet", action="store_true", help="no indexing progress lines")
    ap.add_argument("--wait", action="store_true", help="when a run writes the same outputs/<run>/, wait for it")
    a = ap.parse_args(argv)
    from .core.run_guard import RunLock, check_places
    from .pipeline import make_config

    cfg = make_config(a.preset, a.data, a.run, parse_set(a.set))
    check_places(cfg)  # before the lock (it lives in the output folder) and before any stage
    cfg, ds = prepare(a.preset, a.data, a.run, parse_set(a.set), cfg=cfg)
    routed_companies(ds, a.question, cfg.retrieve.route_by_content)  # naming no company: fails before indexing
    command = f"rag ask {shlex.join(argv)}"
    with RunLock(cfg.run_dir, command).acquire(wait=a.wait):  # 01-04 write the run folder
        try:
            ensure_indexed(cfg, ds, progress=not a.quiet)
            print(format_result(ask(cfg, ds, a.question, a.kind)))
            print_damage(cfg.run_dir, INDEX_STAGES)  # damaged caches and artifacts, once
        except KeyboardInterrupt as e:  # under the lock: its progress note says where
            if _DEBUG:
                raise
            return report_interrupt(e, cfg.run_dir, command)
    return 0


def _check(argv: list[str]) -> int:
    """``rag check --gpu``: the CUDA box's self-check (rag.gpu_check); otherwise the model check."""
    if "--gpu" in argv:
        from .gpu_check import main

        return main([x for x in argv if x != "--gpu"])
    from .models.__main__ import main as check

    return check(["--check", *argv]) or 0


def _run(argv: list[str]) -> int:
    from .pipeline import main

    return main(argv, prog="rag run")  # its error and interrupt lines resume with `rag run ...`


def _valgen(argv: list[str]) -> int:
    """``rag valgen values ...``: the value questions (rag.valgen_values); else rag.valgen."""
    if argv[:1] == ["values"]:
        return _forward("rag.valgen_values")(argv[1:])
    if argv and argv[0] == "catalogue":  # the catalogue-worded set
        return _forward("rag.valgen_catalogue")(argv[1:])
    return _forward("rag.valgen")(argv)


IMPORTERS = {"financebench": "rag.importers.financebench"}


def _import(argv: list[str]) -> int:
    """``rag import BENCHMARK SRC --out data/NAME``: the benchmark's importer module's ``main``."""
    import importlib

    if not argv or argv[0] in ("-h", "--help") or argv[0] not in IMPORTERS:
        print(f"usage: rag import {{{','.join(IMPORTERS)}}} SRC --out data/NAME  (rag import NAME --help)",
              file=sys.stderr if argv and argv[0] not in ("-h", "--help") else sys.stdout)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return importlib.import_module(IMPORTERS[argv[0]]).main(argv[1:]) or 0


def _forward(module: str, fn: str = "main") -> Callable[[list[str]], int]:
    def run(argv: list[str]) -> int:
        import importlib

        return getattr(importlib.import_module(module), fn)(argv) or 0
    return run


def kernel_installed(name: str = KERNEL_NAME) -> bool:
    from jupyter_client.kernelspec import KernelSpecManager

    return name in KernelSpecManager().find_kernel_specs()


def install_kernel(name: str = KERNEL_NAME) -> None:
    """A Jupyter kernel spec (user level) that runs this interpreter, so notebooks opened anywhere use
    the project's .venv (``make kernel`` calls this)."""
    from ipykernel.kernelspec import install

    install(user=True, kernel_name=name, display_name=f"{name} ({sys.prefix})")


def _lab(argv: list[str]) -> int:
    from .core.config import PROJECT_ROOT

    ap = argparse.ArgumentParser(prog="rag lab", description="JupyterLab on the project folder with the "
                                 "project kernel (installed on first use); other arguments go to jupyter lab.")
    ap.add_argument("--dry-run", action="store_true", help="print the command instead of starting it")
    a, rest = ap.parse_known_args(argv)
    cmd = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={PROJECT_ROOT}",
           f"--MappingKernelManager.default_kernel_name={KERNEL_NAME}", *rest]
    if a.dry_run:
        print(" ".join(cmd))
        return 0
    if not kernel_installed():
        install_kernel()
        print(f"installed Jupyter kernel {KERNEL_NAME!r} -> {sys.executable}")
    os.execv(sys.executable, cmd)  # replaces this process (Ctrl-C stops JupyterLab as usual)
    return 0


def _kernel(argv: list[str]) -> int:
    argparse.ArgumentParser(prog="rag kernel", description="Install the project's Jupyter kernel "
                            f"({KERNEL_NAME!r}, this interpreter) for papermill --kernel and JupyterLab.").parse_args(argv)
    install_kernel()
    print(f"installed Jupyter kernel {KERNEL_NAME!r} -> {sys.executable}")
    return 0


COMMANDS: dict[str, tuple[Callable[[list[str]], int], str]] = {
    "init": (_init, "make a dataset folder from a folder of PDFs"),
    "ask": (_ask, "answer one question and print the cited pages"),
    "import": (_import, "a dataset from another benchmark's folder (financebench)"),
    "run": (_run, "run every stage (notebooks by papermill)"),
    "check": (_check, "real calls through the configured models (--gpu: the CUDA box's self-check)"),
    "score": (_forward("rag.evaluate"), "score a run against gold answers"),
    "ablate": (_forward("rag.ablate"), "run a grid of config variants and tabulate them"),
    "valgen": (_valgen, "generate and label validation questions"),
    "demo": (_forward("rag.demo"), "(re)generate the demo corpus"),
    "lab": (_lab, "JupyterLab on the project kernel"),
    "kernel": (_kernel, "install the project's Jupyter kernel"),
}
# Subcommands with their own --debug (they report user errors themselves and resume hints).
OWN_DEBUG = {"run"}


def usage() -> str:
    width = max(map(len, COMMANDS))
    rows = "\n".join(f"  {n:<{width}}  {h}" for n, (_, h) in COMMANDS.items())
    return (f"usage: rag COMMAND [options]   (rag COMMAND --help for its options)\n\ncommands:\n{rows}\n\n"
            "--debug (any command): show the full traceback of a user error")


def main(argv: Sequence[str] | None = None) -> int:
    from .run_messages import error_line, is_interrupt, report_interrupt, user_error

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd not in COMMANDS:
        print(f"rag: unknown command {cmd!r}\n\n{usage()}", file=sys.stderr)
        return 2
    global _DEBUG
    debug = _DEBUG = "--debug" in rest
    if debug and cmd not in OWN_DEBUG:
        rest = [x for x in rest if x != "--debug"]
    try:
        return COMMANDS[cmd][0](rest)
    except BaseException as e:  # noqa: BLE001 - user errors and Ctrl-C become lines, the rest propagate
        if is_interrupt(e) and not debug:  # `rag run` and `rag ask` report theirs with the stage
            return report_interrupt(e, None, f"rag {shlex.join([cmd, *rest])}")
        found = user_error(e) if isinstance(e, Exception) else None
        if debug or found is None:
            raise
        name, msg = found  # the whole message (a dataset error lists every problem), no traceback
        print(error_line(name, msg.strip() or name), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
