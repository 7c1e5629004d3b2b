"""What may leave the machine: the environment allowlist, and redaction of a report.

Two layers of protection (DESIGN.md, "Privacy"):

1. Collection. Only the variables in `ENV_ALLOWLIST` are ever read into a report, and even their
   values are scrubbed of anything that looks like a secret (a proxy URL with a password pasted
   into `PATH` happens). `collect_allowed_env` is what the environment probe calls.
2. Redaction. `gpudoctor report` runs `redact_report` over the whole report before writing it:
   the user name, home directory, host name, IP addresses and secrets become stable
   placeholders (`<user>`, `<home>`, `<host>`, `<ip-1>`, `<secret>`), so the same address is
   the same placeholder everywhere in one report and support staff can still follow it.
"""

from __future__ import annotations

import getpass
import ipaddress
import os
import re
import socket
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

# The only environment variables gpudoctor ever collects: each one changes what a CUDA program
# loads, sees, or does. Grouped by who reads them.
ENV_ALLOWLIST: Tuple[str, ...] = (
    # CUDA runtime and driver (CUDA C Programming Guide, "CUDA Environment Variables")
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
    "CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE", "CUDA_FORCE_PTX_JIT",
    "CUDA_DISABLE_PTX_JIT", "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MPS_PIPE_DIRECTORY",
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
    # where toolkits are looked for (framework loaders, CMake, CuPy, Numba)
    "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "CUDNN_PATH",
    # the host compiler nvcc and torch.utils.cpp_extension build with
    "CC", "CXX", "NVCC_CCBIN", "CUDAHOSTCXX",
    # the dynamic loader and the interpreter
    "LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE",
    # which environment is active: decides pip vs conda fixes
    "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "VIRTUAL_ENV",
    # NVIDIA container images and the NVIDIA Container Toolkit
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA",
    "NVIDIA_DISABLE_REQUIRE", "CUDA_VERSION", "NV_CUDNN_VERSION", "NVIDIA_TF32_OVERRIDE",
    # TensorFlow and XLA
    "TF_CPP_MIN_LOG_LEVEL", "TF_CPP_MAX_VLOG_LEVEL", "TF_FORCE_GPU_ALLOW_GROWTH", "TF_GPU_ALLOCATOR",
    "TF_XLA_FLAGS", "XLA_FLAGS", "TF_ENABLE_ONEDNN_OPTS", "TF_CUDA_PATHS", "TF_GPU_THREAD_MODE",
    # JAX
    "JAX_PLATFORMS", "JAX_PLATFORM_NAME", "JAX_CUDA_VISIBLE_DEVICES",
    "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_ALLOCATOR",
    # PyTorch
    "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_NVML_BASED_CUDA_CHECK",
    "PYTORCH_NO_CUDA_MEMORY_CACHING", "TORCH_CUDA_ARCH_LIST", "TORCH_USE_CUDA_DSA",
    # NCCL (multi-GPU communication)
    "NCCL_DEBUG", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE",
    "NCCL_SOCKET_IFNAME",
    # CuPy
    "CUPY_CUDA_PATH", "CUPY_ACCELERATORS",
)

REDACTED = "<secret>"

# A variable (or JSON key) whose name says it holds a secret.
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:TOKEN|KEY|APIKEY|PASS|PAT|AUTH)$|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_?KEY|API_?KEY",
    re.IGNORECASE,
)

