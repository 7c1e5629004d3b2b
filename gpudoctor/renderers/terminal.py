"""The terminal report: verdict, layers, the GPU table, then findings root cause first."""

from __future__ import annotations

from typing import Dict, List, Optional

from rich.console import Console
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment, Segments
from rich.table import Table
from rich.text import Text

from ..causes import tally_text
from ..facts import Facts
from ..gpus.holders import holder_text
from ..model import Finding, Layer, Severity
from ..rules.platform_limits import OS_NAMES, not_examined
from ..rules.situation import cuda_version_text, mib
from .fix_steps import split_step
from .paths import shorten_path

VERDICT_STYLE = {"ok": ("bold green", "✔ OK"), "warning": ("bold yellow", "⚠ WARNING"), "error": ("bold red", "✖ ERROR")}
SEVERITY_STYLE = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
# Layers shown in the layer table (logs-only findings never come from check).
CHECK_LAYERS = [layer for layer in Layer if layer is not Layer.LOGS]
GPU_ONLY_LAYERS = {Layer.KERNEL_DRIVER, Layer.USERSPACE_DRIVER, Layer.VISIBILITY, Layer.RUNTIME_TEST}


def verdict_summary(verdict: str, findings: List[Finding]) -> str:
    roots = [f for f in findings if f.severity != Severity.INFO and f.caused_by is None]
    if verdict == "ok":
        return "nothing stands between your frameworks and the GPU" if not findings or \
            all(f.code != "no-nvidia-gpu" for f in findings) else "no NVIDIA GPU here; nothing is broken"
    return tally_text(findings) + (f"; root cause: {roots[0].title}" if roots else "")


def verdict_line(verdict: str, findings: List[Finding]) -> Text:
    style, label = VERDICT_STYLE[verdict]
    return Text.assemble((label, style), "  ", verdict_summary(verdict, findings))


def layer_statuses(findings: List[Finding]) -> Dict[Layer, str]:
    """Each layer's worst severity ("error", "warning"), "ok", or "—" for a driver layer with no GPU."""
    no_gpu = any(f.code == "no-nvidia-gpu" for f in findings)
    # layers this OS does not let gpudoctor read (platform-limited) are not healthy, just unseen
    unseen = {v for f in findings if f.code == "platform-limited" for v in f.evidence.get("not_examined", [])}
    out: Dict[Layer, str] = {}
    for layer in CHECK_LAYERS:
        if layer.value in unseen:
            out[layer] = "—"
            continue
        in_layer = [f for f in findings if f.layer == layer]
        worst = min((f.severity for f in in_layer), key=lambda s: s.rank, default=None)
        if worst in (None, Severity.INFO):
            # With no GPU, the driver layers have nothing to be healthy about: say so, not "ok".
            out[layer] = "—" if no_gpu and layer in GPU_ONLY_LAYERS else "ok"
        else:
            out[layer] = worst.value
    return out


def layer_table(facts: Facts, findings: List[Finding], facts_summary: Dict[Layer, str]) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("Layer")
    table.add_column("Status")
    table.add_column("What gpudoctor saw", overflow="fold")
    styles = {"ok": "green", "—": "dim", **{s.value: style for s, style in SEVERITY_STYLE.items()}}
    for layer, status in layer_statuses(findings).items():
        table.add_row(layer.label, Text(status, styles[status]), facts_summary.get(layer, ""))
    return table


