"""`gpudoctor gpus` on a simulated shared server (tests/lab): the installed command, in a
subprocess, as a user meets it, and `eval "$(gpudoctor gpus --pick 2)"` in a real bash."""

import json
import re

import pytest

from tests.lab import scenarios
from tests.lab.fixtures import gpudoctor_command
from tests.lab.scenario import LabProcess

LONG_COMMAND = ["python", "-m", "torch.distributed.run", "--nproc_per_node=1",
                "/home/bob/projects/very/long/path/to/train_big_model.py", "--config", "experiments/x.yaml"]


def shared_server():
    """4x RTX 2080 Ti: GPUs 2 and 3 full (alice's `python train.py`), bob holds 2000 MiB of GPU 0,
    and a process of another PID namespace (a container) holds 500 MiB of GPU 1.
    Free memory, most first: GPU 1, GPU 0, then the two full ones."""
    s = scenarios.rtx2080ti_x4_two_full()
    s.name = "shared_server"
    s.gpus[0].processes = [LabProcess(5151, 2000, "python", user="bob", uid=1002, cmdline=LONG_COMMAND)]
    s.gpus[0].memory_used_mib = 2000
    s.gpus[1].processes = [LabProcess(777, 500, "/usr/bin/python3", visible=False)]
    s.gpus[1].memory_used_mib = 500
    return s


def gpus(lab, scenario, *args, env_extra=None):
    return lab.run(scenario, gpudoctor_command() + ["gpus", *args], env_extra=env_extra)


def test_eval_pick_2_in_bash_selects_the_two_gpus_with_the_most_free_memory(lab):
    command = " ".join(gpudoctor_command())
    proc = lab.run(shared_server(), ["bash", "-c", f'eval "$({command} gpus --pick 2)"; '
                                     'echo "$CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER"'])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1,0 PCI_BUS_ID"


def test_eval_pick_on_the_two_full_gpus_box_avoids_them(lab):
    command = " ".join(gpudoctor_command())
    proc = lab.run(scenarios.rtx2080ti_x4_two_full(),
                   ["bash", "-c", f'eval "$({command} gpus --pick 2)"; echo $CUDA_VISIBLE_DEVICES'])
    assert proc.stdout.strip() == "0,1"


def test_pick_prints_shell_exports_only(lab):
    proc = gpus(lab, shared_server(), "--pick", "3")
    assert proc.returncode == 0
    assert proc.stdout == "export CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport CUDA_VISIBLE_DEVICES=1,0,2\n"


def test_pick_by_uuid(lab):
    s = shared_server()
    proc = gpus(lab, s, "--pick", "2", "--uuid")
    assert proc.returncode == 0
    assert proc.stdout == f"export CUDA_VISIBLE_DEVICES={s.gpus[1].uuid},{s.gpus[0].uuid}\n"


def test_too_few_gpus_qualify_exits_1_with_the_reason_on_stderr_and_nothing_to_eval(lab):
    proc = gpus(lab, shared_server(), "--pick", "3", "--min-free", "9000")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "only 2 of the 4 GPU(s) qualify, 3 wanted with at least 9000 MiB free" in proc.stderr
    assert "GPU 2 264 MiB" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_pick_values_are_usage_errors(lab):
    for args in (["--pick", "0"], ["--pick", "two"], ["--pick", "1", "--min-free", "-5"], ["--uuid"]):
        proc = gpus(lab, shared_server(), *args)
        assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr, args


def test_json_names_who_holds_each_gpu_and_the_cuda_mapping(lab):
    proc = gpus(lab, shared_server(), "--json", env_extra={"CUDA_VISIBLE_DEVICES": "2,3"})
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    by_index = {g["index"]: g for g in out["gpus"]}
    assert [by_index[i]["cuda"] for i in range(4)] == [None, None, "cuda:0", "cuda:1"]
    bob = by_index[0]["processes"][0]
    assert (bob["pid"], bob["user"], bob["uid"], bob["visible"]) == (5151, "bob", 1002, True)
    assert bob["command"] == " ".join(LONG_COMMAND)
    hidden = by_index[1]["processes"][0]
    assert hidden["visible"] is False and hidden["user"] is None and hidden["pid"] == 777
    assert by_index[2]["processes"][0]["user"] == "alice" and by_index[2]["utilization_gpu"] == 100


