"""The layout auditor: run every in-place op on non-contiguous outputs and judge the result.

Used by notebook 08 and by `python -m course audit`. `args` builds calls for an op, `judge`
decides one result, `report` summarises, `core` runs the sweep. Importing this package imports
nothing heavy; the emulated device is loaded only when a profile is audited.
"""
