"""gpudoctor: can my frameworks use my NVIDIA GPU, and if not, what exactly is wrong?"""

__version__ = "0.1.0"


def __getattr__(name: str):  # PEP 562: `import gpudoctor` stays cheap; the API loads on first use
    if name in ("check", "explain"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'gpudoctor' has no attribute {name!r}")
