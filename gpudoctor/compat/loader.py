"""Find and read the compat tables; build typed, validated rows.

Where the data lives: an installed wheel carries it as the package `gpudoctor/compat_data`
(pyproject force-includes the repository's top-level `compat/`); an editable or source checkout
reads the repository's `compat/` folder directly. `GPUDOCTOR_COMPAT_DIR` overrides both (tests).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - exercised on 3.9/3.10
    import tomli as _toml

from .model import (
    ArchSeries, Architecture, CompatDataError, Coverage, CudnnPackage, ExtraRow, Gpu, JaxRelease, MinorVersionCompat,
    TfAndCuda, TfTested, ToolkitDriver, TorchRelease, TorchVariant, _TorchReleaseRow,
)

TABLE_FILES = ("tensorflow", "pytorch", "cuda_drivers", "cudnn", "gpus", "cuda_archs", "jax", "cupy")


def data_dir() -> Path:
    """The folder holding the *.toml tables."""
    env = os.environ.get("GPUDOCTOR_COMPAT_DIR")
    if env:
        return Path(env)
    pkg_root = Path(__file__).resolve().parent.parent  # .../gpudoctor
    installed = pkg_root / "compat_data"
    if installed.is_dir():
        return installed
    repo = pkg_root.parent / "compat"
    if repo.is_dir():
        return repo
    raise CompatDataError(f"compat tables not found (looked in {installed} and {repo})")


@dataclass(frozen=True)
class Tables:
    """Every compat table, typed. Built once per process by load_tables()."""

    tf_tested: Tuple[TfTested, ...]
    tf_and_cuda: Tuple[TfAndCuda, ...]
    torch: Tuple[TorchRelease, ...]
    toolkit_drivers: Tuple[ToolkitDriver, ...]
    minor_version_compat: Tuple[MinorVersionCompat, ...]
    mvc_limits: Tuple[str, ...]
    mvc_limits_source: str
    cudnn: Tuple[CudnnPackage, ...]
    gpus: Tuple[Gpu, ...]
    architectures: Tuple[Architecture, ...]
    arch_series: Tuple[ArchSeries, ...]
    jax: Tuple[ExtraRow, ...]
    cupy: Tuple[ExtraRow, ...]
    coverage: Tuple[Coverage, ...] = ()
    jax_releases: Tuple[JaxRelease, ...] = ()


def read_toml(path: Path) -> Dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return _toml.load(fh)
    except FileNotFoundError:
        raise CompatDataError(f"compat table missing: {path}") from None
    except _toml.TOMLDecodeError as exc:
        raise CompatDataError(f"compat table {path.name}: not valid TOML: {exc}") from None


def _rows(doc: Dict[str, Any], key: str, cls, table: str, required: bool = True) -> Tuple[Any, ...]:
    raw = doc.get(key)
    if raw is None:
        if required:
            raise CompatDataError(f"compat table {table!r}: no [[{key}]] rows")
        return ()
    if not isinstance(raw, list):
        raise CompatDataError(f"compat table {table!r}: {key!r} must be an array of tables")
    return tuple(cls.from_row(r, f"compat table {table!r}, [[{key}]] #{i + 1}") for i, r in enumerate(raw))


def _check_schema(doc: Dict[str, Any], table: str) -> None:
    if doc.get("schema") != 1:
        raise CompatDataError(f"compat table {table!r}: expected 'schema = 1', got {doc.get('schema')!r}")


def _torch_releases(doc: Dict[str, Any]) -> Tuple[TorchRelease, ...]:
    out: List[TorchRelease] = []
    for i, raw in enumerate(doc.get("release") or []):
        where = f"compat table 'pytorch', [[release]] #{i + 1}"
        if not isinstance(raw, dict):
            raise CompatDataError(f"{where}: expected a table")
        body = {k: v for k, v in raw.items() if k != "variant"}
        row = _TorchReleaseRow.from_row(body, where)
        variants = tuple(
            TorchVariant.from_row(v, f"{where} ({row.version}), [[release.variant]] #{j + 1}")
            for j, v in enumerate(raw.get("variant") or [])
        )
        if row.default_variant and row.default_variant not in {v.name for v in variants}:
            raise CompatDataError(f"{where} ({row.version}): default_variant {row.default_variant!r} is not one of its variants")
        out.append(TorchRelease(row.version, row.python, row.default_variant, variants, row.source, row.note))
    if not out:
        raise CompatDataError("compat table 'pytorch': no [[release]] rows")
    return tuple(out)


def load_tables(directory: Optional[Path] = None) -> Tables:
    """Read and validate every table in `directory` (default: data_dir())."""
    d = Path(directory) if directory else data_dir()
    docs = {}
    for name in TABLE_FILES:
        doc = read_toml(d / f"{name}.toml")
        _check_schema(doc, name)
        docs[name] = doc
    lim = docs["cuda_drivers"].get("mvc_limits") or {}
    if not lim.get("source"):
        raise CompatDataError("compat table 'cuda_drivers': [mvc_limits] needs a 'source'")
    return Tables(
        tf_tested=_rows(docs["tensorflow"], "tested", TfTested, "tensorflow"),
        tf_and_cuda=_rows(docs["tensorflow"], "and_cuda", TfAndCuda, "tensorflow"),
        torch=_torch_releases(docs["pytorch"]),
        toolkit_drivers=_rows(docs["cuda_drivers"], "toolkit", ToolkitDriver, "cuda_drivers"),
        minor_version_compat=_rows(docs["cuda_drivers"], "minor_version_compat", MinorVersionCompat, "cuda_drivers"),
        mvc_limits=tuple(lim.get("items") or ()),
        mvc_limits_source=str(lim.get("source")),
        cudnn=_rows(docs["cudnn"], "package", CudnnPackage, "cudnn"),
        gpus=_rows(docs["gpus"], "gpu", Gpu, "gpus"),
        architectures=_rows(docs["gpus"], "architecture", Architecture, "gpus"),
        arch_series=_rows(docs["cuda_archs"], "series", ArchSeries, "cuda_archs"),
        jax=_rows(docs["jax"], "row", ExtraRow, "jax", required=False),
        cupy=_rows(docs["cupy"], "row", ExtraRow, "cupy", required=False),
        coverage=tuple(c for name, doc in docs.items() for c in _coverage(doc, name)),
        jax_releases=_rows(docs["jax"], "release", JaxRelease, "jax", required=False),
    )


def _coverage(doc: Dict[str, Any], table: str) -> Tuple[Coverage, ...]:
    """The table's [[coverage]] rows, each told which file it came from."""
    rows = _rows(doc, "coverage", Coverage, table, required=False)
    return tuple(Coverage(**{**{f: getattr(r, f) for f in ("subject", "newest", "read", "source", "note")},
                             "table": f"{table}.toml"}) for r in rows)


@lru_cache(maxsize=1)
def tables() -> Tables:
    """The process-wide tables (read once)."""
    return load_tables()


# -- GPU generations (compat/gpu_generations.toml): read on their own, cached like tables() --------
@lru_cache(maxsize=1)
def gpu_generations(directory: Optional[Path] = None) -> Tuple["GpuGeneration", ...]:
    from .model import GpuGeneration

    d = Path(directory) if directory else data_dir()
    doc = read_toml(d / "gpu_generations.toml")
    _check_schema(doc, "gpu_generations")
    return _rows(doc, "generation", GpuGeneration, "gpu_generations")
