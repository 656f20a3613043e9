"""A model server with a watchdog that ends it when the process that started it is gone.

- ``python _serve.py PARENT_PID <llama_cpp.server args>``: llama.cpp's server in this process, its
  logits and log-probabilities computed only where they are read (:mod:`rag.models.llama_logits`); its
  first log line says whether that patch is ``installed`` or ``refused (version X)``.
- ``python _serve.py PARENT_PID --exec CMD ARGS...``: any server executable (``vllm serve ...``) as a child
  in this process group. SIGTERM/SIGINT are passed on to it; when it exits, this process exits the same way
  (same code, or killed by the same signal), so the caller's watchdog reads the server's own fate.

A daemon thread exits the process as soon as its parent is gone (even after ``kill -9`` of the parent,
when no atexit hook runs), so no orphaned server keeps eating the shared CPU or the GPU's memory; in
``--exec`` mode it first stops the child (SIGTERM, then SIGKILL to the whole group after a grace period).
"""
from __future__ import annotations

import os
import runpy
import signal
import subprocess
import sys
import threading
import time

# Seconds between checks that the parent is still alive.
_CHECK_S = 1.0
# Seconds an --exec child gets to exit after SIGTERM before the process group is killed.
_GRACE_S = 10.0


def _watch(parent: int, child: subprocess.Popen | None = None) -> None:
    while os.getppid() == parent:
        time.sleep(_CHECK_S)
    if child is not None and child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout=_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.killpg(os.getpgrp(), signal.SIGKILL)  # the child's own workers too (this process goes with them)
    os._exit(0)


def _exec(parent: int, cmd: list[str]) -> None:
    child = subprocess.Popen(cmd)  # same process group (and session) as this wrapper

    def forward(sig, _frame):
        if child.poll() is None:
            child.send_signal(sig)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    threading.Thread(target=_watch, args=(parent, child), daemon=True).start()
    code = child.wait()
    if code < 0:  # mirror the signal: the caller reports "killed by SIGSEGV (signal 11)", not a code
        try:
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL/SIGSTOP keep their default action anyway
            pass
        os.kill(os.getpid(), -code)
        time.sleep(5)
    sys.exit(code if code >= 0 else 128 - code)


def main() -> None:
    parent = int(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2] == "--exec":
        _exec(parent, sys.argv[3:])
        return
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    import llama_logits  # beside this file (run by path, so its folder is on sys.path)

    llama_logits.install()  # logits and log-probabilities only where they are read (see that module)
    # A refused patch (an unchecked llama_cpp version) only makes the server slower: said in its log, and
    # read back from there into 06's manifest (rag.models.llama_server).
    print(llama_logits.log_line(), file=sys.stderr, flush=True)
    sys.argv = ["llama_cpp.server", *sys.argv[2:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
