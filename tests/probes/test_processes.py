"""Who holds a GPU, read from /proc/PID under a sysroot: odd and missing files are facts, never errors."""

import os

from gpudoctor.facts.driver import GpuProcess, NvmlGpu
from gpudoctor.probes.context import ProbeContext
from gpudoctor.probes.processes import describe_processes


def write(root, rel, data):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def holders(root, *pids):
    gpu = NvmlGpu(index=0, processes=[GpuProcess(pid) for pid in pids])
    describe_processes(ProbeContext(sysroot=str(root)), [gpu])
    return {p.pid: p for p in gpu.processes}


def test_user_and_command_line_come_from_the_sysroot(tmp_path):
    write(tmp_path, "proc/4242/cmdline", b"python\0train.py\0--lr\x000.1\0")
    write(tmp_path, "proc/4242/status", "Name:\tpython\nUid:\t1001\t1001\t1001\t1001\n")
    write(tmp_path, "etc/passwd", "root:x:0:0::/root:/bin/sh\nalice:x:1001:1001::/home/alice:/bin/bash\n")
    p = holders(tmp_path, 4242)[4242]
    assert (p.visible, p.uid, p.user, p.command) == (True, 1001, "alice", "python train.py --lr 0.1")


def test_a_uid_without_a_name_is_shown_as_the_number(tmp_path):
    write(tmp_path, "proc/10/cmdline", b"./job\0")
    write(tmp_path, "proc/10/status", "Uid:\t5000\t5000\t5000\t5000\n")
    p = holders(tmp_path, 10)[10]  # no etc/passwd at all: not this machine's users either
    assert (p.uid, p.user) == (5000, "5000")


def test_a_process_of_another_pid_namespace_or_that_ended_is_not_visible(tmp_path):
    (tmp_path / "proc").mkdir()
    p = holders(tmp_path, 777)[777]
    assert (p.visible, p.user, p.command) == (False, None, None)


def test_garbage_status_and_empty_cmdline(tmp_path):
    write(tmp_path, "proc/11/cmdline", b"")  # a zombie or kernel thread
    write(tmp_path, "proc/11/status", "Uid:\tgarbage\n\xff\xfe")
    write(tmp_path, "proc/12/cmdline", "nvidia-smi dmon".encode())  # rewritten: spaces, no NULs
    p11, p12 = holders(tmp_path, 11, 12).values()
    assert (p11.visible, p11.command, p11.uid, p11.user) == (True, None, None, None)
    assert (p12.command, p12.uid) == ("nvidia-smi dmon", None)


def test_an_unreadable_status_file_leaves_the_user_unknown(tmp_path):
    write(tmp_path, "proc/13/cmdline", b"x\0")
    os.makedirs(tmp_path / "proc/13/status")  # a directory where a file should be
    p = holders(tmp_path, 13)[13]
    assert p.visible and p.uid is None and p.user is None


def test_on_the_machine_itself_the_system_user_database_names_the_user():
    import pwd

    gpu = NvmlGpu(index=0, processes=[GpuProcess(os.getpid())])
    describe_processes(ProbeContext(sysroot="/"), [gpu])
    p = gpu.processes[0]
    assert p.visible and p.uid == os.getuid() and p.user == pwd.getpwuid(os.getuid()).pw_name
    assert "pytest" in (p.command or "")
