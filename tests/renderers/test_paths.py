"""Library paths as an 80-column table shows them: home as ~, site-packages without lib/pythonX.Y."""

from gpudoctor.renderers.paths import home_as_tilde, shorten_path


def test_home_becomes_tilde_only_on_a_whole_component():
    assert home_as_tilde("/home/ana/miniconda3/lib/libcudart.so.12", "/home/ana") == "~/miniconda3/lib/libcudart.so.12"
    assert home_as_tilde("/home/ana", "/home/ana/") == "~"
    assert home_as_tilde("/home/anabel/lib/x.so", "/home/ana") == "/home/anabel/lib/x.so"
    assert home_as_tilde("/usr/lib/x.so", "") == "/usr/lib/x.so"


def test_conda_env_wheel_library_in_home():
    path = "/home/ana/miniconda3/envs/tf/lib/python3.10/site-packages/nvidia/cudnn/lib/libcudnn.so.8"
    assert shorten_path(path, "/home/ana") == "~/miniconda3/envs/tf/…/site-packages/nvidia/cudnn/lib/libcudnn.so.8"


def test_debian_dist_packages_and_lib64():
    assert shorten_path("/usr/lib64/python3.9/dist-packages/torch/lib/libc10.so", "/root") == \
        "/usr/…/dist-packages/torch/lib/libc10.so"


def test_system_paths_stay_as_they_are():
    assert shorten_path("/usr/local/cuda-12.4/lib64/libcudart.so.12", "/home/ana") == \
        "/usr/local/cuda-12.4/lib64/libcudart.so.12"
    assert shorten_path("", "/home/ana") == ""


def test_home_from_the_environment(monkeypatch):
    monkeypatch.setenv("HOME", "/home/bo")
    assert shorten_path("/home/bo/.venv/lib/python3.12/site-packages/x.so") == "~/.venv/…/site-packages/x.so"
