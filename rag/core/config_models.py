"""The model sections of :class:`rag.core.config.RunConfig`: ``embed`` (the embedding model of stages 04-05)
and ``llm`` (the chat model of every LLM call, with ``llm.vllm`` for its vLLM server). The stage sections are
in :mod:`rag.core.config_sections`; as there, each field's comment says its unit and why it exists.
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .config_sections import _Frozen


class EmbedConfig(_Frozen):
    # local: sentence-transformers in this process; openai: the OpenAI embeddings protocol (OpenAI itself, or
    # any /v1/embeddings server by base_url: Ollama, vLLM, llama.cpp).
    backend: Literal["local", "openai"] = "local"
    # local: a packaged model (all-MiniLM-L6-v2, rag/models/weights.py), a sentence-transformers model
    # folder by path, or (with hub = true) a model hub name; openai: the model name the server knows.
    model: str = "all-MiniLM-L6-v2"
    # local: let sentence-transformers fetch `model` from the model hub (off: never reach a hub).
    hub: bool = False
    # openai backend: an OpenAI-compatible server's URL ending in /v1 (None: api.openai.com). With a
    # base_url the API key is optional (sent when api_key_env is set). Where, not what: not in any key.
    base_url: str | None = None
    # local backend: what runs the model. "torch": sentence-transformers; "onnx": the same weights exported
    # once to ONNX (<models_dir>/onnx, rag.models.embed_onnx) and run by ONNX Runtime on CPU (same tokenizer,
    # windows, pooling; cosine >= 0.999 to torch's vectors); "onnx-int8": that graph with int8 dynamic
    # quantization. In keys when not torch: vectors of different runtimes never mix (index, cache).
    # torch stays the default: on a 2-core AVX2 EPYC the ONNX fp32 graph gives the same vectors (cosine >= 0.9999)
    # at no more chunks per CPU second than torch, and int8 is ~1.3x faster but moves vectors (cosine 0.990 min)
    # with hit@k unmeasured at the 0.01 bar (RESULTS.md, issue 29). --set embed.runtime=onnx-int8 to try it.
    runtime: Literal["torch", "onnx", "onnx-int8"] = "torch"
    # runtime torch: the weights' dtype. "auto": bfloat16 on a CPU with AMX (Intel Sapphire Rapids and later,
    # 1.7x float32's chunks/s there, vectors at cosine >= 0.9999 to float32's, hit@k measured in RESULTS.md),
    # float32 anywhere else (CUDA; CPUs without AMX, where bfloat16 is slower). Resolved per process by
    # rag.models.device.embed_precision; bfloat16 vectors are cached apart, and the resolved value is in each
    # 04 / 05 item's info. "auto" stays out of keys (as the llama.cpp build does: the machine decides; the
    # manifest names it); float32 or bfloat16 set by hand counts. In bfloat16 a chunk's vector from a padded
    # batch (04, chunk_vectors = stored) and from a call of its own (05's pools) differ at cosine ~0.9999.
    precision: Literal["auto", "float32", "bfloat16"] = "auto"
    # Local embedder's intra-op threads, torch and ONNX Runtime (0: the cores this process may use, by CPU
    # affinity). Set on every model call, so a Ray worker (OMP_NUM_THREADS=1) computes with the driver's count:
    # on AVX-512 CPUs torch's vectors differ in the last bit between 1 and 2 threads. Speed only otherwise.
    threads: int = Field(0, ge=0)
    batch_size: int = Field(64, ge=1)
    # Input limit of the embedding model in its own tokens (MiniLM: 256 wordpieces incl. [CLS]/[SEP]).
    max_input_tokens: int = Field(256, ge=1)
    # Text longer than max_input_tokens: "truncate" embeds its head only; "mean" (local backend) embeds
    # overlapping windows of max_input_tokens wordpieces (long_text_overlap shared) and averages them.
    long_text: Literal["truncate", "mean"] = "truncate"
    long_text_overlap: int = Field(32, ge=0)
    # Text put before every query / every indexed passage, for models trained with such markers (e5:
    # "query: " / "passage: "; bge English: an instruction before queries only). "auto" takes the model's
    # own from its name (rag.models.embed.default_prefixes; "" for MiniLM and unknown models).
    query_prefix: str = "auto"
    passage_prefix: str = "auto"
    # openai backend: env var holding the API key (the key itself is never stored or logged).
    api_key_env: str = "OPENAI_API_KEY"
    # Disk cache of vectors keyed by model + text under cache_dir (re-embedding unchanged text is free).
    cache: bool = True

    @model_validator(mode="after")
    def _check(self) -> "EmbedConfig":
        if self.base_url and self.backend != "openai":
            raise ValueError("embed.base_url is read by embed.backend=openai (the OpenAI embeddings protocol, "
                             "any /v1/embeddings server): set embed.backend=openai")
        if self.runtime != "torch" and self.backend != "local":
            raise ValueError(f"embed.runtime={self.runtime!r} runs a local model in ONNX Runtime: it needs "
                             f"embed.backend=local (not {self.backend!r})")
        if self.precision == "bfloat16" and (self.backend != "local" or self.runtime != "torch"):
            raise ValueError("embed.precision=bfloat16 casts the local torch model: it needs embed.backend=local "
                             f"and embed.runtime=torch (not {self.backend!r} / {self.runtime!r})")
        if self.long_text == "mean" and self.long_text_overlap >= self.max_input_tokens // 2:
            raise ValueError(f"embed.long_text_overlap={self.long_text_overlap} must be below half of "
                             f"embed.max_input_tokens={self.max_input_tokens}")
        return self


class VLLMConfig(_Frozen):
    """The vLLM server the project starts for ``llm.backend = "vllm"`` (``vllm serve llm.model ...``)."""
    # The command before "serve", split like a shell would: "vllm" (found on PATH or beside this Python) or
    # a path, relative ones from the project root. `make gpu` installs vLLM in its own venv,
    # .venv-vllm/bin/vllm (vLLM pins numpy/transformers versions the project's venv cannot share).
    # Tests point it at a stand-in server.
    command: str = "vllm"
    # Share (0..1] of the GPU's memory vLLM takes for weights + KV cache (--gpu-memory-utilization). The
    # embedder and docling share the GPU: leave them a few GB.
    gpu_memory_utilization: float = Field(0.85, gt=0, le=1)
    # Longest prompt + answer in tokens vLLM allocates KV cache for (--max-model-len; None: llm.n_ctx).
    max_model_len: int | None = Field(None, ge=512)
    # GPUs one model is split across (--tensor-parallel-size).
    tensor_parallel_size: int = Field(1, ge=1)
    # Model id the server answers to (--served-model-name; None: llm.model).
    served_model_name: str | None = None
    # More arguments for `vllm serve`, e.g. ["--dtype", "bfloat16", "--enable-prefix-caching"].
    extra_args: tuple[str, ...] = ()
    # Environment for the server process (e.g. {"VLLM_LOGGING_LEVEL": "WARNING"}).
    env: dict[str, str] = Field(default_factory=dict)


class LLMConfig(_Frozen):
    # llama_cpp / vllm: the project starts a local llama.cpp / vLLM server (llm.vllm); openai /
    # openai_compatible: a remote API or a server you run yourself (llm.base_url).
    backend: Literal["llama_cpp", "vllm", "openai", "openai_compatible"] = "llama_cpp"
    model: str = "qwen2.5-coder-1.5b"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    # llama_cpp backend: a weights entry of rag/models/weights.py, or a path to any .gguf file (absolute, or
    # relative to the working directory, models_dir or the project root); served under the file's name.
    gguf: str = "qwen2.5-coder-1.5b"
    n_ctx: int = Field(8192, ge=512)
    # Threads for generation and for prompt processing (None: = n_threads). With threads = cores, any other
    # busy process makes llama.cpp's spinning OpenMP barriers collapse (see benchmarks/models.py --contention).
    n_threads: int = Field(2, ge=1)
    n_threads_batch: int | None = Field(None, ge=1)
    # llama_cpp backend: llama.cpp's flash attention (--flash_attn). Prompt processing of the 1.5B on a 2-core
    # Xeon +5-14% on the avx512 and avx2 builds (benchmarks/llm_prefill.py), 06 of a 40-question round 624 ->
    # 586 s (RESULTS.md). Its sums run in another order, so a near-tie answer may differ from the plain
    # kernel's (1 of 40 there): part of the LLM cache key.
    flash_attn: bool = True
    # Environment for the llama.cpp server process. OpenMP's default spins at barriers: beside one busy
    # process on 2 cores generation fell 18 -> 0.4 tokens/s; PASSIVE keeps ~14 (benchmarks/models.py --contention).
    server_env: dict[str, str] = Field(default_factory=lambda: {"OMP_WAIT_POLICY": "PASSIVE"})
    # llama_cpp backend: layers offloaded to the GPU when the run's device is CUDA (-1: all; a CUDA build of
    # llama-cpp-python is needed for it to matter); always 0 on CPU.
    n_gpu_layers: int = Field(-1, ge=-1)
    # vllm backend: the managed vLLM server.
    vllm: VLLMConfig = VLLMConfig()
    # Restarts of a local server that died (segfault, OOM kill) before a call gives up with ModelUnavailable.
    server_max_restarts: int = Field(1, ge=0)
    temperature: float = Field(0.0, ge=0)
    # Reasoning models (OpenAI o1/o3/o4/gpt-5 families) take max_completion_tokens (which also pays for
    # their hidden reasoning) and refuse temperature/top_p. "auto": decided from the model name.
    reasoning: Literal["auto", "on", "off"] = "auto"
    # Sent as reasoning_effort when the model is a reasoning model (None: the server's default).
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    seed: int = 42
    max_tokens: int = Field(1024, ge=1)
    timeout_s: float = Field(600.0, gt=0)
    max_retries: int = Field(5, ge=0)
    concurrency: int = Field(1, ge=1)
    requests_per_minute: int = Field(0, ge=0)  # 0: unlimited
    tokens_per_minute: int = Field(0, ge=0)  # 0: unlimited
    # How a schema is enforced: "auto" = json_schema for openai and vllm (a vLLM that refuses a schema
    # falls back to schema-in-prompt), json_object+schema (grammar) for llama_cpp, schema-in-prompt for
    # openai_compatible; the others force one way. A reply that still does not fit gets one repair call.
    structured: Literal["auto", "json_schema", "json_object", "prompt"] = "auto"
    # Disk cache of completions keyed by (model, messages, schema, params) under cache_dir.
    cache: bool = True
    # One repair call (reparser prompt with schema + bad output) before StructuredOutputError.
    repair: bool = True
    # Retry backoff on 429/5xx/timeouts: base * 2**attempt seconds (+ jitter), capped; Retry-After wins.
    retry_base_s: float = Field(1.0, gt=0)
    retry_max_s: float = Field(60.0, gt=0)
    # llama_cpp / vllm backends: seconds to wait for the local server's /v1/models to answer after start
    # (vLLM loading a 30B model from disk and compiling takes minutes).
    server_start_timeout_s: float = Field(180.0, gt=0)
