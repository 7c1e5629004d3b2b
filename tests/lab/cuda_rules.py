"""A small reference implementation of CUDA's device ordering and CUDA_VISIBLE_DEVICES rules.

It is written from the documentation, independently of the C code, so a property test can
check the C stand-in against it (tests/lab/test_lab.py). The rules and their sources are
listed at the top of tests/lab/src/fake_libcuda.c and in tests/lab/README.md:

* CUDA_DEVICE_ORDER=PCI_BUS_ID: PCI order; anything else (or unset): FASTEST_FIRST,
  emulated by ``speed_rank`` (ties keep PCI order);
* CUDA_VISIBLE_DEVICES unset: all; empty: none; comma-separated entries, each stripped of
  white space: ``GPU-<unique uuid prefix>``, ``MIG-<unique uuid prefix>``, or a strtoul-like
  index (optional '+', digits, trailing junk ignored) into the ordered list;
* the first invalid entry ends the list; a device named twice empties the list;
* a GPU in MIG mode stands for its MIG devices; only the first MIG device selected stays.
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

from tests.lab.scenario import LabGpu

Unit = Tuple[int, int]  # (physical GPU index in PCI order, MIG index or -1)


def device_order(gpus: Sequence[LabGpu], cuda_device_order: Optional[str]) -> List[int]:
    idx = list(range(len(gpus)))
    if cuda_device_order == "PCI_BUS_ID":
        return idx
    rank = [i if g.speed_rank is None else g.speed_rank for i, g in enumerate(gpus)]
    return sorted(idx, key=lambda i: rank[i])  # sorted() is stable: ties keep PCI order


def _unique_prefix(prefix: str, candidates: Sequence[Tuple[Unit, str]]) -> Optional[Unit]:
    hits = [unit for unit, uuid in candidates if uuid.startswith(prefix)]
    return hits[0] if len(hits) == 1 else None


def _strtoul_index(entry: str) -> Optional[int]:
    m = re.match(r"\+?([0-9]+)", entry)
    if not m:
        return None
    digits = m.group(1).lstrip("0") or "0"
    if len(digits) > 7:  # absurdly large: no such device
        return None
    return int(digits)


def resolve(entry: str, gpus: Sequence[LabGpu], order: Sequence[int]) -> Optional[Unit]:
    if entry.startswith("GPU-"):
        return _unique_prefix(entry, [((i, -1), g.uuid) for i, g in enumerate(gpus)])
    if entry.startswith("MIG-"):
        return _unique_prefix(entry, [((i, j), m.uuid) for i, g in enumerate(gpus)
                                      for j, m in enumerate(g.mig_devices)])
    n = _strtoul_index(entry)
    if n is None or n >= len(order):
        return None
    return (order[n], -1)


_WS = " \t\n\r\x0b\x0c"  # C isspace()


def visible_devices(gpus: Sequence[LabGpu], cuda_visible_devices: Optional[str],
                    cuda_device_order: Optional[str] = None) -> List[Unit]:
    """The CUDA devices, in CUDA's order, as (physical index, MIG index or -1)."""
    order = device_order(gpus, cuda_device_order)
    if cuda_visible_devices is None:
        selected = [(i, -1) for i in order]
    else:
        selected = []
        for entry in cuda_visible_devices.split(","):
            unit = resolve(entry.strip(_WS), gpus, order)
            if unit is None:
                break
            if unit in selected:
                selected = []
                break
            selected.append(unit)
    out: List[Unit] = []
    have_mig = False
    for gpu, mig in selected:
        if mig < 0 and gpus[gpu].mig_mode:
            if not gpus[gpu].mig_devices:
                continue
            mig = 0
        if mig >= 0:
            if have_mig:
                continue
            have_mig = True
        out.append((gpu, mig))
    return out
