"""Framework facts (PyTorch, TensorFlow, JAX, CuPy) and installed packages.

Owned by the framework probes (gpudoctor/probes/frameworks/).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class FrameworksFacts:
    packages: Dict[str, str] = field(default_factory=dict)  # distribution name -> version
    frameworks: Dict[str, Any] = field(default_factory=dict)  # torch/tensorflow/jax/cupy -> facts
