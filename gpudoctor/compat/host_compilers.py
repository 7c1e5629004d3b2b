"""Which host C++ compilers each CUDA release's nvcc accepts (compat/host_compilers.toml)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Optional, Tuple

from packaging.version import InvalidVersion, Version

from .loader import CompatDataError, data_dir, read_toml


@dataclass(frozen=True)
class CompilerBounds:
    compiler: str  # gcc | clang
    cuda: str  # "12.4"
    minimum: str  # the oldest accepted version
    max_excl: str  # the first refused version
    source: str

    def accepts(self, version: str) -> Optional[bool]:
        try:
            v = Version(version)
            return Version(self.minimum) <= v < Version(self.max_excl)
        except InvalidVersion:
            return None

    @property
    def newest_major(self) -> int:
        """The newest accepted major version (gcc-N to install)."""
        return int(self.max_excl.split(".")[0]) - 1


@lru_cache(maxsize=1)
def _table() -> Dict[Tuple[str, str], CompilerBounds]:
    doc = read_toml(data_dir() / "host_compilers.toml")
    rows: Dict[Tuple[str, str], CompilerBounds] = {}
    for compiler in doc.get("compiler", []):
        if not compiler.get("source"):
            raise CompatDataError(f"host_compilers.toml: {compiler.get('name')} has no source")
        for cuda, minimum, max_excl in compiler["bounds"]:
            rows[(compiler["name"], cuda)] = CompilerBounds(compiler["name"], cuda, minimum, max_excl,
                                                            compiler["source"])
    return rows


def host_compiler_bounds(compiler: str, cuda: str) -> Optional[CompilerBounds]:
    """The bounds for `compiler` (gcc | clang) under nvcc `cuda` ("12.4"), or None when unknown."""
    return _table().get((compiler, ".".join(cuda.split(".")[:2])))
