"""Privacy: planted secrets, home paths, user and host names and IPs never reach a report."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpudoctor.privacy import (ENV_ALLOWLIST, Identity, Redactor, collect_allowed_env, identity_of_this_machine,
                               is_secret_name, redact_report, redact_secrets)
from gpudoctor.renderers.markdown import render_markdown
from gpudoctor.saved_report import parse_saved_report

from report_helpers import gpudoctor, load

USER, HOME, HOST = "alice.wong", "/home/alice.wong", "gpu-node-17.corp.example.com"
SECRETS = {
    "HF_TOKEN": "hf_QwErTyUiOpAsDfGhJkLzXcVbNm1234567890",
    "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
    "DB_PASSWORD": "correct horse battery staple",
    "MY_SECRET_THING": "s3kr1t-value",
}
PROXY_PASSWORD = "Pr0xyPa55"
IPS = ["10.20.30.40", "192.168.1.77", "fe80::1ff:fe23:4567:890a"]


def planted_environ() -> dict:
    environ = dict(SECRETS)
    environ.update({
        "PATH": f"{HOME}/miniconda3/bin:/usr/bin",
        "LD_LIBRARY_PATH": f"https://bob:{PROXY_PASSWORD}@proxy.corp.example.com:3128/lib:{HOME}/cuda/lib64",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "XLA_FLAGS": f"--xla_gpu_cuda_data_dir={HOME}/cuda",
        "NCCL_SOCKET_IFNAME": "eth0",
        "HOME": HOME, "USER": USER, "HOSTNAME": HOST,
        "MASTER_ADDR": IPS[0],
    })
    return environ


def planted_report() -> dict:
    """The lab report as a real machine would write it, with secrets wherever they can hide."""
    report = load("driver_too_old.json")
    facts = report["facts"]
    facts["system"]["hostname"] = HOST
    facts["system"]["python_executable"] = f"{HOME}/miniconda3/envs/train/bin/python"
    facts["environment"]["variables"] = collect_allowed_env(planted_environ())
    facts["probes"][0]["stderr_tail"] = (f"NCCL WARN connect to {IPS[0]}:29500 from {IPS[1]} failed ({IPS[2]}); "
                                         f"HF_TOKEN={SECRETS['HF_TOKEN']} user {USER} on {HOST.split('.')[0]}")
    facts["frameworks"]["frameworks"]["torch"]["live"]["import_error"] = (
        f"Authorization: Bearer {SECRETS['GITHUB_TOKEN']} at {HOME}/src and /home/{USER}/x")
    report["findings"][0]["evidence"]["log"] = f"{USER}@{HOST}: pip --password {PROXY_PASSWORD}"
    return report


IDENTITY = Identity(users=[USER], homes=[HOME], hosts=[HOST, HOST.split(".")[0]])


def assert_clean(text: str) -> None:
    for secret in list(SECRETS.values()) + [PROXY_PASSWORD]:
        assert secret not in text
    assert USER not in text and HOME not in text
    assert "gpu-node-17" not in text.lower()
    for ip in IPS:
        assert ip not in text


def test_only_allowlisted_variables_are_collected():
    env = collect_allowed_env(planted_environ())
    assert set(env) <= set(ENV_ALLOWLIST)
    assert not set(SECRETS) & set(env)
    assert "MASTER_ADDR" not in env and "HOME" not in env and "HOSTNAME" not in env
    assert PROXY_PASSWORD not in json.dumps(env)  # scrubbed even from an allowlisted value


def test_allowlist_covers_what_the_probes_need():
    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "PATH",
                 "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "VIRTUAL_ENV", "TF_CPP_MIN_LOG_LEVEL", "XLA_FLAGS",
                 "TF_FORCE_GPU_ALLOW_GROWTH", "PYTORCH_CUDA_ALLOC_CONF", "NVIDIA_VISIBLE_DEVICES",
                 "NVIDIA_DRIVER_CAPABILITIES", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING", "NCCL_DEBUG"):
        assert name in ENV_ALLOWLIST
    assert not any(is_secret_name(n) for n in ENV_ALLOWLIST)


def test_nothing_planted_reaches_the_report_or_its_json():
    redacted = redact_report(planted_report(), IDENTITY)
    text = render_markdown(redacted)
    assert_clean(text)
    assert_clean(json.dumps(parse_saved_report(text)))
    assert "<home>/miniconda3/envs/train/bin/python" in text
    assert "<host>" in text and "<ip-1>" in text and "<secret>" in text


def test_placeholders_are_stable_within_a_report():
    redactor = Redactor(IDENTITY)
    out = redactor.value({"a": f"peer {IPS[0]}", "b": [f"again {IPS[0]} and {IPS[1]}"]})
    assert out == {"a": "peer <ip-1>", "b": ["again <ip-1> and <ip-2>"]}


def test_report_command_redacts_by_default_and_keeps_with_no_redact(tmp_path, monkeypatch):
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps(planted_report()))
    monkeypatch.setenv("HOME", HOME)
    monkeypatch.setenv("USER", USER)
    out = tmp_path / "r.md"
    assert gpudoctor(["report", "--from", str(saved), "-o", str(out)]) == 0
    text = out.read_text()
    for ip in IPS[:2]:
        assert ip not in text
    assert HOME not in text and "gpu-node-17" not in text and SECRETS["HF_TOKEN"] not in text
    raw = tmp_path / "raw.md"
    assert gpudoctor(["report", "--from", str(saved), "-o", str(raw), "--no-redact"]) == 0
    raw_text = raw.read_text()
    assert HOST in raw_text and "Not redacted" in raw_text


def test_versions_that_look_like_addresses_are_kept():
    redactor = Redactor(IDENTITY)
    assert redactor.text("cuDNN 8.9.7.29, nvidia-curand-cu12 10.3.2.106, libcublas.so.12.1.3.1") == \
        "cuDNN 8.9.7.29, nvidia-curand-cu12 10.3.2.106, libcublas.so.12.1.3.1"
    assert redactor.value({"packages": {"nvidia-curand-cu12": "10.3.2.106"}}) == \
        {"packages": {"nvidia-curand-cu12": "10.3.2.106"}}
    assert redactor.text("PCI 0000:01:00.0 at 12:30:45, c10::Error") == "PCI 0000:01:00.0 at 12:30:45, c10::Error"


def test_generic_account_names_do_not_mangle_words():
    redactor = Redactor(Identity(users=["root", "user"], homes=["/root"], hosts=["localhost"]))
    text = "the user-space driver is the root cause on localhost"
    assert redactor.text(text) == text


@pytest.mark.parametrize("text", [
    "https://me:pa55w0rd@example.com/simple", "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuv",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----", "xoxb-1234567890-abcdefghij",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
])
def test_secret_shapes(text):
    assert "<secret>" in redact_secrets(text)


@settings(max_examples=200, deadline=None)
@given(secret=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=8,
                      max_size=40),
       name=st.sampled_from(["HF_TOKEN", "NGC_API_KEY", "DB_PASSWORD", "CLIENT_SECRET", "SERVICE_KEY"]))
def test_any_value_of_a_secret_named_variable_is_redacted(secret, name):
    skeleton = json.dumps(redact_report({"facts": {"x": {name: ""}, "log": f"{name}="}, "findings": []}, IDENTITY))
    assume(secret not in skeleton)  # a "secret" such as "findings" is in the report's own key names
    assert secret not in json.dumps(redact_report({"facts": {"x": {name: secret}, "log": f"{name}={secret}"},
                                                   "findings": []}, IDENTITY))


def test_this_machines_identity_is_found():
    who = identity_of_this_machine({"HOME": HOME, "USER": USER})
    assert HOME in who.homes and USER in who.users and who.hosts


@pytest.mark.parametrize("mode", [["--json"], ["--no-color", "-v"]])
def test_planted_secrets_never_reach_the_output_of_check(monkeypatch, capsys, mode):
    """check is not redacted (it is for the user's own eyes), but it never collects a secret."""
    from gpudoctor.cli import main

    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICIES", "0")  # a misspelling is reported: its value is not a secret
    assert main(["check", "--quick", *mode]) in (0, 1)
    out = capsys.readouterr()
    for value in SECRETS.values():
        assert value not in out.out and value not in out.err
