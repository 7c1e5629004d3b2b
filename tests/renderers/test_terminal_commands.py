"""Fix commands in the terminal: each on its own line, whole, outside any border, at 80 columns."""

import os

from rich.console import Console

from gpudoctor.facts.libraries import LibraryCopy, LibraryFacts, LoaderResolution
from gpudoctor.model import Finding, Layer, Severity
from gpudoctor.renderers.fix_steps import split_step
from gpudoctor.renderers.terminal import libraries_table, print_table, render_terminal
from tests.e2e.test_lab_frameworks import fake_torch
from tests.factories import gpu_machine
from tests.lab import scenarios
from tests.lab.fixtures import gpudoctor_command

BOX = set("─│┌┐└┘├┤┬┴┼╭╮╯╰═║╔╗╚╝")
LONG_INDEX = "pip install torch==2.7.1 torchvision==0.22.1 --index-url https://download.pytorch.org/whl/cu118"
CONDA = 'conda install -n tf114 -c conda-forge "cudatoolkit=10.0" "cudnn=7.6" "python=3.7" "tensorflow-gpu=1.14"'


def driver_too_old() -> Finding:
    return Finding("driver-too-old", Severity.ERROR, Layer.COMPATIBILITY, "The NVIDIA driver is too old",
                   "PyTorch 2.5.1+cu124 needs driver 525.60.13 or newer; this machine has 470.82.01. " * 3,
                   fix=["Upgrade the NVIDIA driver to 525.60.13 or newer, then reboot.",
                        f"Or install the newest build this machine runs: {LONG_INDEX}",
                        f"In a conda env, a TensorFlow 1.14 of its own: `{CONDA}`.",
                        "export CUDA_VISIBLE_DEVICES=0,1  # GPUs with free memory, most free first: GPU 0 11264 MiB free"])


def commands_of(findings):
    return [c for f in findings for step in f.fix for c in split_step(step).lead + split_step(step).commands]


def assert_each_command_whole_on_one_line(text, commands):
    lines = text.splitlines()
    for command in commands:
        holding = [line for line in lines if command in line]
        assert holding, f"{command!r} is not whole on any line:\n{text}"
        assert not any(BOX & set(line) for line in holding), holding
    return lines


def test_commands_at_80_columns_stand_alone_and_the_prose_wraps():
    console = Console(width=80, record=True, file=open(os.devnull, "w"), color_system=None)
    finding = driver_too_old()
    render_terminal(console, gpu_machine(), [finding], "error")
    text = console.export_text()
    lines = assert_each_command_whole_on_one_line(text, [LONG_INDEX, CONDA, finding.fix[3]])
    assert not any(BOX & set(line) for line in lines)  # no border anywhere around a finding
    # the sentence around a command keeps to the width and still reads
    assert "Or install the newest build this machine runs:" in text
    assert all(len(line.rstrip()) <= 80 for line in lines if not any(c in line for c in (LONG_INDEX, CONDA)) and
               "export CUDA_VISIBLE_DEVICES" not in line)
    # the command line holds the command and nothing but its step number and indent
    assert [line.strip() for line in lines if CONDA in line] == [CONDA]


def lab_torch_cu124_on_driver_470(tmp_path):
    fake_torch(tmp_path / "site", "2.5.1+cu124", "12.4")
    machine = scenarios.rtx2080ti_x4_two_full()
    machine.driver_version, machine.cuda_driver_version = "470.82.01", 11040
    return machine, {"PYTHONPATH": str(tmp_path / "site"), "COLUMNS": "80"}


def test_installed_check_at_80_columns_prints_every_fix_command_whole(lab, tmp_path):
    """4× RTX 2080 Ti, two full, driver 470 under a cu124 torch: `gpudoctor check` in an 80-column pipe."""
    machine, env = lab_torch_cu124_on_driver_470(tmp_path)
    rc, report, stderr = lab.run_check(machine, "--quick", env_extra=env)
    assert rc == 1 and report is not None, stderr
    proc = lab.run(machine, gpudoctor_command() + ["check", "--quick", "--no-color"], env_extra=env)
    assert proc.returncode == 1, proc.stderr
    commands = [c for f in report["findings"] if f["severity"] != "info" or f["code"] == "recommendation"
                for step in f["fix"] for c in split_step(step).lead + split_step(step).commands]
    assert any("--index-url https://download.pytorch.org/whl/cu118" in c for c in commands)
    assert any(c.startswith("export CUDA_VISIBLE_DEVICES=0,1") for c in commands)
    lines = assert_each_command_whole_on_one_line(proc.stdout, commands)
    assert not any(BOX & set(line) for line in lines)
    # everything but a command keeps to 80 columns
    assert all(len(line.rstrip()) <= 80 for line in lines if not any(c in line for c in commands)), proc.stdout
    assert proc.stdout.index("ERROR driver-too-old") < proc.stdout.index("WARNING gpu-memory-full")


def wheel_cudart_in_home(home):
    facts = gpu_machine()
    real = f"{home}/venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"
    copy = LibraryCopy(path=real, real_path=real, soname="libcudart.so.12", found_via=["LD_LIBRARY_PATH"],
                       version="12.4")
    facts.libraries.libraries = [LibraryFacts("cudart", [copy], [LoaderResolution("libcudart.so.12", real)])]
    return facts, real


def table_text(facts, wide, width):
    console = Console(width=width, record=True, file=open(os.devnull, "w"), color_system=None)
    print_table(console, libraries_table(facts, verbose=False, wide=wide), wide)
    return console.export_text()


def test_library_paths_home_as_tilde_and_site_packages_shortened(monkeypatch):
    monkeypatch.setenv("HOME", "/home/ana")
    facts, real = wheel_cudart_in_home("/home/ana")
    narrow = table_text(facts, wide=False, width=120)
    assert "~/venv/…/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12" in narrow and "/home/ana" not in narrow
    wide = table_text(facts, wide=True, width=80)  # --wide on an 80-column terminal: the path whole, on one line
    assert any(real in line for line in wide.splitlines())


def test_installed_check_wide_keeps_library_paths_whole(lab, tmp_path):
    machine, env = lab_torch_cu124_on_driver_470(tmp_path)
    toolkit = "/usr/local/cuda-13.0/lib/libcudart.so.13"  # the lab machine's toolkit, longer than its column
    narrow = lab.run(machine, gpudoctor_command() + ["check", "--quick", "--no-color"], env_extra=env)
    wide = lab.run(machine, gpudoctor_command() + ["check", "--quick", "--no-color", "--wide"], env_extra=env)
    assert narrow.returncode == wide.returncode == 1, wide.stderr
    def table(text):
        start = text.index("CUDA libraries (")
        return text[start:text.index("\nFrameworks\n", start)]

    assert toolkit not in table(narrow.stdout).split()  # folded at 80 columns
    assert toolkit in table(wide.stdout).split()
