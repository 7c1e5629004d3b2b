"""The conda plugin: a quick GPU check after conda changes an environment, and a `conda doctor` check.

`plugin.py` is the thin adapter conda loads through the `conda` entry-point group; it is the only
module of gpudoctor that imports conda. Everything it does lives in `hook.py`, plain functions
tested without conda.
"""