# Secret shapes that need no name to be recognised. Sources: each vendor's documented prefix.
_SECRET_SHAPES = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.DOTALL),
    re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),  # AWS access key id
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),  # Hugging Face
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),  # Slack
    re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b"),  # OpenAI, Anthropic
    re.compile(r"\bnvapi-[A-Za-z0-9_-]{20,}\b"),  # NVIDIA NGC
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API key
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"),  # JWT
]
# scheme://user:password@host -> scheme://<secret>@host
_URL_CREDENTIALS = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@")
# NAME=value and --password value, where the name says it is a secret
_SECRET_ASSIGNMENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)(\s*[=:]\s*)([^\s,;'\"]+)")
_SECRET_OPTION = re.compile(r"(--?(?:password|passwd|token|api[-_]?key|secret)[= ])(\S+)", re.IGNORECASE)
_BEARER = re.compile(r"\b(Bearer|Basic|token)\s+[A-Za-z0-9._~+/=-]{16,}", re.IGNORECASE)

_IPV4 = re.compile(
    r"(?<![\w.-])((?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))(?![\w.-])"
)
_IPV6 = re.compile(r"(?<![\w:.])((?:[0-9A-Fa-f]{1,4})?(?::[0-9A-Fa-f]{0,4}){2,7})(?![\w:.])")
# A four-part number right after one of these words is a version (cuDNN 8.9.7.29,
# nvidia-curand-cu12 10.3.2.106), not an address.
_VERSION_CONTEXT = re.compile(
    r"(?:\b(?:version|ver|v|cudnn|cublas|cufft|curand|cusolver|cusparse|nccl|nvrtc|tensorrt|cuda|"
    r"driver|nvidia[\w-]*|cu\d+|torch|tensorflow|jax\w*)|==|>=|<=|~=)[\s:(]*$",
    re.IGNORECASE,
)
# Key names whose values are versions: an IP-shaped value there is a version.
_VERSION_KEY = re.compile(r"version|^packages$", re.IGNORECASE)

# Account names that identify nobody; replacing them would mangle ordinary words
# ("user-space driver", "root cause").
_GENERIC_NAMES = frozenset({
    "root", "user", "admin", "ubuntu", "debian", "centos", "fedora", "nobody", "jovyan", "runner",
    "vscode", "ec2-user", "app", "docker", "localhost", "localhost.localdomain", "default",
})
_HOME_PATTERNS = [
    re.compile(r"(?<![\w.])/home/([^/\s:'\"<>]+)"),
    re.compile(r"(?<![\w.])/Users/([^/\s:'\"<>]+)"),
    re.compile(r"(?i)\b[A-Z]:\\Users\\([^\\\s:'\"<>]+)"),
]


def is_secret_name(name: str) -> bool:
    """Does this variable or key name say that its value is a secret (`HF_TOKEN`, `DB_PASSWORD`)?"""
    return bool(_SECRET_NAME.search(name))


def redact_secrets(text: str) -> str:
    """Replace everything in `text` that looks like a secret with `<secret>`."""
    if not text:
        return text
    for shape in _SECRET_SHAPES:
        text = shape.sub(REDACTED, text)
    text = _URL_CREDENTIALS.sub(lambda m: m.group(1) + REDACTED + "@", text)
    text = _SECRET_ASSIGNMENT.sub(
        lambda m: m.group(1) + m.group(2) + REDACTED if is_secret_name(m.group(1)) else m.group(0), text)
    text = _SECRET_OPTION.sub(lambda m: m.group(1) + REDACTED, text)
    text = _BEARER.sub(lambda m: m.group(1) + " " + REDACTED, text)
    return text


def collect_allowed_env(environ: Mapping[str, str]) -> Dict[str, str]:
    """The allowlisted variables that are set, with secret-looking content scrubbed from values.

    Called by the environment probe: nothing outside `ENV_ALLOWLIST` is ever collected.
    """
    return {name: redact_secrets(environ[name]) for name in ENV_ALLOWLIST if name in environ}


@dataclass
class Identity:
    """What identifies a machine and its user: the strings that redaction replaces."""

    users: List[str] = field(default_factory=list)
    homes: List[str] = field(default_factory=list)
    hosts: List[str] = field(default_factory=list)

    def merged(self, other: "Identity") -> "Identity":
        return Identity(_unique(self.users + other.users), _unique(self.homes + other.homes),
                        _unique(self.hosts + other.hosts))


def _unique(items: Iterable[str]) -> List[str]:
    seen: List[str] = []
    for item in items:
        if item and item not in seen:
            seen.append(item)
    return seen


def identity_of_this_machine(environ: Optional[Mapping[str, str]] = None) -> Identity:
    """The current user, home directory and host name, each in every spelling we can see."""
    environ = os.environ if environ is None else environ
    users, homes, hosts = [], [], []
    try:
        users.append(getpass.getuser())
    except Exception:  # no user name in a container with an unknown uid
        pass
    users += [environ.get("USER", ""), environ.get("LOGNAME", "")]
    for home in (environ.get("HOME", ""), os.path.expanduser("~")):
        if home and home not in ("/", "~"):
            homes += [home.rstrip("/"), os.path.realpath(home)]
    try:
        hosts.append(socket.gethostname())
    except OSError:
        pass
    return Identity(_unique(users), _unique(homes), _unique(_host_spellings(hosts)))


def _host_spellings(hosts: Iterable[str]) -> List[str]:
    out: List[str] = []
    for host in hosts:
        if host:
            out.append(host)
            out.append(host.split(".")[0])  # the short name of an FQDN
    return out


def identity_of_report(report: Mapping[str, Any]) -> Identity:
    """The host name a report records.

    A saved report may come from another machine, so its own identity is redacted too.
    """
    facts = report.get("facts") or {}
    system = facts.get("system") or {} if isinstance(facts, Mapping) else {}
    hosts = [system.get("hostname") or ""] if isinstance(system, Mapping) else []
    # Users seen only in paths are not added: their home paths are redacted by pattern, and a
    # directory name under /home (`/home/data`) is not always a user whose name is a secret.
    # The owners of GPU processes are users by definition: a colleague's name stays off the ticket.
    return Identity(users=_gpu_process_users(facts), hosts=_unique(_host_spellings(hosts)))


def _gpu_process_users(facts: Any) -> List[str]:
    gpus = facts.get("gpus") if isinstance(facts, Mapping) else None
    users = [p.get("user") for g in gpus or [] if isinstance(g, Mapping)
             for p in g.get("processes") or [] if isinstance(p, Mapping)]
    # A bare uid (no name in passwd) is a number like any other: replacing it would hit versions.
    return _unique(u for u in users if isinstance(u, str) and not u.isdigit())


class Redactor:
    """Replaces identifying strings with stable placeholders; one instance per report."""

    def __init__(self, identity: Identity) -> None:
        self.identity = identity
        self._ips: Dict[str, str] = {}
        homes = sorted((h for h in identity.homes if h and h not in ("/", "/root")), key=len, reverse=True)
        self._home_res = [re.compile(re.escape(h) + r"(?![\w.-])") for h in homes]
        users = sorted((u for u in identity.users if _identifying(u)), key=len, reverse=True)
        self._user_res = [re.compile(r"(?<![\w.-])" + re.escape(u) + r"(?![\w-])") for u in users]
        hosts = sorted((h for h in identity.hosts if _identifying(h)), key=len, reverse=True)
        self._host_res = [re.compile(r"(?<![\w.-])" + re.escape(h) + r"(?![\w-])", re.IGNORECASE)
                          for h in hosts]

    @property
    def ip_placeholders(self) -> Dict[str, str]:
        return dict(self._ips)

    def text(self, text: str, key: str = "") -> str:
        """Redact one string; `key` is the JSON key it sits under (versions keep their IP shape)."""
        if not text:
            return text
        text = redact_secrets(text)
        for home_re in self._home_res:
            text = home_re.sub("<home>", text)
        for pattern in _HOME_PATTERNS:  # another user's home, or a known user's under another root
            text = pattern.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + "<user>", text)
        for host_re in self._host_res:
            text = host_re.sub("<host>", text)
        for user_re in self._user_res:
            text = user_re.sub("<user>", text)
        if not _VERSION_KEY.search(key):
            text = _IPV4.sub(lambda m: self._ip(m, text), text)
            text = _IPV6.sub(self._ip6, text)
        return text

    def value(self, obj: Any, key: str = "") -> Any:
        """Redact a JSON value recursively; values under secret-named keys become `<secret>`."""
        if isinstance(obj, str):
            return self.text(obj, key)
        if isinstance(obj, Mapping):
            out: Dict[str, Any] = {}
            for k, v in obj.items():
                name = str(k)
                new_key = self.text(name)
                if is_secret_name(name) and isinstance(v, (str, int, float)) and v not in ("", None):
                    out[new_key] = REDACTED
                else:  # package versions inherit "packages": their IP-shaped values are versions
                    out[new_key] = self.value(v, "packages" if key == "packages" else name)
            return out
        if isinstance(obj, (list, tuple)):
            return [self.value(v, key) for v in obj]
        return obj

    def _ip(self, m: "re.Match[str]", text: str) -> str:
        address = m.group(1)
        if _VERSION_CONTEXT.search(text[max(0, m.start() - 40): m.start()]):
            return m.group(0)
        return self._placeholder(address)

    def _ip6(self, m: "re.Match[str]") -> str:
        candidate = m.group(1)
        if candidate.count(":") < 2 or sum(c.isalnum() for c in candidate) < 3:
            return m.group(0)
        try:
            ipaddress.IPv6Address(candidate)
        except ValueError:
            return m.group(0)
        return self._placeholder(candidate.lower())

    def _placeholder(self, address: str) -> str:
        if address not in self._ips:
            self._ips[address] = f"<ip-{len(self._ips) + 1}>"
        return self._ips[address]


def _identifying(name: str) -> bool:
    return len(name) >= 2 and name.lower() not in _GENERIC_NAMES


def redactor_for(report: Mapping[str, Any], identity: Optional[Identity] = None) -> Redactor:
    """A redactor for this report: `identity` (default: this machine's user, home and host)
    merged with the host the report itself records, so a report saved elsewhere is redacted too."""
    return Redactor((identity or identity_of_this_machine()).merged(identity_of_report(report)))


def redact_report(report: Mapping[str, Any], identity: Optional[Identity] = None) -> Dict[str, Any]:
    """A redacted deep copy of a report dict (the check JSON contract, or any JSON value)."""
    return redactor_for(report, identity).value(dict(report))
