"""What the conda plugin does, as plain functions tested without conda.

conda calls the post-command hook in its own (base) interpreter after install/create/update/
remove; the environment that changed is `context.target_prefix`. So the quick check runs in a
subprocess, `gpudoctor check --quick --json --python <prefix>/bin/python`, bounded in time.

Two rules come before anything else:
- never raise: an exception in a post-command turns the user's successful `conda install`
  into exit code 1;
- never cry wolf: say something only when there is something to say (a GPU package in the
  env, or a problem), and nothing at all on a CPU-only machine with no GPU packages.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, TextIO

from ..gpu_packages import is_gpu_package
from ..versions import cuda_version_text

TRIGGER_COMMANDS = frozenset({"install", "create", "update", "remove", "env_create", "env_update"})
HOOK_TIMEOUT_S = 3.0  # the whole post-command hook, as the user waits for their prompt
DOCTOR_TIMEOUT_S = 10.0  # `conda doctor` was asked for; still only the quick check
ENV_SWITCH = "GPUDOCTOR_CONDA_HOOK"  # 0/false/no/off turns the post-command hook off
SETTING_NAME = "gpudoctor_hook"  # conda setting: `plugins: {gpudoctor_hook: false}` in .condarc
_OFF = {"0", "false", "no", "off", "disable", "disabled"}
_MAX_SHOWN = 3  # findings in the post-install summary; `gpudoctor check` has the rest

# cli.main is the console-script entry (reads sys.argv), so the check can run without a
# `gpudoctor` executable on PATH: conda's base env may not have its bin/ on PATH.
_CHECK_BOOTSTRAP = "import sys; from gpudoctor.cli import main; sys.argv[0] = 'gpudoctor'; sys.exit(main())"


def hook_enabled(environ: Mapping[str, str], setting: Optional[bool] = None) -> bool:
    """Off when GPUDOCTOR_CONDA_HOOK says so, or the conda setting is false."""
    if environ.get(ENV_SWITCH, "").strip().lower() in _OFF:
        return False
    return setting is not False


def target_python(prefix: str) -> Optional[str]:
    for candidate in (os.path.join(prefix, "bin", "python"), os.path.join(prefix, "python.exe")):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def gpu_packages_in_prefix(prefix: str) -> List[str]:
    """GPU packages recorded in <prefix>/conda-meta (file names only: fast, no JSON parsing)."""
    names: List[str] = []
    for path in glob.glob(os.path.join(prefix, "conda-meta", "*.json")):
        parts = os.path.basename(path)[: -len(".json")].rsplit("-", 2)  # name-version-build
        if len(parts) == 3 and is_gpu_package(parts[0], parts[1], parts[2]):
            names.append(parts[0])
    return sorted(set(names))


def machine_may_have_nvidia_gpu(sysroot: str = "/") -> bool:
    """A cheap look (no library loaded): an NVIDIA display controller, a loaded driver, or WSL's GPU."""
    root = sysroot.rstrip("/")
    if os.path.exists(root + "/proc/driver/nvidia/version") or os.path.exists(root + "/dev/dxg"):
        return True
    for device in glob.glob(root + "/sys/bus/pci/devices/*"):
        try:
            with open(device + "/vendor") as v, open(device + "/class") as c:
                if v.read().strip() == "0x10de" and c.read().strip().startswith("0x03"):
                    return True
        except OSError:
            continue
    return False


@dataclass
class CheckOutcome:
    report: Optional[Dict[str, Any]] = None
    timed_out: bool = False
    error: Optional[str] = None  # gpudoctor itself failed: one line
    seconds: float = 0.0


Runner = Callable[[List[str], float], CheckOutcome]


def check_command(python: str, timeout: float, interpreter: Optional[str] = None) -> List[str]:
    """`gpudoctor check --quick --json --python PYTHON`, run by conda's own interpreter."""
    probe_timeout = max(0.5, timeout - 0.5)  # leave time to start and print
    return [interpreter or sys.executable, "-c", _CHECK_BOOTSTRAP, "check", "--quick", "--json",
            "--python", python, "--timeout", f"{probe_timeout:g}"]


