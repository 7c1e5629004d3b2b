"""`gpudoctor gpus` on a terminal: the GPU table, then who holds each GPU (nvidia-smi's layout),
both readable at 80 columns unless --wide."""

from __future__ import annotations

from typing import List, Optional

from rich.table import Table
from rich.text import Text

from ..facts import Facts
from ..units import mib
from .holders import NOT_VISIBLE, command_of, shorten

UUID_WIDTH = 13  # "GPU-3a1b5c2d…": still a prefix CUDA_VISIBLE_DEVICES accepts
COMMAND_WIDTH = 40


def gpus_table(facts: Facts, wide: bool = False) -> Table:
    logical = {m.physical_index: m.logical for m in facts.visible_devices.mapping}
    restricted = facts.visible_devices.cuda_visible_devices is not None
    table = _table("CUDA", "GPU", "Bus id", "UUID", "Memory MiB", "Util", "Name")
    for gpu in facts.gpus:
        memory = f"{_mib_number(gpu.memory_used)}/{_mib_number(gpu.memory_total)}" if gpu.memory_total else "?"
        util = f"{gpu.utilization_gpu}%" if gpu.utilization_gpu is not None else "?"
        uuid = gpu.uuid or "?"
        table.add_row(logical.get(gpu.index, "hidden" if restricted else "?"), str(gpu.index), gpu.pci_bus_id or "?",
                      uuid if wide else shorten(uuid, UUID_WIDTH), memory, util, _short_name(gpu.name, wide))
    return table


def processes_table(facts: Facts, wide: bool = False) -> Optional[Table]:
    logical = {m.physical_index: m.logical for m in facts.visible_devices.mapping}
    rows: List[List[str]] = []
    for gpu in facts.gpus:
        for p in gpu.processes:
            command = command_of(p)
            rows.append([str(gpu.index), logical.get(gpu.index, ""), str(p.pid), p.user or "",
                         mib(p.used_memory) if p.used_memory else "", command if wide else shorten(command, COMMAND_WIDTH)])
    if not rows:
        return None
    table = _table("GPU", "CUDA", "PID", "User", "Memory", "Command")
    for row in rows:
        table.add_row(*row)
    return table


def notes(facts: Facts, wide: bool) -> List[Text]:
    out = []
    if not facts.visible_devices.mapping and facts.gpus:
        out.append(Text("CUDA ? : CUDA's own numbering is not known without asking it (mixed models, "
                        "FASTEST_FIRST); `--pick` sets CUDA_DEVICE_ORDER=PCI_BUS_ID so GPU = nvidia-smi's index.",
                        style="dim"))
    if any(p.visible is False for g in facts.gpus for p in g.processes):
        out.append(Text(f"{NOT_VISIBLE}: a process of another PID namespace (a container, or the host seen "
                        "from one), or one that has just ended.", style="dim"))
    if not wide:
        out.append(Text("UUIDs and commands shortened: --wide or --json shows them whole.", style="dim"))
    return out


def _mib_number(value: Optional[int]) -> str:
    return mib(value).replace(" MiB", "")


def _short_name(name: Optional[str], wide: bool) -> str:
    """Every name starts with the vendor; at 80 columns the model is what tells GPUs apart."""
    if not name:
        return "?"
    return name if wide or not name.startswith("NVIDIA ") else name[len("NVIDIA "):]


def _table(*columns: str) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, padding=(0, 1, 0, 0))
    for col in columns:
        table.add_column(col, overflow="fold", no_wrap=col not in ("Name", "Command"))
    return table
