"""The bottom layer every stage shares (imports nothing above it: tests/test_layers.py): the stage registry
(:mod:`rag.core.stages`) and what items depend on (:mod:`rag.core.deps`), config (:mod:`rag.core.config`:
config_sections, config_models), datasets and hand labels (:mod:`rag.core.dataset`: subset, :mod:`rag.core.labels`), stage records
(:mod:`rag.core.records`), the stage folder (:mod:`rag.core.stage`, :mod:`rag.core.artifacts`), the item loop
(:mod:`rag.core.loop`: items, executors, progress), usage records (:mod:`rag.core.usage`), question text
helpers (:mod:`rag.core.questions`) and PDF page text (:mod:`rag.core.pdf`)."""
