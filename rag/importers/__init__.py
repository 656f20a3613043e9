"""Importers: other benchmarks' layouts -> a project dataset folder (rag.core.dataset layout).

``rag import NAME SRC --out data/DIR``; one module per benchmark (:mod:`rag.importers.financebench`).
"""
