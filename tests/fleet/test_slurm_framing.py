"""How `fleet slurm` reads srun --label output: tasks' lines interleave, reports do not break."""

from __future__ import annotations

import base64
import json
from typing import List

from gpudoctor.fleet.slurm import MARK, FramedOutput, task_hosts


def _frame(task: int, node: str, report: str, status: int = 0) -> List[str]:
    b64 = base64.encodebytes(report.encode()).decode().splitlines()
    return ([f"{task}: {MARK} node {node}", f"{task}: {MARK} exit {status}", f"{task}: {MARK} report"] +
            [f"{task}: {line}" for line in b64] + [f"{task}: {MARK} stderr", f"{task}: {MARK} end"])


def _feed(lines: List[str], timeout: float = 60):
    framed = FramedOutput(timeout)
    return [a for a in (framed.feed(line + "\n") for line in lines) if a]


def test_interleaved_tasks_come_back_whole_and_named_by_node():
    a = json.dumps({"verdict": "ok", "findings": [], "facts": {"x": "a" * 3000}})
    b = json.dumps({"verdict": "error", "findings": [], "facts": {"x": "b" * 3000}})
    fa, fb = _frame(0, "node1", a), _frame(1, "node2", b)
    mixed = [line for pair in zip(fa, fb) for line in pair] + fa[len(fb):] + fb[len(fa):]
    answers = {x.node: x for x in _feed(mixed)}
    assert answers["node1"].report == json.loads(a) and answers["node2"].report == json.loads(b)


def test_a_line_split_by_srun_still_decodes_and_a_damaged_report_is_that_nodes_error():
    report = json.dumps({"verdict": "ok", "findings": [], "facts": {}})
    lines = _frame(3, "node4", report)
    body = lines[3]
    split = lines[:3] + [body[:20], "3: " + body[20:]] + lines[4:]
    assert _feed(split)[0].report == json.loads(report)
    damaged = _frame(0, "node5", report)
    damaged[3] = "0: %%%not-base64%%%"
    answer = _feed(damaged)[0]
    assert answer.report is None and "damaged" in answer.error


def test_missing_gpudoctor_timeout_and_crash_are_named():
    answers = _feed([f"0: {MARK} node n1", f"0: {MARK} missing"] +
                    _frame(1, "n2", "", status=124) +
                    [f"2: {MARK} node n3", f"2: {MARK} exit 2", f"2: {MARK} stderr",
                     "2: " + base64.b64encode(b"gpudoctor: internal error: boom\n").decode(), f"2: {MARK} end"], 7)
    errors = {a.node: a.error for a in answers}
    assert errors["n1"].startswith("gpudoctor is not installed")
    assert errors["n2"] == "no answer within 7 s (--timeout)"
    assert errors["n3"] == "gpudoctor check failed with exit status 2: gpudoctor: internal error: boom"


def test_srun_verbose_lines_map_tasks_to_nodes():
    stderr = ("srun: launching StepId=7.0 on host node1, 1 tasks: 0\n"
              "srun: launching StepId=7.0 on host gpu17, 2 tasks: 1-2\n")
    assert task_hosts(stderr) == {0: "node1", 1: "gpu17", 2: "gpu17"}
