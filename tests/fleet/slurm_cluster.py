"""A real three-node Slurm cluster on localhost, from Debian's `slurm-wlm` and `munge`.

munged runs with its own key and socket, slurmctld and one slurmd per node (`slurmd -N nodeN`,
each on its own port, the multiple-slurmd layout), all state, logs and sockets in one temporary
folder. Every daemon runs in the foreground in a session of its own, so `stop()` kills whole
process groups, also after a failed test.

A TaskProlog reads `<root>/nodeenv/<SLURMD_NODENAME>` and prints it (`export NAME=value` lines):
that is how a test gives one node a different machine (another lab scenario, another PATH).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Dict, List, Mapping, Optional

NODES = ("node1", "node2", "node3")
DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "scontrol", "sinfo")


class ClusterError(Exception):
    pass


def missing_programs() -> List[str]:
    return [p for p in DAEMONS if not (shutil.which(p) or os.access(f"/usr/sbin/{p}", os.X_OK))]


def _free_ports(n: int) -> List[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _program(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


HEALTH_CHECK = """#!/bin/sh
# Slurm's HealthCheckProgram or Prolog (no arguments, no search path): what docs/fleet.md
# recommends, plus a switch per node, so that tests decide when a node runs it, on which machine.
f="{root}/{switches}/$SLURMD_NODENAME"
[ -f "$f" ] || exit 0
. "$f"
exec gpudoctor health --drain
"""

TASK_PROLOG = """#!/bin/sh
# Slurm TaskProlog: lines "export NAME=value" on stdout set the task's environment.
f="{root}/nodeenv/$SLURMD_NODENAME"
[ -f "$f" ] && cat "$f"
exit 0
"""


class SlurmCluster:
    def __init__(self, root: Path):
        self.root = root
        self.procs: List[subprocess.Popen] = []
        self.conf = root / "slurm.conf"
        self.socket = root / "munge" / "munge.socket.2"

    # -- environment for clients (srun, sinfo, scontrol, gpudoctor fleet slurm) ----------------
    def env(self, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
        env["SLURM_CONF"] = str(self.conf)
        env.update(extra or {})
        return env

    def set_node_env(self, node: str, variables: Mapping[str, str]) -> None:
        """What the TaskProlog exports on `node` for the tasks that start from now on."""
        lines = "".join(f"export {k}={v}\n" for k, v in variables.items())
        (self.root / "nodeenv" / node).write_text(lines)

    def set_health_env(self, node: str, variables: Optional[Mapping[str, str]], hook: str = "health") -> None:
        """Run `gpudoctor health --drain` as `node`'s HealthCheckProgram (hook "health") or Prolog
        (hook "prolog") with these variables (None: the hook does nothing there)."""
        f = self.root / hook / node
        if variables is None:
            f.unlink(missing_ok=True)
        else:
            f.write_text("".join(f"export {k}={v}\n" for k, v in variables.items()))

    def clear_node_env(self) -> None:
        for f in (self.root / "nodeenv").iterdir():
            f.unlink()

    def run(self, argv: List[str], timeout: float = 60, env_extra: Optional[Mapping[str, str]] = None
            ) -> subprocess.CompletedProcess:
        proc = subprocess.Popen(argv, env=self.env(env_extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise subprocess.TimeoutExpired(argv, timeout, out, err)
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)

    # -- start and stop -----------------------------------------------------------------------
    def start(self, timeout: float = 60) -> None:
        for sub in ("munge", "state", "spool", "log", "nodeenv", "health", "prolog"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root / "munge", 0o700)
        self._start_munge()
        self._write_conf()
        self._spawn([_program("slurmctld"), "-D", "-f", str(self.conf)], "slurmctld")
        for node in NODES:
            self._spawn([_program("slurmd"), "-D", "-N", node, "-f", str(self.conf)], f"slurmd-{node}")
        self._wait_idle(timeout)

    def _start_munge(self) -> None:
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        m = self.root / "munge"
        self._spawn([_program("munged"), "-F", "--force", f"--socket={self.socket}", f"--key-file={key}",
                     f"--log-file={m / 'munged.log'}", f"--pid-file={m / 'munged.pid'}",
                     f"--seed-file={m / 'munged.seed'}", "--num-threads=2"], "munged")
        deadline = time.monotonic() + 20
        while not self.socket.exists():
            if time.monotonic() > deadline or self.procs[-1].poll() is not None:
                raise ClusterError("munged did not start: " + self._log("munged"))
            time.sleep(0.1)

    def _write_conf(self) -> None:
        ctld_port, *node_ports = _free_ports(1 + len(NODES))
        r = self.root
        lines = [
            "ClusterName=gpudoctortest",
            f"SlurmctldHost={socket.gethostname()}(127.0.0.1)",
            f"SlurmctldPort={ctld_port}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={self.socket}",
            f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool'}/%n",
            f"SlurmctldPidFile={r / 'slurmctld.pid'}", f"SlurmdPidFile={r / 'spool'}/slurmd-%n.pid",
            f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}", f"SlurmdLogFile={r / 'log'}/slurmd-%n.log",
            "ProctrackType=proctrack/pgid", "TaskPlugin=task/none", "MpiDefault=none",
            "SchedulerType=sched/builtin", "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "ReturnToService=2", "SlurmdTimeout=30", "InactiveLimit=0", "KillWait=2", "MinJobAge=5",
            "MessageTimeout=20",
            f"TaskProlog={r / 'task_prolog.sh'}",
            f"HealthCheckProgram={r / 'health_check.sh'}", "HealthCheckInterval=5", "HealthCheckNodeState=ANY",
            f"Prolog={r / 'prolog.sh'}",
            f"PlugStackConfig={r / 'plugstack.conf'}",
        ]
        for node, port in zip(NODES, node_ports):
            lines.append(f"NodeName={node} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 Port={port} "
                         "CPUs=1 RealMemory=1000 State=UNKNOWN")
        lines.append(f"PartitionName=debug Nodes={','.join(NODES)} Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n")
        (r / "plugstack.conf").write_text("")
        for name, text, switches in (("task_prolog.sh", TASK_PROLOG, ""), ("health_check.sh", HEALTH_CHECK, "health"),
                                     ("prolog.sh", HEALTH_CHECK, "prolog")):
            (r / name).write_text(text.format(root=r, switches=switches))
            (r / name).chmod(0o755)

    def _spawn(self, argv: List[str], name: str) -> None:
        log = open(self.root / "log" / f"{name}.out", "wb")
        self.procs.append(subprocess.Popen(argv, env=self.env(), stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, start_new_session=True))
        log.close()

    def _log(self, name: str) -> str:
        texts = []
        for p in (self.root / "log" / f"{name}.out", self.root / "log" / f"{name}.log"):
            if p.exists():
                texts.append(p.read_text(errors="replace")[-2000:])
        return "\n".join(texts)

    def _wait_idle(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        out = ""
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise ClusterError(f"{p.args[0]} exited ({p.returncode}): " + self._log("slurmctld") +
                                       "".join(self._log(f"slurmd-{n}") for n in NODES))
            proc = self.run([_program("sinfo"), "-h", "-N", "-o", "%N %t"], timeout=20)
            out = proc.stdout
            states = dict(line.split() for line in out.splitlines() if len(line.split()) == 2)
            if len(states) == len(NODES) and all(s == "idle" for s in states.values()):
                return
            time.sleep(0.5)
        raise ClusterError(f"the nodes did not become idle within {timeout:g} s: {out!r}\n" + self._log("slurmctld"))

    def stop(self) -> None:
        for p in reversed(self.procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        for p in reversed(self.procs):
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        self.procs.clear()
