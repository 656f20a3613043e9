"""The model sections of :class:`rag.core.config.RunConfig`: ``embed`` (the embedding model of stages 04-05)
and ``llm`` (the chat model of every LLM call, with ``llm.vllm`` for its vLLM server). The stage sections are
in :mod:`rag.core.config_sections`; as there, each field's ``description`` says its unit and what it changes,
``internal(...)`` marks the named constants nothing varies, and the measurements behind the defaults are in
RESULTS.md, "Config defaults and the measurements behind them".
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .config_base import internal
from .config_sections import _Frozen


class EmbedConfig(_Frozen):
    # openai: OpenAI itself, or any /v1/embeddings server by base_url (Ollama, vLLM, llama.cpp).
    backend: Literal["local", "openai"] = Field(
        "local", description="Embedder: sentence-transformers in this process, or the OpenAI embeddings protocol.")
    # local: a packaged model (rag/models/weights.py), a sentence-transformers folder by path, or (hub = true) a
    # model hub name; openai: the model name the server knows.
    model: str = Field("all-MiniLM-L6-v2", description="The embedding model.")
    hub: bool = Field(False, description="local: let sentence-transformers fetch model from the model hub.")
    # With a base_url the API key is optional (sent when api_key_env is set). Where, not what: not in any key.
    base_url: str | None = Field(
        None, description="openai backend: an OpenAI-compatible server's URL ending in /v1 (None: api.openai.com).")
    # "onnx": the same weights exported once to ONNX (<models_dir>/onnx, rag.models.embed_onnx) and run by ONNX
    # Runtime on CPU (same tokenizer, windows, pooling); "onnx-int8": that graph with int8 dynamic quantization.
    # In keys when not torch: vectors of different runtimes never mix (index, cache). --set embed.runtime=onnx-int8
    # to try it.
    runtime: Literal["torch", "onnx", "onnx-int8"] = Field(
        "torch", description="local backend: what runs the model, torch or ONNX Runtime (measured: RESULTS.md).")
    # "auto": bfloat16 on a CPU with AMX (Intel Sapphire Rapids and later), float32 anywhere else. Resolved per
    # process by rag.models.device.embed_precision; bfloat16 vectors are cached apart, and the resolved value is
    # in each 04 / 05 item's info. "auto" stays out of keys (the machine decides; the manifest names it); float32
    # or bfloat16 set by hand counts. In bfloat16 a chunk's vector from a padded batch (04, chunk_vectors =
    # stored) and from a call of its own (05's pools) differ at cosine ~0.9999.
    precision: Literal["auto", "float32", "bfloat16"] = Field(
        "auto", description="runtime torch: the weights' dtype (measured: RESULTS.md).")
    # Set on every model call, so a Ray worker (OMP_NUM_THREADS=1) computes with the driver's count: on AVX-512
    # CPUs torch's vectors differ in the last bit between 1 and 2 threads. Speed only otherwise.
    threads: int = Field(
        0, ge=0, description="Local embedder's intra-op threads (0: the cores this process may use).")
    batch_size: int = Field(64, ge=1, description="Texts per embedding call.")
    max_input_tokens: int = Field(
        256, ge=1, description="Input limit of the embedding model in its own tokens (MiniLM: 256 wordpieces).")
    # "mean" embeds overlapping windows of max_input_tokens wordpieces (long_text_overlap shared), averaged.
    long_text: Literal["truncate", "mean"] = Field(
        "truncate", description="Text over max_input_tokens: embed its head only, or the mean of its windows "
                                "(local backend; measured: RESULTS.md).")
    long_text_overlap: int = Field(32, ge=0, description="Wordpieces shared by two windows of long_text mean.")
    # e5: "query: " / "passage: "; bge English: an instruction before queries only. "auto": the model's own from
    # its name (rag.models.embed.default_prefixes; "" for MiniLM and unknown models).
    query_prefix: str = Field("auto", description="Text put before every query (\"auto\": the model's own).")
    passage_prefix: str = Field(
        "auto", description="Text put before every indexed passage (\"auto\": the model's own).")
    api_key_env: str = Field(
        "OPENAI_API_KEY", description="openai backend: env var holding the API key (never stored or logged).")
    cache: bool = Field(
        True, description="Disk cache of vectors keyed by model + text under cache_dir.")

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
    # "vllm" is found on PATH or beside this Python; relative paths from the project root. `make gpu` installs
    # vLLM in its own venv, .venv-vllm/bin/vllm (vLLM pins numpy/transformers versions the project's venv cannot
    # share). Tests point it at a stand-in server.
    command: str = Field("vllm", description="The command before \"serve\", split like a shell would.")
    # The embedder and docling share the GPU: leave them a few GB.
    gpu_memory_utilization: float = Field(
        0.85, gt=0, le=1, description="Share (0..1] of the GPU's memory vLLM takes for weights + KV cache.")
    max_model_len: int | None = Field(
        None, ge=512, description="Longest prompt + answer in tokens vLLM allocates KV cache for (None: llm.n_ctx).")
    tensor_parallel_size: int = Field(1, ge=1, description="GPUs one model is split across.")
    served_model_name: str | None = Field(None, description="Model id the server answers to (None: llm.model).")
    extra_args: tuple[str, ...] = Field(
        (), description="More arguments for `vllm serve`, e.g. [\"--enable-prefix-caching\"].")
    env: dict[str, str] = internal(
        default_factory=dict, description="Environment for the vLLM server process (e.g. VLLM_LOGGING_LEVEL).")


class LLMConfig(_Frozen):
    # openai / openai_compatible: a remote API or a server you run yourself (llm.base_url).
    backend: Literal["llama_cpp", "vllm", "openai", "openai_compatible"] = Field(
        "llama_cpp", description="Chat model: a local llama.cpp / vLLM server the project starts, or an OpenAI "
                                 "(-compatible) API.")
    model: str = Field("qwen2.5-coder-1.5b", description="The chat model's name.")
    base_url: str | None = Field(None, description="openai_compatible backend: the server's URL ending in /v1.")
    api_key_env: str = Field("OPENAI_API_KEY", description="Env var holding the API key (never stored or logged).")
    # Absolute, or relative to the working directory, models_dir or the project root; served under its name.
    gguf: str = Field(
        "qwen2.5-coder-1.5b", description="llama_cpp backend: a weights entry of rag/models/weights.py, or a "
                                          "path to a .gguf file.")
    n_ctx: int = Field(8192, ge=512, description="Context window of the model, in tokens.")
    n_threads: int = Field(2, ge=1, description="llama.cpp threads for generation (measured: RESULTS.md).")
    n_threads_batch: int | None = Field(
        None, ge=1, description="llama.cpp threads for prompt processing (None: n_threads).")
    # Its sums run in another order, so a near-tie answer may differ from the plain kernel's: part of the LLM
    # cache key.
    flash_attn: bool = Field(
        True, description="llama_cpp backend: llama.cpp's flash attention (measured: RESULTS.md).")
    server_env: dict[str, str] = Field(
        default_factory=lambda: {"OMP_WAIT_POLICY": "PASSIVE"},
        description="Environment for the llama.cpp server process (measured: RESULTS.md).")
    # A CUDA build of llama-cpp-python is needed for it to matter.
    n_gpu_layers: int = Field(
        -1, ge=-1, description="llama_cpp: layers offloaded to the GPU when the device is CUDA (-1: all; 0 on CPU).")
    vllm: VLLMConfig = VLLMConfig()  # vllm backend: the managed vLLM server
    server_max_restarts: int = internal(
        1, ge=0, description="Restarts of a local server that died before a call gives up with ModelUnavailable.")
    temperature: float = Field(0.0, ge=0, description="Sampling temperature.")
    # They also pay for their hidden reasoning with max_completion_tokens and refuse temperature/top_p.
    reasoning: Literal["auto", "on", "off"] = Field(
        "auto", description="Reasoning model (OpenAI o1/o3/o4/gpt-5 families)? \"auto\": decided from the name.")
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        None, description="Sent as reasoning_effort to a reasoning model (None: the server's default).")
    seed: int = Field(42, description="Sampling seed sent with every call.")
    max_tokens: int = Field(1024, ge=1, description="Completion-token cap of one call.")
    timeout_s: float = Field(600.0, gt=0, description="Seconds one call may take.")
    max_retries: int = Field(5, ge=0, description="Retries of a call on 429/5xx/timeouts.")
    concurrency: int = Field(1, ge=1, description="Calls (questions) in flight at once.")
    requests_per_minute: int = Field(0, ge=0, description="Request rate limit (0: unlimited).")
    tokens_per_minute: int = Field(0, ge=0, description="Token rate limit (0: unlimited).")
    # "auto" = json_schema for openai and vllm (a vLLM that refuses a schema falls back to schema-in-prompt),
    # json_object+schema (grammar) for llama_cpp, schema-in-prompt for openai_compatible; the others force one
    # way. A reply that still does not fit gets one repair call.
    structured: Literal["auto", "json_schema", "json_object", "prompt"] = Field(
        "auto", description="How a schema is enforced.")
    cache: bool = Field(
        True, description="Disk cache of completions keyed by (model, messages, schema, params) under cache_dir.")
    repair: bool = internal(
        True, description="One repair call (reparser prompt with schema + bad output) before StructuredOutputError.")
    # Retry-After wins.
    retry_base_s: float = Field(
        1.0, gt=0, description="Retry backoff base: base * 2**attempt seconds (+ jitter).")
    retry_max_s: float = Field(60.0, gt=0, description="Retry backoff cap in seconds.")
    # vLLM loading a 30B model from disk and compiling takes minutes.
    server_start_timeout_s: float = Field(
        180.0, gt=0, description="llama_cpp / vllm: seconds to wait for the local server to answer after start.")
