"""Who holds each GPU: pid -> user and command line, read from /proc/PID under GPUDOCTOR_SYSROOT.

NVML gives pids only. A pid from another PID namespace (NVML answers for the whole machine, a
container sees only its own processes) or of a process that ended since has no /proc entry here:
it stays a pid, marked not visible. Nothing here raises.
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, Optional

from ..facts.driver import GpuProcess, NvmlGpu
from .context import ProbeContext

COMMAND_MAX_BYTES = 4096  # a command line past this is cut: enough to recognise a job


def describe_processes(ctx: ProbeContext, gpus: Iterable[NvmlGpu]) -> None:
    """Fill in visible, uid, user and command of every GPU process (in place)."""
    users: Optional[Dict[int, str]] = None
    for gpu in gpus:
        for process in gpu.processes:
            _read_proc(ctx, process)
            if process.uid is not None:
                if users is None:
                    users = user_names(ctx)
                process.user = users.get(process.uid, str(process.uid))


def _read_proc(ctx: ProbeContext, process: GpuProcess) -> None:
    base = ctx.host_path(f"/proc/{process.pid}")
    try:
        with open(os.path.join(base, "cmdline"), "rb") as handle:
            raw = handle.read(COMMAND_MAX_BYTES)
    except OSError:  # not in this PID namespace, ended, or hidden (hidepid=2)
        process.visible = False
        return
    process.visible = True
    # A kernel thread or zombie has an empty cmdline; a process may rewrite its own (no NULs).
    process.command = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace").strip() or None
    process.uid = _real_uid(os.path.join(base, "status"))


def _real_uid(status_path: str) -> Optional[int]:
    """The real uid: the first number of the `Uid:` line (real, effective, saved, filesystem)."""
    try:
        with open(status_path, "r", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("Uid:"):
                    fields = line.split()
                    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None
    except OSError:
        pass
    return None


def user_names(ctx: ProbeContext) -> Dict[int, str]:
    """uid -> name. On the machine itself, the system's own lookup (LDAP, sssd users too);
    under a sysroot, that tree's etc/passwd only: this machine's users say nothing about it."""
    if ctx.sysroot in ("", "/"):
        return _SystemUsers()
    return parse_passwd(ctx.host_path("/etc/passwd"))


def parse_passwd(path: str) -> Dict[int, str]:
    names: Dict[int, str] = {}
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                fields = line.rstrip("\n").split(":")
                if len(fields) >= 3 and fields[2].isdigit() and fields[0]:
                    names.setdefault(int(fields[2]), fields[0])
    except OSError:
        pass
    return names


class _SystemUsers(Dict[int, str]):
    """pwd, asked once per uid (the import is here: the module is absent on some platforms)."""

    def get(self, uid: int, default: Optional[str] = None) -> Optional[str]:  # type: ignore[override]
        if uid not in self:
            try:
                import pwd

                self[uid] = pwd.getpwuid(uid).pw_name
            except (ImportError, KeyError, OverflowError):
                return default
        return dict.get(self, uid, default)