def run_subprocess(argv: List[str], timeout: float) -> CheckOutcome:
    """Run the check; on timeout kill its whole process group (probe children included)."""
    started = time.monotonic()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
    except OSError as exc:
        return CheckOutcome(error=f"cannot start the check: {exc}")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        return CheckOutcome(timed_out=True, seconds=time.monotonic() - started)
    seconds = time.monotonic() - started
    try:
        report = json.loads(out.decode("utf-8", "replace"))
        if not isinstance(report, dict) or "findings" not in report:
            raise ValueError("not a report")
    except ValueError:
        last = (err.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1]
        return CheckOutcome(error=f"the check failed (exit {proc.returncode}): {last[:200]}", seconds=seconds)
    return CheckOutcome(report=report, seconds=seconds)


def _kill_group(proc: "subprocess.Popen[bytes]") -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # Windows: no process groups here
            proc.kill()
    except (OSError, ProcessLookupError):
        pass


@dataclass
class Context:
    """What the adapter reads from conda; everything the logic needs, nothing conda-specific."""

    command: str
    prefix: str
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    setting: Optional[bool] = None  # the conda setting, None where conda has no settings API
    json_mode: bool = False  # conda --json: stdout belongs to conda's JSON
    quiet: bool = False
    dry_run: bool = False


def _problems(report: Mapping[str, Any]) -> List[Mapping[str, Any]]:
    findings = [f for f in report.get("findings") or [] if isinstance(f, Mapping)]
    bad = [f for f in findings if f.get("severity") in ("error", "warning")]
    return sorted(bad, key=lambda f: (bool(f.get("caused_by")), f.get("severity") != "error"))


def _has(report: Mapping[str, Any], code: str) -> bool:
    return any(isinstance(f, Mapping) and f.get("code") == code for f in report.get("findings") or [])


def _pip_gpu_packages(report: Mapping[str, Any]) -> List[str]:
    packages = ((report.get("facts") or {}).get("frameworks") or {}).get("packages") or {}
    return sorted(n for n, v in packages.items() if is_gpu_package(n, str(v)))


def _driver_text(report: Mapping[str, Any]) -> str:
    driver = ((report.get("facts") or {}).get("driver") or {})
    version = (driver.get("nvml") or {}).get("driver_version") or (driver.get("kernel") or {}).get("version")
    cuda = (driver.get("libcuda") or {}).get("driver_version") or (driver.get("nvml") or {}).get("cuda_driver_version")
    parts = [f"driver {version}"] if version else []
    if cuda_version_text(cuda):
        parts.append(f"CUDA {cuda_version_text(cuda)}")
    return ", ".join(parts)


def _frameworks_first(names: List[str]) -> List[str]:
    """`pytorch-cuda, torch` before the dozen `nvidia-*` wheels they pull in."""
    return sorted(set(names), key=lambda n: (n.startswith(("nvidia-", "cuda-", "lib")), n))


def summarize(report: Mapping[str, Any], gpu_packages: List[str], python: str, quiet: bool = False) -> List[str]:
    """The lines to print after a conda command; [] means say nothing."""
    packages = _frameworks_first(gpu_packages + _pip_gpu_packages(report))
    problems = _problems(report)
    full = f"Run `gpudoctor check --python {python}` for the full diagnosis."
    if problems:
        lines = [f"gpudoctor: {len(problems)} problem{'s' if len(problems) != 1 else ''} with the GPU stack "
                 "of this environment:"]
        for f in problems[:_MAX_SHOWN]:
            mark = "✖" if f.get("severity") == "error" else "!"
            lines.append(f"  {mark} {f.get('code')}: {f.get('title')}")
            fixes = f.get("fix") or []
            if fixes and not f.get("caused_by"):
                lines.append(f"      fix: {fixes[0]}")
        if len(problems) > _MAX_SHOWN:
            lines.append(f"  … and {len(problems) - _MAX_SHOWN} more.")
        return lines + ["  " + full]
    if not packages or quiet:
        return []
    shown = ", ".join(packages[:3]) + (f" and {len(packages) - 3} more" if len(packages) > 3 else "")
    if _has(report, "no-nvidia-gpu"):
        return [f"gpudoctor: this environment has GPU packages ({shown}) but this machine has no NVIDIA GPU; "
                "they will run on the CPU."]
    gpus = len((report.get("facts") or {}).get("gpus") or [])
    where = ", ".join(x for x in (_driver_text(report), f"{gpus} GPU{'s' if gpus != 1 else ''}" if gpus else "") if x)
    return [f"gpudoctor: ✔ quick GPU check passed for {shown}" + (f" ({where})." if where else ".")]


