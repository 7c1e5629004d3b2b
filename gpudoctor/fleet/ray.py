"""`fleet ray`: one task per alive Ray node, pinned to it (hard node affinity, no CPU reserved, so
it runs even on a cluster busy with training), each running `gpudoctor check --json` in a
subprocess there. Ray is an optional extra: `pip install ray` (or `pip install ".[ray]"` in gpudoctor's source folder)."""

from __future__ import annotations

import json
import logging
import socket
import sys
import time
from collections import Counter
from typing import Any, Dict, Iterator, List, Mapping, Optional

from . import ray_task
from .aggregate import NodeAnswer
from .node_check import check_argv, failed_error, missing_error, startup_allowance, timeout_error



CONNECT_TIMEOUT_S = 5.0


class RayUsageError(Exception):
    """Ray is not installed, or there is no cluster at the address."""


def node_names(nodes: List[Mapping[str, Any]]) -> Dict[str, str]:
    """node id -> name: the host name; where several nodes share a host, Ray's node name (set with
    `ray start --node-name`) if that tells them apart, else the host name and the node id."""
    def host(n: Mapping[str, Any]) -> str:
        return str(n.get("NodeManagerHostname") or n.get("NodeManagerAddress"))

    hosts = Counter(host(n) for n in nodes)
    labels = Counter(str(n.get("NodeName")) for n in nodes)
    names = {}
    for n in nodes:
        if hosts[host(n)] == 1:
            names[n["NodeID"]] = host(n)
        elif n.get("NodeName") and labels[str(n["NodeName"])] == 1:
            names[n["NodeID"]] = str(n["NodeName"])
        else:
            names[n["NodeID"]] = f"{host(n)}:{n['NodeID'][:8]}"
    return names


def _answer(name: str, result: Mapping[str, Any], node_timeout: float) -> NodeAnswer:
    if result.get("missing"):
        return NodeAnswer(name, error=missing_error())
    if result.get("timed_out"):
        return NodeAnswer(name, error=timeout_error(node_timeout))
    error = failed_error(int(result.get("status", -1)), str(result.get("stderr") or ""))
    if error:
        return NodeAnswer(name, error=error)
    try:
        report = json.loads(result.get("stdout") or "")
    except ValueError:
        return NodeAnswer(name, error="its report is not valid JSON")
    return NodeAnswer(name, report if isinstance(report, dict) else None,
                      None if isinstance(report, dict) else "its report is not a JSON object")


def _unreachable(address: str) -> Optional[str]:
    """Why host:port (or ray://host:port) takes no connection; None when it does or when the
    address is not host:port. Ray itself retries an unreachable cluster for minutes."""
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if not host or not port.isdigit():
        return None
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        return exc.strerror or str(exc) or "no answer"
    return None


def _connect(address: str) -> Any:
    try:
        import ray
    except ImportError:
        raise RayUsageError(f"Ray is not installed for {sys.executable}; install it with "
                            f"`{sys.executable} -m pip install ray`") from None
    why = _unreachable(address)
    if why:
        raise RayUsageError(f"cannot join the Ray cluster at {address}: {why}")
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False, include_dashboard=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayUsageError(f"cannot join the Ray cluster at {address}: {exc}") from None
    return ray


def run_ray(address: str, quick: bool, node_timeout: float, notes: List[str]) -> Iterator[NodeAnswer]:
    ray = _connect(address)
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    try:
        ray.cloudpickle.register_pickle_by_value(ray_task)
        nodes = ray.nodes()
        names = node_names(nodes)
        for n in nodes:
            if not n.get("Alive"):
                yield NodeAnswer(names[n["NodeID"]], error="down (Ray lists the node as dead)")
        argv = check_argv(quick, node_timeout)
        pending = {}
        for n in nodes:
            if n.get("Alive"):
                task = ray.remote(num_cpus=0, max_retries=0, scheduling_strategy=NodeAffinitySchedulingStrategy(
                    n["NodeID"], soft=False))(ray_task.check_on_node)
                pending[task.remote(argv, node_timeout)] = names[n["NodeID"]]
        deadline = time.monotonic() + node_timeout + startup_allowance(node_timeout)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            name = pending.pop(ready[0])
            try:
                yield _answer(name, ray.get(ready[0]), node_timeout)
            except ray.exceptions.RayError as exc:  # the node died, the worker crashed
                yield NodeAnswer(name, error=f"its Ray task failed: {str(exc).splitlines()[0][:300]}")
        for ref, name in pending.items():
            ray.cancel(ref, force=True)
            yield NodeAnswer(name, error=timeout_error(node_timeout) + " (its Ray task was cancelled)")
    finally:
        ray.shutdown()