def summarize_layers(facts: Facts) -> Dict[Layer, str]:
    d = facts.driver
    out: Dict[Layer, str] = {}
    out[Layer.HARDWARE] = (f"{len(d.pci_devices)} NVIDIA GPU(s) on the PCI bus" if d.pci_devices
                           else "WSL2 GPU" if facts.system.wsl and d.kernel.wsl_dxg_present else "no NVIDIA GPU")
    out[Layer.KERNEL_DRIVER] = (f"nvidia {d.kernel.version}" + ("" if d.kernel.modules.get("nvidia_uvm") else ", no nvidia_uvm")
                                if d.kernel.version else "nvidia module not loaded")
    libcuda = (f"libcuda CUDA {cuda_version_text(d.libcuda.driver_version)}" if d.libcuda.driver_version
               else "libcuda not found" if not d.libcuda.loaded else "libcuda loaded")
    if d.libcuda.init_result not in (None, 0):
        libcuda += f", cuInit {d.libcuda.init_result} ({d.libcuda.init_error_name})"
    nvml = f"NVML {d.nvml.driver_version}" if d.nvml.initialized else f"NVML: {d.nvml.error}"
    out[Layer.USERSPACE_DRIVER] = f"{libcuda}; {nvml}"
    vis = facts.visible_devices
    if vis.cuda_visible_devices is None:
        out[Layer.VISIBILITY] = f"all {len(facts.gpus)} GPU(s) visible" if facts.gpus else "no GPU to see"
    else:
        out[Layer.VISIBILITY] = f"CUDA_VISIBLE_DEVICES={vis.cuda_visible_devices!r}: {len(vis.mapping)} visible"
    libs = [lib for lib in facts.libraries.libraries if lib.copies]
    out[Layer.CUDA_LIBRARIES] = ", ".join(
        f"{lib.name} {'/'.join(sorted({c.version or c.version_from_name or '?' for c in lib.copies}))}" for lib in libs
    ) if libs else "no CUDA libraries found"
    cuda = cuda_version_text(d.libcuda.driver_version or d.nvml.cuda_driver_version)
    out[Layer.COMPATIBILITY] = f"driver supports CUDA {cuda}" if cuda else ""
    frameworks = facts.frameworks.frameworks
    out[Layer.FRAMEWORK] = ", ".join(f"{fw.display_name} {fw.static.version}" for fw in frameworks.values()
                                     if fw.static.installed) or "no deep-learning framework installed"
    rt = facts.runtime_test
    if rt.ran:
        passed = sum(1 for r in rt.devices if r.ok)
        out[Layer.RUNTIME_TEST] = f"vector add passed on {passed} of {len(rt.devices)} GPU(s)"
    elif not d.libcuda.loaded:
        out[Layer.RUNTIME_TEST] = "skipped: no NVIDIA driver library (libcuda.so.1) to run it with"
    else:
        out[Layer.RUNTIME_TEST] = f"skipped: {rt.skipped_reason}" if rt.skipped_reason else "skipped"
    for layer in not_examined(facts):
        out[layer] = f"not examined on {OS_NAMES[facts.system.os]}"
    return out


COMMAND_WIDTH = 24  # a process's command line in the GPU table, unless wide: 80 columns stay readable


def gpu_table(facts: Facts, wide: bool = False) -> Optional[Table]:
    """cuda:N <-> nvidia-smi index <-> bus id, memory, and who holds each GPU (a line per process:
    pid, user, memory, command line); `wide` keeps command lines whole."""
    if not facts.gpus:
        return None
    logical = {m.physical_index: m.logical for m in facts.visible_devices.mapping}
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, title_justify="left")
    for col in ("CUDA", "GPU", "Name", "CC", "Bus id", "Memory used / total", "Processes"):
        table.add_column(col, overflow="fold", no_wrap=col in ("CUDA", "GPU", "CC", "Bus id"))
    restricted = facts.visible_devices.cuda_visible_devices is not None or facts.visible_devices.mapping
    width = None if wide else COMMAND_WIDTH
    for gpu in facts.gpus:
        cuda = logical.get(gpu.index, "hidden" if restricted else "?")
        procs = "\n".join(holder_text(p, width) for p in gpu.processes)
        memory = f"{mib(gpu.memory_used).replace(' MiB', '')} / {mib(gpu.memory_total)}" if gpu.memory_total else ""
        name = gpu.name or "?"
        if not wide and name.startswith("NVIDIA "):  # every row says it; 80 columns need the room
            name = name[len("NVIDIA "):]
        table.add_row(cuda, str(gpu.index), name, gpu.compute_capability or "", gpu.pci_bus_id or "",
                      memory, procs)
    return table


def libraries_table(facts: Facts, verbose: bool, wide: bool = False) -> Optional[Table]:
    """One row per CUDA library copy: what dlopen loads first, other copies only with -v.
    Paths are shortened (`~`, `…/site-packages`) unless wide."""
    path = (lambda p: p) if wide else shorten_path  # the home of whoever reads the screen
    rows = []
    for lib in facts.libraries.libraries:
        resolved = {r.real_path for r in lib.loader_resolution if r.real_path}
        for copy in lib.copies:
            loaded = copy.real_path in resolved
            if verbose or loaded or not resolved:
                rows.append((copy.soname or lib.name, copy.version or copy.version_from_name or "?",
                             "yes" if loaded else "", path(copy.real_path), ", ".join(copy.found_via)))
    for tool in facts.libraries.tools:
        if tool.path:
            rows.append((tool.name, tool.version or "?", "", path(tool.path), tool.found_via or ""))
    if not rows:
        return None
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in ("Library", "Version", "Loaded", "Real path", "Found via"):
        # --wide: nothing folded; the terminal wraps what is too long for it. Narrow: the path
        # gets the room, "Found via" folds first.
        table.add_column(col, overflow="ignore" if wide else "fold", no_wrap=wide,
                         max_width=15 if col == "Found via" and not wide else None)
    for row in rows:
        table.add_row(*row)
    return table


