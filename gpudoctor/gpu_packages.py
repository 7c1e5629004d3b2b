"""Which installed packages make an environment a GPU environment.

Used by the conda hook (is there anything GPU-related to talk about?), the report (which
packages go in the main table) and diff (a changed CUDA wheel matters more than a changed numpy).
"""

from __future__ import annotations

import re

_FRAMEWORKS = frozenset({
    "torch", "pytorch", "pytorch-cuda", "pytorch-gpu", "torchvision", "torchaudio", "tensorflow",
    "tensorflow-gpu", "tf-nightly", "tensorflow-cpu", "jax", "jaxlib", "paddlepaddle-gpu",
    "onnxruntime-gpu", "tensorrt", "triton", "xformers", "flash-attn", "bitsandbytes", "deepspeed",
    "vllm", "numba-cuda", "cuda-python", "pycuda", "cudatoolkit", "cudnn", "nccl", "cutensor",
    "nvidia-ml-py", "pynvml", "cuml", "cudf", "mxnet",
})
_PREFIXES = re.compile(
    r"^(?:nvidia-|cuda-|cupy|jax-cuda|jax_cuda|mxnet-cu|tensorrt-|"
    r"lib(?:cublas|cufft|curand|cusolver|cusparse|cudnn|nvjitlink|npp|nvjpeg|cufile|nccl|nvrtc|cutensor|cudart))",
)
# A build of a framework for the CPU is not a GPU package: pip's local version (`2.3.1+cpu`),
# conda's build string (`cpu_py311h...`).
_CPU_BUILD = re.compile(r"(?:^|[+_-])cpu(?:$|[_.-])|cpuonly")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def is_gpu_package(name: str, version: str = "", build: str = "") -> bool:
    """Is this distribution or conda package part of a GPU stack (`nvidia-cudnn-cu12`, `pytorch-cuda`)?"""
    key = normalize(name)
    if _CPU_BUILD.search(version.lower()) or _CPU_BUILD.search(build.lower()) or key == "cpuonly":
        return False
    return key in _FRAMEWORKS or bool(_PREFIXES.match(key))
