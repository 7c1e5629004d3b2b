"""Companion packages built for another framework release, from facts (issue 10, class 3)."""

from __future__ import annotations

from gpudoctor.facts.frameworks import Distribution
from gpudoctor.probes.frameworks.packages import pin_checks
from gpudoctor.rules import diagnose

from tests.factories import gpu_machine

LINUX = {"platform_system": "Linux", "platform_machine": "x86_64", "sys_platform": "linux",
         "python_version": "3.11", "python_full_version": "3.11.7", "implementation_name": "cpython",
         "os_name": "posix", "platform_python_implementation": "CPython", "platform_release": "",
         "platform_version": "", "implementation_version": "3.11.7"}


def machine(*dists, python=None):
    facts = gpu_machine(count=1)
    facts.frameworks.distributions = [Distribution(name, version, "/env/site-packages", "pip", list(requires))
                                      for name, version, *requires in dists]
    facts.frameworks.marker_environment = dict(LINUX)
    facts.frameworks.pins = pin_checks(facts.frameworks.distributions, LINUX)
    if python:
        facts.frameworks.python = python
        facts.system.gpudoctor_python = "/usr/bin/python3"
    return facts


def companions(facts):
    return [f for f in diagnose(facts) if f.code == "conflicting-packages" and "companions" in f.evidence]


def test_tf_keras_for_another_tensorflow_is_aligned_to_the_installed_tensorflow():
    facts = machine(("tensorflow", "2.16.1", 'tensorflow-intel (==2.16.1) ; platform_system == "Windows"'),
                    ("tf-keras", "2.15.0", "tensorflow (<2.16,>=2.15)"))
    [finding] = companions(facts)
    assert "tf-keras 2.15.0 requires tensorflow<2.16,>=2.15" in finding.detail
    assert finding.fix == ['pip install "tensorflow==2.16.1" "tf-keras!=2.15.0"  # pip picks the versions whose '
                           'pins match tensorflow 2.16.1']


def test_windows_only_requirement_does_not_apply_on_linux():
    facts = machine(("tensorflow", "2.15.1", 'tensorflow-intel (==2.15.1) ; platform_system == "Windows"',
                     "keras (<2.16,>=2.15.0)"),
                    ("tensorflow-intel", "2.14.0"), ("keras", "2.15.0"))
    assert companions(facts) == []


def test_a_companion_for_another_torch_in_another_environment_uses_that_pip():
    facts = machine(("torch", "2.5.1"), ("torchaudio", "2.4.1", "torch (==2.4.1)"),
                    ("xformers", "0.0.28.post3", "numpy", "torch (==2.5.1)"), python="/envs/train/bin/python")
    [finding] = companions(facts)
    assert [c["name"] for c in finding.evidence["companions"]] == ["torchaudio"]  # xformers matches
    assert finding.fix[0].startswith('/envs/train/bin/python -m pip install "torch==2.5.1" "torchaudio!=2.4.1"')
    assert finding.severity.value == "error"


def test_matching_stack_is_quiet_and_nvidia_pins_are_left_to_their_own_rule():
    facts = machine(("torch", "2.4.1+cu121", 'nvidia-cudnn-cu12 (==9.1.0.70) ; platform_system == "Linux"'),
                    ("torchvision", "0.19.1+cu121", "torch (==2.4.1)"), ("nvidia-cudnn-cu12", "9.0.0.312"))
    assert companions(facts) == []


def with_extension(facts, dist, module, symbols):
    from gpudoctor.facts.frameworks import ExtensionLink

    facts.frameworks.extension_links.append(
        ExtensionLink(dist, "x", f"/env/site-packages/{module}", None, symbols[:3], len(symbols)))
    return facts


def test_an_extension_built_against_another_torch_is_rebuilt_for_this_one():
    facts = with_extension(machine(("torch", "2.4.1+cu121"), ("flash-attn", "2.6.3")), "flash-attn",
                           "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so",
                           ["_ZN3c104cuda9SetDeviceEi", "_ZN3c1010Dispatcher9singletonEv"])
    [finding] = companions(facts)
    [companion] = finding.evidence["companions"]
    assert "needs 2 symbol(s) of torch that torch 2.4.1+cu121 does not define (_ZN3c104cuda9SetDeviceEi)" \
        in companion["reason"]
    assert 'undefined symbol: _ZN3c104cuda9SetDeviceEi' in finding.detail
    assert finding.fix == ["pip install --force-reinstall --no-cache-dir --no-build-isolation flash-attn  # rebuilt "
                           "(or its wheel for this torch and CUDA picked) against torch 2.4.1+cu121"]


def test_a_companion_the_pin_step_replaces_is_not_also_rebuilt():
    facts = with_extension(machine(("torch", "2.5.1"), ("torchvision", "0.19.1", "torch (==2.4.1)")), "torchvision",
                           "torchvision/_C.so", ["_ZN2at4_ops10as_strided4callEv"])
    [finding] = companions(facts)
    assert len(finding.evidence["companions"]) == 2  # the pin and the symbol, both named
    assert len(finding.fix) == 1 and '"torchvision!=0.19.1"' in finding.fix[0]


def test_missing_symbols_without_torch_installed_say_nothing():
    facts = with_extension(machine(("flash-attn", "2.6.3")), "flash-attn", "flash_attn_2_cuda.so",
                           ["_ZN3c104cuda9SetDeviceEi"])
    assert companions(facts) == []


def test_an_extension_that_is_not_on_the_index_is_rebuilt_from_its_source():
    # the index's "apex" is an unrelated web toolkit and detectron2 is not there at all: no pip install <name>
    facts = with_extension(machine(("torch", "2.4.1+cu121"), ("detectron2", "0.6"), ("apex", "0.1")), "detectron2",
                           "detectron2/_C.cpython-311-x86_64-linux-gnu.so", ["_ZNK2at10TensorBase8data_ptrIdEEPT_v"])
    with_extension(facts, "apex", "fused_layer_norm_cuda.cpython-311-x86_64-linux-gnu.so", ["_ZN3c104cuda9SetDeviceEi"])
    [finding] = companions(facts)
    assert not any("install --force-reinstall" in step for step in finding.fix)
    assert any(step.startswith("Rebuild detectron2 from its source against torch 2.4.1+cu121") and
               "git+https://github.com/facebookresearch/detectron2.git" in step for step in finding.fix)
    assert any(step.startswith("Rebuild apex from its source") for step in finding.fix)
