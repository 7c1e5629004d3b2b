"""Environment variables that matter, and misspelled look-alikes of them.

Only allowlisted variables are collected (gpudoctor/privacy.py), with secret-looking content
scrubbed: never tokens, keys or passwords (DESIGN.md, Privacy).
"""

from __future__ import annotations

from typing import List, Mapping, Optional, Tuple

from ..facts.probe_status import ProbeStatus
from ..facts.system import EnvironmentFacts, MisspelledVariable
from ..privacy import ENV_ALLOWLIST, collect_allowed_env, redact_secrets
from .context import ProbeContext

# Only these names are checked for look-alikes: a misspelling of them silently changes which GPUs
# a program uses or which CUDA it loads.
WATCHED_FOR_MISSPELLING = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME", "CUDA_LAUNCH_BLOCKING",
                           "NVIDIA_VISIBLE_DEVICES", "TF_FORCE_GPU_ALLOW_GROWTH", "PYTORCH_CUDA_ALLOC_CONF")
MAX_VALUE_CHARS = 4096


def probe_environment(ctx: ProbeContext) -> Tuple[EnvironmentFacts, List[ProbeStatus]]:
    variables = {name: value[:MAX_VALUE_CHARS] for name, value in collect_allowed_env(ctx.env).items()}
    return EnvironmentFacts(variables=variables, misspelled=find_misspellings(ctx.env)), []


def find_misspellings(env: Mapping[str, str]) -> List[MisspelledVariable]:
    found = []
    for name, value in env.items():
        meant = misspelling_of(name)
        if meant is not None:
            found.append(MisspelledVariable(name=name, meant=meant, value=redact_secrets(value[:200])))
    return sorted(found, key=lambda m: m.name)


def misspelling_of(name: str) -> Optional[str]:
    """The watched variable `name` was probably meant to be, or None."""
    if name in ENV_ALLOWLIST or len(name) < 8:
        return None
    for target in WATCHED_FOR_MISSPELLING:
        if name.upper() == target:
            return target  # cuda_visible_devices: variables are case-sensitive
        if _edit_distance(name.upper(), target, limit=2) <= 2:
            return target
    return None


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Damerau-Levenshtein (adjacent swaps count once), giving up early beyond `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: List[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


