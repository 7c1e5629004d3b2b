"""`gpudoctor fleet`: one check per node through an engine people already run (Slurm, Ray, or any
launcher whose saved reports are read back), aggregated into groups of nodes with the same stack.

Engines are small adapters (slurm.py, ray.py, reports.py) that yield `NodeAnswer`s; one streaming
aggregation (aggregate.py) turns them into a `FleetSummary`; render.py prints it.
"""
