"""gpudoctor: can my frameworks use my NVIDIA GPU, and if not, what exactly is wrong?"""

__version__ = "0.1.0"
