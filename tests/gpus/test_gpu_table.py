"""The GPU table of `check` names each holder; long command lines are shortened unless wide."""

from rich.console import Console

from gpudoctor.facts import Facts
from gpudoctor.facts.driver import GpuProcess, NvmlGpu
from gpudoctor.renderers.terminal import gpu_table

MIB = 1024 * 1024
LONG = "python -m torch.distributed.run --nproc_per_node=8 /home/bob/projects/train_big_model.py --config x.yaml"


def rendered(facts, width=200, **kwargs):
    console = Console(width=width, record=True, file=open("/dev/null", "w"))
    console.print(gpu_table(facts, **kwargs))
    return console.export_text()


def facts_with_holders():
    procs = [GpuProcess(5151, 2000 * MIB, "python", True, 1002, "bob", LONG),
             GpuProcess(777, 500 * MIB, "/usr/bin/python3", False)]
    return Facts(gpus=[NvmlGpu(index=0, name="NVIDIA GeForce RTX 2080 Ti", pci_bus_id="00000000:1A:00.0",
                               memory_total=11264 * MIB, memory_used=2500 * MIB, processes=procs)])


def test_holders_with_user_and_shortened_command():
    text = rendered(facts_with_holders())
    assert "5151 bob 2000 MiB python -m torch.distrib…" in text
    assert "777 500 MiB (not visible) /usr/bin/…" in text
    assert max(len(line) for line in rendered(facts_with_holders(), width=80).splitlines()) <= 80


def test_wide_keeps_the_whole_command_line():
    assert LONG in rendered(facts_with_holders(), width=300, wide=True)
