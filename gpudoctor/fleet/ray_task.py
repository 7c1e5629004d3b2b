"""The Ray task that runs on each node. Standard library only: Ray ships this module by value, so
a node needs Ray and a `gpudoctor` command on its PATH, not gpudoctor's Python package."""

import os
import shutil
import signal
import subprocess


def check_on_node(argv, node_timeout):
    """Run `gpudoctor check --json` here; return what happened as plain data (never raise)."""
    exe = shutil.which(argv[0])
    if not exe:
        return {"missing": True}
    try:
        proc = subprocess.Popen([exe] + list(argv[1:]), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, universal_newlines=True, start_new_session=True)
    except OSError as exc:
        return {"status": -1, "stdout": "", "stderr": str(exc)}
    try:
        out, err = proc.communicate(timeout=node_timeout)
    except subprocess.TimeoutExpired:
        try:  # the whole group: a hung probe's children must not outlive the task
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.communicate()
        return {"timed_out": True}
    return {"status": proc.returncode, "stdout": out, "stderr": err[-600:]}
