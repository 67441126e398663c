"""The layout auditor: run every in-place op on every kind of strided tensor and judge the result.

Used by notebook 08 and by `python -m course audit`. `args` finds the ops and builds their calls
per dtype, `judge` decides one result, `core` runs the sweep (CLI and widget included), `report`
summarises, `repro` writes a pasteable line per finding, and `opinfo` runs PyTorch's own OpInfo
layout checks on the emulated device for comparison. Importing this package imports nothing
heavy; the emulated device is loaded only when an emulated profile is audited.
"""