def post_command(ctx: Context, out: Optional[TextIO] = None, runner: Optional[Runner] = None,
                 sysroot: Optional[str] = None, timeout: float = HOOK_TIMEOUT_S) -> None:
    """The post-command hook. Never raises: whatever happens, the conda command keeps its exit code."""
    try:
        _post_command(ctx, out or sys.stdout, runner or run_subprocess, sysroot, timeout)
    except BaseException:  # noqa: B036 - KeyboardInterrupt included: the conda command already succeeded
        pass


def _post_command(ctx: Context, out: TextIO, runner: Runner, sysroot: Optional[str], timeout: float) -> None:
    if ctx.command not in TRIGGER_COMMANDS or ctx.json_mode or ctx.dry_run:
        return
    if not hook_enabled(ctx.environ, ctx.setting):
        return
    python = target_python(ctx.prefix) if ctx.prefix else None
    if python is None:  # env removed, or no Python in it: nothing a Python framework could use
        return
    gpu_packages = gpu_packages_in_prefix(ctx.prefix)
    root = sysroot if sysroot is not None else ctx.environ.get("GPUDOCTOR_SYSROOT") or "/"
    if not gpu_packages and not machine_may_have_nvidia_gpu(root):
        return  # CPU-only machine, no GPU packages: silent, and no subprocess at all
    outcome = runner(check_command(python, timeout), timeout)
    if outcome.timed_out:
        _say(out, [f"gpudoctor: the quick GPU check did not finish within {timeout:g} s; "
                   f"run `gpudoctor check --python {python}` to see why."])
    elif outcome.error:
        _say(out, [f"gpudoctor: {outcome.error} (turn this hook off with {ENV_SWITCH}=0)"])
    elif outcome.report is not None:
        _say(out, summarize(outcome.report, gpu_packages, python, quiet=ctx.quiet))


def _say(out: TextIO, lines: List[str]) -> None:
    if lines:
        out.write("\n" + "\n".join(lines) + "\n")
        out.flush()


def health_check(prefix: str, verbose: bool, out: Optional[TextIO] = None, runner: Optional[Runner] = None,
                 timeout: float = DOCTOR_TIMEOUT_S, ok_mark: str = "✅", x_mark: str = "❌") -> None:
    """`conda doctor`: the quick check of this environment's GPU stack. Read-only; never raises."""
    out = out or sys.stdout
    try:
        _say(out, _health_lines(prefix, verbose, runner or run_subprocess, timeout, ok_mark, x_mark))
    except BaseException:  # noqa: B036 - conda doctor goes on with its other checks
        pass


def _health_lines(prefix: str, verbose: bool, runner: Runner, timeout: float, ok: str, bad: str) -> List[str]:
    python = target_python(prefix)
    if python is None:
        return [f"{ok} GPU stack (gpudoctor): no Python in this environment; nothing to check."]
    outcome = runner(check_command(python, timeout), timeout)
    if outcome.timed_out:
        return [f"{bad} GPU stack (gpudoctor): the quick check did not finish within {timeout:g} s; "
                f"run `gpudoctor check --python {python}`."]
    if outcome.error or outcome.report is None:
        return [f"{bad} GPU stack (gpudoctor): {outcome.error or 'no report'}"]
    report = outcome.report
    problems = _problems(report)
    if not problems:
        packages = sorted(set(gpu_packages_in_prefix(prefix)) | set(_pip_gpu_packages(report)))
        if _has(report, "no-nvidia-gpu"):
            what = "no NVIDIA GPU on this machine" + (f"; GPU packages ({', '.join(packages)}) will use the CPU"
                                                      if packages else "")
        else:
            what = "no problem found" + (f" ({_driver_text(report)})" if _driver_text(report) else "")
        return [f"{ok} GPU stack (gpudoctor): {what}."]
    lines = [f"{bad} GPU stack (gpudoctor): {len(problems)} problem{'s' if len(problems) != 1 else ''}:"]
    for f in problems if verbose else problems[:_MAX_SHOWN]:
        cause = f" (caused by {f.get('caused_by')})" if f.get("caused_by") else ""
        lines.append(f"  {f.get('severity')}: {f.get('code')}: {f.get('title')}{cause}")
        if verbose and f.get("detail"):
            lines.append(f"      {f.get('detail')}")
        for step in (f.get("fix") or [])[: None if verbose else 1]:
            if not f.get("caused_by"):
                lines.append(f"      fix: {step}")
    if not verbose and len(problems) > _MAX_SHOWN:
        lines.append(f"  … and {len(problems) - _MAX_SHOWN} more (conda doctor -v shows them).")
    lines.append(f"  Full diagnosis: gpudoctor check --python {python}")
    return lines
