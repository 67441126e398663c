"""The layout auditor: run every in-place op on every kind of strided tensor and judge the result.

Used by notebook 08 and by `python -m course audit`. `args` finds the ops and builds their calls
per dtype, `judge` decides one result, `engine` runs the sweep, `cli` is the command and `panel`
the widget (the only module here that imports ipywidgets), `core` names their public pieces,
`report` summarises, `repro` writes a pasteable line per finding, and `opinfo` runs PyTorch's
own OpInfo layout checks on the emulated device for comparison. Importing this package imports
nothing heavy; the emulated device is loaded only when an emulated profile is audited.
"""
