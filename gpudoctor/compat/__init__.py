"""Typed access to the compat/ knowledge tables and the pure questions the rules ask of them.

    from gpudoctor.compat import min_driver_for_cuda, torch_release, gpu_by_name
    min_driver_for_cuda("12.4").minor_version_compat_driver   # "525.60.13"

The data files and their fields are documented in the repository's compat/README.md.
"""

from __future__ import annotations

from .loader import Tables, data_dir, load_tables, tables
from .model import (
    ArchSeries, Architecture, CompatDataError, CudnnPackage, DriverRequirement, ExtraRow, Gpu, GpuInfo,
    MinorVersionCompat, TfAndCuda, TfTested, ToolkitDriver, TorchRelease, TorchVariant,
)
from . import versions
from .coverage import coverage_of, newer_than_tables, newest_covered
from .model import Coverage, JaxRelease
from .queries import (
    BuildArchs, NewestBuilds, TfBuild, TfRelease, TorchBuild, arch_entries_run_on, architecture_of, cuda_build_archs,
    cuda_versions, cudnn_cuda_support, driver_supports_cuda, gpu_by_name, min_driver_for_cuda,
    newest_builds_for_driver, newest_cuda_for_driver, newest_cuda_for_driver_full, newest_tensorflow_for,
    newest_torch_for, pip_command, tensorflow_has_and_cuda, tensorflow_release, tensorflow_series, toolkit_releases, torch_release,
    variant_runs_on,
)
from .queries import (GpuCeiling, arch_deprecated_in, cuda_runs_on_gpu, driver_branch_fits, gpu_ceiling, gpu_generation,
                      needs_known_arch, newest_torch_with_kernels)
from .loader import gpu_generations

__all__ = [name for name in dir() if not name.startswith("_")]
