"""Items on a Ray cluster: :class:`RayExecutor` (the item loop's executor protocol). The cluster-wide LLM
budget the workers share is the model layer's (:mod:`rag.models.ray_budget`, in the namespace below).

Contract:
- ``RayExecutor(cfg, mode, workers).map(fn, items)``: one Ray task per item with the resources of
  ``cfg.execution`` (num_cpus, num_gpus, memory), yielding ``(item, Result | Exception, seconds)`` as the
  tasks finish (``ray.wait``). ``mode``/``workers`` (what the stage would use locally) are no limit here:
  the cluster's free resources are, and ``execution.max_in_flight`` when set.
- Failures: an exception from the item's own work is caught in the worker and comes back as that item's
  ``ItemError``, recorded and never retried (``retry_exceptions=False``); a worker that dies (killed, out
  of memory, node lost) is retried by Ray up to ``execution.max_retries`` times, then the item fails with
  "worker died". ``ModelUnavailable`` still stops the stage (its exception travels back).
- Data: ``fn`` goes to the object store once per stage, each item's payload with its task; the Result
  (file contents, info, usage) comes back through the object store and the driver writes it, atomically,
  as in local runs: workers never write artifacts. No shared filesystem is assumed: each file of
  ``Item.inputs`` is put once and written on a node that lacks it (same path, sha256-checked; an identical
  file is left alone) before the work runs (``execution.stage_inputs``).
- Each Result's info gains ``worker`` = ``{node_id, host, pid}`` (the item record and the manifest);
  ``describe()`` (the manifest's ``execution``) gives the address, the cluster's nodes, CPUs and GPUs
  and the per-task resources. Item keys never see any of it.
- ``connect(execution)``: ``ray.init`` for ``ray_address`` ("local" starts a cluster in this process,
  "auto" joins the one ``ray start`` made) unless Ray is initialized here already.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import socket
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from .artifacts import file_sha256, write_bytes_atomic
from .items import Item, ItemError, Result, _call

NAMESPACE = "enterprise-rag"  # where the named budget actors live
# Run by the driver, with the run's config, before a stage's tasks start. The model layer registers the
# cluster-wide LLM budget here (rag.models.ray_budget.start_budget: the actor lives as long as the run), so
# core never imports models (tests/test_layers.py).
DRIVER_START: list[Callable[[Any], None]] = []
# Ray errors that mean the worker (or its node) went away, not that the item's work failed.
_DIED = ("WorkerCrashedError", "NodeDiedError", "OutOfMemoryError", "LocalRayletDiedError", "ObjectLostError",
         "OwnerDiedError", "TaskCancelledError")


def connect(execution) -> None:
    """Join (or start, for "local") the cluster of ``execution.ray_address`` unless already connected."""
    import ray

    if ray.is_initialized():
        return
    if execution.ray_address == "local":
        ray.init(namespace=NAMESPACE, include_dashboard=False)
    else:
        ray.init(address=execution.ray_address, namespace=NAMESPACE)


def cluster_info() -> dict[str, Any]:
    """Alive nodes, their hosts, and the cluster's CPUs / GPUs."""
    import ray

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    res = ray.cluster_resources()
    return {"nodes": len(nodes), "hosts": sorted({n.get("NodeManagerHostname", "?") for n in nodes}),
            "cpus": res.get("CPU", 0.0), "gpus": res.get("GPU", 0.0)}


# ---- the worker side ---------------------------------------------------------------------------------
_SHA_LOCK = threading.Lock()
_SHA: dict[tuple[str, int, int], str] = {}  # (path, mtime_ns, size) -> sha256 of files this node holds


def _sha(p: Path) -> str:
    st = p.stat()
    key = (str(p), st.st_mtime_ns, st.st_size)
    with _SHA_LOCK:
        if key not in _SHA:
            _SHA[key] = file_sha256(p)
        return _SHA[key]


def mapped(path: str, path_map: dict[str, str]) -> str:
    """``path`` with the first matching driver prefix of ``path_map`` replaced by the worker's."""
    for a, b in path_map.items():
        a = a.rstrip("/")
        if path == a or path.startswith(a + "/"):
            return b.rstrip("/") + path[len(a):]
    return path


def stage_in(inputs: Sequence[tuple[str, str, Any]], path_map: dict[str, str]) -> int:
    """Write each ``(path, sha256, object ref)`` this node lacks (or holds in another version); the
    number of files written. Nothing is fetched for a file already here."""
    import ray

    written = 0
    for path, sha, ref in inputs:
        dst = Path(mapped(path, path_map))
        if dst.is_file() and _sha(dst) == sha:
            continue
        write_bytes_atomic(dst, ray.get(ref))
        written += 1
    return written


