"""A fix step split into the sentence to read and the commands to copy."""

import pytest

from gpudoctor.renderers.fix_steps import is_command, split_step


def test_bare_command_is_one_command_with_its_comment():
    step = "export CUDA_VISIBLE_DEVICES=0,1  # GPUs with free memory, most free first: GPU 0 11264 MiB free"
    assert split_step(step).prose == "" and split_step(step).commands == [step]


def test_command_ending_the_sentence_moves_below_it():
    parts = split_step('Or install a release built for Python 3.12: `pip install "torch==2.5.*"`.')
    assert parts.prose == "Or install a release built for Python 3.12:"
    assert parts.commands == ['pip install "torch==2.5.*"']


def test_unquoted_command_after_a_colon():
    parts = split_step("Or install PyTorch 2.7.1 (cu118), the newest build this machine runs: "
                       "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu118")
    assert parts.prose == "Or install PyTorch 2.7.1 (cu118), the newest build this machine runs:"
    assert parts.commands == ["pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu118"]


def test_two_alternatives_at_the_end():
    parts = split_step("Load the module: `sudo modprobe nvidia_uvm` or `sudo nvidia-modprobe -u -c=0`.")
    assert parts.prose == "Load the module:" and parts.commands == ["sudo modprobe nvidia_uvm",
                                                                     "sudo nvidia-modprobe -u -c=0"]


def test_command_starting_the_sentence_comes_first():
    parts = split_step('`conda install "cudnn=8"` in a conda env (conda\'s cuDNN 8).')
    assert parts.lead == ['conda install "cudnn=8"'] and parts.prose == "in a conda env (conda's cuDNN 8)."
    assert parts.commands == []


def test_command_in_mid_sentence_stays_in_it_and_is_repeated():
    step = "If cuDNN 8 is on disk (`find / -name 'libcudnn*.so.8*' 2>/dev/null`), add its folder to LD_LIBRARY_PATH."
    parts = split_step(step)
    assert parts.prose == step and parts.commands == ["find / -name 'libcudnn*.so.8*' 2>/dev/null"]


def test_file_names_variables_and_templates_are_not_commands():
    assert split_step("Remove `libcudnn.so.8` from `LD_LIBRARY_PATH`.").commands == []
    assert not is_command("kill PID") and not is_command("libcudnn.so.8")
    assert is_command("/opt/conda/envs/tf/bin/python -m pip install x") and is_command("nvidia-smi")
    assert is_command("CUDA_VISIBLE_DEVICES=0 python train.py")


def test_command_closing_a_bracket_stays_in_the_sentence():
    step = "Use Python 3.7 for TensorFlow 1.14.0 (a new venv or conda env: `conda create -n tf python=3.7`)."
    parts = split_step(step)
    assert parts.prose == step and parts.commands == ["conda create -n tf python=3.7"]


@pytest.mark.parametrize("text", ["export CUDA_VISIBLE_DEVICES=<index>", "conda create -n gpu python=3.X",
                                  "export CUDA_HOME=/usr/local/cuda-X.Y", "docker run --gpus all <image> ..."])
def test_a_template_the_reader_must_fill_in_is_not_a_command(text):
    assert not is_command(text)


def test_a_runnable_command_is_still_one():
    assert is_command("export CUDA_HOME=/usr/local/cuda-12.4") and is_command('pip install -U "jax[cuda12]"')
    step = split_step("Set it to the toolkit folder: `export CUDA_HOME=/usr/local/cuda-X.Y` (check `nvcc --version`).")
    assert step.commands == ["nvcc --version"] and "cuda-X.Y" in step.prose