def finding_header(finding: Finding) -> Text:
    style = SEVERITY_STYLE[finding.severity]
    return Text.assemble((f"{finding.severity.value.upper()} ", f"bold {style}"), (finding.code, "bold"),
                         f" — {finding.title}")


def _numbered(number: str, text: Text) -> Padding:
    """ "1. prose" with a hanging indent: wrapped lines start under the prose, as commands do."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(width=max(2, len(number)), no_wrap=True)
    grid.add_column()
    grid.add_row(number, text)
    return Padding(grid, (0, 0, 0, 4))


def print_fix_steps(console: Console, steps: List[str]) -> None:
    """Numbered steps: the sentence wraps (hanging indent), each command stands alone on its line."""
    for number, step in enumerate(steps, 1):
        parts = split_step(step)
        label = f"{number}."
        for command in parts.lead:
            _print_command(console, command, label)
            label = ""
        if parts.prose:
            console.print(_numbered(label, Text(parts.prose)))
            label = ""
        for command in parts.commands:
            _print_command(console, command, label)
            label = ""


def _print_command(console: Console, command: str, label: str) -> None:
    # soft_wrap: rich inserts no newline and crops nothing; the terminal folds the line on
    # screen, but a selection still copies one line.
    console.print(Text(f"    {label:<3}", style="dim") + Text(command, style="bold"),
                  soft_wrap=True, highlight=False, markup=False)


def print_finding(console: Console, finding: Finding, verbose: bool) -> None:
    """A finding without a border: prose wraps at the terminal's width (indented), and each fix
    command is printed on its own line, unwrapped and uncropped, so that selecting it copies it."""
    console.print(finding_header(finding))
    console.print(Padding(Text(finding.detail), (0, 0, 0, 2)))
    if finding.caused_by:
        console.print(Padding(Text(f"Caused by: {finding.caused_by}", style="dim"), (0, 0, 0, 2)))
    if finding.fix:
        console.print(Text("  Fix:", style="bold"))
    print_fix_steps(console, finding.fix)
    if verbose and finding.evidence:
        console.print(Padding(Text("Evidence: " + ", ".join(f"{k}={v}" for k, v in finding.evidence.items()),
                                   style="dim"), (0, 0, 0, 2)))


def shown_findings(findings: List[Finding], verbose: bool = False) -> List[Finding]:
    """Errors and warnings; of the info findings only those a reader always wants (or all, verbose)."""
    return [f for f in findings if verbose or f.severity != Severity.INFO or f.code in ("no-nvidia-gpu", "recommendation")]


def print_table(console: Console, table: Table, wide: bool) -> None:
    """A table at the terminal's width, or (wide) at its natural width, every cell whole: the
    lines go past the right edge and the terminal wraps them, as `ps -ww` does."""
    if not wide:
        console.print(table)
        return
    natural = Measurement.get(console, console.options.update(width=10_000), table).maximum
    options = console.options.update(width=max(natural, console.width))
    for line in console.render_lines(table, options, pad=False):
        console.print(Segments(line + [Segment.line()]), soft_wrap=True)


def render_terminal(console: Console, facts: Facts, findings: List[Finding], verdict: str, verbose: bool = False,
                    framework_lines: Optional[List[str]] = None, wide: bool = False) -> None:
    console.print(verdict_line(verdict, findings))
    console.print()
    console.print(layer_table(facts, findings, summarize_layers(facts)))
    gpus = gpu_table(facts, wide=wide)
    if gpus is not None:
        console.print()
        console.print(Text("GPUs (CUDA = the name programs use; GPU = nvidia-smi's index)", style="bold"))
        print_table(console, gpus, wide)
    libraries = libraries_table(facts, verbose, wide)
    if libraries is not None:
        console.print()
        console.print(Text("CUDA libraries (Loaded = what a plain dlopen gets in your environment)", style="bold"))
        print_table(console, libraries, wide)
    if framework_lines:
        console.print()
        console.print(Text("Frameworks", style="bold"))
    for line in framework_lines or []:
        console.print(f"  {line}")
    shown = shown_findings(findings, verbose)
    if shown:
        console.print()
    for i, finding in enumerate(shown):
        if i:
            console.print()
        print_finding(console, finding, verbose)
