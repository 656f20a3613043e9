"""``python -m rag.models._serve PARENT_PID <llama_cpp.server args>``: the llama.cpp server with a watchdog.

A daemon thread exits the process as soon as its parent is gone (even after ``kill -9`` of the parent,
when no atexit hook runs), so no orphaned server keeps eating the shared CPU.
"""
from __future__ import annotations

import os
import runpy
import sys
import threading
import time

# Seconds between checks that the parent is still alive.
_CHECK_S = 1.0


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_CHECK_S)
    os._exit(0)


def main() -> None:
    parent = int(sys.argv[1])
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    sys.argv = ["llama_cpp.server", *sys.argv[2:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
