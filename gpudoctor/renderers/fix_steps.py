"""A fix step split into the sentence a person reads and the commands they copy.

A step is a sentence with commands in backticks ("Install ...: `pip install x`."), or a bare
command ("pip install x"). The terminal and HTML renderers print each command on its own line,
unwrapped and outside any border, so that selecting it copies a command that runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List

# First words of the commands gpudoctor's fixes name; a backticked file name (`libcudnn.so.8`) or
# variable (`CUDA_HOME`) is not one of them and stays in the sentence.
COMMAND_WORDS = frozenset("""
    pip pip3 python python3 conda mamba micromamba sudo export unset apt apt-get dnf yum zypper
    nvidia-smi nvidia-modprobe modprobe docker podman wsl ldconfig reboot systemctl nvcc source cd rm
    ls echo sh bash ln find grep ldd cat ps kill which env nvidia-ctk mkdir gpudoctor git ubuntu-drivers dkms update-alternatives singularity apptainer
""".split())
_CODE_SPAN = re.compile(r"`([^`]+)`")
# What the reader must fill in: <index>, cuda-X.Y, python=3.X, "..."
_PLACEHOLDER = re.compile(r"<[A-Za-z][\w -]*>|\bX\.Y\b|\b\d\.X\b|(?<![\w.])\.\.\.(?![\w.])")
_TRAILING = re.compile(r"^[\s.,;:)]*$")


@dataclass
class FixStep:
    prose: str  # the sentence, with commands that start or end it removed; "" for a bare command
    commands: List[str] = field(default_factory=list)  # shown after the sentence
    lead: List[str] = field(default_factory=list)  # commands that began the sentence: shown before it


def is_command(text: str) -> bool:
    """Does this text start like a shell command (a known program, a path to one, VAR=value cmd)?
    A template with a placeholder for the reader to fill in (`kill PID`, `cuda-X.Y`, `<index>`) is not: it
    cannot run as is."""
    words = text.split(" #", 1)[0].split()  # a trailing shell comment may say anything
    if not words or any(re.fullmatch(r"[A-Z][A-Z_]+", w) for w in words[1:]) or _PLACEHOLDER.search(" ".join(words)):
        return False
    first = words[0]
    while "=" in first and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", first) and len(words) > 1:
        words = words[1:]  # `CUDA_VISIBLE_DEVICES=0 python train.py`
        first = words[0]
    name = first.rsplit("/", 1)[-1]
    return name in COMMAND_WORDS or re.match(r"^(pip|python)\d(\.\d+)?$", name) is not None \
        or first.startswith(("/", "~/", "./")) and len(words) > 1


def split_step(step: str) -> FixStep:
    """The sentence and its commands. A command that ends the sentence is taken out of it (the
    sentence then reads "Install the wheels:"); one in the middle stays in the sentence too, so the
    sentence keeps its meaning, and is repeated on its own line below it."""
    step = step.strip()
    spans = [m for m in _CODE_SPAN.finditer(step) if is_command(m.group(1))]
    if not spans:
        if "`" not in step and is_command(step):
            return FixStep("", [step])
        # "..., the newest build this machine runs: pip install torch==2.7.1 --index-url ..."
        head, sep, tail = step.partition(": ")
        if sep and "`" not in step and is_command(tail):
            return FixStep(head + ":", [tail.strip()])
        return FixStep(step, [])
    commands = [m.group(1).strip() for m in spans]
    prose, peeled = step, False
    # Peel commands off the end of the sentence: "...: `a` or `b`." keeps "...:".
    for m in reversed(spans):
        tail = prose[m.end():]
        if not _TRAILING.match(tail) and tail.strip() not in ("or", "and", "then"):
            break
        head = prose[:m.start()]
        if head.count("(") > head.count(")"):
            break  # "(a new env: `conda create ...`)": taken out, the bracket would never close
        prose, peeled = prose[:m.start()].rstrip(), True
        prose = re.sub(r"\s*(,|;|or|and|then)$", "", prose).rstrip()
    if prose.endswith("("):
        prose = prose[:-1].rstrip()
    lead: List[str] = []
    # "`conda install x` in a conda env." reads as the command, then "in a conda env."
    for m in spans:
        if not prose.startswith(m.group(0)):
            break
        lead.append(m.group(1).strip())
        commands.remove(lead[-1])
        prose = prose[len(m.group(0)):].lstrip(" ,;")
        prose = re.sub(r"^(or|and|then)\s+", "", prose)
    if peeled and prose and prose[-1] not in ":.!?":
        prose += ":"  # "Run `x`." reads "Run:" above the command
    return FixStep(prose, commands, lead)
