"""gpudoctor: can my frameworks use my NVIDIA GPU, and if not, what exactly is wrong?"""

__version__ = "0.1.0"


def __getattr__(name: str):  # PEP 562: `import gpudoctor` stays cheap; the API loads on first use
    if name == "check":
        from .api import check

        return check
    if name == "pick_gpus":
        from .gpus.pick import pick_gpus

        return pick_gpus
    if name == "explain":  # the package, which is callable: explain(text) runs the API's explain
        import importlib  # not `from . import explain`: that asks this __getattr__ again

        return importlib.import_module(".explain", __name__)
    raise AttributeError(f"module 'gpudoctor' has no attribute {name!r}")
