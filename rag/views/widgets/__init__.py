"""Notebook widgets (ipywidgets), imported only when a notebook runs with ``interactive=True``.

Each module's contract is in its docstring; they read artifacts through the owner readers of the stages,
like the rest of :mod:`rag.views`.
"""
