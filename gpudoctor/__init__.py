"""gpudoctor: can my frameworks use my NVIDIA GPU, and if not, what exactly is wrong?"""

__version__ = "0.1.0"
from .gpus.pick import pick_gpus  # noqa: E402,F401  (light: imports nothing heavy until called)