def test_table_fits_80_columns_and_names_users_and_commands(lab):
    proc = gpus(lab, shared_server(), env_extra={"COLUMNS": "80"})
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert re.search(r"cuda:2\s+2\s+00000000:3D:00\.0\s+GPU-b4d2f6a8", proc.stdout)
    assert re.search(r"2\s+cuda:2\s+4242\s+alice\s+11000 MiB\s+python train\.py", proc.stdout)
    assert re.search(r"1\s+cuda:1\s+777\s+500 MiB\s+\(not visible\) /usr/bin/python3", proc.stdout)
    assert " ".join(LONG_COMMAND) not in proc.stdout  # shortened...
    wide = gpus(lab, shared_server(), "--wide", env_extra={"COLUMNS": "80"})
    assert " ".join(LONG_COMMAND) in wide.stdout  # ...unless --wide
    assert shared_server().gpus[2].uuid in wide.stdout


def test_nvml_failure_is_a_clear_message_not_a_traceback(lab):
    proc = gpus(lab, scenarios.nvml_mismatch(), "--pick", "1")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "cannot list the GPUs: Driver/library version mismatch" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_no_gpu_machine(lab):
    proc = gpus(lab, scenarios.no_gpu())
    assert proc.returncode == 1 and "cannot list the GPUs" in proc.stderr


def test_gpus_runs_the_nvml_probe_only(lab):
    code = ("import sys\nfrom gpudoctor.cli import main\nrc = main(['gpus', '--pick', '1'])\n"
            "heavy = [m for m in ('gpudoctor.probes.libraries', 'gpudoctor.probes.frameworks', "
            "'gpudoctor.compat', 'rich', 'torch', 'tensorflow', 'jax') "
            "if m in sys.modules]\nprint(rc, heavy)")
    proc = lab.run_python(shared_server(), code)
    assert proc.stdout.splitlines()[-1] == "0 []", proc.stderr


@pytest.fixture
def fake_torch(tmp_path):
    """A `torch` package that is only importable: enough for pick_gpus to see it imported."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    return str(tmp_path)


def test_pick_gpus_sets_the_environment_before_a_framework_starts(lab):
    code = ("import os, gpudoctor\nprint(gpudoctor.pick_gpus(2, min_free_mib=1000))\n"
            "print(os.environ['CUDA_VISIBLE_DEVICES'], os.environ['CUDA_DEVICE_ORDER'])")
    proc = lab.run_python(shared_server(), code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[1, 0]", "1,0 PCI_BUS_ID"]


def test_pick_gpus_after_torch_was_imported_raises_a_clear_error(lab, fake_torch):
    code = ("import os, torch, gpudoctor\ntry:\n    gpudoctor.pick_gpus(1)\n"
            "except gpudoctor.gpus.pick.GpuPickError as exc:\n    print('error:', exc)\n"
            "print(os.environ.get('CUDA_VISIBLE_DEVICES'))")
    proc = lab.run_python(shared_server(), code, env_extra={"PYTHONPATH": fake_torch})
    assert proc.returncode == 0, proc.stderr
    first, last = proc.stdout.splitlines()
    assert first.startswith("error: pick_gpus() must run before torch is imported")
    assert last == "None"  # nothing was changed


def test_pick_gpus_with_too_few_gpus_raises(lab):
    code = ("import gpudoctor\ntry:\n    gpudoctor.pick_gpus(3, min_free_mib=9000)\n"
            "except RuntimeError as exc:\n    print(exc)")
    proc = lab.run_python(shared_server(), code)
    assert "only 2 of the 4 GPU(s) qualify, 3 wanted" in proc.stdout


def test_check_names_the_holders_of_the_full_gpus(lab):
    rc, report, _ = lab.run_check(shared_server())
    full = next(f for f in report["findings"] if f["code"] == "gpu-memory-full")
    assert "pid 4242 (alice: python train.py) 11000 MiB" in full["detail"]
    holders = {p["pid"]: p for g in report["facts"]["gpus"] for p in g["processes"]}
    assert holders[5151]["user"] == "bob" and holders[777]["visible"] is False


def test_report_lists_holders_with_users_redacted(lab, tmp_path):
    out = tmp_path / "ticket.md"
    proc = lab.run(shared_server(), gpudoctor_command() + ["report", "--quick", "-o", str(out)])
    assert proc.returncode in (0, 1), proc.stderr
    text = out.read_text()
    assert "| nvidia-smi # | pid | user | GPU memory | command |" in text
    assert "`python train.py`" in text and "/home/<user>/projects/very/long/path" in text
    assert "alice" not in text and "bob" not in text


def test_check_names_a_holder_in_another_pid_namespace_by_pid(lab):
    s = scenarios.rtx2080ti_x4_two_full()
    for g in s.gpus[2:]:
        g.processes = [LabProcess(4242, 11000, "python train.py", visible=False)]
    rc, report, _ = lab.run_check(s)
    full = next(f for f in report["findings"] if f["code"] == "gpu-memory-full")
    assert "pid 4242 (not visible here: python train.py) 11000 MiB" in full["detail"]