def _run_item(fn: Callable[[Item], Result], item: Item, inputs: list, path_map: dict[str, str]):
    """One Ray task: stage the inputs, run the item like the local loop does (never raising), say where."""
    import ray

    try:
        stage_in(inputs, path_map)
    except Exception as e:  # noqa: BLE001 - an input that cannot be written fails this item only
        out, secs = ItemError(f"inputs not staged on {socket.gethostname()}: {type(e).__name__}: {e}"), 0.0
    else:
        out, secs = _call(fn, item)
    if isinstance(out, ItemError) and getattr(out, "original", None) is not None:
        try:  # the original exception (ModelUnavailable stops the stage) travels back only when it pickles
            pickle.dumps(out.original)
        except Exception:  # noqa: BLE001
            out.original = None
    return out, secs, {"node_id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(),
                       "pid": os.getpid()}


_TASK = None


def _task():
    global _TASK
    if _TASK is None:
        import ray

        _TASK = ray.remote(_run_item)
    return _TASK


# ---- the driver side ---------------------------------------------------------------------------------
class RayExecutor:
    """See the module contract. ``path_map`` ({driver prefix: worker prefix}) places staged inputs
    elsewhere on the workers (a node whose disk is laid out differently; tests use it on one machine)."""

    def __init__(self, cfg, mode: str = "serial", workers: int = 1, path_map: dict[str, str] | None = None):
        self.cfg, self.ex = cfg, cfg.execution
        self.mode, self.workers = mode, workers
        self.path_map = dict(path_map or {})
        self._puts: dict[tuple[str, int, int], tuple[str, Any]] = {}

    def describe(self) -> dict[str, Any]:
        connect(self.ex)
        ex = self.ex
        return {"executor": "ray", "address": ex.ray_address, **cluster_info(),
                "task": {"num_cpus": ex.num_cpus, "num_gpus": ex.num_gpus, "memory": ex.memory,
                         "max_retries": ex.max_retries},
                "stage_asked": {"mode": self.mode, "workers": self.workers}}

    def _inputs(self, item: Item) -> list[tuple[str, str, Any]]:
        """``(path, sha256, ref)`` of the item's input files, each put in the object store once."""
        import ray

        if not self.ex.stage_inputs:
            return []
        out = []
        for f in item.inputs:
            p = Path(f)
            files = sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else [p] if p.is_file() else []
            for x in files:  # a missing input is left to the work, which names it in its error
                st = x.stat()
                key = (str(x), st.st_mtime_ns, st.st_size)
                if key not in self._puts:
                    data = x.read_bytes()
                    self._puts[key] = (hashlib.sha256(data).hexdigest(), ray.put(data))
                out.append((str(x), *self._puts[key]))
        return out

    def _result(self, ref) -> tuple[Any, float]:
        import ray

        try:
            out, secs, where = ray.get(ref)
        except ray.exceptions.RayError as e:
            lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
            why = lines[-1].strip()[:300] if lines else type(e).__name__
            if type(e).__name__ in _DIED:
                return ItemError(f"worker died ({self.ex.max_retries} retries spent): {type(e).__name__}: {why}"), 0.0
            return ItemError(f"ray: {type(e).__name__}: {why}"), 0.0
        if isinstance(out, Result):
            out.info = {**out.info, "worker": where}
        return out, secs

    def map(self, fn: Callable[[Item], Result], items: Sequence[Item]) -> Iterator[tuple[Item, Any, float]]:
        items = list(items)
        if not items:
            return
        import ray

        connect(self.ex)
        for hook in DRIVER_START:
            hook(self.cfg)
        ex = self.ex
        task = _task().options(num_cpus=ex.num_cpus, num_gpus=ex.num_gpus, memory=ex.memory or None,
                               max_retries=ex.max_retries, retry_exceptions=False)
        fn_ref = ray.put(fn)
        queue = iter(items)
        pending: dict[Any, Item] = {}
        limit = ex.max_in_flight or len(items)

        def submit() -> bool:
            it = next(queue, None)
            if it is not None:
                pending[task.remote(fn_ref, it, self._inputs(it), self.path_map)] = it
            return it is not None

        try:
            while len(pending) < limit and submit():
                pass
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    it = pending.pop(ref)
                    submit()
                    yield (it, *self._result(ref))
        finally:  # the loop stopped early (ModelUnavailable, Ctrl-C): nothing keeps running for it
            for ref in pending:
                try:
                    ray.cancel(ref)
                except Exception:  # noqa: BLE001 - already finished or gone
                    pass
            self._puts.clear()
