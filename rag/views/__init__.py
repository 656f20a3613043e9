"""What the notebooks show (issue 47): each stage's report tables and figures, and the widgets.

Contract:
- ``rag.views.<stage>`` (parse, clean, chunk, index, retrieve, answer, evaluate): the tables and figures of
  that stage's notebook, read from a run's artifacts through the owner readers (``rag.<stage>``'s
  ``load_*`` functions) only; they never run a stage.
- ``rag.views.common``: what every notebook's first cells share (display options, the manifest row, one-line
  text cuts).
- ``rag.views.widgets``: ipywidgets viewers, imported only with ``interactive=True``.
- Layers (tests/test_layers.py): views sit on top of every stage and below the pipeline and the CLIs; no
  stage imports a view, so a stage package holds computation only.
"""
