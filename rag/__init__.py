"""enterprise-rag: a notebook-driven RAG workbench for typed questions about annual reports.

Stages (one package each, ``rag.<stage>.run_<stage>`` in its ``__init__``, its parts beside it; shared
pieces and the stage contract in ``rag.core``; see README): parse -> clean -> chunk -> index -> retrieve ->
answer -> evaluate, plus labels. Page convention: ``page`` is 1-based inside ``rag``; only the ERC export and
the gold loader use 0-based ``page_index``.
"""
__version__ = "0.1.0"
