"""Errors the core layer acts on without knowing who raises them (the layers point down: tests/test_layers.py).

- :class:`StageCannotRun`: the whole stage cannot run (a model that cannot be used here, ...). The item loop
  (:func:`rag.core.loop.run_items`) re-raises it at once instead of recording one item's failure; the
  model layer's ``ModelUnavailable`` is one.
- :class:`SetupError` + :func:`setup_message`: the run cannot start as configured (rag.preflight before any
  stage; run_parse when docling's full pipeline was asked for and cannot run), one line with the fix.
"""
from __future__ import annotations


class StageCannotRun(RuntimeError):
    """Raised inside an item's work: stop the stage, the message says what to do."""


class SetupError(RuntimeError):
    """The run cannot start as configured; the message says what is missing and how to get it."""


SETUP_FIX = ("Fix: on the CUDA machine run `make gpu` (CUDA torch + torchvision, vLLM, docling's weights in "
             "data/models/docling), or run without the GPU parts: --set parse.pipeline=native --set device=cpu")


def setup_message(found, preset: str) -> str:
    """One line: every problem ``found``, then the fix."""
    return f"setup check failed (preset {preset}): " + "; ".join(found) + ". " + SETUP_FIX
