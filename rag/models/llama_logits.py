"""Logits and log-probabilities in the llama.cpp server only where they are read.

Why: ``llama_cpp.server`` builds its model with ``logits_all=True`` (it must, to answer ``logprobs``), and
llama-cpp-python 0.3 then (1) computes the output layer (1,536 x 151,936 for Qwen2.5) for EVERY prompt token
and copies each row into ``Llama.scores``, and (2) for a non-streamed request with ``logprobs`` takes the
log-softmax of the whole score matrix (``Llama.logits_to_logprobs(self._scores)``) to keep only the rows of
the generated tokens. Only the rows after the last prompt token and after each generated token are ever
read unless a request echoes its prompt. On this project's 2-core box a yes/no page (~900 prompt tokens)
spent ~15-25% of its prefill on (1) and ~2.7 s on (2) (benchmarks/llm_speed.py, RESULTS.md).

Contract:
- ``install() -> bool``: patches ``llama_cpp.llama.Llama`` in this process so that
  * ``eval`` asks the model for the logits of each batch's LAST token only and stores that row in
    ``scores`` (what ``logits_all=False`` computes, kept where the completion code reads it), except while
    a ``create_completion`` call has ``echo`` and ``logprobs`` (prompt log-probabilities): then every row
    is computed as before;
  * ``logits_to_logprobs`` of a 2-D matrix returns :class:`LazyRows`: each row handed to the original
    function when read (the caller slices off the prompt rows first), so the numbers are the original's;
    1-D input goes to the original directly.
  Sampling is unchanged (llama.cpp samples from the context's last logits either way), so answers and
  log-probabilities are those of the unpatched server (tests/test_llama_logits.py compares them).
  Returns False and changes nothing when llama_cpp is absent or its version is not one this was checked
  against (``CHECKED``): the server then computes as before, only slower. Idempotent; ``uninstall()``
  restores the originals.
- ``status() -> str``: what the last ``install()`` in this process did: "installed", "refused (version X)"
  (an unchecked llama_cpp X), "absent (no llama_cpp)", or "not tried". A refusal is not an error, so it is
  said out loud: ``log_line()`` is the line ``rag.models._serve`` writes to the server's log, and
  ``logged_status(text)`` reads it back from a log (``rag.models.llama_server`` puts it in the server's
  notes, which 06 writes into its manifest as ``llm_server.logits_patch``).
- ``PINNED``: the llama-cpp-python version ``make setup`` builds (the Makefile's ``LLAMA_VERSION``);
  tests/test_llama_pin.py checks it is the one ``CHECKED`` names, and every other place that spells the pin.

Used by ``rag.models._serve`` in the llama.cpp server process only (``logged_status`` also by the parent).
"""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

# llama-cpp-python versions whose Llama.eval / generate / _create_completion were read for this patch:
# eval writes one scores row per token; completion slices logits_to_logprobs(...)[token_offset:], iterates
# the rows, indexes a row by token id and sorts its (value, index) pairs; sampling reads the context's logits.
CHECKED = ("0.3.36",)
PINNED = CHECKED[-1]  # what the project installs: the newest version read for the patch (module contract)
LOG_TAG = "rag.models.llama_logits:"  # the server log line's start (log_line / logged_status)


class LazyRows:
    """Rows of a 2-D logits matrix turned into log-probabilities by ``row_logprobs`` when read (a view, no copy)."""

    def __init__(self, logits: np.ndarray, row_logprobs):
        self._logits = logits
        self._row_logprobs = row_logprobs

    def __len__(self) -> int:
        return len(self._logits)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return LazyRows(self._logits[i], self._row_logprobs)
        return self._row_logprobs(self._logits[i])

    def __iter__(self):
        return (self._row_logprobs(r) for r in self._logits)


def _eval_last_logits(self, tokens) -> None:
    """``Llama.eval`` computing the logits of each batch's last token only (module contract)."""
    if getattr(self, "_rag_all_logits", False):
        return _ORIGINAL["eval"](self, tokens)
    self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
    for i in range(0, len(tokens), self.n_batch):
        batch = tokens[i: i + self.n_batch]
        n_past, n = self.n_tokens, len(batch)
        self._batch.set_batch(batch=batch, n_past=n_past, logits_all=False)  # the last token still gets logits
        self._ctx.decode(self._batch)
        self.input_ids[n_past: n_past + n] = batch
        if self._logits_all:  # one output row: the batch's last token
            self.scores[n_past + n - 1, :] = np.ctypeslib.as_array(self._ctx.get_logits(), shape=(self._n_vocab,))
        self.n_tokens += n
        self._requires_eval = False


def _create_completion(self, *args, **kwargs):
    """``Llama.create_completion`` that computes every prompt row for a request echoing log-probabilities."""
    bound = _SIGNATURE.bind(self, *args, **kwargs)
    self._rag_all_logits = bool(bound.arguments.get("echo")) and bound.arguments.get("logprobs") is not None
    return _ORIGINAL["create_completion"](self, *args, **kwargs)


def _logits_to_logprobs(logits, axis: int = -1):
    original = _ORIGINAL["logits_to_logprobs"]
    if isinstance(logits, np.ndarray) and logits.ndim == 2 and axis in (-1, 1):
        return LazyRows(logits, original)  # a row is 1-D: the original's own arithmetic, row by row
    return original(logits, axis=axis)


_ORIGINAL: dict[str, Any] = {}
_SIGNATURE: inspect.Signature | None = None
_STATUS = "not tried"  # what the last install() did (status())


def status() -> str:
    """What the last :func:`install` in this process did (module contract)."""
    return _STATUS


def log_line() -> str:
    """The server log's line about the patch: ``rag.models.llama_logits: installed`` (or refused ...)."""
    return f"{LOG_TAG} {status()}"


def logged_status(log_text: str) -> str | None:
    """The patch's status as :func:`log_line` wrote it in a server log; None when the log has no such line."""
    for line in log_text.splitlines():
        if line.startswith(LOG_TAG):
            return line[len(LOG_TAG):].strip()
    return None


def install() -> bool:
    """Patch llama_cpp's ``Llama`` in this process (module contract)."""
    global _SIGNATURE, _STATUS
    try:
        import llama_cpp
        from llama_cpp.llama import Llama
    except ImportError:
        _STATUS = "absent (no llama_cpp)"
        return False
    version = getattr(llama_cpp, "__version__", "")
    if version not in CHECKED:
        _STATUS = f"refused (version {version or 'unknown'})"
        return False
    _STATUS = "installed"
    if getattr(Llama, "_rag_logits_patched", False):  # also when this file was imported under another name
        return True
    _ORIGINAL.update(eval=Llama.eval, create_completion=Llama.create_completion,
                     logits_to_logprobs=Llama.__dict__["logits_to_logprobs"].__func__)
    _SIGNATURE = inspect.signature(Llama.create_completion)
    Llama.eval = _eval_last_logits
    Llama.create_completion = _create_completion
    Llama.logits_to_logprobs = staticmethod(_logits_to_logprobs)
    Llama._rag_logits_patched = True
    return True


def uninstall() -> None:
    """Undo :func:`install` (tests compare the two in one process)."""
    if not _ORIGINAL:
        return
    from llama_cpp.llama import Llama

    Llama.eval = _ORIGINAL["eval"]
    Llama.create_completion = _ORIGINAL["create_completion"]
    Llama.logits_to_logprobs = staticmethod(_ORIGINAL["logits_to_logprobs"])
    Llama._rag_logits_patched = False
    _ORIGINAL.clear()
